//! Opening the window: `cuda-setup` with no subcommand. Where no display exists the user
//! is pointed to the command line instead (exit 1). The sandbox and what-if flags of
//! `install` are accepted too (hidden from --help), so the wizard can be driven in a
//! `--root` sandbox for tests, screenshots and demos.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_setup_core::compat::{Os, Tables};
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::recommend::Goal;
use cuda_setup_core::version::{ComputeCapability, PythonVersion, Version};
use cuda_setup_core::whatif::{Flags, WhatIf};

use super::app::{App, Options, Page};
use super::text::tf;

/// The wizard's own flags (no subcommand). Hidden: `cuda-setup --help` lists the CLI.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct Args {
    /// Install under DIR instead of the machine (like install's --root)
    #[arg(long, value_name = "DIR", hide = true)]
    pub root: Option<PathBuf>,
    /// The OS to install for (only with --root)
    #[arg(long, value_parser = crate::values::os(), hide = true, requires = "root")]
    pub os: Option<Os>,
    #[arg(long = "gpu-cc", value_name = "X.Y", hide = true)]
    pub gpu_cc: Vec<ComputeCapability>,
    #[arg(long, value_name = "NAME", hide = true)]
    pub gpu: Vec<String>,
    #[arg(long, value_name = "VER", hide = true, conflicts_with = "no_driver")]
    pub driver: Option<Version>,
    #[arg(long, hide = true)]
    pub no_driver: bool,
    #[arg(long, value_name = "X.Y", hide = true, requires = "driver")]
    pub driver_cuda: Option<Version>,
    /// The Python version to recommend for (3.13t: free-threaded)
    #[arg(long, value_name = "X.Y", hide = true)]
    pub python: Option<PythonVersion>,
    /// The interpreter PyTorch goes into
    #[arg(long, value_name = "PATH", hide = true)]
    pub python_exe: Option<PathBuf>,
    #[arg(long, value_name = "URL", hide = true, value_parser = cuda_setup_core::url::http_url)]
    pub mirror: Vec<String>,
    /// An offline bundle folder (`cuda-setup bundle`)
    #[arg(long, value_name = "DIR", hide = true)]
    pub bundle: Option<PathBuf>,
    #[arg(long, value_name = "VER", hide = true)]
    pub cuda: Option<Version>,
    #[arg(long, value_parser = crate::values::goal(), hide = true)]
    pub goal: Option<Goal>,
    #[arg(long, value_name = "ZIP", hide = true)]
    pub cudnn_archive: Option<PathBuf>,
    /// Walk through the pages by itself up to PAGE (welcome, system, choose, prepare,
    /// install, cudnn, verify, pytorch, done)
    #[arg(long, value_name = "PAGE", hide = true)]
    pub page: Option<String>,
    /// Do not look for new releases in the background (also CUDA_SETUP_NO_REFRESH=1;
    /// off with --root, so sandboxed runs touch no network)
    #[arg(long, hide = true)]
    pub no_refresh: bool,
    /// Draw in this theme instead of the system's (light, dark): screenshots of Windows'
    /// default light theme from a machine whose system theme is dark
    #[arg(long, value_name = "THEME", hide = true, value_parser = ["light", "dark"])]
    pub theme: Option<String>,
    /// Draw in high contrast (black, white, yellow focus), as Windows' high-contrast mode
    /// does (followed by itself there); also CUDA_SETUP_HIGH_CONTRAST=1 (0: never)
    #[arg(long, hide = true)]
    pub high_contrast: bool,
}

impl Args {
    /// Whether any wizard flag was given (they mean nothing to a subcommand).
    pub fn any(&self) -> bool {
        self.root.is_some()
            || self.os.is_some()
            || !self.gpu_cc.is_empty()
            || !self.gpu.is_empty()
            || self.driver.is_some()
            || self.no_driver
            || self.driver_cuda.is_some()
            || self.python.is_some()
            || self.python_exe.is_some()
            || !self.mirror.is_empty()
            || self.bundle.is_some()
            || self.cuda.is_some()
            || self.goal.is_some()
            || self.cudnn_archive.is_some()
            || self.page.is_some()
            || self.no_refresh
            || self.theme.is_some()
            || self.high_contrast
    }
}

