//! High contrast (#35): Windows' high-contrast mode followed, or forced with
//! `--high-contrast` / `CUDA_SETUP_HIGH_CONTRAST=1` (tests, screenshots, any system).
//! One decision ([`wanted`]) and one look ([`visuals`]): the colours of Windows' own
//! "High Contrast Black" theme — black ground, white text, yellow for links, hover and
//! the keyboard focus, cyan for what is selected (black text on it).

use std::ffi::OsStr;

use egui::{Color32, Context, Stroke, Visuals};

/// The variable that forces it: `1` on, `0` off (off also over the system's setting).
pub const ENV: &str = "CUDA_SETUP_HIGH_CONTRAST";

/// Windows' high-contrast yellow: links, hover, the keyboard focus.
pub const YELLOW: Color32 = Color32::from_rgb(255, 255, 0);
/// Windows' high-contrast "selected" fill (black text on it: 14:1).
pub const CYAN: Color32 = Color32::from_rgb(0x1A, 0xEB, 0xFF);

/// Whether to draw in high contrast: the flag, else the variable, else the system's
/// setting (Windows; elsewhere no system setting is read).
pub fn wanted(flag: bool, env: Option<&OsStr>) -> bool {
    if flag {
        return true;
    }
    match env.and_then(OsStr::to_str).map(str::trim) {
        Some("1" | "on" | "true" | "yes") => true,
        Some("0" | "off" | "false" | "no") => false,
        _ => system(),
    }
}

/// Windows' setting, as the Accessibility settings page sets it
/// (`SystemParametersInfoW(SPI_GETHIGHCONTRAST)`, flag `HCF_HIGHCONTRASTON`).
/// https://learn.microsoft.com/windows/win32/api/winuser/ns-winuser-highcontrastw
#[cfg(windows)]
pub fn system() -> bool {
    use windows_sys::Win32::UI::Accessibility::{HCF_HIGHCONTRASTON, HIGHCONTRASTW};
    use windows_sys::Win32::UI::WindowsAndMessaging::{SPI_GETHIGHCONTRAST, SystemParametersInfoW};
    let size = std::mem::size_of::<HIGHCONTRASTW>() as u32;
    let mut hc = HIGHCONTRASTW {
        cbSize: size,
        dwFlags: 0,
        lpszDefaultScheme: std::ptr::null_mut(),
    };
    // SAFETY: `hc` is a HIGHCONTRASTW whose cbSize is its size, as the call requires; it
    // outlives the call, which only writes into it (the scheme name stays Windows' own).
    let ok = unsafe { SystemParametersInfoW(SPI_GETHIGHCONTRAST, size, (&raw mut hc).cast(), 0) };
    ok != 0 && hc.dwFlags & HCF_HIGHCONTRASTON != 0
}

#[cfg(not(windows))]
pub fn system() -> bool {
    false
}

fn id() -> egui::Id {
    egui::Id::unique("cuda-setup-high-contrast")
}

/// Draws `ctx` in high contrast from now on, in either system theme.
pub fn install(ctx: &Context) {
    ctx.set_visuals_of(egui::Theme::Light, visuals());
    ctx.set_visuals_of(egui::Theme::Dark, visuals());
    ctx.data_mut(|d| d.insert_temp(id(), true));
}

/// Whether `ctx` draws in high contrast (the few widgets that pick their own colours ask).
pub fn on(ctx: &Context) -> bool {
    ctx.data(|d| d.get_temp::<bool>(id()).unwrap_or(false))
}

/// The keyboard focus ring's colour: yellow in high contrast, else the accent.
pub fn focus_color(ctx: &Context) -> Color32 {
    if on(ctx) {
        YELLOW
    } else {
        super::widgets::accent(ctx.global_style().visuals.dark_mode)
    }
}

/// Black ground, white text and edges, yellow where the pointer or the keyboard is,
/// cyan behind what is selected.
pub fn visuals() -> Visuals {
    let (black, white) = (Color32::BLACK, Color32::WHITE);
    let mut v = Visuals::dark();
    // No override of the text colour: selected text is black on cyan (`selection`).
    v.weak_text_color = Some(Color32::from_gray(210));
    v.hyperlink_color = YELLOW;
    v.warn_fg_color = YELLOW;
    v.error_fg_color = Color32::from_rgb(255, 120, 120);
    v.panel_fill = black;
    v.window_fill = black;
    v.extreme_bg_color = black;
    v.faint_bg_color = black;
    v.code_bg_color = black;
    v.window_stroke = Stroke::new(1.0, white);
    v.window_shadow = egui::Shadow::NONE;
    v.popup_shadow = egui::Shadow::NONE;
    v.selection.bg_fill = CYAN;
    v.selection.stroke = Stroke::new(2.0, black);
    v.text_cursor.stroke = Stroke::new(2.0, white);
    // Text white (yellow under the pointer); edges white, yellow when hovered or pressed.
    // `active` also gives egui's strong text its colour: white.
    let rest = |w: &mut egui::style::WidgetVisuals, edge: Color32, text: Color32, width: f32| {
        w.bg_fill = black;
        w.weak_bg_fill = black;
        w.bg_stroke = Stroke::new(width, edge);
        w.fg_stroke = Stroke::new(width.max(1.0), text);
    };
    rest(&mut v.widgets.noninteractive, white, white, 1.0);
    rest(&mut v.widgets.inactive, white, white, 1.0);
    rest(&mut v.widgets.hovered, YELLOW, YELLOW, 2.0);
    rest(&mut v.widgets.active, YELLOW, white, 2.0);
    rest(&mut v.widgets.open, YELLOW, white, 2.0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::contrast::{TEXT, ratio};

    #[test]
    fn the_flag_and_the_variable_decide_before_the_system() {
        assert!(wanted(true, None));
        assert!(wanted(true, Some(OsStr::new("0"))), "the flag wins");
        assert!(wanted(false, Some(OsStr::new("1"))));
        assert!(wanted(false, Some(OsStr::new(" on "))));
        assert!(!wanted(false, Some(OsStr::new("0"))));
        // Anything else: the system's setting, which only Windows has.
        if cfg!(not(windows)) {
            assert!(!wanted(false, None));
            assert!(!wanted(false, Some(OsStr::new("maybe"))));
        }
    }

    #[test]
    fn every_pair_of_the_look_passes_aaa() {
        let v = visuals();
        let bg = v.panel_fill;
        assert_eq!(bg, Color32::BLACK);
        // AAA (7:1) for text, links and the focus; black on the selected fill.
        for fg in [
            v.text_color(),
            v.strong_text_color(),
            v.weak_text_color(),
            v.hyperlink_color,
            v.warn_fg_color,
            YELLOW,
        ] {
            assert!(ratio(fg, bg) >= 7.0, "{fg:?}: {}", ratio(fg, bg));
        }
        assert!(ratio(Color32::BLACK, CYAN) >= 7.0);
        assert!(ratio(v.error_fg_color, bg) >= TEXT);
        // Every control's edge is white or yellow on black.
        for w in [v.widgets.inactive, v.widgets.hovered, v.widgets.active] {
            assert!(ratio(w.bg_stroke.color, bg) >= 7.0);
        }
    }
}
