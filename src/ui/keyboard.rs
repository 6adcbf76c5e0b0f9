//! The keyboard (#35): Esc goes back a page, and the widget Tab reached wears a ring.
//! egui already moves the focus with Tab / Shift+Tab, presses a focused button or radio
//! with Space or Enter, and the frame presses the primary button on Enter when nothing
//! has the focus (`app`).

use egui::{Context, Id, Key, LayerId, Order, Stroke};

/// What the keyboard did in the frames before this one.
#[derive(Debug, Default, Clone, Copy)]
pub struct Keys {
    /// A text field had the keyboard at the end of the last frame: Esc leaves the field
    /// (egui drops its focus) and must not leave the page too.
    typing: bool,
    /// The focus moved by the keyboard (Tab) since the last click: only then is it ringed,
    /// as Windows rings it (a click leaves no ring).
    by_keyboard: bool,
}

impl Keys {
    /// Called as a frame begins: whether Esc asks for the page before. Not while typing,
    /// and not while a popup (a dropdown's list) is open: Esc closes that first.
    pub fn begin(&mut self, ctx: &Context) -> bool {
        let (esc, tab, clicked) = ctx.input(|i| {
            (
                i.key_pressed(Key::Escape) && i.modifiers.is_none(),
                i.key_pressed(Key::Tab),
                i.pointer.any_pressed(),
            )
        });
        if tab {
            self.by_keyboard = true;
        } else if clicked {
            self.by_keyboard = false;
        }
        esc && !self.typing && !egui::Popup::is_any_open(ctx)
    }

    /// Called as a frame ends: rings the focused widget (after a Tab) and notes whether a
    /// text field has the keyboard.
    pub fn end(&mut self, ctx: &Context) {
        self.typing = ctx.text_edit_focused();
        if self.by_keyboard {
            focus_ring(ctx);
        }
    }
}

/// A 2-point ring around the focused widget, on top of the page: egui shows focus only as
/// its "pressed" look, which the wizard's own buttons (the filled primary) do not change.
fn focus_ring(ctx: &Context) {
    let Some(r) = ctx
        .memory(|m| m.focused())
        .and_then(|id| ctx.read_response(id))
    else {
        return;
    };
    // Clipped as the widget is (a scrolled-away widget wears no ring over the header).
    let clip = r.interact_rect.expand(4.0);
    if !clip.is_positive() {
        return;
    }
    let painter = ctx
        .layer_painter(LayerId::new(Order::Foreground, Id::unique("focus-ring")))
        .with_clip_rect(clip);
    painter.rect_stroke(
        r.rect.expand(2.0),
        4.0,
        Stroke::new(2.0, super::high_contrast::focus_color(ctx)),
        egui::StrokeKind::Outside,
    );
}
