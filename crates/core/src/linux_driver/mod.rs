//! Linux: no silent driver installer of ours. Which package gives the needed driver
//! branch on the detected distribution, the exact commands, and whether Secure Boot will
//! ask to enrol a key. The facts are `compat-tables/drivers-linux.toml` (`table`).

mod distro;
mod secure_boot;
pub mod table;

use std::sync::OnceLock;

use crate::message::Message;
use crate::msg;
use crate::platform::Host;
use crate::version::Version;

pub use distro::OsRelease;
use table::{Family, Route, Table};

/// What to tell a Linux user whose driver is missing or too old.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LinuxDriverAdvice {
    /// The distribution as `/etc/os-release` names it (`PRETTY_NAME`), when known.
    pub distro: Option<String>,
    /// The family of the table that matched (`ubuntu`, `debian`, `fedora`, `rhel`);
    /// None: a distribution the table does not know (then `commands` is empty).
    pub family: Option<String>,
    /// The package that provides the branch (`nvidia-driver-550`), when known.
    pub package: Option<String>,
    /// The exact commands, in order.
    pub commands: Vec<String>,
    /// Debian: the non-free components must be enabled first.
    pub non_free: bool,
    /// Some(true): Secure Boot is on, and the new kernel module needs a key enrolled
    /// (MOK) at the next boot.
    pub secure_boot: Option<bool>,
    /// Secure Boot on: what the user runs to enrol the key before restarting, where the
    /// install does not ask by itself.
    pub mok_command: Option<String>,
    /// False when the package facts for this distribution are UNCONFIRMED.
    pub confirmed: bool,
    /// Some(B): the GPUs get no driver newer than branch B, and the distribution's
    /// packages known here are all newer (or of no fixed branch): no command is given;
    /// the user gets an R`B` driver from NVIDIA.
    pub last_branch: Option<u32>,
    /// Some(B): a driver of branch B was asked for (the toolkit's, #32) and the
    /// distribution's packages known here have none: the commands give the newest branch
    /// known that still runs it (minor-version compatibility), and a note says so.
    pub short_of: Option<u32>,
}

impl LinuxDriverAdvice {
    /// The line above the commands.
    pub fn intro(&self) -> Message {
        let distro = self.distro.clone().unwrap_or_else(|| "Linux".into());
        if let (Some(_), Some(b)) = (&self.family, self.last_branch) {
            return msg!("linux_driver_last_branch", distro = distro, branch = b);
        }
        match (&self.family, &self.package) {
            (None, _) => msg!("linux_driver_unknown", distro = distro),
            (Some(_), Some(p)) => msg!(
                "linux_driver_commands_package",
                distro = distro,
                package = p
            ),
            (Some(_), None) => msg!("linux_driver_commands", distro = distro),
        }
    }

    /// The lines below the commands: unconfirmed facts, non-free, Secure Boot, restart.
    pub fn notes(&self) -> Vec<Message> {
        let mut out = Vec::new();
        if self.family.is_some() && !self.confirmed && self.last_branch.is_none() {
            out.push(msg!("linux_driver_unconfirmed"));
        }
        if let (Some(b), Some(p)) = (self.short_of, &self.package) {
            let distro = self.distro.clone().unwrap_or_else(|| "Linux".into());
            out.push(msg!(
                "linux_driver_branch_not_packaged",
                branch = b,
                distro = distro,
                package = p
            ));
        }
        if self.non_free {
            out.push(msg!("linux_driver_non_free"));
        }
        out.push(match (self.secure_boot, &self.mok_command) {
            (Some(true), Some(c)) => msg!("linux_driver_secure_boot_command", command = c),
            (Some(true), None) => msg!("linux_driver_secure_boot_on"),
            (Some(false), _) => msg!("linux_driver_secure_boot_off"),
            (None, _) => msg!("linux_driver_secure_boot_unknown"),
        });
        out.push(msg!("linux_driver_restart"));
        out
    }
}

/// The embedded table, parsed once (a unit test keeps it valid); `tables` lists its
/// subject and sources.
pub fn embedded() -> Option<&'static Table> {
    static TABLE: OnceLock<Option<Table>> = OnceLock::new();
    TABLE
        .get_or_init(|| table::parse(table::EMBEDDED).ok())
        .as_ref()
}

/// The advice for a driver of at least `minimum` (None: any current one) on the host;
/// None when the host is not Linux.
pub fn advice(host: &Host, minimum: Option<&Version>) -> Option<LinuxDriverAdvice> {
    advice_within(host, minimum, None)
}

/// [`advice`] for GPUs whose newest driver is of branch `last_branch` (Kepler: 470): a
/// distribution branch above it, or a route that installs the newest driver, would not
/// run them, so then no command is given and `last_branch` says what to get instead.
pub fn advice_within(
    host: &Host,
    minimum: Option<&Version>,
    last_branch: Option<u32>,
) -> Option<LinuxDriverAdvice> {
    advice_for(host, minimum, None, last_branch)
}

