#!/usr/bin/env bash
# The checks against NVIDIA's real artifacts, which `cargo test` leaves out so that it
# runs anywhere. They are ordinary tests marked #[ignore] (an ignored test says so in
# `cargo test`'s summary, where an environment switch would let it pass silently); this
# script runs exactly them, all named `real_nvidia_wheels_*`:
#
# - tests/integration/wheels.rs: NVIDIA's real CUDA 13.5 wheels from PyPI (cached under
#   target/tmp/wheels/), the toolkit built from them, the real nvcc compiles and runs a
#   kernel with gcc as the host compiler;
# - tests/integration/real_dev.rs (`real_nvidia_wheels_dev_*`, issue #19): the same
#   wheels plus cuBLAS, NVRTC and cuDNN (cached under target/tmp/wheels-dev/), for Linux
#   and Windows; the real nvcc and g++ link a program against the shared cudart, cuBLAS,
#   cuDNN and the driver stub; CMake's find_package(CUDAToolkit) finds the tree and
#   builds against CUDA::cublas and CUDA::cuda_driver; pkg-config gives g++ the flags;
#   smoke's build check passes; the
#   Windows tree's made import libraries (cublas.lib, cudnn.lib) list every DLL export.
#
# Needs: PyPI (about 2.1 GB once, about 40 s on a fast link: toolkit wheels 0.13 GB for
# Linux and 0.11 GB for Windows; dev wheels 1.0 GB for Linux and 0.9 GB for Windows),
# python3 with pip, gcc, g++, cmake, pkg-config, readelf, and about 8 GB of disk while it runs.
# Without PyPI it prints SKIP and exits 0 (a machine with no network has
# nothing to check); a missing tool or any other failure fails.
# The GPU tests are another matter: see docs/cli.md, "Verify on a GPU machine".
#
# Usage: scripts/real-artifacts.sh [extra cargo test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
index=${REAL_ARTIFACTS_INDEX:-https://pypi.org/simple/cuda-toolkit/}

# Is PyPI reachable (through the proxy pip would use, if any)?
if ! python3 - "$index" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=15).read(1)
PY
then
    echo "SKIP: $index is not reachable from here; NVIDIA's real wheels were not checked."
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

log=$(mktemp)
# The installed trees are a few GB: kept only while the tests run (the wheels stay cached).
trap 'rm -f "$log"; rm -rf target/tmp/real-dev' EXIT
start=$SECONDS
cargo test --test integration "$@" real_nvidia_wheels -- --ignored --test-threads 1 2>&1 | tee "$log"
echo "real artifacts: $((SECONDS - start)) s (wheel caches: $(du -sh target/tmp/wheels target/tmp/wheels-dev 2>/dev/null | awk '{print $2 " " $1}' | paste -sd, -))"
# A renamed test would leave the filter matching nothing: that is a failure too, for
# each file's tests.
if ! grep -Eq 'test result: ok\. [1-9][0-9]* passed' "$log"; then
    echo "FAIL: no real_nvidia_wheels test ran" >&2
    exit 1
fi
for group in 'wheels::real_nvidia_wheels_' 'real_dev::real_nvidia_wheels_dev_'; do
    if ! grep -Eq "^test ${group}[a-z0-9_]* \.\.\. ok" "$log"; then
        echo "FAIL: no ${group}* test ran" >&2
        exit 1
    fi
done
