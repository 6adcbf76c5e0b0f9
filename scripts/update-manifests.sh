#!/usr/bin/env bash
# Writes a release into the package manifests: the version, the .exe's URL and its SHA-256.
#
#   scripts/update-manifests.sh EXE VERSION URL
#
#   EXE      the released (signed) cuda-setup.exe: hashed as it is, so sign it first
#   VERSION  the release's version; must be Cargo.toml's ([workspace.package] version)
#   URL      where the .exe is downloaded from (https, with VERSION in it, so Scoop's
#            autoupdate can derive the next one)
#
# Rewrites packaging/winget/*.yaml (PackageVersion, InstallerUrl, InstallerSha256) and
# packaging/scoop/cuda-setup.json (written whole: version, url, hash, homepage, checkver,
# autoupdate). PACKAGING_DIR=DIR works on another copy (tests/integration/packaging.rs).
# Needs only bash, sed and sha256sum.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
pkg=${PACKAGING_DIR:-$root/packaging}

die() { echo "scripts/update-manifests.sh: $*" >&2; exit 2; }
[ $# -eq 3 ] || die "usage: scripts/update-manifests.sh EXE VERSION URL"
exe=$1 version=$2 url=$3

[ -f "$exe" ] || die "$exe: no such file"
[[ $version =~ ^[0-9]+(\.[0-9]+){1,3}(-[0-9A-Za-z.]+)?$ ]] \
    || die "VERSION '$version' is not a version (1.2.3, 1.2.3-rc.1)"
cargo_version=$(sed -n '/^\[workspace\.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml")
[ "$version" = "$cargo_version" ] \
    || die "VERSION $version is not Cargo.toml's version ($cargo_version): bump Cargo.toml first"
# winget's InstallerUrl pattern is ^https?://.+ ; we publish over https only. No quote,
# backslash or whitespace: the value goes into YAML and JSON as it is.
[[ $url =~ ^https://[^[:space:]\"\\]+$ ]] || die "URL must be https:// with no spaces or quotes: $url"
[[ $url == *"$version"* ]] || die "URL must contain the version ($version), for Scoop's autoupdate: $url"

winget=$pkg/winget
scoop=$pkg/scoop/cuda-setup.json
installer=$winget/CudaSetup.CudaSetup.installer.yaml
for f in "$winget/CudaSetup.CudaSetup.yaml" "$installer" "$winget/CudaSetup.CudaSetup.locale.en-US.yaml" "$scoop"; do
    [ -f "$f" ] || die "$f: missing"
done

sha=$(sha256sum "$exe" | cut -d' ' -f1)
# winget shows hashes in capitals (`winget hash`); Scoop's are lower case.
sha_upper=$(tr '[:lower:]' '[:upper:]' <<<"$sha")

# sed's replacement text: & and \ and the delimiter | escaped.
esc() { printf '%s' "$1" | sed -e 's/[&\\|]/\\&/g'; }

for f in "$winget"/CudaSetup.CudaSetup*.yaml; do
    sed -i -e "s|^PackageVersion: .*|PackageVersion: $(esc "$version")|" "$f"
done
sed -i -e "s|^\(  InstallerUrl: \).*|\1$(esc "$url")|" \
    -e "s|^\(  InstallerSha256: \).*|\1$sha_upper|" "$installer"

# Scoop: where new versions are looked for. A GitHub release: its repository (Scoop reads
# the latest release's tag). Anywhere else: the folder above the version's, searched for
# links to the same file name under a newer version.
autoupdate=${url//"$version"/\$version}
if [[ $url =~ ^(https://github\.com/[^/]+/[^/]+)/releases/download/ ]]; then
    homepage=${BASH_REMATCH[1]}
    checkver="\"github\": \"$homepage\""
else
    homepage=${url%%"$version"*}
    homepage=${homepage%/*}/
    file=${url##*/}
    checkver="\"url\": \"$homepage\",
        \"regex\": \"([\\\\d.]+)/${file//./\\\\.}\""
fi

tmp=$(mktemp "$scoop.XXXXXX")
cat > "$tmp" <<JSON
{
    "##": [
        "Scoop manifest for cuda-setup (https://github.com/ScoopInstaller/Scoop/wiki/App-Manifests).",
        "version, url, hash, homepage, checkver and autoupdate are written by scripts/update-manifests.sh EXE VERSION URL for each release;",
        "until the first release the url is a placeholder on the reserved .invalid domain and the hash is all zeros.",
        "The .exe is the whole program: Scoop puts a cuda-setup shim on PATH. Unattended install: cuda-setup install --unattended."
    ],
    "version": "$version",
    "description": "NVIDIA GPU, CUDA, cuDNN and PyTorch setup wizard",
    "homepage": "$homepage",
    "architecture": {
        "64bit": {
            "url": "$url",
            "hash": "$sha"
        }
    },
    "bin": "cuda-setup.exe",
    "shortcuts": [
        [
            "cuda-setup.exe",
            "CUDA Setup"
        ]
    ],
    "checkver": {
        $checkver
    },
    "autoupdate": {
        "architecture": {
            "64bit": {
                "url": "$autoupdate"
            }
        }
    }
}
JSON
mv -f "$tmp" "$scoop"

if grep -q '^License: UNSET' "$winget/CudaSetup.CudaSetup.locale.en-US.yaml"; then
    echo "scripts/update-manifests.sh: warning: winget's License is UNSET (packaging/winget/*.locale.en-US.yaml): set it before submitting" >&2
fi
echo "scripts/update-manifests.sh: $version, $url, SHA-256 $sha written to $winget and $scoop"
