#!/usr/bin/env bash
# Screenshots of the wizard's pages, English and Chinese, from a real window under Xvfb,
# into docs/screenshots/. The wizard runs in a --root sandbox as a Windows PC with an
# RTX 3060, against a local mirror (python3 -m http.server, NVIDIA's paths) serving a
# stand-in CUDA installer with its md5sum.txt and a stand-in display driver installer; a
# real-layout cuDNN zip is given, and a fake Python answers pip and the PyTorch check as a
# working torch would. `--page` walks the wizard by itself to each page, doing what a user
# would click. Two journeys:
#   driver 522.06 (new enough):  welcome system choose prepare install cudnn verify pytorch
#                                done done-tips (its end: the lines to try, the tips) repair
#   no driver (--no-driver):     choose-nodriver prepare-nodriver install-driver restart
#   driver 512.95 (old, works):  choose-olddriver (the PyTorch goal: update the driver first,
#                                or keep it, side by side on the driver row; #32)
#   Windows' default light theme (--theme light), in Chinese only:
#                                welcome-light choose-light install-light
#                                done-light (the PyTorch goal's end)
#   High contrast (--high-contrast, as Windows' high-contrast mode draws it; #35), in
#   English only:               welcome-hc choose-hc install-hc
# Each shot waits for its page's work (a download part-way, an installer run, the PyTorch
# check), then for the window to stop changing, scrolls to the verdict where one is shown
# at the page's end, and captures the window.
#
# Needs: apt-get install -y xvfb xauth imagemagick xdotool (and python3).
# Usage: scripts/screenshots.sh [shots...]     (default: all of them; BIN=path skips the build;
#        OUT=dir writes them there instead of docs/screenshots)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
target=${CARGO_TARGET_DIR:-target}
if [ -z "${BIN:-}" ]; then
    cargo build --release
    BIN="$target/release/cuda-setup"
fi
bin=$(realpath "$BIN")
out=${OUT:-docs/screenshots}
mkdir -p "$out"
all=(welcome system choose prepare install cudnn verify pytorch done done-tips repair
    choose-nodriver prepare-nodriver install-driver restart choose-olddriver
    welcome-light choose-light install-light done-light welcome-hc choose-hc install-hc)
