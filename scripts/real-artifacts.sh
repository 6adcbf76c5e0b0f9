#!/usr/bin/env bash
# The checks against real artifacts, which `cargo test` leaves out so that it runs
# anywhere with nothing but Rust. They are ordinary tests marked #[ignore] (an ignored
# test says so in `cargo test`'s summary, where an environment switch would let it pass
# silently); this script runs exactly them, in two parts:
#
# 1. `real_python_*`: our Python scripts (assets/*.py) on a real interpreter (a venv of
#    this machine's python3, so an installed torch takes no part), against stand-in torch
#    and setuptools packages: detection's probe (tests/integration/detect.rs), doctor's
#    probe (verify.rs) and its extension build (doctor_dev.rs); the guard (guard.rs,
#    issue #33): pip's real resolver in a real venv, offline against local wheels, refuses
#    a package pinning another torch once the guard is on, while the user's own
#    `constraint` in their pip.conf stays in effect. `cargo test` uses a stand-in
#    interpreter instead (tests/support/python.rs). Needs python3 with venv.
#    Then, with PyPI: `real_pypi_torch_*` (guard.rs) installs PyTorch's real wheel from
#    PyPI (about 1 GB, --no-deps), guards it, and pip refuses a package pinning another.
# 2. `real_nvidia_wheels_*`, NVIDIA's real wheels from PyPI:
#    - tests/integration/wheels.rs: the CUDA 13.5 wheels (cached under target/tmp/wheels/),
#      the toolkit built from them, the real nvcc compiles and runs a kernel with gcc as
#      the host compiler;
#    - tests/integration/real_dev.rs (`real_nvidia_wheels_dev_*`, issue #19): the same
#      wheels plus cuBLAS, NVRTC and cuDNN (cached under target/tmp/wheels-dev/), for Linux
#      and Windows; the real nvcc and g++ link a program against the shared cudart, cuBLAS,
#      cuDNN and the driver stub; CMake's find_package(CUDAToolkit) finds the tree and
#      builds against CUDA::cublas and CUDA::cuda_driver; pkg-config gives g++ the flags;
#      smoke's build check passes; the Windows tree's made import libraries (cublas.lib,
#      cudnn.lib) list every DLL export.
#    Needs PyPI (about 2.1 GB once, about 40 s on a fast link: toolkit wheels 0.13 GB for
#    Linux and 0.11 GB for Windows; dev wheels 1.0 GB for Linux and 0.9 GB for Windows),
#    python3 with pip, gcc, g++, cmake, pkg-config, readelf, and about 8 GB of disk while
#    it runs.
#
# Without PyPI, part 2 fails under CI=true (CI must check the real wheels, not skip them);
# elsewhere it prints SKIP (a laptop offline has nothing to check there). A missing tool
# or any other failure fails.
# The GPU tests are another matter: see docs/cli.md, "Verify on a GPU machine".
#
# Usage: scripts/real-artifacts.sh [extra cargo test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
index=${REAL_ARTIFACTS_INDEX:-https://pypi.org/simple/cuda-toolkit/}

command -v python3 >/dev/null 2>&1 || {
    echo "FAIL: python3 is not on PATH; the real-artifact tests need it (apt-get install python3 python3-venv python3-pip)" >&2
    exit 1
}

log=$(mktemp)
# The installed trees are a few GB: kept only while the tests run (the wheels stay cached).
trap 'rm -f "$log"; rm -rf target/tmp/real-dev' EXIT

# run FILTER GROUP...: the ignored tests matching FILTER, one at a time; each GROUP (a
# test path prefix) must have passed at least one test (a renamed test would leave the
# filter matching nothing: that is a failure too).
run() {
    local filter=$1
    shift
    cargo test --test integration "${cargo_args[@]}" "$filter" -- --ignored --test-threads 1 2>&1 | tee "$log"
    if ! grep -Eq 'test result: ok\. [1-9][0-9]* passed' "$log"; then
        echo "FAIL: no $filter test ran" >&2
        exit 1
    fi
    for group in "$@"; do
        if ! grep -Eq "^test ${group}[a-z0-9_]* \.\.\. ok" "$log"; then
            echo "FAIL: no ${group}* test ran" >&2
            exit 1
        fi
    done
}
cargo_args=("$@")

start=$SECONDS
run real_python_ 'detect::real_python_' 'verify::real_python_' 'doctor_dev::real_python_' 'doctor_packages::real_python_' 'ctranslate2_loads::real_python_' 'guard::real_python_'
echo "real python: $((SECONDS - start)) s"

# Is PyPI reachable (through the proxy pip would use, if any)?
if ! python3 - "$index" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=15).read(1)
PY
then
    if [ "${CI:-}" = true ]; then
        echo "FAIL: $index is not reachable from here (CI=true): NVIDIA's real wheels were not checked; give this machine PyPI (or its proxy), or set REAL_ARTIFACTS_INDEX to a mirror" >&2
        exit 1
    fi
    echo "SKIP: $index is not reachable from here; NVIDIA's real wheels were not checked (under CI=true this fails)."
    exit 0
fi

# The tools the tests drive: each missing one is named with what to install.
missing=0
for tool in gcc:gcc g++:g++ cmake:cmake pkg-config:pkg-config readelf:binutils; do
    if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
        echo "FAIL: ${tool%%:*} is not on PATH; the real-artifact tests need it (apt-get install ${tool#*:})" >&2
        missing=1
    fi
done
if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "FAIL: python3 has no pip; the real-artifact tests fetch NVIDIA's wheels with it (apt-get install python3-pip)" >&2
    missing=1
fi
[ "$missing" = 0 ] || exit 1

start=$SECONDS
run real_pypi_torch_ 'guard::real_pypi_torch_'
echo "real torch from PyPI, guarded: $((SECONDS - start)) s"

start=$SECONDS
run real_nvidia_wheels 'wheels::real_nvidia_wheels_' 'real_dev::real_nvidia_wheels_dev_'
echo "real artifacts: $((SECONDS - start)) s (wheel caches: $(du -sh target/tmp/wheels target/tmp/wheels-dev 2>/dev/null | awk '{print $2 " " $1}' | paste -sd, -))"
