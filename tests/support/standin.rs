//! Stand-ins for NVIDIA's installers (real programs that honour the real flags and lay
//! out a realistic tree) and the hash NVIDIA's md5sum.txt gives for them.

#![allow(dead_code)]

pub const NVCC_114: &str = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2021 NVIDIA Corporation\nCuda compilation tools, release 11.4, V11.4.152\nBuild cuda_11.4.r11.4/compiler.30521435_0\n";

pub const NVCC_118: &str = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2022 NVIDIA Corporation\nBuilt on Wed_Sep_21_10:41:10_Pacific_Daylight_Time_2022\nCuda compilation tools, release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0\n";

/// The Windows installer stand-in: a shell program named like NVIDIA's .exe that honours
/// -s and the sub-package names and exits with `exit_code`. Like NVIDIA's, `cudart_X.Y`
/// lays down `lib/x64/cudart.lib` and `cuda.lib`, `cublas_dev_X.Y` `cublas.lib` and
/// `cublasLt.lib`. `STANDIN_OMIT` (space-separated sub-packages) in its environment
/// leaves those out, as an installer told to would. `pad` bytes of comment make
/// it as large as a download needs to be to cancel it halfway.
pub fn windows_installer(exit_code: i32, pad: usize) -> Vec<u8> {
    let mut s = format!(
        r#"#!/bin/sh
# Stand-in for cuda_11.8.0_522.06_windows.exe: installs what -s names, under $ProgramFiles.
log="$ProgramFiles/../../installer-args.log"
mkdir -p "$(dirname "$log")"; echo "$@" >> "$log"
silent=0; pkgs=" "
for a in "$@"; do case "$a" in -s) silent=1;; -n|-loglevel:*|-log:*) ;; *) pkgs="$pkgs$a ";; esac; done
[ $silent = 1 ] || {{ echo "not silent: a window would open" >&2; exit 2; }}
sleep "${{STANDIN_SLEEP:-0}}"
[ {exit_code} = 0 ] || exit {exit_code}
d="$ProgramFiles/NVIDIA GPU Computing Toolkit/CUDA/v11.8"
has() {{ case " $STANDIN_OMIT " in *" $1 "*) return 1;; esac; [ "$pkgs" = " " ] || case "$pkgs" in *" $1 "*) return 0;; *) return 1;; esac; }}
mkdir -p "$d/bin" "$d/include" "$d/lib/x64" "$d/libnvvp"
echo '{{"cuda":{{"name":"CUDA SDK","version":"11.8.0"}}}}' > "$d/version.json"
if has nvcc_11.8; then printf '#!/bin/sh\nprintf "%s"\n' '{NVCC_118}' > "$d/bin/nvcc.exe"; chmod +x "$d/bin/nvcc.exe"; fi
if has cudart_11.8; then echo MZ > "$d/bin/cudart64_110.dll"; echo '/* runtime */' > "$d/include/cuda_runtime.h"; echo '/* driver */' > "$d/include/cuda.h"; echo lib > "$d/lib/x64/cudart.lib"; echo lib > "$d/lib/x64/cuda.lib"; fi
if has cublas_11.8; then echo MZ > "$d/bin/cublas64_11.dll"; echo MZ > "$d/bin/cublasLt64_11.dll"; fi
if has cublas_dev_11.8; then echo '/* cublas */' > "$d/include/cublas_v2.h"; echo lib > "$d/lib/x64/cublas.lib"; echo lib > "$d/lib/x64/cublasLt.lib"; fi
echo "installed: $pkgs"
exit 0
"#
    );
    let line = format!("# {}\n", "x".repeat(98));
    while s.len() < pad {
        s.push_str(&line);
    }
    s.into_bytes()
}

