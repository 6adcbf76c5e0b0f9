#!/usr/bin/env bash
# Screenshots of the wizard's pages, English and Chinese, from a real window under Xvfb,
# into docs/screenshots/. The wizard runs in a --root sandbox as a Windows PC with an
# RTX 3060 and driver 522.06, against a local mirror (python3 -m http.server) serving a
# stand-in CUDA installer with its md5sum.txt; a real-layout cuDNN zip is given. `--page`
# walks the wizard by itself to each page, doing what a user would click.
#
# Needs: apt-get install -y xvfb xauth imagemagick xdotool (and python3).
# Usage: scripts/screenshots.sh [pages...]     (default: all of them; BIN=path skips the build)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
target=${CARGO_TARGET_DIR:-target}
if [ -z "${BIN:-}" ]; then
    cargo build --release
    BIN="$target/release/cuda-setup"
fi
bin=$(realpath "$BIN")
out=docs/screenshots
mkdir -p "$out"
pages=("$@")
[ ${#pages[@]} -gt 0 ] || pages=(welcome system choose prepare install cudnn verify pytorch done repair)

work=$(mktemp -d)
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export XDG_RUNTIME_DIR="$work/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"

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
head -c 6000000 /dev/zero | tr '\0' '#' | fold -w 99 | sed 's/^/# /' >> "$inst"
echo "$(md5sum < "$inst" | cut -d' ' -f1)  local_installers/cuda_11.8.0_522.06_windows.exe" \
    > "$mirror/compute/cuda/11.8.0/docs/sidebar/md5sum.txt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# A static server that sends the installer at 1.5 MB/s, so the Install page is caught
# mid-download.
python3 - "$port" "$mirror" >/dev/null 2>&1 <<'PY' &
import functools, http.server, sys, time
class Slow(http.server.SimpleHTTPRequestHandler):
    def copyfile(self, src, dst):
        slow = self.path.endswith(".exe")
        while chunk := src.read(65536):
            dst.write(chunk)
            if slow:
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

# A Python for pip and the doctor (prints what a working torch would).
py="$work/bin/python3"
mkdir -p "$work/bin"
cat > "$py" <<'SH'
#!/bin/sh
if [ "$1" = -m ]; then echo "Collecting torch"; sleep 1; echo "Successfully installed torch"; exit 0; fi
echo 'CUDA_SETUP_DOCTOR {"python": "3.11.9", "executable": "/usr/bin/python3", "torch": {"version": "2.7.1+cu118", "cuda": "11.8", "cuda_available": true, "cudnn": 90100, "cudnn_available": true, "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "device_count": 1, "device_name": "NVIDIA GeForce RTX 3060", "device_capability": [8, 6], "driver_version": 11080}, "torch_error": null, "check": {"size": 2048, "moved_to": "cuda:0", "tensor_ok": true, "cpu_ms": 80.0, "gpu_ms": 2.1, "speedup": 38.1, "max_error": 0.0001, "tolerance": 0.01, "ok": true}}'
SH
chmod +x "$py"

for lang in en zh; do
    for page in "${pages[@]}"; do
        root="$work/root-$lang-$page"
        shot="$out/$page-$lang.png"
        if [ "$page" = repair ]; then
            # An install from before, never configured: the wizard starts in repair mode.
            tk="$root/C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8"
            mkdir -p "$tk/bin" "$tk/include" "$tk/lib/x64"
            echo '{"cuda":{"name":"CUDA SDK","version":"11.8.0"}}' > "$tk/version.json"
            echo MZ > "$tk/bin/nvcc.exe"; echo MZ > "$tk/bin/cudart64_110.dll"
        fi
        xvfb-run -a -s "-screen 0 1100x860x24" sh -c '
            "$0" --lang "$1" --root "$2" --os windows --gpu "RTX 3060" --driver 522.06 \
                --python 3.11 --cuda 11.8 --goal developer --mirror "http://127.0.0.1:$3" \
                --cudnn-archive "$4" --python-exe "$5" --page "$6" >/dev/null 2>&1 &
            app=$!
            win=""
            for i in $(seq 1 100); do
                win=$(xdotool search --name "CUDA" 2>/dev/null | head -1) && [ -n "$win" ] && break
                sleep 0.1
            done
            sleep "$8"
            import -window "$win" "$7"
            kill $app' "$bin" "$lang" "$root" "$port" "$zip" "$py" "$page" "$shot" \
            "$(case $page in install) echo 2.5;; cudnn|verify|pytorch|done) echo 9;; *) echo 4;; esac)"
        echo "$shot"
    done
done
