#!/usr/bin/env bash
# The checks against NVIDIA's real artifacts, which `cargo test` leaves out so that it
# runs anywhere: the tests named `real_nvidia_wheels_*` (tests/integration/wheels.rs)
# fetch NVIDIA's real CUDA 13.5 wheels from PyPI with pip (cached under
# target/tmp/wheels/), build the toolkit from them, and have the real nvcc compile and
# run a kernel with gcc as the host compiler. They are ordinary tests marked #[ignore]
# (an ignored test says so in `cargo test`'s summary, where an environment switch would
# let it pass silently); this script runs exactly them.
#
# Needs: PyPI (about 130 MB, once), python3 with pip, gcc. Without PyPI it prints SKIP
# and exits 0 (a machine with no network has nothing to check); any other failure fails.
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

log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --test integration "$@" real_nvidia_wheels -- --ignored --test-threads 1 2>&1 | tee "$log"
# A renamed test would leave the filter matching nothing: that is a failure too.
if ! grep -Eq 'test result: ok\. [1-9][0-9]* passed' "$log"; then
    echo "FAIL: no real_nvidia_wheels test ran" >&2
    exit 1
fi