/// A stand-in `nvcc` (shell built-ins and absolute paths only: tests run it with a bare
/// PATH) for the toolkit at `$0/../..`: `--version` prints `version_text`; a build with
/// `-o OUT` links like a real one: each `-lX` must be `lib64/libX.so` or
/// `lib64/stubs/libX.so` (what nvcc.profile's `-L` folders give the linker), else it
/// prints ld's own `cannot find -lX` and collect2's line and fails; then it writes OUT.
/// It records its arguments in `bin/last-args`.
pub fn nvcc_script(version_text: &str) -> String {
    format!(
        r#"#!/bin/sh
top="${{0%/*}}/.."
if [ "$1" = --version ]; then printf '%s' '{version_text}'; exit 0; fi
echo "$@" > "${{0%/*}}/last-args"
out=""; bad=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift;;
    -l*) l="${{1#-l}}"; if [ ! -e "$top/lib64/lib$l.so" ] && [ ! -e "$top/lib64/stubs/lib$l.so" ]; then bad="$bad $l"; fi;;
  esac
  shift
done
[ -n "$out" ] || {{ echo "nvcc fatal   : No input files specified; use option --help for more information" >&2; exit 1; }}
if [ -n "$bad" ]; then
  for l in $bad; do echo "/usr/bin/ld: cannot find -l$l: No such file or directory" >&2; done
  echo "collect2: error: ld returned 1 exit status" >&2
  exit 1
fi
printf '#!/bin/sh\necho built by the stand-in nvcc\n' > "$out"
exit 0
"#
    )
}

/// The Linux runfile stand-in: `--silent --toolkit --toolkitpath=DIR`. It lays down what a
/// developer links, as NVIDIA's does: `lib64/libcudart.so`, `libcublas.so`,
/// `libcublasLt.so` (links to the versioned files) and the driver stub
/// `lib64/stubs/libcuda.so`; its nvcc is [`nvcc_script`]. `STANDIN_OMIT=cublas` leaves
/// cuBLAS's link names out.
pub fn linux_runfile() -> Vec<u8> {
    let nvcc = nvcc_script(NVCC_114);
    format!(
        r#"#!/bin/sh
# Stand-in for cuda_11.4.4_470.82.01_linux.run
path=""; silent=0; toolkit=0
for a in "$@"; do case "$a" in --silent) silent=1;; --toolkit) toolkit=1;; --toolkitpath=*) path="${{a#--toolkitpath=}}";; esac; done
[ $silent = 1 ] && [ $toolkit = 1 ] && [ -n "$path" ] || {{ echo "usage error" >&2; exit 1; }}
mkdir -p "$path/bin" "$path/lib64/stubs" "$path/include"
echo '{{"cuda":{{"name":"CUDA SDK","version":"11.4.4"}}}}' > "$path/version.json"
cat > "$path/bin/nvcc" <<'NVCC_EOF'
{nvcc}NVCC_EOF
chmod +x "$path/bin/nvcc"
echo ELF > "$path/lib64/libcudart.so.11.4.148"
ln -sf libcudart.so.11.4.148 "$path/lib64/libcudart.so.11.0"
ln -sf libcudart.so.11.0 "$path/lib64/libcudart.so"
echo ELF > "$path/lib64/libcublas.so.11.6.5.2"; echo ELF > "$path/lib64/libcublasLt.so.11.6.5.2"
ln -sf libcublas.so.11.6.5.2 "$path/lib64/libcublas.so.11"; ln -sf libcublasLt.so.11.6.5.2 "$path/lib64/libcublasLt.so.11"
case " $STANDIN_OMIT " in *" cublas "*) ;; *) ln -sf libcublas.so.11 "$path/lib64/libcublas.so"; ln -sf libcublasLt.so.11 "$path/lib64/libcublasLt.so";; esac
echo ELF > "$path/lib64/stubs/libcuda.so"
for h in cuda.h cuda_runtime_api.h cublas_v2.h cublasLt.h; do echo "/* $h */" > "$path/include/$h"; done
echo "Toolkit:  Installed in $path"
"#
    )
    .into_bytes()
}

