#!/usr/bin/env bash
# Rebuilds assets/fonts/NotoSansSC-subset.otf: the wizard's fallback CJK font, for machines
# with no Chinese system font. It covers every character of locales/zh.toml (the app's own
# strings) plus the 3,755 most common Chinese characters (GB 2312 level 1), ASCII and CJK
# punctuation. Run it after adding Chinese text with a rare character (the test
# `ui::fonts::tests::embedded_font_covers_every_chinese_string` says which).
#
# Needs: the Noto Sans CJK collection (Debian: apt-get install fonts-noto-cjk) and
# fonttools (pip install fonttools).
set -euo pipefail
cd "$(dirname "$0")/.."
src=${NOTO_CJK:-/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc}
out=assets/fonts/NotoSansSC-subset.otf
chars=$(mktemp)
trap 'rm -f "$chars"' EXIT
python3 - "$chars" <<'PY'
import sys
chars = set()
# GB 2312 level 1: rows 16-55 (0xB0-0xD7), columns 0xA1-0xFE; row 55 stops at 0xF9.
for hi in range(0xB0, 0xD8):
    for lo in range(0xA1, 0xFF):
        if hi == 0xD7 and lo > 0xF9:
            break
        chars.add(bytes([hi, lo]).decode("gb2312"))
chars.update(chr(c) for c in range(0x20, 0x7F))
chars.update(chr(c) for c in range(0x3000, 0x3040))   # CJK punctuation
chars.update(chr(c) for c in range(0xFF01, 0xFF5F))   # full-width forms
chars.update("“”‘’…—·×→✓⚠○●▶›•")
for path in ["locales/zh.toml"]:
    chars.update(c for c in open(path, encoding="utf-8").read() if ord(c) > 0x7F)
open(sys.argv[1], "w", encoding="utf-8").write("".join(sorted(chars)))
print(f"{len(chars)} characters", file=sys.stderr)
PY
# Face 2 of the collection is Simplified Chinese (Noto Sans CJK SC).
pyftsubset "$src" --font-number=2 --text-file="$chars" --output-file="$out" \
    --layout-features='*' --no-hinting --name-IDs='*' --name-languages='*'
ls -l "$out"
