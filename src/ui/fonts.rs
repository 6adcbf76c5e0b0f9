//! Chinese text: egui's own fonts have no CJK glyphs. A subset of Noto Sans SC compiled
//! into the binary (assets/fonts, SIL OFL 1.1) covers every string of ours and is there
//! from the first frame; the operating system's Chinese font, when there is one, is read
//! on a thread once the first frame is on screen and goes behind the subset, for the
//! characters it lacks.

use std::path::PathBuf;
use std::sync::Arc;

use egui::{FontData, FontDefinitions, FontFamily};

/// The embedded subset (see assets/fonts/README.md).
pub const EMBEDDED: &[u8] = include_bytes!("../../assets/fonts/NotoSansSC-subset.otf");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FontSource {
    /// The embedded subset, and the OS font behind it once the first frame is shown.
    SystemThenEmbedded,
    /// Only the subset (tests: the same glyphs on every machine).
    EmbeddedOnly,
}

/// Font files known to hold Simplified Chinese, with the face index inside a collection.
fn candidates() -> Vec<(PathBuf, u32)> {
    let mut c = Vec::new();
    if cfg!(windows) {
        let fonts = PathBuf::from(std::env::var("WINDIR").unwrap_or_else(|_| r"C:\Windows".into()))
            .join("Fonts");
        for (f, i) in [
            ("msyh.ttc", 0),
            ("msyh.ttf", 0),
            ("simhei.ttf", 0),
            ("Deng.ttf", 0),
            ("simsun.ttc", 0),
        ] {
            c.push((fonts.join(f), i));
        }
    } else if cfg!(target_os = "macos") {
        c.push(("/System/Library/Fonts/PingFang.ttc".into(), 0));
        c.push(("/System/Library/Fonts/STHeiti Light.ttc".into(), 0));
    } else {
        for (f, i) in [
            // Noto Sans CJK collections: face 2 is Simplified Chinese.
            ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 2),
            ("/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc", 2),
            (
                "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
                2,
            ),
            (
                "/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf",
                0,
            ),
            (
                "/usr/share/fonts/google-noto-sans-cjk-fonts/NotoSansCJK-Regular.ttc",
                2,
            ),
            (
                "/usr/share/fonts/adobe-source-han-sans/SourceHanSansCN-Regular.otf",
                0,
            ),
            ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", 0),
            ("/usr/share/fonts/wqy-microhei/wqy-microhei.ttc", 0),
            ("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc", 0),
            ("/usr/share/fonts/wqy-zenhei/wqy-zenhei.ttc", 0),
        ] {
            c.push((f.into(), i));
        }
    }
    c
}

