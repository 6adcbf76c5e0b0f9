#!/usr/bin/env bash
# `fleet collect`'s HTML page in a real browser (#36): builds a demo folder of reports (in
# the desired state, drifted, a corrupt one, an old install --report without a schema,
# one from a newer cuda-setup), runs `cuda-setup fleet collect` on it, screenshots the page
# with Debian's headless Chromium, and checks that the page's script sorts: `#sort=driver`
# and `#sort=-speedup` in the address sort on load, and --dump-dom shows the order.
#
#   scripts/fleet-html-shot.sh OUT.png [path/to/cuda-setup] [en|zh]
#
# Needs chromium (apt-get install chromium) and python3. Exit 1 when a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:?usage: scripts/fleet-html-shot.sh OUT.png [cuda-setup]}
exe=${2:-${CARGO_TARGET_DIR:-target}/debug/cuda-setup}
lang=${3:-en}
[ -x "$exe" ] || { echo "no cuda-setup at $exe (cargo build first)" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
        browser=$(command -v chromium)
    else
        echo "chromium is not installed (apt-get install chromium)" >&2
        exit 1
    fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
reports=$work/reports
mkdir -p "$reports"

# The reports as PCs write them (the report envelope of docs/fleet.md).
python3 - "$reports" <<'EOF'
import json, sys, time, os
d = sys.argv[1]
now = int(time.time())
def state(pc, gpu, driver, toolkit, torch, variant, speedup, guard=True):
    return {"schema": "cuda-setup/state", "schema_version": 1, "cuda_setup_version": "0.1.0",
            "computer": pc, "taken_at": now - 600, "os": "windows", "root": None,
            "gpus": [{"name": gpu, "compute_capability": "8.6"}],
            "driver": {"version": driver, "cuda": "12.7"},
            "toolkits": [{"version": toolkit, "path": "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4",
                          "method": "installer", "active": True}],
            "cudnn": [{"version": "9.1.0", "toolkit_path": "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"}],
            "pytorch": {"python": "C:\\Python312\\python.exe", "version": torch, "variant": variant, "cuda": "12.4"},
            "guard": {"on": guard, "verified_at": now - 86400},
            "last_check": {"at": now - 86400, "works": True, "speedup": speedup}}
def report(name, st, drift, age):
    with open(os.path.join(d, name + ".json"), "w") as f:
        json.dump({"schema": "cuda-setup/report", "schema_version": 1, "written_at": now - age,
                   "cuda_setup_version": "0.1.0", "state": st, "drift": drift, "profile": "lab.toml"}, f)
report("LAB-PC-01", state("LAB-PC-01", "NVIDIA GeForce RTX 3060", "566.36", "12.4.1", "2.5.1", "cu124", 23.4), [], 3600)
report("LAB-PC-02", state("LAB-PC-02", "NVIDIA GeForce RTX 4070", "560.94", "12.4.1", "2.5.1", "cu124", 101.2), [], 7200)
report("LAB-PC-10", state("LAB-PC-10", "NVIDIA GeForce RTX 3060", "550.54", "12.4.1", "2.5.1", "cu124", 9.5),
       [{"layer": "driver", "is": "550.54", "should": ">= 560.94", "fix": "install the driver", "fix_step": "install_driver"}], 2 * 86400)
report("LAB-PC-11", state("LAB-PC-11", "NVIDIA GeForce RTX 2080 Ti", "550.120", "11.8.0", "2.3.1", "cu118", 17.0, guard=False),
       [{"layer": "toolkit", "is": "11.8.0", "should": "12.4", "fix": "install CUDA 12.4", "fix_step": "install_toolkit"},
        {"layer": "pytorch", "is": "2.3.1+cu118", "should": "2.5 cu124", "fix": "install PyTorch 2.5 (cu124)", "fix_step": "install_torch"},
        {"layer": "guard", "is": "off", "should": "on", "fix": "turn the guard on", "fix_step": None}], 5 * 86400)
with open(os.path.join(d, "LAB-PC-12.json"), "w") as f:
    f.write('{"schema": "cuda-setup/report", "schema_ver')          # torn mid-write
with open(os.path.join(d, "LAB-PC-13.json"), "w") as f:              # an old install --report
    json.dump({"ok": True, "changed": True, "reboot_required": False, "steps": []}, f)
newer = {"schema": "cuda-setup/report", "schema_version": 2, "written_at": now - 60}
with open(os.path.join(d, "LAB-PC-14.json"), "w") as f:
    json.dump(newer, f)
EOF

set +e
"$exe" --lang "$lang" fleet collect "$reports" --html "$work/lab.html" --csv "$work/lab.csv"
code=$?
set -e
echo "fleet collect exit code: $code (1 expected: drift and unreadable reports)"
[ "$code" = 1 ] || { echo "FAIL: exit code $code" >&2; exit 1; }

chrome() { "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$work/profile" "$@" 2>/dev/null; }

mkdir -p "$(dirname "$out")"
chrome --screenshot="$out" --window-size=1400,600 "file://$work/lab.html"
[ -s "$out" ] || { echo "FAIL: no screenshot" >&2; exit 1; }
echo "screenshot: $out ($(stat -c %s "$out") bytes)"

# The column a fragment sorts on load, in the order the browser shows it.
column() { # FRAGMENT COLUMN-INDEX
    chrome --dump-dom "file://$work/lab.html#$1" | python3 -c '
import sys
from html.parser import HTMLParser
col = int(sys.argv[1])
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.body = False; s.rows = []; s.cell = None
    def handle_starttag(s, t, a):
        if t == "tbody": s.body = True
        elif s.body and t == "tr": s.rows.append([])
        elif s.body and t == "td": s.cell = ""
    def handle_endtag(s, t):
        if t == "td" and s.cell is not None: s.rows[-1].append(s.cell); s.cell = None
        elif t == "tbody": s.body = False
    def handle_data(s, d):
        if s.cell is not None: s.cell += d
p = P(); p.feed(sys.stdin.read())
print(" | ".join(r[col] for r in p.rows))' "$2"
}
fail=0
check() { # WHAT GOT WANT
    if [ "$2" = "$3" ]; then echo "ok: $1: $2"; else echo "FAIL: $1: got '$2', want '$3'" >&2; fail=1; fi
}
check "no fragment (by computer)" "$(column '' 0)" \
    "LAB-PC-01 | LAB-PC-02 | LAB-PC-10 | LAB-PC-11 | LAB-PC-12 | LAB-PC-13 | LAB-PC-14"
# Versions digit-aware (550.54 before 550.120); unreadable rows (no driver) last.
check "#sort=driver" "$(column sort=driver 0)" \
    "LAB-PC-10 | LAB-PC-11 | LAB-PC-02 | LAB-PC-01 | LAB-PC-12 | LAB-PC-13 | LAB-PC-14"
# Numbers as numbers (101.2 first, not 9.5), descending.
check "#sort=-speedup" "$(column sort=-speedup 10)" "101.2× | 23.4× | 17.0× | 9.5× |  |  | "
exit $fail