/// The wizard's options from its flags (the what-if facts checked as the CLI checks them).
pub fn options(tables: &Tables, args: &Args, lang: Option<Lang>) -> Result<Options, String> {
    let mut opts = match &args.root {
        Some(root) => Options::sandbox(tables.clone(), args.os.unwrap_or_else(Os::current), root),
        None => Options::machine(tables.clone()),
    };
    opts.overrides = WhatIf::parse(
        tables,
        &Flags {
            gpu_cc: args.gpu_cc.clone(),
            gpu: args.gpu.clone(),
            no_gpu: false,
            driver: args.driver.clone(),
            no_driver: args.no_driver,
            driver_cuda: args.driver_cuda.clone(),
            python: args.python.clone(),
        },
    )
    .map_err(|e| {
        // The flag's own words, then what to do in the user's language (it names flags:
        // this is said on the command line, before any window opens).
        let hint =
            cuda_setup_core::i18n::render(&e.hint(), cuda_setup_core::locale::system_lang(lang));
        format!("{e}\nhint: {hint}")
    })?;
    opts.lang = lang;
    opts.mirrors = args.mirror.clone();
    opts.bundle = args.bundle.clone();
    opts.goal = args.goal;
    opts.cuda = args.cuda.clone();
    opts.python = args.python_exe.clone();
    opts.cudnn_archive = args.cudnn_archive.clone();
    opts.autopilot = match &args.page {
        Some(p) => Some(Page::from_id(p).ok_or_else(|| format!("no page \"{p}\""))?),
        None => None,
    };
    Ok(opts)
}

