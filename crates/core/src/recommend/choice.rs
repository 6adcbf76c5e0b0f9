//! The two paths of a driver that works but is old (#32), in words both front ends show.

use super::{DriverChoice, DriverPath, PathOutcome, Recommendation};
use crate::compat::Os;
use crate::message::Message;
use crate::msg;

/// NVIDIA's display-driver installers weigh 0.7–0.9 GB (dossier §12: 675 MB for 537.58,
/// about 918 MB for 591.86), shown when the package's own size is not recorded.
const DRIVER_SIZE_RANGE: &str = "0.7–0.9 GB";

impl DriverChoice {
    /// One path in a line: "Update the driver first (617.14, about 0.7–0.9 GB, restart
    /// needed) → PyTorch 2.13.0", or "Keep the current driver (512.95) → PyTorch 2.7.1".
    pub fn label(&self, path: DriverPath, os: Os) -> Message {
        let o = self.outcome(path);
        let driver = o
            .driver
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        let gets = gets(o);
        match path {
            DriverPath::Keep => msg!("driver_path_keep", driver = driver, gets = gets),
            DriverPath::Update if os == Os::Linux || !self.ours => {
                msg!("driver_path_update_linux", driver = driver, gets = gets)
            }
            DriverPath::Update => msg!(
                "driver_path_update",
                driver = driver,
                size = o
                    .download_size
                    .map_or_else(|| DRIVER_SIZE_RANGE.to_string(), crate::units::bytes),
                gets = gets
            ),
        }
    }

    /// Why the default is the default.
    pub fn why_default(&self, os: Os) -> Message {
        match (self.default, os) {
            (DriverPath::Update, Os::Windows) => msg!("driver_path_default_update"),
            (DriverPath::Update, Os::Linux) => msg!("driver_path_default_update_linux"),
            (DriverPath::Keep, _) => msg!("driver_path_default_keep"),
        }
    }

    pub fn outcome(&self, path: DriverPath) -> &PathOutcome {
        match path {
            DriverPath::Update => &self.update,
            DriverPath::Keep => &self.keep,
        }
    }
}

/// "CUDA 13.4.1 + PyTorch 2.13.0": names and numbers, the same in every language.
fn gets(o: &PathOutcome) -> String {
    let torch = o.torch.as_ref().map(|t| format!("PyTorch {t}"));
    let toolkit = o.toolkit.as_ref().map(|t| format!("CUDA {t}"));
    match (toolkit, torch) {
        (Some(k), Some(t)) => format!("{k} + {t}"),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => String::new(),
    }
}

impl Recommendation {
    /// "Driver 512.95 · supports CUDA up to 11.6", when both are known.
    pub fn driver_supports(&self) -> Option<Message> {
        let d = &self.driver;
        Some(msg!(
            "driver_supports",
            driver = d.current.as_ref()?,
            cuda = d.cuda.as_ref()?
        ))
    }

    /// With a driver that works but is old kept (the choice's keep path): the driver's
    /// row at the end says it works and what an update would unlock — "Driver 512.95 ·
    /// supports CUDA up to 11.6: works; updating the driver would allow PyTorch 2.13.0" —
    /// never a plain "installed". None without a choice, or with the update chosen.
    pub fn driver_kept_old(&self) -> Option<Message> {
        let c = self
            .choice
            .as_ref()
            .filter(|c| c.chosen == DriverPath::Keep)?;
        let d = &self.driver;
        Some(msg!(
            "driver_kept_old",
            driver = d.current.as_ref()?,
            cuda = d.cuda.as_ref()?,
            gets = gets(&c.update)
        ))
    }

