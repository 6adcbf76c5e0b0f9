#!/usr/bin/env bash
# Signs the Windows .exe with Authenticode (osslsigncode), when a certificate is given.
#
#   scripts/sign.sh EXE [OUT]      (OUT: where the signed file goes; default EXE itself)
#
# The certificate, from the environment (never from the command line, which `ps` shows):
#   CUDA_SETUP_SIGN_PFX            a .pfx / .p12 file: certificate, chain and private key
#   CUDA_SETUP_SIGN_PASSWORD       its password (handed to osslsigncode through a private
#                                  temporary file, not as an argument)
# or a key that never leaves a hardware token or a cloud HSM (PKCS#11), as the code-signing
# certificates issued since June 2023 require (docs/signing.md):
#   CUDA_SETUP_SIGN_PKCS11_MODULE  the token's PKCS#11 library (e.g. a vendor's .so)
#   CUDA_SETUP_SIGN_PKCS11_KEY     the key's PKCS#11 URI (pkcs11:object=…;type=private)
#   CUDA_SETUP_SIGN_CERTS          the certificate chain, PEM
#   (the token's PIN: CUDA_SETUP_SIGN_PASSWORD)
# Optional:
#   CUDA_SETUP_SIGN_TIMESTAMP_URL  an RFC 3161 time-stamping server (osslsigncode -ts):
#                                  the signature then stays valid after the certificate
#                                  expires. Unset: no time stamp (offline CI).
#   CUDA_SETUP_SIGN_TIME           the signing time, Unix seconds (reproducible test runs)
#
# No certificate given: says so on one line, leaves EXE unsigned (OUT, if another path, is
# an unsigned copy) and exits 0, so a build without secrets (a fork, a local build) goes on.
# On Windows, Microsoft's signtool does the same job: docs/signing.md has the command.
set -euo pipefail

usage() { echo "usage: scripts/sign.sh EXE [OUT]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
exe=$1
out=${2:-$1}
[ -f "$exe" ] || { echo "scripts/sign.sh: $exe: no such file" >&2; exit 2; }

pfx=${CUDA_SETUP_SIGN_PFX:-}
module=${CUDA_SETUP_SIGN_PKCS11_MODULE:-}
if [ -z "$pfx" ] && [ -z "$module" ]; then
    [ "$out" = "$exe" ] || cp -- "$exe" "$out"
    echo "scripts/sign.sh: no certificate given (CUDA_SETUP_SIGN_PFX or CUDA_SETUP_SIGN_PKCS11_MODULE unset): $out is NOT signed"
    exit 0
fi

command -v osslsigncode >/dev/null \
    || { echo "scripts/sign.sh: osslsigncode not found (Debian/Ubuntu: apt-get install osslsigncode)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 700 "$tmp"

args=(sign -h sha256 -n "CUDA Setup")
if [ -n "$pfx" ]; then
    [ -f "$pfx" ] || { echo "scripts/sign.sh: CUDA_SETUP_SIGN_PFX=$pfx: no such file" >&2; exit 1; }
    args+=(-pkcs12 "$pfx")
    what="certificate file $pfx"
else
    : "${CUDA_SETUP_SIGN_PKCS11_KEY:?set CUDA_SETUP_SIGN_PKCS11_KEY (the pkcs11: URI of the key)}"
    : "${CUDA_SETUP_SIGN_CERTS:?set CUDA_SETUP_SIGN_CERTS (the certificate chain, PEM)}"
    args+=(-pkcs11module "$module" -key "$CUDA_SETUP_SIGN_PKCS11_KEY" -certs "$CUDA_SETUP_SIGN_CERTS")
    what="PKCS#11 key $CUDA_SETUP_SIGN_PKCS11_KEY"
fi
if [ -n "${CUDA_SETUP_SIGN_PASSWORD:-}" ]; then
    (umask 077 && printf '%s' "$CUDA_SETUP_SIGN_PASSWORD" > "$tmp/pass")
    args+=(-readpass "$tmp/pass")
fi
if [ -n "${CUDA_SETUP_SIGN_TIMESTAMP_URL:-}" ]; then
    args+=(-ts "$CUDA_SETUP_SIGN_TIMESTAMP_URL")
    stamp="time-stamped by $CUDA_SETUP_SIGN_TIMESTAMP_URL"
else
    stamp="no time stamp (CUDA_SETUP_SIGN_TIMESTAMP_URL unset)"
fi
[ -z "${CUDA_SETUP_SIGN_TIME:-}" ] || args+=(-time "$CUDA_SETUP_SIGN_TIME")

# Signed into a temporary file first: an interrupted run never leaves a half-written .exe.
osslsigncode "${args[@]}" -in "$exe" -out "$tmp/signed.exe" >"$tmp/log" 2>&1 \
    || { cat "$tmp/log" >&2; echo "scripts/sign.sh: signing $exe failed" >&2; exit 1; }
mv -f -- "$tmp/signed.exe" "$out"
echo "scripts/sign.sh: $out signed (SHA-256, $what; $stamp)"
