#!/usr/bin/env bash
# Makes `cargo check/build --target x86_64-pc-windows-gnu` work here (see
# shared/windows-cross.md). First choice: the rustup target. Fallback: Debian's Rust
# with the std source, unpacked (not installed: it conflicts with rustup), building std.
# Writes .ci/windows-env.sh, which the callers source.
set -euo pipefail
cd "$(dirname "$0")/.."
env_file=.ci/windows-env.sh

# The MinGW linker and C compiler (for -sys crates that build C for the target).
if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        (apt-get update -qq && apt-get install -y -qq gcc-mingw-w64-x86-64 >/dev/null) \
            || echo "warning: could not install gcc-mingw-w64-x86-64; linking the .exe will fail" >&2
    fi
fi

if timeout 180 rustup target add x86_64-pc-windows-gnu >/dev/null 2>&1; then
    echo "windows target: rustup"
    echo 'WINDOWS_CARGO_FLAGS=""' > "$env_file"
    exit 0
fi

echo "windows target: rustup failed, using Debian's Rust with -Zbuild-std"
debrust=${DEBRUST:-/opt/debrust}
if [ ! -x "$debrust/usr/bin/rustc" ]; then
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get update -qq && apt-get download rustc-web cargo-web libstd-rust-web-dev \
        libstd-rust-web-1.96 rust-web-src libllvm22 libgit2-1.5 libhttp-parser2.9 libmbedtls14 \
        libmbedcrypto7 libmbedx509-1)
    mkdir -p "$debrust"
    for d in "$tmp"/*.deb; do dpkg -x "$d" "$debrust"; done
    rm -rf "$tmp"
fi
cat > "$env_file" <<ENV
export PATH="$debrust/usr/bin:\$PATH"
export LD_LIBRARY_PATH="$debrust/usr/lib/x86_64-linux-gnu"
export RUSTC="$debrust/usr/bin/rustc" RUSTDOC="$debrust/usr/bin/rustdoc" RUSTC_BOOTSTRAP=1
WINDOWS_CARGO_FLAGS="-Zbuild-std=std,panic_abort"
ENV
