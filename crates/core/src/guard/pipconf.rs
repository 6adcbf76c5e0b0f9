//! pip's other configuration files, read for the user's own `constraint` setting.
//!
//! pip merges its files global → user → site, then `PIP_CONFIG_FILE`'s, a later file's
//! key replacing an earlier one's, and a command's section (`[install]`) replaces
//! `[global]` whichever file it is in; `PIP_CONSTRAINT` replaces them all, and
//! `PIP_CONFIG_FILE=os.devnull` loads no file at all
//! (https://pip.pypa.io/en/stable/topics/configuration/ "Location", "Loading order",
//! "PIP_CONFIG_FILE"; `pip/_internal/configuration.py` `OVERRIDE_ORDER`,
//! `cli/parser.py` `_get_ordered_configuration_items`; checked with pip 23.2.1: a site
//! `[install] constraint` hides a user's `[global] constraint`, and a `[install]
//! constraint` in `PIP_CONFIG_FILE`'s file hides the site's). Our site `[install]
//! constraint` would thus switch off a constraint the user set anywhere else, so the
//! value pip would have used is gathered here and kept beside ours (pip splits the
//! value at whitespace: several files are one value).
//!
//! The files are the user's: read bounded (`place::read_regular`), a link never
//! followed (such a file is passed over, as one that cannot be read).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::pin;
use crate::compat::Os;
use crate::message::Message;
use crate::msg;
use crate::platform::Host;

/// A pip configuration file is a few lines; anything near this is not one.
const MAX_CONFIG: u64 = 1 << 20;

/// One file's `constraint` values (ours left out; empty: not set, as pip ignores an
/// empty value), as the file's bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Values {
    global: Vec<Vec<u8>>,
    install: Vec<Vec<u8>>,
}

impl Values {
    fn of(conf: &[u8]) -> Values {
        Values {
            global: pin::constraint_tokens(conf, "global"),
            install: pin::constraint_tokens(conf, "install"),
        }
    }
}

/// Why pip ignores the pin whatever its site configuration says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Ignored {
    /// `PIP_CONSTRAINT` is set: it replaces every configuration file's value.
    PipConstraint { value: String },
    /// `PIP_CONFIG_FILE` is `os.devnull`: pip reads no configuration file.
    ConfigFileNull { value: String },
    /// `PIP_CONFIG_FILE` names a file whose `[install] constraint` replaces ours.
    ConfigFileInstall { file: PathBuf },
}

impl Ignored {
    /// What happens, and how to have the guard back (`file`: our constraints file).
    pub fn message(&self, torch: &str, file: &Path) -> Message {
        match self {
            Ignored::PipConstraint { value } => msg!(
                "guard_ignored_pip_constraint",
                value = value,
                torch = torch,
                file = file.display()
            ),
            Ignored::ConfigFileNull { value } => {
                msg!("guard_ignored_config_null", value = value, torch = torch)
            }
            Ignored::ConfigFileInstall { file: conf } => msg!(
                "guard_ignored_config_install",
                config = conf.display(),
                torch = torch,
                file = file.display()
            ),
        }
    }
}

/// pip's files other than the site one, as this user's pip reads them.
#[derive(Debug, Clone, Default)]
pub struct Outside {
    /// `PIP_CONFIG_FILE` is os.devnull: no file is read, the site one included.
    null: Option<String>,
    /// Global then user files, in pip's order.
    before: Vec<Values>,
    /// `PIP_CONFIG_FILE`'s file (read after the site file).
    env: Option<(PathBuf, Values)>,
}