    /// With the driver kept and a wheel built with a CUDA above the one the driver lists
    /// (cu118 on a driver of CUDA 11.6): why that is fine (minor-version compatibility;
    /// the wheel was chosen because the driver meets its line's floor).
    pub fn wheel_above_driver(&self) -> Option<Message> {
        let d = &self.driver;
        let t = self.torch.as_ref()?;
        let cuda = d.cuda.as_ref()?;
        (d.current.is_some()
            && d.action == super::DriverAction::None
            && t.cuda.major_minor() > cuda.major_minor()
            && t.cuda.major() == cuda.major())
        .then(|| {
            msg!(
                "driver_minor_compat_wheel",
                torch = &t.version,
                wheel = t.cuda.major_minor(),
                cuda = cuda.major_minor(),
                major = t.cuda.major()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::compat::{Os, Tables};
    use crate::i18n::{Lang, render};
    use crate::linux_driver::OsRelease;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn facts(os: Os, gpu: &str, cc: &str, driver: Option<&str>) -> Facts {
        Facts {
            os,
            gpus: vec![GpuFact {
                name: Some(gpu.into()),
                compute_capability: cc.parse().unwrap(),
            }],
            driver: driver.map(v),
            driver_cuda: None,
            python: Some(v("3.12")),
            installed_toolkits: vec![],
            unidentified_gpus: vec![],
            notes: vec![],
            host_kind: HostKind::Native,
            free_threaded: false,
        }
    }

    fn request(goal: Goal, driver: DriverPref, distro: Option<OsRelease>) -> Request {
        Request {
            goal,
            cuda: None,
            method: Method::Installer,
            driver,
            distro,
            ..Default::default()
        }
    }

    fn ubuntu_2404() -> OsRelease {
        OsRelease {
            id: Some("ubuntu".into()),
            id_like: vec!["debian".into()],
            version_id: Some("24.04".into()),
            pretty_name: Some("Ubuntu 24.04.1 LTS".into()),
        }
    }

    fn en(m: &Message) -> String {
        render(m, Lang::En)
    }

    /// A: no driver, developer, Windows: CUDA 13.4 and a driver of its branch (R615), and
    /// the headline names the driver installed.
    #[test]
    fn a_new_driver_is_of_the_toolkits_branch_on_windows() {
        let t = Tables::embedded().unwrap();
        let f = facts(Os::Windows, "NVIDIA GeForce RTX 3060", "8.6", None);
        let rec = recommend(&t, &f, &request(Goal::Developer, DriverPref::Auto, None));
        let tk = rec.toolkit.as_ref().unwrap();
        assert_eq!(tk.version.major_minor(), v("13.4"));
        assert_eq!(rec.driver.action, DriverAction::Install);
        assert_eq!(rec.driver.branch, Some(615));
        let i = rec.driver.install.as_ref().expect("a driver to install");
        assert!(i.version.major() >= 615, "{}", i.version);
        let h = rec.driver_headline().unwrap();
        assert_eq!(h.key, "driver_headline_install_version");
        let text = en(&h);
        assert!(
            text.contains(&i.version.to_string()) && text.contains("R615"),
            "{text}"
        );
        // Never "install the newest driver" beside a floor the install is above.
        assert!(
            rec.reasons
                .iter()
                .all(|r| r.key != "toolkit_driver_unconfirmed")
        );
        assert!(rec.reasons.iter().any(|r| r.key == "toolkit_driver_branch"));
    }

    /// A: a package line that knows no R615 driver (the RTX package's newest is 580.88):
    /// the newest known, with the reason, and a headline that says so.
    #[test]
    fn a_package_line_without_the_branch_says_so() {
        let t = Tables::embedded().unwrap();
        let f = facts(Os::Windows, "NVIDIA RTX A4000", "8.6", None);
        let rec = recommend(&t, &f, &request(Goal::Developer, DriverPref::Auto, None));
        assert_eq!(rec.driver.branch, Some(615));
        let i = rec.driver.install.as_ref().expect("the newest known");
        assert_eq!(i.version, v("580.88"));
        assert!(
            rec.reasons
                .iter()
                .any(|r| r.key == "driver_branch_not_known")
        );
        let h = rec.driver_headline().unwrap();
        assert_eq!(h.key, "driver_headline_short");
        assert!(en(&h).contains("580.88") && en(&h).contains("R615"));
    }

    /// A: Linux, no driver, developer: R615 asked for, in the headline.
    #[test]
    fn a_new_driver_is_of_the_toolkits_branch_on_linux() {
        let t = Tables::embedded().unwrap();
        let f = facts(Os::Linux, "NVIDIA GeForce RTX 3060", "8.6", None);
        let rec = recommend(&t, &f, &request(Goal::Developer, DriverPref::Auto, None));
        assert_eq!(
            rec.toolkit.as_ref().unwrap().version.major_minor(),
            v("13.4")
        );
        assert_eq!(rec.driver.branch, Some(615));
        let h = rec.driver_headline().unwrap();
        assert_eq!(h.key, "driver_headline_install_branch");
        assert!(en(&h).contains("R615"), "{}", en(&h));
    }

    /// A: a driver of the 13.x floor already there runs CUDA 13.4: no update, the
    /// minor-version compatibility reason, no branch asked for.
    #[test]
    fn a_driver_there_needs_only_the_floor() {
        let t = Tables::embedded().unwrap();
        for (os, d) in [(Os::Windows, "580.88"), (Os::Linux, "580.65.06")] {
            let f = facts(os, "NVIDIA GeForce RTX 3060", "8.6", Some(d));
            let mut req = request(Goal::Developer, DriverPref::Auto, None);
            req.cuda = Some(v("13.4"));
            let rec = recommend(&t, &f, &req);
            assert_eq!(
                rec.toolkit.as_ref().unwrap().version.major_minor(),
                v("13.4")
            );
            assert_eq!(rec.driver.action, DriverAction::None, "{os:?}");
            assert_eq!(rec.driver.branch, None);
            assert!(rec.driver_headline().is_none());
            assert!(
                rec.reasons.iter().any(|r| r.key == "toolkit_minor_compat"),
                "{os:?}"
            );
        }
    }

    /// The machine: an RTX 3060 on Windows with driver 512.95.
    fn rtx3060_on_512_95(goal: Goal, pref: DriverPref) -> Recommendation {
        let t = Tables::embedded().unwrap();
        let f = facts(
            Os::Windows,
            "NVIDIA GeForce RTX 3060",
            "8.6",
            Some("512.95"),
        );
        recommend(&t, &f, &request(goal, pref, None))
    }

    /// B: an RTX 3060 on driver 512.95 (CUDA 11.6): both paths; update by default on
    /// Windows (a package of ours), to the newer PyTorch line.
    #[test]
    fn b_an_old_driver_gets_both_paths_update_by_default() {
        let rec = rtx3060_on_512_95(Goal::Pytorch, DriverPref::Auto);
        let c = rec.choice.as_ref().expect("two paths");
        assert_eq!(
            (c.default, c.chosen),
            (DriverPath::Update, DriverPath::Update)
        );
        assert!(c.ours && c.update.restart && !c.keep.restart);
        assert_eq!(c.keep.torch, Some(v("2.7.1")));
        assert_eq!(c.keep.driver, Some(v("512.95")));
        let newer = c.update.torch.clone().unwrap();
        assert!(newer.major_minor() > v("2.7"), "{newer}");
        // The picks follow the update: the driver step, the newer wheel.
        assert_eq!(rec.driver.action, DriverAction::Update);
        let i = rec.driver.install.as_ref().unwrap();
        assert_eq!(c.update.driver.as_ref(), Some(&i.version));
        assert_eq!(rec.torch.as_ref().unwrap().version, newer);
        assert_eq!(rec.driver.current, Some(v("512.95")));
        assert!(rec.reasons.iter().all(|r| r.key != "driver_missing"));
        assert!(rec.reasons.iter().any(|r| r.key == "driver_update_chosen"));
        let label = render(&c.label(DriverPath::Update, Os::Windows), Lang::Zh);
        assert!(
            label.starts_with("先更新驱动（") && label.contains("需重启"),
            "{label}"
        );
        assert!(label.contains(&format!("PyTorch {newer}")), "{label}");
        let keep = render(&c.label(DriverPath::Keep, Os::Windows), Lang::Zh);
        assert!(
            keep.contains("保留现在的驱动") && keep.contains("PyTorch 2.7.1"),
            "{keep}"
        );
        let s = render(&rec.driver_supports().unwrap(), Lang::Zh);
        assert_eq!(s, "驱动 512.95 · 最高支持 CUDA 11.6");
    }

    /// B: keep picked: PyTorch 2.7.1 on the driver as it is, no driver step, and the
    /// minor-version compatibility sentence for its CUDA 11.8.
    #[test]
    fn b_keep_runs_what_runs_now() {
        let rec = rtx3060_on_512_95(Goal::Pytorch, DriverPref::Keep);
        let c = rec.choice.as_ref().expect("two paths");
        assert_eq!(
            (c.default, c.chosen),
            (DriverPath::Update, DriverPath::Keep)
        );
        assert_eq!(rec.torch.as_ref().unwrap().version, v("2.7.1"));
        assert_eq!(rec.driver.action, DriverAction::None);
        assert!(rec.driver.install.is_none());
        let m = rec.wheel_above_driver().expect("cu118 above 11.6");
        let text = en(&m);
        assert!(text.contains("11.8") && text.contains("11.6"), "{text}");
        // Developer: CUDA 11.6 kept, a newer major after the update.
        let rec = rtx3060_on_512_95(Goal::Developer, DriverPref::Keep);
        let c = rec.choice.as_ref().expect("two paths");
        assert_eq!(c.keep.toolkit.as_ref().unwrap().major(), 11);
        assert!(c.update.toolkit.as_ref().unwrap().major() > 11);
    }

    /// B: Linux: update by default only where the distribution packages the driver.
    #[test]
    fn b_linux_defaults_to_keep_without_a_known_package() {
        let t = Tables::embedded().unwrap();
        let f = facts(
            Os::Linux,
            "NVIDIA GeForce RTX 3060",
            "8.6",
            Some("510.47.03"),
        );
        let arch = OsRelease {
            id: Some("arch".into()),
            ..Default::default()
        };
        for distro in [None, Some(arch)] {
            let rec = recommend(&t, &f, &request(Goal::Pytorch, DriverPref::Auto, distro));
            let c = rec.choice.as_ref().expect("two paths");
            assert_eq!((c.default, c.chosen), (DriverPath::Keep, DriverPath::Keep));
            assert!(!c.ours);
            assert_eq!(rec.driver.action, DriverAction::None);
        }
        let rec = recommend(
            &t,
            &f,
            &request(Goal::Pytorch, DriverPref::Auto, Some(ubuntu_2404())),
        );
        let c = rec.choice.as_ref().expect("two paths");
        assert_eq!(c.default, DriverPath::Update);
        assert_eq!(rec.driver.action, DriverAction::Update);
        // Inside WSL2 the driver is Windows': never ours to update from Linux.
        let mut wsl = f.clone();
        wsl.host_kind = HostKind::Wsl2;
        let rec = recommend(
            &t,
            &wsl,
            &request(Goal::Pytorch, DriverPref::Auto, Some(ubuntu_2404())),
        );
        assert_eq!(rec.choice.unwrap().default, DriverPath::Keep);
    }

    /// No choice where the driver runs the newest already, or where there is none.
    #[test]
    fn no_choice_without_an_old_driver() {
        let t = Tables::embedded().unwrap();
        for d in [None, Some("617.14")] {
            let f = facts(Os::Windows, "NVIDIA GeForce RTX 3060", "8.6", d);
            let rec = recommend(&t, &f, &request(Goal::Pytorch, DriverPref::Auto, None));
            assert!(rec.choice.is_none(), "{d:?}");
        }
    }
}
