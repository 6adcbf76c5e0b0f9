//! WCAG 2.x contrast, measured on what egui painted: every glyph's colour against the
//! colour under it (the fills painted before it, composited in painting order). The
//! wizard's visuals are chosen to pass it in both themes; the GUI tests measure each page
//! with it (AA: 4.5:1, large text 3:1; non-text parts such as a radio's circle 3:1).

use egui::epaint::{ClippedShape, Shape};
use egui::{Color32, Pos2, Rect};

/// The contrast AA asks of normal text.
pub const TEXT: f64 = 4.5;
/// The contrast AA asks of large text (18 pt, i.e. 24 px and up) and of the parts of a
/// control one must see to use it (WCAG 1.4.11).
pub const LARGE: f64 = 3.0;
/// 18 pt in egui's points (CSS pixels). egui's "strong" text is a colour, not a bold
/// face, so the 14 pt bold rule never applies.
pub const LARGE_SIZE: f32 = 24.0;

/// WCAG relative luminance of an sRGB colour (its alpha ignored).
pub fn luminance(c: Color32) -> f64 {
    let lin = |v: u8| {
        let s = f64::from(v) / 255.0;
        if s <= 0.04045 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.r()) + 0.7152 * lin(c.g()) + 0.0722 * lin(c.b())
}

/// The contrast ratio of two colours, 1 to 21, either order.
pub fn ratio(a: Color32, b: Color32) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// `top` (egui's premultiplied colour) painted over the opaque `under`, as the GPU blends
/// it in gamma space.
pub fn over(top: Color32, under: Color32) -> Color32 {
    let k = 1.0 - f32::from(top.a()) / 255.0;
    let mix = |t: u8, u: u8| (f32::from(t) + f32::from(u) * k).round().min(255.0) as u8;
    Color32::from_rgb(
        mix(top.r(), under.r()),
        mix(top.g(), under.g()),
        mix(top.b(), under.b()),
    )
}

/// What was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Glyphs of a text.
    Text,
    /// A radio button's circle or its dot (a control's state one must see).
    Control,
}

/// One colour against the one under it.
#[derive(Debug, Clone)]
pub struct Pair {
    pub part: Part,
    /// The text (the glyphs of one section on one row), or a control's place.
    pub text: String,
    pub fg: Color32,
    pub bg: Color32,
    /// The font size in points (0 for a control).
    pub size: f32,
    /// Where (the first glyph's centre, a circle's centre): a test leaves out what lies on
    /// a disabled control.
    pub at: Pos2,
    pub ratio: f64,
    /// What AA asks of it.
    pub needed: f64,
}

impl Pair {
    pub fn passes(&self) -> bool {
        self.ratio + 1e-9 >= self.needed
    }
}

impl std::fmt::Display for Pair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [r, g, b, _] = self.fg.to_array();
        let [br, bg, bb, _] = self.bg.to_array();
        write!(
            f,
            "{:.2}:1 < {} {:?} ({r},{g},{b}) on ({br},{bg},{bb}) {:.1}pt: {:?}",
            self.ratio, self.needed, self.part, self.size, self.text
        )
    }
}

/// A fill painted so far: what later shapes sit on.
struct Fill {
    rect: Rect,
    circle: Option<(Pos2, f32)>,
    color: Color32,
}

impl Fill {
    fn contains(&self, p: Pos2) -> bool {
        match self.circle {
            Some((c, r)) => c.distance(p) <= r,
            None => self.rect.contains(p),
        }
    }
}

/// The colour at `p` once `fills` (in painting order) lie on `base`.
fn under(fills: &[Fill], base: Color32, p: Pos2) -> Color32 {
    fills
        .iter()
        .filter(|f| f.contains(p))
        .fold(base, |acc, f| over(f.color, acc))
}