/// The global and user files pip reads on `os` (pip's docs, "Location"), in order, and
/// `PIP_CONFIG_FILE`; the user's are skipped when that names an existing file (pip's
/// `iter_config_files`).
pub fn files(host: &Host, os: Os) -> (Vec<PathBuf>, Option<PathBuf>) {
    let env_file = host.var("PIP_CONFIG_FILE").map(PathBuf::from);
    let mut out = Vec::new();
    match os {
        Os::Linux => {
            // `$XDG_CONFIG_DIRS/pip/pip.conf` (default /etc/xdg), then /etc/pip.conf.
            let dirs = host.var("XDG_CONFIG_DIRS").unwrap_or("/etc/xdg");
            for d in dirs.split(':').filter(|d| !d.trim().is_empty()) {
                out.push(host.system_path(d).join("pip").join("pip.conf"));
            }
            out.push(host.system_path("/etc/pip.conf"));
        }
        Os::Windows => {
            let data = host
                .var("ProgramData")
                .map_or_else(|| host.system_path(r"C:\ProgramData"), PathBuf::from);
            out.push(data.join("pip").join("pip.ini"));
        }
    }
    let user_skipped = env_file.as_ref().is_some_and(|f| f.exists());
    if !user_skipped && let Some(home) = host.home() {
        match os {
            Os::Linux => {
                out.push(home.join(".pip").join("pip.conf"));
                let config = host
                    .var("XDG_CONFIG_HOME")
                    .map_or_else(|| home.join(".config"), PathBuf::from);
                out.push(config.join("pip").join("pip.conf"));
            }
            Os::Windows => {
                out.push(home.join("pip").join("pip.ini"));
                if let Some(appdata) = host.var("APPDATA") {
                    out.push(Path::new(appdata).join("pip").join("pip.ini"));
                }
            }
        }
    }
    (out, env_file)
}

/// pip follows links to its configuration files (dotfile managers and NixOS link them),
/// so we do too: these files are only read, bounded and judged regular on the handle, and
/// no run that writes a pin is elevated.
fn read(path: &Path) -> Values {
    crate::place::read_regular_following(path, MAX_CONFIG)
        .ok()
        .flatten()
        .map(|b| Values::of(&b))
        .unwrap_or_default()
}

fn is_null(os: Os, value: &str) -> bool {
    match os {
        Os::Windows => value.eq_ignore_ascii_case("nul"),
        Os::Linux => value == "/dev/null",
    }
}

impl Outside {
    /// Reads the files `host`'s pip would read on `os`.
    pub fn read(host: &Host, os: Os) -> Outside {
        let (before, env_file) = files(host, os);
        if let Some(f) = env_file
            .as_ref()
            .filter(|f| is_null(os, &f.to_string_lossy()))
        {
            return Outside {
                null: Some(f.to_string_lossy().into_owned()),
                ..Outside::default()
            };
        }
        Outside {
            null: None,
            before: before.iter().map(|p| read(p)).collect(),
            env: env_file.map(|f| {
                let v = read(&f);
                (f, v)
            }),
        }
    }

    /// The constraint files pip would use without ours, given the site file `site` (for
    /// `PIP_CONSTRAINT`: a name that is not UTF-8 is passed as its lossy text).
    pub fn user_value(&self, site: &[u8]) -> Vec<String> {
        self.user_tokens(site)
            .iter()
            .map(|t| String::from_utf8_lossy(t).into_owned())
            .collect()
    }

    fn user_tokens(&self, site: &[u8]) -> Vec<Vec<u8>> {
        if self.null.is_some() {
            return Vec::new();
        }
        let site = Values::of(site);
        let all: Vec<&Values> = self
            .before
            .iter()
            .chain(std::iter::once(&site))
            .chain(self.env.as_ref().map(|(_, v)| v))
            .collect();
        let last = |pick: fn(&Values) -> &Vec<Vec<u8>>| {
            all.iter()
                .rev()
                .map(|v| pick(v))
                .find(|v| !v.is_empty())
                .cloned()
        };
        last(|v| &v.install)
            .or_else(|| last(|v| &v.global))
            .unwrap_or_default()
    }

    /// What our site value carries besides our file: the user's files from elsewhere,
    /// which our `[install]` key would hide, byte for byte (pip reads both files in the
    /// same encoding). None when the site file's `[install]` has the user's own value (it
    /// already hides the others; ours is added to it).
    pub fn extras(&self, site: &[u8]) -> Vec<Vec<u8>> {
        if !pin::constraint_tokens(site, "install").is_empty() {
            return Vec::new();
        }
        self.user_tokens(site)
    }