shots=("$@")
[ ${#shots[@]} -gt 0 ] || shots=("${all[@]}")

work=$(mktemp -d)
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export XDG_RUNTIME_DIR="$work/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"

# The machine every shot pretends to be (the driver is added per journey).
facts=(--os windows --gpu "RTX 3060" --python 3.11 --cuda 11.8)

# The mirror: NVIDIA's paths, a stand-in installer (a shell program named like the .exe
# that lays out a CUDA tree where -s says) and NVIDIA's md5sum.txt for it.
mirror="$work/mirror"
inst="$mirror/compute/cuda/11.8.0/local_installers/cuda_11.8.0_522.06_windows.exe"
mkdir -p "$(dirname "$inst")" "$mirror/compute/cuda/11.8.0/docs/sidebar"
cat > "$inst" <<'SH'
#!/bin/sh
d="$ProgramFiles/NVIDIA GPU Computing Toolkit/CUDA/v11.8"
mkdir -p "$d/bin" "$d/include" "$d/lib/x64"
echo '{"cuda":{"name":"CUDA SDK","version":"11.8.0"}}' > "$d/version.json"
printf '#!/bin/sh\necho "Cuda compilation tools, release 11.8, V11.8.89"\n' > "$d/bin/nvcc.exe"
chmod +x "$d/bin/nvcc.exe"
echo MZ > "$d/bin/cudart64_110.dll"; echo MZ > "$d/bin/cublas64_11.dll"
sleep 1
echo "installed"
SH
# Pad it so the download has something to show.
# (fold leaves the last line open: echo ends it.)
pad() { head -c "$1" /dev/zero | tr '\0' '#' | fold -w 99 | sed 's/^/# /'; echo; }
pad 6000000 >> "$inst"
echo "$(md5sum < "$inst" | cut -d' ' -f1)  local_installers/cuda_11.8.0_522.06_windows.exe" \
    > "$mirror/compute/cuda/11.8.0/docs/sidebar/md5sum.txt"

# The display driver the recommendation picks for an RTX 3060 with no driver, at its
# path on NVIDIA's server (compat-tables/drivers.toml), asked of the binary itself.
driver_url=$("$bin" recommend --json "${facts[@]}" --goal developer --no-driver | python3 -c '
import json, sys
print(json.load(sys.stdin)["driver"]["install"]["download"]["url"])')
driver_version=$(echo "$driver_url" | sed -E 's#.*/Windows/([^/]+)/.*#\1#')
# Windows names the driver 32.0.1X.YYYY for NVIDIA's XYY.YY.
digits=$(echo "$driver_version" | tr -cd '0-9')
win_version="32.0.1${digits:0:1}.${digits:1}"
drv="$mirror/$(echo "$driver_url" | sed -E 's#^https?://[^/]+/##')"
mkdir -p "$(dirname "$drv")"
# The stand-in honours NVIDIA's silent flags, writes the driver package's INF into the
# sandbox's DriverStore (what detection reads as the installed driver) and exits
# STANDIN_EXIT (3010: "restart to finish"). Its last line is the stand-in signature the
# sandbox's signature check reads off Windows.
cat > "$drv" <<SH
#!/bin/sh
# Stand-in for NVIDIA's display driver $driver_version (setup.exe of the DCH package).
silent=0; noreboot=0
for a in "\$@"; do case "\$a" in -s) silent=1;; -noreboot) noreboot=1;; esac; done
[ \$silent = 1 ] || { echo "not silent: a window would open" >&2; exit 2; }
[ \$noreboot = 1 ] || { echo "it would restart the computer by itself" >&2; exit 3; }
d="\$SystemRoot/System32/DriverStore/FileRepository/nv_dispi.inf_amd64_standin"
mkdir -p "\$d"
printf '[Version]\nClass=Display\nDriverVer = 10/28/2025,$win_version\n' > "\$d/nv_dispi.inf"
sleep 1
echo "installed NVIDIA driver $driver_version"
exit \${STANDIN_EXIT:-0}
SH
pad 6000000 >> "$drv"
echo "# stand-in signature: NVIDIA Corporation" >> "$drv"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# A static server that sends installers at 1.5 MB/s, so the Install page is caught
# mid-download, and writes how much of each it sent to $work/sent/NAME.
mkdir -p "$work/sent"
python3 - "$port" "$mirror" "$work/sent" >/dev/null 2>&1 <<'PY' &
import functools, http.server, os, sys, time
class Slow(http.server.SimpleHTTPRequestHandler):
    def copyfile(self, src, dst):
        slow = self.path.endswith(".exe")
        sent, mark = 0, os.path.join(sys.argv[3], os.path.basename(self.path))
        while chunk := src.read(65536):
            dst.write(chunk)
            if slow:
                sent += len(chunk)
                with open(mark + ".new", "w") as f:
                    f.write(str(sent))
                os.replace(mark + ".new", mark)
                time.sleep(len(chunk) / 1_500_000)
    def log_message(self, *args):
        pass
handler = functools.partial(Slow, directory=sys.argv[2])
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
PY
server_pid=$!

# A cuDNN zip with NVIDIA's layout (the version header from the test fixtures).
zip="$work/cudnn-windows-x86_64-9.10.2.21_cuda11-archive.zip"
python3 - "$zip" "$repo/tests/fixtures/detect/cudnn_version-9.27.h" <<'PY'
import os, sys, zipfile
out, header = sys.argv[1], open(sys.argv[2]).read()
header = header.replace("#define CUDNN_MINOR 27", "#define CUDNN_MINOR 10").replace("#define CUDNN_PATCHLEVEL 0", "#define CUDNN_PATCHLEVEL 2")
top = "cudnn-windows-x86_64-9.10.2.21_cuda11-archive"
dlls = ["cudnn64_9", "cudnn_graph64_9", "cudnn_ops64_9", "cudnn_cnn64_9", "cudnn_adv64_9",
        "cudnn_heuristic64_9", "cudnn_engines_precompiled64_9", "cudnn_engines_runtime_compiled64_9"]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for d in ["", "bin/", "include/", "lib/", "lib/x64/"]:
        z.writestr(f"{top}/{d}", "")
    for d in dlls:
        z.writestr(f"{top}/bin/{d}.dll", os.urandom(300_000))
        z.writestr(f"{top}/lib/x64/{d}.lib", f"import library {d}")
    z.writestr(f"{top}/lib/x64/cudnn.lib", "import library cudnn.lib")
    for h in ["cudnn.h", "cudnn_adv.h", "cudnn_backend.h", "cudnn_cnn.h", "cudnn_graph.h", "cudnn_ops.h"]:
        z.writestr(f"{top}/include/{h}", f"/* {h} */\n#pragma once\n")
    z.writestr(f"{top}/include/cudnn_version.h", header)
    z.writestr(f"{top}/LICENSE", "NVIDIA Software License Agreement (stand-in text)\n")
PY

# A Python for pip and the PyTorch check: it prints what a working torch would (an RTX
# 3060, 38.1 times the CPU's speed) and leaves $work/doctor-ran behind.
py="$work/bin/python3"
mkdir -p "$work/bin"
cat > "$py" <<SH
#!/bin/sh
if [ "\$1" = -m ]; then echo "Collecting torch"; sleep 1; echo "Successfully installed torch"; exit 0; fi
echo 'CUDA_SETUP_DOCTOR {"python": "3.11.9", "executable": "/usr/bin/python3", "torch": {"version": "2.7.1+cu118", "cuda": "11.8", "cuda_available": true, "cudnn": 90100, "cudnn_available": true, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "device_count": 1, "device_name": "NVIDIA GeForce RTX 3060", "device_capability": [8, 6], "driver_version": 11080}, "torch_error": null, "check": {"size": 2048, "moved_to": "cuda:0", "tensor_ok": true, "cpu_ms": 80.0, "gpu_ms": 2.1, "speedup": 38.1, "max_error": 0.0001, "tolerance": 0.01, "ok": true}}'
touch "$work/doctor-ran"
SH
chmod +x "$py"

# One shot under Xvfb: start the wizard, wait for its window, for READY (a shell test) and
# for the window to stop changing (STABLE=1; a download in progress never does), scroll to
# the page's end (SCROLL=1), capture. Exit 3: captured, but READY never came (try again).
# Usage: shoot.sh PNG READY STABLE SCROLL wizard args...
cat > "$work/shoot.sh" <<'SH'
#!/usr/bin/env bash
set -u
png=$1 ready=$2 stable=$3 scroll=$4; shift 4
"$@" >"$png.log" 2>&1 &
app=$!
trap 'kill $app 2>/dev/null' EXIT
win=""
for _ in $(seq 1 600); do
    win=$(xdotool search --name "CUDA" 2>/dev/null | head -1) && [ -n "$win" ] && break
    kill -0 $app 2>/dev/null || { echo "$png: the wizard exited:" >&2; cat "$png.log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$win" ] || { echo "$png: no window after 60 s" >&2; exit 1; }
for _ in $(seq 1 1200); do
    sh -c "$ready" && break
    sleep 0.1
done
ready_ok=0
sh -c "$ready" && ready_ok=1 || echo "$png: not ready after 120 s: $ready" >&2
# The same picture twice, 0.7 s apart (at most 30 s): the page has settled.
settle() {
    local last="" now
    for _ in $(seq 1 45); do
        sleep 0.7
        now=$(import -window "$win" rgb:- 2>/dev/null | md5sum)
        [ "$now" = "$last" ] && return 0
        last=$now
    done
    echo "$png: still changing after 30 s (captured anyway)" >&2
}
if [ "$stable" = 1 ]; then settle; else sleep 0.5; fi
if [ "$scroll" = 1 ]; then
    xdotool mousemove --window "$win" 490 400 click --repeat 60 --delay 10 5
    settle
fi
import -window "$win" "$png"
[ $ready_ok = 1 ] || exit 3
SH
chmod +x "$work/shoot.sh"

# Shot → page, the driver flags, what it waits for, whether it settles and scrolls.
sent() { echo "n=\$(cat '$work/sent/$1' 2>/dev/null); [ \"\${n:-0}\" -ge $2 ]"; }
tk_size=$(stat -c %s "$inst")
drv_size=$(stat -c %s "$drv")
for lang in en zh; do
    for shot in "${shots[@]}"; do
        # A "-light" shot is its page in the light theme (most Windows PCs), in Chinese.
        base=${shot%-light} theme=()
        if [ "$base" != "$shot" ]; then
            [ "$lang" = zh ] || continue
            theme=(--theme light)
        fi
        # A "-hc" shot is its page in high contrast, in English.
        if [ "${shot%-hc}" != "$shot" ]; then
            [ "$lang" = en ] || continue
            base=${shot%-hc} theme=(--high-contrast)
        fi
        # The sandbox starts as $seed (empty, or an earlier install) at each try.
        seed="$work/seed-$lang-$shot" root="$work/root-$lang-$shot"
        mkdir -p "$seed"
        rm -f "$work/sent/"* "$work/doctor-ran"
        driver=(--driver 522.06) goal=(--goal developer)
        shot_facts=("${facts[@]}")
        ready=true stable=1 scroll=0 exit_code=0 page=$base
        case $base in
            install) ready=$(sent "$(basename "$inst")" $((tk_size * 35 / 100))); stable=0 ;;
            verify) ready="[ -e '$root/C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8/bin/cudnn64_9.dll' ]"; scroll=1 ;;
            pytorch) ready="[ -e '$work/doctor-ran' ]"; scroll=1 ;;
            repair)
                # An install from before, never configured: the wizard starts in repair mode.
                tk="$seed/C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8"
                mkdir -p "$tk/bin" "$tk/include" "$tk/lib/x64"
                echo '{"cuda":{"name":"CUDA SDK","version":"11.8.0"}}' > "$tk/version.json"
                echo MZ > "$tk/bin/nvcc.exe"; echo MZ > "$tk/bin/cudart64_110.dll" ;;
            done-tips) page=done; scroll=1 ;;
            choose-nodriver | prepare-nodriver) driver=(--no-driver); page=${shot%-nodriver} ;;
            choose-olddriver)
                # CUDA 11.6's driver: an update unlocks a newer PyTorch line (#32).
                driver=(--driver 512.95); page=choose
                shot_facts=(--os windows --gpu "RTX 3060" --python 3.11) goal=(--goal pytorch) ;;
            install-driver)
                driver=(--no-driver); page=install; stable=0
                ready=$(sent "$(basename "$drv")" $((drv_size * 35 / 100))) ;;
            restart)
                # The driver's installer asks for a restart: the run stops, the choice shows.
                driver=(--no-driver); page=install; exit_code=3010
                ready="[ -e '$root/C/Windows/System32/DriverStore/FileRepository/nv_dispi.inf_amd64_standin/nv_dispi.inf' ]" ;;
            welcome | system | choose | prepare | cudnn | done) ;;
            *) echo "no shot \"$shot\" (one of: ${all[*]})" >&2; exit 2 ;;
        esac
        if [ "$shot" = done-light ]; then
            # The PyTorch goal's end, PyTorch not installed yet (the stand-in toolkit
            # cannot pass the developer goal's build check): every tone of badge.
            goal=(--goal pytorch)
        fi
        png="$out/$shot-$lang.png"
        # Three tries, each in a fresh sandbox: xvfb-run -a can lose a race for a display
        # number to another X server starting at the same moment.
        for try in 1 2 3; do
            rm -rf "$root" && cp -a "$seed" "$root"
            STANDIN_EXIT=$exit_code xvfb-run -a -s "-screen 0 1100x860x24" \
                "$work/shoot.sh" "$work/$shot-$lang.png" "$ready" "$stable" "$scroll" \
                "$bin" --lang "$lang" --root "$root" "${shot_facts[@]}" "${goal[@]}" "${driver[@]}" \
                --mirror "http://127.0.0.1:$port" --cudnn-archive "$zip" --python-exe "$py" \
                --page "$page" "${theme[@]}" && break
            if [ $try = 3 ]; then
                # A page that never got ready is still worth a look; no window at all is not.
                [ -e "$work/$shot-$lang.png" ] || { echo "$png: gave up after three tries" >&2; exit 1; }
                echo "$png: not ready after three tries: look at it" >&2
                break
            fi
            echo "$png: trying again" >&2
            rm -f "$work/sent/"* "$work/doctor-ran"
        done
        cp "$work/$shot-$lang.png" "$png"
        echo "$png"
    done
done
