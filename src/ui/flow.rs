//! The wizard's pages and the order a run visits them. A leaf: the session and the pages
//! name pages through it without knowing each other.

use cuda_setup_core::recommend::Goal;

/// The wizard's pages, in the order a first-time setup visits them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Welcome,
    /// Repair mode: the audit's findings and their fixes.
    Repair,
    System,
    Choose,
    Prepare,
    Install,
    Cudnn,
    Verify,
    Pytorch,
    Done,
}

impl Page {
    pub const ALL: [Page; 10] = [
        Page::Welcome,
        Page::Repair,
        Page::System,
        Page::Choose,
        Page::Prepare,
        Page::Install,
        Page::Cudnn,
        Page::Verify,
        Page::Pytorch,
        Page::Done,
    ];

    /// The page's short title (the step bar's).
    pub fn title_key(self) -> &'static str {
        match self {
            Page::Welcome => "ui_page_welcome",
            Page::Repair => "ui_page_repair",
            Page::System => "ui_page_system",
            Page::Choose => "ui_page_choose",
            Page::Prepare => "ui_page_prepare",
            Page::Install => "ui_page_install",
            Page::Cudnn => "ui_page_cudnn",
            Page::Verify => "ui_page_verify",
            Page::Pytorch => "ui_page_pytorch",
            Page::Done => "ui_page_done",
        }
    }

    /// A stable name (`--page` takes it).
    pub fn id(self) -> &'static str {
        match self {
            Page::Welcome => "welcome",
            Page::Repair => "repair",
            Page::System => "system",
            Page::Choose => "choose",
            Page::Prepare => "prepare",
            Page::Install => "install",
            Page::Cudnn => "cudnn",
            Page::Verify => "verify",
            Page::Pytorch => "pytorch",
            Page::Done => "done",
        }
    }

    pub fn from_id(s: &str) -> Option<Page> {
        Page::ALL.into_iter().find(|p| p.id() == s)
    }
}

/// First-time setup, or repair of what is already installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Setup,
    Repair,
}

/// The pages a mode and goal visit. The PyTorch goal needs no toolkit, cuDNN or smoke
/// test: its check is the doctor, on the PyTorch page. When the plan installs the driver
/// (`installs_driver`), the PyTorch goal visits the Install page too: the driver is
/// installed there, with its progress, before PyTorch.
pub fn flow(mode: Mode, goal: Goal, installs_driver: bool) -> &'static [Page] {
    match (mode, goal, installs_driver) {
        (Mode::Repair, _, _) => &[Page::Welcome, Page::Repair, Page::Done],
        (Mode::Setup, Goal::Developer, _) => &[
            Page::Welcome,
            Page::System,
            Page::Choose,
            Page::Prepare,
            Page::Install,
            Page::Cudnn,
            Page::Verify,
            Page::Pytorch,
            Page::Done,
        ],
        (Mode::Setup, Goal::Pytorch, true) => &[
            Page::Welcome,
            Page::System,
            Page::Choose,
            Page::Prepare,
            Page::Install,
            Page::Pytorch,
            Page::Done,
        ],
        (Mode::Setup, Goal::Pytorch, false) => &[
            Page::Welcome,
            Page::System,
            Page::Choose,
            Page::Prepare,
            Page::Pytorch,
            Page::Done,
        ],
    }
}

/// The page after and before `page` in `steps` (a page not in them counts as the first).
pub fn neighbours(steps: &[Page], page: Page) -> (Option<Page>, Option<Page>) {
    let here = steps.iter().position(|p| *p == page).unwrap_or(0);
    (
        steps.get(here + 1).copied(),
        here.checked_sub(1).map(|i| steps[i]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pytorch_goal_visits_install_only_when_the_driver_is_installed() {
        let plain = flow(Mode::Setup, Goal::Pytorch, false);
        assert!(!plain.contains(&Page::Install));
        let with_driver = flow(Mode::Setup, Goal::Pytorch, true);
        assert_eq!(
            neighbours(with_driver, Page::Prepare),
            (Some(Page::Install), Some(Page::Choose))
        );
        assert_eq!(
            neighbours(with_driver, Page::Install).0,
            Some(Page::Pytorch)
        );
        assert_eq!(
            flow(Mode::Setup, Goal::Developer, true),
            flow(Mode::Setup, Goal::Developer, false)
        );
    }
}
