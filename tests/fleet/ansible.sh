#!/usr/bin/env bash
# A real ansible-playbook run (ansible-core from PyPI, local connection) that calls
# `cuda-setup install --unattended --root …` twice: the first run reports "changed",
# the second "ok". NVIDIA's server is stood in by a loopback http.server serving a
# stand-in runfile and its md5sum.txt at NVIDIA's paths.
# Usage: tests/fleet/ansible.sh [path/to/cuda-setup]   (called by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-target/debug/cuda-setup}
[ -x "$bin" ] || cargo build --quiet
bin=$(realpath "$bin")
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check ansible-core
export PATH="$work/venv/bin:$PATH"

# NVIDIA's paths, on loopback.
www="$work/www/compute/cuda/11.4.4"
mkdir -p "$www/local_installers" "$www/docs/sidebar"
cat > "$www/local_installers/cuda_11.4.4_470.82.01_linux.run" <<'RUN'
#!/bin/sh
path=""; for a in "$@"; do case "$a" in --toolkitpath=*) path="${a#--toolkitpath=}";; esac; done
[ -n "$path" ] || exit 1
mkdir -p "$path/bin" "$path/lib64/stubs"
# An nvcc that prints its version and, for the build check, writes its -o file.
cat > "$path/bin/nvcc" <<'NVCC'
#!/bin/sh
[ "$1" = --version ] && { echo "Cuda compilation tools, release 11.4, V11.4.152"; exit 0; }
while [ $# -gt 0 ]; do [ "$1" = -o ] && { : > "$2"; exit 0; }; shift; done
exit 1
NVCC
chmod +x "$path/bin/nvcc"
# What NVIDIA's runfile lays down for a developer: the runtime, its link name, the stub.
echo ELF > "$path/lib64/libcudart.so.11.0"
ln -s libcudart.so.11.0 "$path/lib64/libcudart.so"
echo ELF > "$path/lib64/stubs/libcuda.so"
echo '{"cuda":{"name":"CUDA SDK","version":"11.4.4"}}' > "$path/version.json"
RUN
md5=$(md5sum "$www/local_installers/cuda_11.4.4_470.82.01_linux.run" | cut -d' ' -f1)
echo "$md5  local_installers/cuda_11.4.4_470.82.01_linux.run" > "$www/docs/sidebar/md5sum.txt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/www" >/dev/null 2>&1 &
server=$!
python3 - "$port" <<'PY'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close(); break
    except OSError:
        time.sleep(0.1)
PY

cat > "$work/site.yml" <<YML
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: CUDA toolkit through cuda-setup
      ansible.builtin.command: >-
        $bin install --unattended --json --goal developer --root $work/root --os linux --cuda 11.4
        --gpu-cc 8.6 --driver 470.82.01 --no-cudnn --mirror http://127.0.0.1:$port
      register: cuda
      changed_when: (cuda.stdout | from_json).changed
      failed_when: cuda.rc not in [0, 194]
YML

run() {
    if ! ansible-playbook -i localhost, -e ansible_python_interpreter="$work/venv/bin/python" "$work/site.yml" > "$work/out.txt" 2>&1; then
        cat "$work/out.txt" >&2
        echo "FAIL: ansible-playbook failed" >&2
        exit 1
    fi
    grep -o 'changed=[0-9]*' "$work/out.txt" | tail -1
}
first=$(run)
second=$(run)
echo "first run: $first, second run: $second"
[ "$first" = "changed=1" ] || { echo "FAIL: the first run should report changed"; exit 1; }
[ "$second" = "changed=0" ] || { echo "FAIL: the second run should report ok (no change)"; exit 1; }
[ -x "$work/root/usr/local/cuda-11.4/bin/nvcc" ] || { echo "FAIL: no toolkit in the root"; exit 1; }
echo "ansible: 1 passed, 0 failed"