/// Every visible text (per glyph, grouped by section and row) and every radio's circle and
/// dot in `shapes` (a frame's output, in painting order) against what lies under it;
/// `base` is the window's clear colour. A disabled control (WCAG asks nothing of it) is
/// painted faded like any translucent colour: callers leave out what lies on one by `at`.
pub fn pairs(shapes: &[ClippedShape], base: Color32) -> Vec<Pair> {
    let mut fills: Vec<Fill> = Vec::new();
    let mut out = Vec::new();
    let mut flat: Vec<(Rect, &Shape)> = Vec::new();
    fn flatten<'a>(clip: Rect, s: &'a Shape, out: &mut Vec<(Rect, &'a Shape)>) {
        match s {
            Shape::Vec(v) => v.iter().for_each(|s| flatten(clip, s, out)),
            s => out.push((clip, s)),
        }
    }
    for c in shapes {
        flatten(c.clip_rect, &c.shape, &mut flat);
    }
    for (clip, shape) in flat {
        match shape {
            Shape::Rect(r) => {
                let rect = r.rect.intersect(clip);
                if r.fill.a() > 0 && rect.is_positive() {
                    fills.push(Fill {
                        rect,
                        circle: None,
                        color: r.fill,
                    });
                }
            }
            Shape::Circle(c) => {
                let visible = clip.contains(c.center);
                // A radio: an outlined circle, or the small dot painted inside one.
                if visible && c.radius >= 2.0 {
                    let bg = under(&fills, base, c.center);
                    let edge = if c.stroke.width > 0.0 && c.stroke.color.a() > 0 {
                        over(c.stroke.color, bg)
                    } else {
                        over(c.fill, bg)
                    };
                    let fg_ratio = ratio(edge, bg).max(ratio(over(c.fill, bg), bg));
                    out.push(Pair {
                        part: Part::Control,
                        text: format!("circle r={:.1} at {:?}", c.radius, c.center),
                        fg: edge,
                        bg,
                        size: 0.0,
                        at: c.center,
                        ratio: fg_ratio,
                        needed: LARGE,
                    });
                }
                if c.fill.a() > 0 {
                    fills.push(Fill {
                        rect: Rect::from_center_size(c.center, egui::Vec2::splat(c.radius * 2.0)),
                        circle: Some((c.center, c.radius)),
                        color: c.fill,
                    });
                }
            }
            Shape::Text(t) => {
                let job = &t.galley.job;
                // Each character of the text and its section (glyphs no longer say which).
                let mut chars = job.sections.iter().enumerate().flat_map(|(i, s)| {
                    job.text
                        .get(s.byte_range.start.0..s.byte_range.end.0)
                        .unwrap_or("")
                        .chars()
                        .map(move |c| (c, i))
                });
                let mut last = 0;
                for row in &t.galley.rows {
                    // (section, fg, bg) → the glyphs
                    let mut groups: Vec<(usize, Color32, Color32, String, Pos2)> = Vec::new();
                    for g in &row.glyphs {
                        let section = chars
                            .by_ref()
                            .find(|(c, _)| *c == g.chr)
                            .map_or(last, |(_, i)| i);
                        last = section;
                        if g.chr.is_whitespace() || g.is_color {
                            continue;
                        }
                        let p = t.pos + row.pos.to_vec2() + g.logical_rect().center().to_vec2();
                        if !clip.contains(p) {
                            continue;
                        }
                        let Some(format) = job.sections.get(section).map(|s| &s.format) else {
                            continue;
                        };
                        let mut bg = under(&fills, base, p);
                        if format.background.a() > 0 {
                            bg = over(format.background, bg);
                        }
                        let color = match t.override_text_color {
                            Some(c) => c,
                            None if format.color == Color32::PLACEHOLDER => t.fallback_color,
                            None => format.color,
                        };
                        let fg = over(color.gamma_multiply(t.opacity_factor.min(1.0)), bg);
                        match groups
                            .iter_mut()
                            .find(|(s, f, b, _, _)| *s == section && *f == fg && *b == bg)
                        {
                            Some(e) => e.3.push(g.chr),
                            None => groups.push((section, fg, bg, g.chr.to_string(), p)),
                        }
                    }
                    for (section, fg, bg, text, at) in groups {
                        let size = job.sections[section].format.font_id.size;
                        out.push(Pair {
                            part: Part::Text,
                            text,
                            fg,
                            bg,
                            size,
                            at,
                            ratio: ratio(fg, bg),
                            needed: if size >= LARGE_SIZE { LARGE } else { TEXT },
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The pairs below AA, worst first.
pub fn failing(shapes: &[ClippedShape], base: Color32) -> Vec<Pair> {
    let mut bad: Vec<Pair> = pairs(shapes, base)
        .into_iter()
        .filter(|p| !p.passes())
        .collect();
    bad.sort_by(|a, b| a.ratio.total_cmp(&b.ratio));
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clipped(clip_rect: Rect, shape: Shape) -> ClippedShape {
        ClippedShape {
            clip_rect,
            shape,
            transform_after_tessellation: Default::default(),
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn known_pairs_have_their_published_ratios() {
        assert!(close(ratio(Color32::BLACK, Color32::WHITE), 21.0, 1e-9));
        assert!(close(ratio(Color32::WHITE, Color32::WHITE), 1.0, 1e-9));
        // The case: egui's light selection blue under white text.
        let light_blue = Color32::from_rgb(144, 209, 255);
        let r = ratio(Color32::WHITE, light_blue);
        assert!(close(r, 1.65, 0.01), "{r}: the issue's \"about 1.7\"");
        // WebAIM's checker: #767676 on white is the lightest grey that passes AA (4.54).
        assert!(close(
            ratio(Color32::from_gray(0x76), Color32::WHITE),
            4.54,
            0.01
        ));
        // #777777 just fails (4.48).
        assert!(ratio(Color32::from_gray(0x77), Color32::WHITE) < TEXT);
        // Order does not matter.
        assert_eq!(
            ratio(light_blue, Color32::BLACK),
            ratio(Color32::BLACK, light_blue)
        );
    }

    #[test]
    fn a_translucent_colour_is_measured_as_it_shows() {
        // egui's weak text: the text colour at 60 % over the panel.
        let weak = Color32::from_gray(80).gamma_multiply(0.6);
        let panel = Color32::from_gray(248);
        assert_eq!(over(weak, panel), Color32::from_gray(147));
        assert!(ratio(over(weak, panel), panel) < TEXT);
        assert_eq!(over(Color32::TRANSPARENT, panel), panel);
        assert_eq!(over(Color32::RED, panel), Color32::RED);
    }

    #[test]
    fn painted_text_is_measured_against_the_fill_under_it() {
        let ctx = egui::Context::default();
        let mut shapes = Vec::new();
        let clip = Rect::from_min_size(Pos2::ZERO, egui::vec2(400.0, 200.0));
        let mut out = ctx.run_ui(Default::default(), |ui| {
            let galley = ui.painter().layout_no_wrap(
                "OK".into(),
                egui::FontId::proportional(14.0),
                Color32::WHITE,
            );
            let button = Rect::from_min_size(Pos2::new(10.0, 10.0), egui::vec2(100.0, 30.0));
            shapes.push(clipped(
                clip,
                Shape::rect_filled(clip, 0.0, Color32::from_gray(248)),
            ));
            shapes.push(clipped(
                clip,
                Shape::rect_filled(button, 0.0, Color32::from_rgb(144, 209, 255)),
            ));
            shapes.push(clipped(
                clip,
                Shape::galley(Pos2::new(20.0, 15.0), galley.clone(), Color32::WHITE),
            ));
            // The same text outside the button: white on the panel.
            shapes.push(clipped(
                clip,
                Shape::galley(Pos2::new(200.0, 100.0), galley, Color32::WHITE),
            ));
        });
        out.textures_delta.clear();
        let all = pairs(&shapes, Color32::BLACK);
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!(all[0].bg, Color32::from_rgb(144, 209, 255));
        assert!(close(all[0].ratio, 1.65, 0.01), "{}", all[0]);
        assert_eq!(all[1].bg, Color32::from_gray(248));
        assert_eq!(all[0].text, "OK");
        let bad = failing(&shapes, Color32::BLACK);
        assert_eq!(bad.len(), 2);
        assert!(bad[0].ratio <= bad[1].ratio, "worst first");
    }
}
