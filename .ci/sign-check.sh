#!/usr/bin/env bash
# CI's check of the release's signing step (#35): scripts/sign.sh signs a copy of the .exe
# with a throw-away certificate made here (a root CA and a code-signing certificate it
# issued, as a real certificate comes with its chain), then
#   - osslsigncode verify passes with that root as the only trusted one;
#   - the unsigned .exe fails the same check (the check can fail);
#   - removing the signature gives back the .exe byte for byte, but for its PE checksum and
#     the padding before the signature: signing changed nothing else (the version resource
#     and the manifest stay);
#   - with no certificate, scripts/sign.sh says so and exits 0.
# Usage: .ci/sign-check.sh EXE SIGNED_COPY
# Needs: openssl, osslsigncode.
set -euo pipefail
cd "$(dirname "$0")/.."
exe=$1 signed=$2
mkdir -p "$(dirname "$signed")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The throw-away root and code-signing certificate (RSA 3072, 1 day).
cat > "$work/leaf.ext" <<'EXT'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = codeSigning
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EXT
openssl req -x509 -newkey rsa:3072 -nodes -days 1 -subj "/CN=cuda-setup CI throw-away root" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
    -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey rsa:3072 -nodes -subj "/CN=cuda-setup CI throw-away code signing" \
    -keyout "$work/leaf.key" -out "$work/leaf.csr" 2>/dev/null
openssl x509 -req -in "$work/leaf.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
    -days 1 -extfile "$work/leaf.ext" -out "$work/leaf.pem" 2>/dev/null
password=$(openssl rand -hex 16)
openssl pkcs12 -export -inkey "$work/leaf.key" -in "$work/leaf.pem" -certfile "$work/ca.pem" \
    -passout "pass:$password" -out "$work/sign.pfx"

fail=0
# No certificate: a plain line, exit 0, the copy unsigned.
if out=$(env -u CUDA_SETUP_SIGN_PFX -u CUDA_SETUP_SIGN_PKCS11_MODULE bash scripts/sign.sh "$exe" "$work/plain.exe") \
    && grep -q 'NOT signed' <<<"$out" && cmp -s "$exe" "$work/plain.exe"; then
    echo "ok: no certificate: $out"
else
    echo "FAILED: sign.sh without a certificate: $out"; fail=1
fi

CUDA_SETUP_SIGN_PFX="$work/sign.pfx" CUDA_SETUP_SIGN_PASSWORD="$password" \
    bash scripts/sign.sh "$exe" "$signed"

echo "---- osslsigncode verify (trusted root: the throw-away CA only) ----"
if osslsigncode verify -in "$signed" -CAfile "$work/ca.pem" > "$work/verify.txt" 2>&1 \
    && grep -q 'Signature verification: ok' "$work/verify.txt"; then
    cat "$work/verify.txt"
    echo "ok: the signed copy verifies against the throw-away root"
else
    cat "$work/verify.txt"; echo "FAILED: osslsigncode verify"; fail=1
fi
if osslsigncode verify -in "$exe" -CAfile "$work/ca.pem" >/dev/null 2>&1; then
    echo "FAILED: the unsigned .exe passed verify"; fail=1
else
    echo "ok: the unsigned .exe fails the same check"
fi
osslsigncode remove-signature -in "$signed" -out "$work/stripped.exe" >/dev/null
# Signing recomputes the PE checksum (4 bytes at the PE header + 88) and pads the file to
# 8 bytes before the signature (zeros the removal keeps); every other byte must be the .exe's.
pe=$(od -An -tu4 -j 60 -N 4 "$exe" | tr -d ' ')
size=$(stat -c %s "$exe") stripped=$(stat -c %s "$work/stripped.exe")
other=$({ cmp -l -n "$size" "$exe" "$work/stripped.exe" || true; } | awk -v lo=$((pe + 89)) -v hi=$((pe + 92)) '$1 < lo || $1 > hi' | wc -l)
pad=$(tail -c +$((size + 1)) "$work/stripped.exe" | tr -d '\0' | wc -c)
if [ "$stripped" -ge "$size" ] && [ $((stripped - size)) -lt 8 ] && [ "$other" = 0 ] && [ "$pad" = 0 ]; then
    echo "ok: signature removed = the .exe byte for byte but the PE checksum and $((stripped - size)) bytes of padding ($size bytes; signed $(stat -c %s "$signed"))"
else
    echo "FAILED: signing changed more than the signature ($other bytes differ, $((stripped - size)) appended)"; fail=1
fi
exit $fail
