//! The few widgets every page shares: status badges, callouts, choice cards, a command
//! with a copy button, a progress line with speed and ETA.

use egui::{Color32, CornerRadius, Frame, Margin, ProgressBar, RichText, Stroke, Ui};

use cuda_setup_core::i18n::Lang;

use super::text::{self, t};

/// What a badge or callout says about something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Ok,
    Warn,
    Bad,
    Info,
    Pending,
}

impl Tone {
    /// The tone's text colour: at least 4.5:1 on the panel and on its own callout's fill
    /// in either theme (`ui::contrast`; the GUI tests measure every page).
    pub fn color(self, ui: &Ui) -> Color32 {
        let dark = ui.visuals().dark_mode;
        match (self, dark) {
            (Tone::Ok, true) => Color32::from_rgb(110, 200, 80),
            (Tone::Ok, false) => Color32::from_rgb(30, 110, 20),
            (Tone::Warn, true) => Color32::from_rgb(240, 190, 60),
            (Tone::Warn, false) => Color32::from_rgb(145, 82, 0),
            (Tone::Bad, true) => Color32::from_rgb(250, 110, 100),
            (Tone::Bad, false) => Color32::from_rgb(180, 25, 25),
            (Tone::Info, true) => Color32::from_rgb(120, 170, 250),
            (Tone::Info, false) => Color32::from_rgb(30, 90, 190),
            (Tone::Pending, _) => ui.visuals().weak_text_color(),
        }
    }

    fn mark(self) -> &'static str {
        match self {
            Tone::Ok => "✓",
            Tone::Warn => "⚠",
            Tone::Bad => "×",
            Tone::Info => "●",
            Tone::Pending => "○",
        }
    }
}

/// `✓ text` in the tone's colour, framed like a tag.
pub fn badge(ui: &mut Ui, tone: Tone, label: &str) -> egui::Response {
    let c = tone.color(ui);
    Frame::new()
        .stroke(Stroke::new(1.0, c))
        .corner_radius(CornerRadius::same(8))
        .inner_margin(Margin::symmetric(6, 1))
        .show(ui, |ui| {
            ui.label(RichText::new(format!("{} {label}", tone.mark())).color(c))
        })
        .inner
}

/// A framed paragraph with a coloured edge: explanations, warnings, errors.
pub fn callout(ui: &mut Ui, tone: Tone, add: impl FnOnce(&mut Ui)) {
    let c = tone.color(ui);
    Frame::new()
        .stroke(Stroke::new(1.0, c.gamma_multiply(0.6)))
        .fill(c.gamma_multiply(0.08))
        .corner_radius(CornerRadius::same(6))
        .inner_margin(Margin::same(10))
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            add(ui)
        });
}

/// A callout holding one paragraph.
pub fn note(ui: &mut Ui, tone: Tone, text: &str) {
    callout(ui, tone, |ui| {
        ui.label(RichText::new(text).color(ui.visuals().text_color()));
    });
}

/// A section title inside a page.
pub fn section(ui: &mut Ui, title: &str) {
    ui.add_space(8.0);
    ui.label(RichText::new(title).strong().size(16.0));
    ui.add_space(2.0);
}

/// A monospace command and a copy button; true when copied.
pub fn command(ui: &mut Ui, lang: Lang, cmd: &str) -> bool {
    let mut copied = false;
    Frame::new()
        .fill(ui.visuals().extreme_bg_color)
        .corner_radius(CornerRadius::same(4))
        .inner_margin(Margin::same(8))
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.horizontal(|ui| {
                if ui.button(t(lang, "ui_copy")).clicked() {
                    ui.ctx().copy_text(cmd.to_string());
                    copied = true;
                }
                ui.add(egui::Label::new(RichText::new(cmd).monospace()).wrap());
            });
        });
    copied
}

/// A choice card: a radio button with a title, and an explanation under it. The whole
/// card is the click target (a beginner clicks the text, not the little circle). For a
/// screen reader and the keyboard the card is its radio button (#35): one Tab stop, named
/// by the title, its selected state, the explanation as its description; Space selects.
pub fn card<V: PartialEq + Copy>(
    ui: &mut Ui,
    current: &mut V,
    value: V,
    title: &str,
    body: &str,
) -> bool {
    let selected = *current == value;
    let stroke = if selected {
        Stroke::new(2.0, selected_edge(ui))
    } else {
        ui.visuals().widgets.noninteractive.bg_stroke
    };
    let mut clicked = false;
    let mut radio = None;
    let frame = Frame::new()
        .stroke(stroke)
        .corner_radius(CornerRadius::same(8))
        .inner_margin(Margin::same(12))
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            // Not justified: a justified column would stretch the spaces of CJK text.
            ui.vertical(|ui| {
                let r = ui.radio_value(current, value, RichText::new(title).strong().size(15.0));
                clicked = r.clicked();
                radio = Some(r.id);
                // Not selectable: a selectable label would take the click from the card.
                ui.add(egui::Label::new(body).selectable(false));
            });
        });
    if let Some(id) = radio.filter(|_| !body.is_empty()) {
        ui.ctx()
            .accesskit_node_builder(id, |n| n.set_description(body.to_string()));
    }
    // Registered after the contents, so it lies on top of them: a click anywhere on the
    // card (the radio included) lands here. Not focusable: Tab stops at the radio alone.
    let whole = ui
        .interact(
            frame.response.rect,
            ui.scope_id().with(("card", title)),
            egui::Sense::CLICK,
        )
        .on_hover_cursor(egui::CursorIcon::PointingHand);
    if whole.clicked() && !clicked {
        *current = value;
        clicked = true;
    }
    clicked
}

