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

# NVIDIA's paths, on loopback (sets $port and $server).
# shellcheck source=tests/fleet/nvidia-standin.sh
source tests/fleet/nvidia-standin.sh

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
