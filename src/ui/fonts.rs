//! Chinese text: egui's own fonts have no CJK glyphs. The operating system's Chinese font
//! is loaded at run time when there is one; a subset of Noto Sans SC compiled into the
//! binary (assets/fonts, SIL OFL 1.1) is the fallback, and covers every string of ours.

use std::path::PathBuf;
use std::sync::Arc;

use egui::{FontData, FontDefinitions, FontFamily};

/// The embedded subset (see assets/fonts/README.md).
pub const EMBEDDED: &[u8] = include_bytes!("../../assets/fonts/NotoSansSC-subset.otf");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FontSource {
    /// The OS font first, the embedded subset behind it.
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

/// The font definitions: egui's defaults with the Chinese fonts behind them.
pub fn definitions(source: FontSource) -> (FontDefinitions, Option<PathBuf>) {
    let mut defs = FontDefinitions::default();
    let mut names = Vec::new();
    let mut loaded = None;
    if source == FontSource::SystemThenEmbedded
        && let Some((bytes, index, path)) = system_font()
    {
        let mut data = FontData::from_owned(bytes);
        data.index = index;
        defs.font_data.insert("cjk-system".into(), Arc::new(data));
        names.push("cjk-system".to_string());
        loaded = Some(path);
    }
    defs.font_data.insert(
        "cjk-embedded".into(),
        Arc::new(FontData::from_static(EMBEDDED)),
    );
    names.push("cjk-embedded".into());
    for family in [FontFamily::Proportional, FontFamily::Monospace] {
        defs.families
            .entry(family)
            .or_default()
            .extend(names.iter().cloned());
    }
    (defs, loaded)
}

/// Installs the fonts into `ctx` (before the first frame, so the first frame has them).
pub fn install(ctx: &egui::Context, source: FontSource) -> Option<PathBuf> {
    let (defs, loaded) = definitions(source);
    ctx.set_fonts(defs);
    loaded
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every Chinese string of the catalog renders with the embedded font alone: the
    /// subset must hold every character (rebuild it with scripts/font-subset.sh).
    #[test]
    fn embedded_font_covers_every_chinese_string() {
        let ctx = egui::Context::default();
        install(&ctx, FontSource::EmbeddedOnly);
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
    fn the_system_font_is_optional() {
        // Whatever this machine has, the embedded face is always last in the chain.
        let (defs, _) = definitions(FontSource::SystemThenEmbedded);
        let chain = &defs.families[&FontFamily::Proportional];
        assert_eq!(chain.last().map(String::as_str), Some("cjk-embedded"));
        let (defs, loaded) = definitions(FontSource::EmbeddedOnly);
        assert!(loaded.is_none() && !defs.font_data.contains_key("cjk-system"));
    }
}