/// The one dropdown for a download source (#34): the PyPI mirror on Choose and on the
/// PyTorch page, and PyTorch's own source. `entries` are the labels in the user's
/// language; the label names the box (its id too, so two on a page differ). Returns the
/// entry picked this frame, if another than `selected`.
pub fn source_dropdown(
    ui: &mut Ui,
    label: &str,
    entries: &[String],
    selected: usize,
) -> Option<usize> {
    let mut picked = None;
    ui.horizontal(|ui| {
        egui::ComboBox::from_label(label)
            .selected_text(entries.get(selected).cloned().unwrap_or_default())
            .show_ui(ui, |ui| {
                for (i, e) in entries.iter().enumerate() {
                    if ui.selectable_label(i == selected, e.as_str()).clicked() {
                        picked = Some(i);
                    }
                }
            });
    });
    picked.filter(|&i| i != selected)
}

/// The page's one primary button: filled with the accent colour, larger, the only one
/// drawn this way (the frame draws it; Enter triggers it). Secondary actions are plain
/// `ui.button`s.
pub fn primary(ui: &mut Ui, text: &str) -> egui::Response {
    primary_enabled(ui, true, text)
}

/// [`primary`], greyed out when `enabled` is false.
pub fn primary_enabled(ui: &mut Ui, enabled: bool, text: &str) -> egui::Response {
    ui.ctx()
        .data_mut(|d| *d.get_temp_mut_or_default::<usize>(primaries_id()) += 1);
    // Disabled, it must not look like the button to press: no accent colour.
    let (fill, color) = if enabled && super::high_contrast::on(ui.ctx()) {
        (super::high_contrast::CYAN, Color32::BLACK)
    } else if enabled {
        (accent(ui.visuals().dark_mode), Color32::WHITE)
    } else {
        (
            ui.visuals().widgets.inactive.weak_bg_fill,
            ui.visuals().weak_text_color(),
        )
    };
    let button = egui::Button::new(RichText::new(text).strong().size(15.5).color(color))
        .fill(fill)
        .corner_radius(CornerRadius::same(6))
        .min_size(egui::vec2(120.0, 32.0));
    ui.add_enabled(enabled, button)
}

/// A selected card's edge: the selection's colour, yellow in high contrast (whose
/// selection colour is the black text on cyan).
fn selected_edge(ui: &Ui) -> Color32 {
    if super::high_contrast::on(ui.ctx()) {
        super::high_contrast::YELLOW
    } else {
        ui.visuals().selection.stroke.color
    }
}

/// The primary button's fill: white text on it reaches 4.5:1 in both themes (egui's own
/// light selection blue, 144 209 255, gives 1.7:1 and looks disabled).
pub fn accent(dark: bool) -> Color32 {
    if dark {
        Color32::from_rgb(0, 110, 190)
    } else {
        Color32::from_rgb(0, 95, 184)
    }
}

fn primaries_id() -> egui::Id {
    egui::Id::unique("cuda-setup-primaries-this-frame")
}

/// How many primary buttons this frame drew so far: one per page, always (the tests
/// check it on every page; the app resets it at the start of each frame).
pub fn primaries_drawn(ctx: &egui::Context) -> usize {
    ctx.data(|d| d.get_temp::<usize>(primaries_id()).unwrap_or(0))
}

/// A new frame: no primary drawn yet.
pub fn reset_primaries(ctx: &egui::Context) {
    ctx.data_mut(|d| d.insert_temp(primaries_id(), 0usize));
}

/// No Python was found and PyTorch needs one: how to get one, before the user reaches
/// the PyTorch page.
pub fn get_python(ui: &mut Ui, lang: Lang, os: cuda_setup_core::compat::Os) {
    use cuda_setup_core::compat::Os;
    callout(ui, Tone::Warn, |ui| {
        ui.label(RichText::new(t(lang, "ui_python_missing")).strong());
        match os {
            Os::Windows => {
                ui.label(t(lang, "ui_python_get_windows"));
                command(ui, lang, "winget install Python.Python.3.12");
            }
            Os::Linux => {
                ui.label(t(lang, "ui_python_get_linux"));
                command(
                    ui,
                    lang,
                    "sudo apt install python3 python3-pip python3-venv",
                );
            }
        }
        ui.hyperlink_to(
            t(lang, "ui_python_download"),
            "https://www.python.org/downloads/",
        );
        ui.label(t(lang, "ui_python_then"));
    });
}