/// Linux with a font elsewhere: ask fontconfig (`fc-match`), if it is installed.
#[cfg(all(unix, not(target_os = "macos")))]
fn fontconfig() -> Option<(PathBuf, u32)> {
    let out = std::process::Command::new("fc-match")
        .args(["-f", "%{file}\n%{index}", "sans-serif:lang=zh-cn"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let file = PathBuf::from(lines.next()?.trim());
    let index = lines
        .next()
        .and_then(|i| i.trim().parse().ok())
        .unwrap_or(0);
    // fc-match always answers; only a CJK font is of use.
    let name = file.to_string_lossy().to_ascii_lowercase();
    let cjk = [
        "cjk",
        "wqy",
        "han",
        "hei",
        "song",
        "ming",
        "kai",
        "droidsansfallback",
    ];
    (file.is_file() && cjk.iter().any(|k| name.contains(k))).then_some((file, index))
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
fn fontconfig() -> Option<(PathBuf, u32)> {
    None
}

/// The OS's Chinese font: (bytes, face index, path).
pub fn system_font() -> Option<(Vec<u8>, u32, PathBuf)> {
    candidates()
        .into_iter()
        .find(|(p, _)| p.is_file())
        .or_else(fontconfig)
        .and_then(|(p, i)| std::fs::read(&p).ok().map(|b| (b, i, p)))
}

/// The fonts of the first frame: egui's defaults with the embedded subset behind them.
/// Nothing here touches the disk or starts a process (the subset is compiled in and egui
/// parses it lazily), so the first frame is not held up by fonts — and the subset holds
/// every character of ours, so that frame shows no box for any Chinese string of ours.
pub fn definitions() -> FontDefinitions {
    let mut defs = FontDefinitions::default();
    defs.font_data.insert(
        EMBEDDED_NAME.into(),
        Arc::new(FontData::from_static(EMBEDDED)),
    );
    for family in [FontFamily::Proportional, FontFamily::Monospace] {
        defs.families
            .entry(family)
            .or_default()
            .push(EMBEDDED_NAME.into());
    }
    defs
}

const EMBEDDED_NAME: &str = "cjk-embedded";
const SYSTEM_NAME: &str = "cjk-system";

/// Installs the first frame's fonts into `ctx` (eframe's creation context, or a test
/// harness's context setup).
pub fn install(ctx: &egui::Context) {
    ctx.set_fonts(definitions());
}

/// The OS's Chinese font as the last fallback, behind the embedded subset: it only draws
/// what the subset lacks (a rare character in a user's folder name, say), so text of ours
/// never changes its look when it arrives. Reading it (Microsoft YaHei is 19 MB; Linux may
/// ask `fc-match`, a process) is why it comes after the first frame.
pub fn system_insert(bytes: Vec<u8>, index: u32) -> egui::epaint::text::FontInsert {
    use egui::epaint::text::{FontInsert, FontPriority, InsertFontFamily};
    let mut data = FontData::from_owned(bytes);
    data.index = index;
    FontInsert::new(
        SYSTEM_NAME,
        data,
        [FontFamily::Proportional, FontFamily::Monospace]
            .into_iter()
            .map(|family| InsertFontFamily {
                family,
                priority: FontPriority::Lowest,
            })
            .collect(),
    )
}

/// Looks for the OS's Chinese font on a thread of its own and adds it to `ctx` (the next
/// frame uses it); `source` says whether to look at all. Called once the first frame is
/// on screen. The handle answers the font's path (None: none found, or not looked for).
pub fn add_system_font_later(
    ctx: &egui::Context,
    source: FontSource,
) -> Option<std::thread::JoinHandle<Option<PathBuf>>> {
    if source != FontSource::SystemThenEmbedded {
        return None;
    }
    let ctx = ctx.clone();
    std::thread::Builder::new()
        .name("cuda-setup-fonts".into())
        .spawn(move || {
            let (bytes, index, path) = system_font()?;
            ctx.add_font(system_insert(bytes, index));
            ctx.request_repaint();
            Some(path)
        })
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every Chinese string of the catalog renders with the embedded font alone: the
    /// subset must hold every character (rebuild it with scripts/font-subset.sh).
    #[test]
    fn embedded_font_covers_every_chinese_string() {
        let ctx = egui::Context::default();
        install(&ctx);
        let mut out = ctx.run_ui(Default::default(), |_| {});
        out.textures_delta.clear();
        let font = egui::FontId::proportional(14.0);
        let mut missing = std::collections::BTreeSet::new();
        ctx.fonts_mut(|f| {
            // The badges' and the log's marks, too.
            let marks = "✓⚠×○●▶›•";
            for text in cuda_setup_core::i18n::texts(cuda_setup_core::i18n::Lang::Zh).chain([marks])
            {
                for c in text.chars() {
                    if !f.has_glyph(&font, c) {
                        missing.insert(c);
                    }
                }
            }
        });
        assert!(
            missing.is_empty(),
            "the embedded font lacks {missing:?}: run scripts/font-subset.sh"
        );
    }

    #[test]
    fn the_first_frame_reads_no_system_font_and_the_system_font_goes_last() {
        // The first frame's chain: egui's own fonts, then the subset; no OS font.
        let defs = definitions();
        let chain = &defs.families[&FontFamily::Proportional];
        assert_eq!(chain.last().map(String::as_str), Some(EMBEDDED_NAME));
        assert!(!defs.font_data.contains_key(SYSTEM_NAME));
        // The OS font, when it comes, is behind everything in both families.
        let insert = system_insert(EMBEDDED.to_vec(), 0);
        assert_eq!(insert.families.len(), 2);
        assert!(
            insert
                .families
                .iter()
                .all(|f| f.priority == egui::epaint::text::FontPriority::Lowest)
        );
        // Not looked for in tests (the same glyphs on every machine).
        let ctx = egui::Context::default();
        assert!(add_system_font_later(&ctx, FontSource::EmbeddedOnly).is_none());
    }

    /// Added after the first frame, the OS font fills what the fonts before it lack, and
    /// goes last in both families (our text keeps the subset's look).
    #[test]
    fn a_font_added_after_the_first_frame_is_used_from_the_next_frame_on() {
        let frame = |ctx: &egui::Context| {
            let mut out = ctx.run_ui(Default::default(), |ui| {
                ui.label("x");
            });
            out.textures_delta.clear();
        };
        let font = egui::FontId::proportional(14.0);
        // egui's own fonts have no '中'; the subset, added as if it were the OS font, has.
        let ctx = egui::Context::default();
        frame(&ctx);
        assert!(!ctx.fonts_mut(|f| f.has_glyph(&font, '中')));
        ctx.add_font(system_insert(EMBEDDED.to_vec(), 0));
        frame(&ctx);
        assert!(ctx.fonts_mut(|f| f.has_glyph(&font, '中')));

        // In the wizard's set-up it goes behind the subset.
        let ctx = egui::Context::default();
        install(&ctx);
        frame(&ctx);
        ctx.add_font(system_insert(EMBEDDED.to_vec(), 0));
        frame(&ctx);
        for family in [FontFamily::Proportional, FontFamily::Monospace] {
            let chain = ctx.fonts(|f| f.definitions().families[&family].clone());
            let at = |n: &str| chain.iter().position(|c| c == n);
            assert_eq!(
                at(SYSTEM_NAME),
                Some(chain.len() - 1),
                "{family:?}: {chain:?}"
            );
            assert!(at(EMBEDDED_NAME) < at(SYSTEM_NAME), "{family:?}: {chain:?}");
        }
    }
}