/// The md5 NVIDIA's md5sum.txt would list for `bytes`.
pub fn md5_of(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    std::fs::write(&p, bytes).unwrap();
    cuda_setup_core::download::hash_file(&p).unwrap().0.md5
}

/// The SHA-256 a package index would list for `bytes`.
pub fn sha256_of(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    std::fs::write(&p, bytes).unwrap();
    cuda_setup_core::download::hash_file(&p).unwrap().0.sha256
}

/// Serves `bytes` as NVIDIA's installer `local_installers/NAME` of CUDA `release`, with the
/// `md5sum.txt` NVIDIA publishes beside it listing its hash.
pub fn serve_installer(server: &super::server::Server, release: &str, name: &str, bytes: Vec<u8>) {
    let md5 = md5_of(&bytes);
    server.add(
        &format!("/compute/cuda/{release}/local_installers/{name}"),
        super::server::Body::Bytes(std::sync::Arc::new(bytes)),
    );
    server.add(
        &format!("/compute/cuda/{release}/docs/sidebar/md5sum.txt"),
        super::server::Body::Bytes(std::sync::Arc::new(
            format!("{md5}  local_installers/{name}\n").into_bytes(),
        )),
    );
}

/// What the driver stand-in does.
pub struct Driver<'a> {
    /// NVIDIA's version it "installs" (`617.14`).
    pub version: &'a str,
    pub exit_code: i32,
    /// The trailer's signer (`Some(NVIDIA)`), or no trailer: unsigned.
    pub signer: Option<&'a str>,
}

/// Windows' version of an NVIDIA driver (`581.57` → `32.0.15.8157`): the last five digits
/// of its last two fields are NVIDIA's version.
pub fn windows_driver_version(nvidia: &str) -> String {
    let digits: String = nvidia.chars().filter(char::is_ascii_digit).collect();
    assert_eq!(digits.len(), 5, "{nvidia}");
    format!("32.0.1{}.{}", &digits[..1], &digits[1..])
}

/// The driver installer stand-in: a shell program (named like NVIDIA's
/// `…-desktop-win10-win11-64bit-international-dch-whql.exe` where it is served) that
/// insists on `-s` and `-noreboot`, logs its arguments to `$SystemRoot/../../driver-args.log`
/// (the root), writes the display driver's INF into the root's DriverStore — what
/// detection reads as the installed driver — and exits with `exit_code`. Its last line is
/// the stand-in signature (`# stand-in signature: <signer>`) when `signer` is given.
pub fn driver_installer(d: &Driver) -> Vec<u8> {
    let mut s = format!(
        r#"#!/bin/sh
# Stand-in for NVIDIA's display driver {v} (setup.exe of the DCH package).
mkdir -p "$SystemRoot"; root="$SystemRoot/../.."
echo "$@" >> "$root/driver-args.log"
silent=0; noreboot=0
for a in "$@"; do case "$a" in -s) silent=1;; -noreboot) noreboot=1;; -clean) echo "-clean would reset the user's settings" >&2; exit 9;; esac; done
[ $silent = 1 ] || {{ echo "not silent: a window would open" >&2; exit 2; }}
[ $noreboot = 1 ] || {{ echo "it would restart the computer by itself" >&2; exit 3; }}
d="$SystemRoot/System32/DriverStore/FileRepository/nv_dispi.inf_amd64_standin"
mkdir -p "$d"
printf '[Version]\nClass=Display\nDriverVer = 10/28/2025,{win}\n' > "$d/nv_dispi.inf"
echo "installed NVIDIA driver {v}"
exit {code}
"#,
        v = d.version,
        win = windows_driver_version(d.version),
        code = d.exit_code,
    );
    if let Some(signer) = d.signer {
        s.push_str(&format!("# stand-in signature: {signer}\n"));
    }
    s.into_bytes()
}