    /// Why pip would ignore the pin (`host`'s environment, and the file it names).
    pub fn ignored(&self, host: &Host) -> Option<Ignored> {
        if let Some(value) = host.var("PIP_CONSTRAINT") {
            return Some(Ignored::PipConstraint {
                value: value.to_string(),
            });
        }
        if let Some(value) = &self.null {
            return Some(Ignored::ConfigFileNull {
                value: value.clone(),
            });
        }
        self.env
            .as_ref()
            .filter(|(_, v)| !v.install.is_empty())
            .map(|(f, _)| Ignored::ConfigFileInstall { file: f.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn host(root: &Path, os: Os, env: &[(&str, &str)]) -> Host {
        let env: BTreeMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Host::sandbox(os, root, env)
    }

    fn put(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The files pip's docs name, in its order; PIP_CONFIG_FILE naming a file skips the
    /// user's.
    #[test]
    fn the_files_pip_reads_on_each_system() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let h = host(r, Os::Linux, &[("HOME", "/home/u")]);
        let (found, env) = files(&h, Os::Linux);
        assert_eq!(
            found,
            [
                r.join("etc/xdg/pip/pip.conf"),
                r.join("etc/pip.conf"),
                PathBuf::from("/home/u/.pip/pip.conf"),
                PathBuf::from("/home/u/.config/pip/pip.conf"),
            ]
        );
        assert_eq!(env, None);
        let h = host(
            r,
            Os::Linux,
            &[
                ("HOME", "/home/u"),
                ("XDG_CONFIG_HOME", "/x"),
                ("XDG_CONFIG_DIRS", "/a:/b"),
            ],
        );
        assert_eq!(
            files(&h, Os::Linux).0,
            [
                r.join("a/pip/pip.conf"),
                r.join("b/pip/pip.conf"),
                r.join("etc/pip.conf"),
                PathBuf::from("/home/u/.pip/pip.conf"),
                PathBuf::from("/x/pip/pip.conf"),
            ]
        );
        let h = host(
            r,
            Os::Windows,
            &[
                ("USERPROFILE", r"C:\Users\u"),
                ("APPDATA", r"C:\Users\u\AppData\Roaming"),
                ("ProgramData", r"C:\ProgramData"),
            ],
        );
        assert_eq!(
            files(&h, Os::Windows).0,
            [
                Path::new(r"C:\ProgramData").join("pip").join("pip.ini"),
                Path::new(r"C:\Users\u").join("pip").join("pip.ini"),
                Path::new(r"C:\Users\u\AppData\Roaming")
                    .join("pip")
                    .join("pip.ini"),
            ]
        );
        let env_file = r.join("mine.conf");
        put(&env_file, "[global]\n");
        let h = host(
            r,
            Os::Linux,
            &[
                ("HOME", "/home/u"),
                ("PIP_CONFIG_FILE", env_file.to_str().unwrap()),
            ],
        );
        let (found, env) = files(&h, Os::Linux);
        assert_eq!(
            found,
            [r.join("etc/xdg/pip/pip.conf"), r.join("etc/pip.conf")]
        );
        assert_eq!(env, Some(env_file));
    }

    /// The value pip would use without ours: a command's section over `[global]`, a later
    /// file over an earlier one, the site file's own value kept as it is.
    #[test]
    fn the_users_value_is_the_one_pip_would_use() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let home = r.join("home");
        let env = [("HOME", home.to_str().unwrap())];
        let h = host(r, Os::Linux, &env);
        let user = home.join(".config/pip/pip.conf");
        let global = r.join("etc/pip.conf");
        assert_eq!(
            Outside::read(&h, Os::Linux).user_value(b""),
            Vec::<String>::new()
        );

        put(&global, "[global]\nconstraint = /etc/c.txt\n");
        put(&user, "[global]\nconstraint = /u/a.txt\n    /u/b.txt\n");
        let o = Outside::read(&h, Os::Linux);
        assert_eq!(o.user_value(b""), ["/u/a.txt", "/u/b.txt"]);
        assert_eq!(o.extras(b""), [b"/u/a.txt".to_vec(), b"/u/b.txt".to_vec()]);
        // The site file's [global] is later than the user's.
        let site = b"[global]\nconstraint = /s/g.txt\n";
        assert_eq!(o.user_value(site), ["/s/g.txt"]);
        assert_eq!(o.extras(site), [b"/s/g.txt".to_vec()]);
        // An [install] value anywhere beats every [global] one.
        put(&global, "[install]\nconstraint = /etc/i.txt\n");
        let o = Outside::read(&h, Os::Linux);
        assert_eq!(o.user_value(site), ["/etc/i.txt"]);
        // The site file's own [install] value is pip's value; ours is added to it there.
        let site = b"[install]\nconstraint = /s/i.txt\n";
        assert_eq!(o.user_value(site), ["/s/i.txt"]);
        assert!(o.extras(site).is_empty());
        // Our own lines are never the user's.
        let with = pin::add_ours(b"", "/u/a.txt /v/cuda-setup-constraints.txt");
        put(&global, "");
        let o = Outside::read(&h, Os::Linux);
        assert_eq!(o.user_value(&with), ["/u/a.txt", "/u/b.txt"]);
        assert!(pin::constraint_values(&with, "install").is_empty());
        // A name in the locale's encoding (GBK 张, not UTF-8) is copied byte for byte: pip
        // reads both files in that encoding.
        std::fs::write(&user, b"[global]\nconstraint = /u/\xd5\xc5.txt\n").unwrap();
        let o = Outside::read(&h, Os::Linux);
        assert_eq!(o.extras(b""), [b"/u/\xd5\xc5.txt".to_vec()]);
        let mut value = o.extras(b"").concat();
        value.extend_from_slice(b" /v/cuda-setup-constraints.txt");
        let with = pin::add_ours(b"", &value);
        assert!(with.ends_with(b"constraint = /u/\xd5\xc5.txt /v/cuda-setup-constraints.txt\n"));
    }

    /// A configuration file that is a link (stow, home-manager, NixOS) is read as pip
    /// reads it, so the user's constraint is kept on our line; a FIFO there is not a
    /// regular file and is passed over without blocking.
    #[cfg(unix)]
    #[test]
    fn a_linked_file_is_read_as_pip_reads_it_and_a_fifo_never_blocks() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let home = r.join("home");
        let real = r.join("elsewhere.conf");
        put(&real, "[global]\nconstraint = /x.txt\n");
        std::fs::create_dir_all(home.join(".config/pip")).unwrap();
        std::os::unix::fs::symlink(&real, home.join(".config/pip/pip.conf")).unwrap();
        let h = host(r, Os::Linux, &[("HOME", home.to_str().unwrap())]);
        assert_eq!(Outside::read(&h, Os::Linux).user_value(b""), ["/x.txt"]);
        std::fs::remove_file(home.join(".config/pip/pip.conf")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(home.join(".config/pip/pip.conf"))
            .status()
            .is_ok_and(|s| s.success());
        if made {
            assert!(Outside::read(&h, Os::Linux).user_value(b"").is_empty());
        }
    }

    /// PIP_CONSTRAINT, PIP_CONFIG_FILE=os.devnull, and a PIP_CONFIG_FILE whose
    /// `[install]` has a constraint: pip ignores the pin, and status says why.
    #[test]
    fn what_makes_pip_ignore_the_pin() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let h = host(r, Os::Linux, &[("HOME", "/nonexistent")]);
        assert_eq!(Outside::read(&h, Os::Linux).ignored(&h), None);
        let h = host(r, Os::Linux, &[("PIP_CONSTRAINT", "/c.txt")]);
        assert_eq!(
            Outside::read(&h, Os::Linux).ignored(&h),
            Some(Ignored::PipConstraint {
                value: "/c.txt".into()
            })
        );
        let h = host(r, Os::Linux, &[("PIP_CONFIG_FILE", "/dev/null")]);
        let o = Outside::read(&h, Os::Linux);
        assert_eq!(
            o.ignored(&h),
            Some(Ignored::ConfigFileNull {
                value: "/dev/null".into()
            })
        );
        assert!(o.user_value(b"[install]\nconstraint = /s.txt\n").is_empty());
        let h = host(r, Os::Windows, &[("PIP_CONFIG_FILE", "NUL")]);
        assert!(matches!(
            Outside::read(&h, Os::Windows).ignored(&h),
            Some(Ignored::ConfigFileNull { .. })
        ));
        let f = r.join("pip-env.conf");
        put(&f, "[global]\nconstraint = /g.txt\n");
        let h = host(r, Os::Linux, &[("PIP_CONFIG_FILE", f.to_str().unwrap())]);
        assert_eq!(Outside::read(&h, Os::Linux).ignored(&h), None);
        put(&f, "[install]\nconstraint = /i.txt\n");
        let o = Outside::read(&h, Os::Linux);
        assert_eq!(
            o.ignored(&h),
            Some(Ignored::ConfigFileInstall { file: f.clone() })
        );
        let m = o
            .ignored(&h)
            .unwrap()
            .message("2.7.1+cu118", Path::new("/v/cuda-setup-constraints.txt"));
        let en = crate::i18n::render(&m, crate::i18n::Lang::En);
        assert!(en.contains(&f.display().to_string()), "{en}");
    }
}