/// [`advice_within`] for a driver installed for a toolkit of driver branch `branch`
/// (CUDA 13.4: R615, #32): a package of that branch or newer when the distribution has
/// one, else the newest known that still meets `minimum`, said in `short_of`.
pub fn advice_for(
    host: &Host,
    minimum: Option<&Version>,
    branch: Option<u32>,
    last_branch: Option<u32>,
) -> Option<LinuxDriverAdvice> {
    // Inside WSL2 the driver is Windows': a Linux driver there breaks the stub (#32).
    if host.os != crate::compat::Os::Linux || crate::detect::wsl::is_wsl2(host) {
        return None;
    }
    let os = distro::read(host).unwrap_or_default();
    let sb = secure_boot::state(host);
    let mut a = match embedded() {
        Some(t) => advise(t, &os, minimum, branch, last_branch, sb),
        None => unknown(&os, sb),
    };
    if a.family.is_some() && a.commands.is_empty() {
        a.last_branch = last_branch;
    }
    Some(a)
}

fn unknown(os: &OsRelease, secure_boot: Option<bool>) -> LinuxDriverAdvice {
    LinuxDriverAdvice {
        distro: os.pretty_name.clone(),
        family: None,
        package: None,
        commands: Vec::new(),
        non_free: false,
        secure_boot,
        mok_command: None,
        confirmed: false,
        last_branch: None,
        short_of: None,
    }
}

/// What rebuilds the driver's kernel module for a new kernel (#33): the distribution's
/// commands from the table's `rebuild` route, `{kernel}` filled in.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RebuildAdvice {
    pub distro: Option<String>,
    /// Empty: the table knows no sourced command for this distribution.
    pub commands: Vec<String>,
    /// False when the commands for this distribution are UNCONFIRMED (or it matched
    /// through ID_LIKE).
    pub confirmed: bool,
    /// Some(true): Secure Boot is on; a module built here loads only once signed with an
    /// enrolled key.
    pub secure_boot: Option<bool>,
    /// Secure Boot on: what enrols the key, where the family names it.
    pub mok_command: Option<String>,
}

/// The rebuild commands for kernel `kernel` on the host's distribution (None off Linux
/// or inside WSL2, whose driver is Windows').
pub fn rebuild(host: &Host, kernel: &str) -> Option<RebuildAdvice> {
    if host.os != crate::compat::Os::Linux || crate::detect::wsl::is_wsl2(host) {
        return None;
    }
    let os = distro::read(host).unwrap_or_default();
    let secure_boot = secure_boot::state(host);
    Some(rebuild_for(embedded(), &os, kernel, secure_boot))
}

fn rebuild_for(
    t: Option<&Table>,
    os: &OsRelease,
    kernel: &str,
    secure_boot: Option<bool>,
) -> RebuildAdvice {
    let by_id =
        |id: &str| t.and_then(|t| t.families.iter().find(|f| f.ids.iter().any(|i| i == id)));
    let (family, derivative) = match os.id.as_deref().and_then(by_id) {
        Some(f) => (Some(f), false),
        None => (os.id_like.iter().find_map(|l| by_id(l)), true),
    };
    let route = family.and_then(|f| f.rebuild.as_ref());
    // A kernel release is one token of [A-Za-z0-9._+-]: anything else is not put in a
    // command line the user pastes.
    let kernel_ok = !kernel.is_empty()
        && kernel
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-~".contains(&b));
    RebuildAdvice {
        distro: os.pretty_name.clone().or_else(|| os.id.clone()),
        commands: route
            .filter(|_| kernel_ok)
            .map(|r| {
                r.commands
                    .iter()
                    .map(|c| c.replace("{kernel}", kernel))
                    .collect()
            })
            .unwrap_or_default(),
        confirmed: route.is_some_and(|r| r.confirmed) && !derivative,
        secure_boot,
        mok_command: family.and_then(|f| f.mok_command.clone()),
    }
}

/// The host's `/etc/os-release` (None off Linux, or when there is none): what
/// `recommend` is told so that it knows whether the distribution packages a driver.
pub fn os_release(host: &Host) -> Option<OsRelease> {
    (host.os == crate::compat::Os::Linux).then(|| distro::read(host).unwrap_or_default())
}

/// Whether the distribution `os` packages a driver of at least `minimum` (of `branch`
/// when one is asked for, else the newest known that meets `minimum`) within
/// `last_branch`: an update that is ours to advise, command by command (#32).
pub fn packaged(
    os: &OsRelease,
    minimum: Option<&Version>,
    branch: Option<u32>,
    last_branch: Option<u32>,
) -> bool {
    embedded().is_some_and(|t| {
        let a = advise(t, os, minimum, branch, last_branch, None);
        a.family.is_some() && a.package.is_some() && !a.commands.is_empty()
    })
}