/// A display to open a window on (Linux: X11 or Wayland; elsewhere there always is one).
fn display_available() -> bool {
    if cfg!(all(unix, not(target_os = "macos"))) {
        ["DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
    } else {
        true
    }
}

/// Double-clicked on Windows: the console Windows made for us alone is let go, so no
/// console window stays beside the wizard. Started from a terminal, the terminal stays.
#[cfg(windows)]
fn detach_own_console() {
    use windows_sys::Win32::System::Console::{FreeConsole, GetConsoleProcessList};
    let mut ids = [0u32; 4];
    // SAFETY: the buffer and its length match; both calls only touch this process.
    unsafe {
        if GetConsoleProcessList(ids.as_mut_ptr(), ids.len() as u32) == 1 {
            FreeConsole();
        }
    }
}

/// The window icon: a chip on NVIDIA green, drawn here (no image decoder needed).
pub fn icon(size: u32) -> egui::IconData {
    let mut rgba = Vec::with_capacity((size * size * 4) as usize);
    let s = size as f32;
    for y in 0..size {
        for x in 0..size {
            let (fx, fy) = (x as f32 / s, y as f32 / s);
            // Rounded square background.
            let r = 0.18;
            let dx = (fx - 0.5).abs() - (0.5 - r);
            let dy = (fy - 0.5).abs() - (0.5 - r);
            let outside = dx > 0.0 && dy > 0.0 && (dx * dx + dy * dy).sqrt() > r;
            let chip = (0.28..0.72).contains(&fx) && (0.28..0.72).contains(&fy);
            let core = (0.38..0.62).contains(&fx) && (0.38..0.62).contains(&fy);
            let pin_band = |f: f32| ((f - 0.28) / 0.11).fract() < 0.5 && (0.30..0.70).contains(&f);
            let pins = ((0.16..0.28).contains(&fx) || (0.72..0.84).contains(&fx)) && pin_band(fy)
                || ((0.16..0.28).contains(&fy) || (0.72..0.84).contains(&fy)) && pin_band(fx);
            let px = if outside {
                [0, 0, 0, 0]
            } else if core {
                [118, 185, 0, 255]
            } else if chip || pins {
                [255, 255, 255, 255]
            } else {
                [118, 185, 0, 255]
            };
            rgba.extend_from_slice(&px);
        }
    }
    egui::IconData {
        rgba,
        width: size,
        height: size,
    }
}

/// The message for a machine without a display: what to run instead.
pub fn no_display_message(lang: Lang, detail: &str) -> String {
    tf(lang, "ui_no_display", &[("detail", &detail)])
}

/// The eframe side: draws the app; with `CUDA_SETUP_FIRST_FRAME` set (the benchmark),
/// prints the time to the first frame and closes.
struct Window {
    app: App,
    frames: u32,
    probe: Option<Probe>,
}

/// The benchmark's clock: the launch, and how long each part before the first frame took.
struct Probe {
    start: Instant,
    /// From the launch to eframe's creation callback: mostly the window and GL context.
    window: Duration,
    /// Ours before the first frame: style, fonts, the App (the page's mode from disk).
    app: Duration,
    /// The first frame's `ui` (layout; the painting follows it).
    ui: Duration,
}

impl eframe::App for Window {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let Some(p) = &mut self.probe else {
            self.app.show(ui);
            return;
        };
        self.frames += 1;
        if self.frames == 1 {
            let t0 = Instant::now();
            self.app.show(ui);
            p.ui = t0.elapsed();
            // The second frame starts once the first is on screen.
            ui.ctx().request_repaint();
        } else {
            if self.frames == 2 {
                // Before this frame's own work (what waited for the first frame starts).
                let ms = |d: Duration| d.as_secs_f64() * 1000.0;
                let total = p.start.elapsed();
                println!(
                    "first_frame_phases_ms=window:{:.1},app:{:.1},ui:{:.1},paint:{:.1}",
                    ms(p.window),
                    ms(p.app),
                    ms(p.ui),
                    ms(total.saturating_sub(p.window + p.app + p.ui))
                );
                println!("first_frame_ms={}", total.as_millis());
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
            self.app.show(ui);
        }
    }
}

/// Opens the wizard; returns the exit code.
/// `base`: the tables without the refresh cache (what a background refresh merges onto);
/// `tables`: with it (what the wizard starts with).
pub fn launch(base: &Tables, tables: &Tables, args: &Args, lang: Option<Lang>) -> i32 {
    let start = Instant::now();
    #[cfg(windows)]
    detach_own_console();
    let mut opts = match options(tables, args, lang) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return cuda_setup_core::exit::USAGE;
        }
    };
    let disabled = args.no_refresh
        || args.root.is_some()
        || std::env::var_os("CUDA_SETUP_NO_REFRESH").is_some_and(|v| !v.is_empty() && v != "0");
    if !disabled {
        opts.refresh = Some(super::worker::Refresh {
            base: base.clone(),
            sources: cuda_setup_core::refresh::Sources::from_env(),
            cache: cuda_setup_core::refresh::default_cache_file(),
        });
    }
    let msg_lang = cuda_setup_core::locale::system_lang(opts.lang);
    if !display_available() {
        eprintln!(
            "{}",
            // The variables' names only: the sentence around them is the catalogue's.
            no_display_message(msg_lang, "DISPLAY / WAYLAND_DISPLAY")
        );
        return cuda_setup_core::exit::ERROR;
    }
    // eframe's and egui's warnings reach a run's log (idempotent: the CLI did it first).
    cuda_setup_core::log::install();
    let probe = std::env::var_os("CUDA_SETUP_FIRST_FRAME").map(|_| start);
    let theme = match args.theme.as_deref() {
        Some("light") => Some(egui::Theme::Light),
        Some("dark") => Some(egui::Theme::Dark),
        _ => None,
    };
    let high_contrast = super::high_contrast::wanted(
        args.high_contrast,
        std::env::var_os(super::high_contrast::ENV).as_deref(),
    );
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title(super::text::t(msg_lang, "ui_app_title"))
            .with_app_id("cuda-setup")
            .with_inner_size([980.0, 760.0])
            .with_min_inner_size([720.0, 520.0])
            .with_icon(Arc::new(icon(64)))
            .with_drag_and_drop(true),
        renderer: eframe::Renderer::Glow,
        ..Default::default()
    };
    let result = eframe::run_native(
        "cuda-setup",
        native,
        Box::new(move |cc| {
            let t0 = Instant::now();
            super::setup_context(&cc.egui_ctx, opts.fonts);
            if let Some(theme) = theme {
                cc.egui_ctx.set_theme(theme);
            }
            // After the theme: high contrast draws both themes alike.
            if high_contrast {
                super::high_contrast::install(&cc.egui_ctx);
            }
            let app = App::new(opts);
            let probe = probe.map(|start| Probe {
                start,
                window: t0.duration_since(start),
                app: t0.elapsed(),
                ui: Duration::ZERO,
            });
            Ok(Box::new(Window {
                app,
                frames: 0,
                probe,
            }))
        }),
    );
    match result {
        Ok(()) => cuda_setup_core::exit::OK,
        Err(e) => {
            eprintln!("{}", no_display_message(msg_lang, &e.to_string()));
            cuda_setup_core::exit::ERROR
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checks the wizard's flags once skipped, now the CLI's: each is refused.
    #[test]
    fn the_wizard_refuses_the_what_ifs_the_cli_refuses() {
        let tables = Tables::embedded().unwrap();
        let v = |s: &str| Some(s.parse::<Version>().unwrap());
        let cases = [
            (
                Args {
                    driver: v("12.4"),
                    ..Default::default()
                },
                "looks like a CUDA version",
            ),
            (
                Args {
                    driver: v("551.78"),
                    driver_cuda: v("551"),
                    ..Default::default()
                },
                "is not a CUDA version",
            ),
            (
                Args {
                    python: "2.7".parse().ok(),
                    ..Default::default()
                },
                "not a Python 3 version",
            ),
            (
                Args {
                    gpu: vec!["RTX".into()],
                    ..Default::default()
                },
                "is ambiguous",
            ),
            (
                Args {
                    gpu: vec!["Voodoo 5".into()],
                    ..Default::default()
                },
                "unknown GPU",
            ),
        ];
        for (args, why) in cases {
            let e = options(&tables, &args, Some(Lang::En))
                .err()
                .unwrap_or_else(|| panic!("accepted: {args:?}"));
            assert!(e.contains(why) && e.contains("\nhint: "), "{args:?}: {e}");
        }
        let ok = options(
            &tables,
            &Args {
                gpu: vec!["RTX 4090".into()],
                driver: v("551.78"),
                python: "3.12.1".parse().ok(),
                ..Default::default()
            },
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ok.overrides.gpus.len(), 1);
        assert_eq!(ok.overrides.python, v("3.12"));
    }
}