/// A progress bar with bytes, speed and time left, as downloads report them.
pub fn transfer(
    ui: &mut Ui,
    lang: Lang,
    done: u64,
    total: Option<u64>,
    bytes_per_sec: f64,
    eta_secs: Option<f64>,
) {
    let fraction = total
        .filter(|t| *t > 0)
        .map_or(0.0, |t| (done as f64 / t as f64).clamp(0.0, 1.0) as f32);
    let mut label = match total {
        Some(t) => format!("{} / {}", text::bytes(done), text::bytes(t)),
        None => text::bytes(done),
    };
    if bytes_per_sec > 0.0 {
        label += &format!("  ·  {}", text::rate(bytes_per_sec));
    }
    if let Some(eta) = eta_secs {
        label += &format!(
            "  ·  {}",
            text::tf(lang, "ui_eta", &[("time", &text::clock(eta))])
        );
    }
    progress(ui, fraction, &label);
}

/// A progress bar that says `text`: in it, or in high contrast under it (no one colour
/// reads on both its filled and its empty part there). Either way the bar is a progress
/// indicator named by `text`, its value the percentage.
pub fn progress(ui: &mut Ui, fraction: f32, text: &str) -> egui::Response {
    if super::high_contrast::on(ui.ctx()) {
        let r = ui
            .add(ProgressBar::new(fraction).desired_height(10.0))
            .accessible_name(text);
        // Its empty part is black on black: a white edge shows how far it goes.
        let edge = ui.visuals().widgets.noninteractive.bg_stroke;
        let radius = r.rect.height() / 2.0;
        ui.painter()
            .rect_stroke(r.rect, radius, edge, egui::StrokeKind::Outside);
        ui.label(text);
        r
    } else {
        ui.add(ProgressBar::new(fraction).text(text))
    }
}

/// A thin horizontal rule with some air.
pub fn gap(ui: &mut Ui) {
    ui.add_space(6.0);
}

/// The wizard's look: text a little larger than egui's default, more air between rows.
pub fn style(ctx: &egui::Context) {
    use egui::{FontFamily, FontId, TextStyle};
    ctx.all_styles_mut(|s| {
        s.text_styles = [
            (
                TextStyle::Small,
                FontId::new(11.5, FontFamily::Proportional),
            ),
            (TextStyle::Body, FontId::new(14.5, FontFamily::Proportional)),
            (
                TextStyle::Button,
                FontId::new(14.5, FontFamily::Proportional),
            ),
            (
                TextStyle::Heading,
                FontId::new(22.0, FontFamily::Proportional),
            ),
            (
                TextStyle::Monospace,
                FontId::new(13.0, FontFamily::Monospace),
            ),
        ]
        .into();
        s.spacing.item_spacing = egui::vec2(8.0, 6.0);
        s.spacing.button_padding = egui::vec2(10.0, 4.0);
    });
    ctx.set_visuals_of(egui::Theme::Light, visuals(false));
    ctx.set_visuals_of(egui::Theme::Dark, visuals(true));
}

/// egui's visuals with every text colour at WCAG AA (4.5:1) on the panel, on buttons and
/// on the callouts' tinted fills, and a visible edge (3:1) on radio buttons and buttons.
/// Set for both themes: Windows' default is light, and eframe follows the system.
pub fn visuals(dark: bool) -> egui::Visuals {
    let mut v = if dark {
        egui::Visuals::dark()
    } else {
        egui::Visuals::light()
    };
    let gray = Color32::from_gray;
    if dark {
        // egui's 140 grey gives 4.4:1 on a callout's fill; its weak text (60 % of it) 2.7.
        v.widgets.noninteractive.fg_stroke.color = gray(200);
        v.weak_text_color = Some(gray(165));
        v.widgets.inactive.bg_stroke = Stroke::new(1.0, gray(125));
    } else {
        v.widgets.noninteractive.fg_stroke.color = gray(50);
        // egui's weak text (60 % of the text colour) gives 2.9:1 on the panel.
        v.weak_text_color = Some(gray(96));
        // egui's link blue (0 155 255) gives 2.8:1.
        v.hyperlink_color = Color32::from_rgb(0, 90, 190);
        // An unselected radio was a 230 grey circle on a 248 grey panel (1.2:1).
        v.widgets.inactive.bg_stroke = Stroke::new(1.0, gray(130));
    }
    v
}

/// A check's outcome (smoke test, doctor) as a badge.
pub fn status_badge(ui: &mut Ui, lang: Lang, s: cuda_setup_core::verify::Status) {
    use cuda_setup_core::verify::Status;
    let (tone, key) = match s {
        Status::Passed => (Tone::Ok, "ui_passed"),
        Status::Skipped => (Tone::Warn, "ui_skipped"),
        Status::Failed => (Tone::Bad, "ui_failed"),
    };
    badge(ui, tone, &t(lang, key));
}