/// The advice for a driver of at least `minimum` on the distribution `os` (a fleet
/// report's, judged on any machine, #36): None when the table gives no command for it.
pub fn commands_for(os: &OsRelease, minimum: Option<&Version>) -> Option<LinuxDriverAdvice> {
    let a = advise(embedded()?, os, minimum, None, None, None);
    (a.family.is_some() && !a.commands.is_empty()).then_some(a)
}

/// The decision, from the table and what was read.
fn advise(
    t: &Table,
    os: &OsRelease,
    minimum: Option<&Version>,
    branch: Option<u32>,
    last_branch: Option<u32>,
    secure_boot: Option<bool>,
) -> LinuxDriverAdvice {
    // The distribution's own ID first; a derivative through ID_LIKE (then unconfirmed).
    let by_id = os
        .id
        .as_deref()
        .and_then(|id| t.families.iter().find(|f| f.ids.iter().any(|i| i == id)));
    let (family, derivative) = match by_id {
        Some(f) => (f, false),
        None => match os
            .id_like
            .iter()
            .find_map(|like| t.families.iter().find(|f| f.ids.iter().any(|i| i == like)))
        {
            Some(f) => (f, true),
            None => return unknown(os, secure_boot),
        },
    };
    // A derivative's VERSION_ID is its own, not its parent's: only the generic route.
    let release = (!derivative)
        .then(|| {
            os.version_id
                .as_deref()
                .and_then(|v| find_release(family, v))
        })
        .flatten();
    // The toolkit's branch first; a release that ships none of it and has no other
    // source gives the newest branch it has that still runs it (never an invented one).
    let wanted = branch.map(|b| {
        let b = Version::new(&[b]);
        minimum.map_or(b.clone(), |m| m.clone().max(b))
    });
    let mut short_of = None;
    let mut picked = pick(family, release, wanted.as_ref().or(minimum), last_branch);
    let generic = |p: &Option<(&Route, Option<u32>, bool)>| {
        p.is_some_and(|(r, b, _)| b.is_none() && std::ptr::eq(r, &family.generic))
    };
    if branch.is_some()
        && generic(&picked)
        && let Some(r) = release
        && let Some(b) = r
            .branches
            .iter()
            .copied()
            .filter(|b| last_branch.is_none_or(|l| *b <= l))
            .rfind(|b| minimum.is_none_or(|m| *b >= m.major()))
        && let Some(route) = &family.branch
    {
        picked = Some((route, Some(b), r.confirmed));
        short_of = branch;
    }
    let Some((route, branch, release_confirmed)) = picked else {
        // Nothing here stays within the GPUs' last branch.
        return LinuxDriverAdvice {
            family: Some(family.name.clone()),
            ..unknown(os, secure_boot)
        };
    };
    let fill = |s: &str| match branch {
        Some(b) => s.replace("{branch}", &b.to_string()),
        None => s.to_string(),
    };
    LinuxDriverAdvice {
        distro: os.pretty_name.clone().or_else(|| os.id.clone()),
        family: Some(family.name.clone()),
        package: route.package.as_deref().map(fill),
        commands: route.commands.iter().map(|c| fill(c)).collect(),
        non_free: family.non_free,
        secure_boot,
        mok_command: family.mok_command.clone(),
        last_branch: None,
        short_of,
        confirmed: route.confirmed
            && release_confirmed
            && !derivative
            && (secure_boot != Some(true) || family.mok_command.is_none() || family.mok_confirmed),
    }
}

fn find_release<'a>(f: &'a Family, version_id: &str) -> Option<&'a table::Release> {
    let major = version_id.split('.').next().unwrap_or(version_id);
    f.releases
        .iter()
        .find(|r| r.version_id == version_id)
        .or_else(|| {
            f.releases
                .iter()
                .find(|r| !r.version_id.contains('.') && r.version_id == major)
        })
}

/// The route: the release's own branch when one is new enough, else the release's other
/// source, else the family's generic commands. Returns the branch for `{branch}`. With
/// `last_branch`, only a release branch at or below it: the other routes install the
/// newest driver (None then).
fn pick<'a>(
    f: &'a Family,
    release: Option<&'a table::Release>,
    minimum: Option<&Version>,
    last_branch: Option<u32>,
) -> Option<(&'a Route, Option<u32>, bool)> {
    if let Some(r) = release {
        // The lowest branch that is new enough (it keeps older GPUs); any: the newest.
        let within = |b: &u32| last_branch.is_none_or(|l| *b <= l);
        let branch = match minimum {
            Some(m) => r
                .branches
                .iter()
                .copied()
                .filter(within)
                .find(|&b| b >= m.major()),
            None => r.branches.iter().copied().rfind(within),
        };
        if let (Some(b), Some(route)) = (branch, &f.branch) {
            return Some((route, Some(b), r.confirmed));
        }
        if last_branch.is_some() {
            return None;
        }
        if let Some(newer) = &r.newer {
            return Some((newer, None, r.confirmed));
        }
    }
    last_branch.is_none().then_some((&f.generic, None, true))
}

#[cfg(test)]
mod tests;
