//! The driver stub NVIDIA's installer puts in `lib64/stubs/libcuda.so`: a shared library
//! with SONAME `libcuda.so.1` that exports the driver API, so `-lcuda` links on a machine
//! without a driver (the real driver's `libcuda.so.1` is what loads at run time). No wheel
//! carries it; we write it from the declarations in the toolkit's own `cuda.h`.
//! OWNER: #19 helper "layout" (H1).
//!
//! The file is written byte by byte: one read-and-execute segment (ELF and program
//! headers, the SysV hash table, the symbols and their names, the code), one writable
//! segment holding `.dynamic`, and section headers (`.hash`, `.dynsym`, `.dynstr`,
//! `.text`, `.dynamic`, `.shstrtab`), because GNU ld reads a shared library's symbols
//! through its sections, not its segments. Every function is the same six bytes,
//! `mov eax, 34; ret`: were the stub ever loaded in place of the driver, each call
//! answers `CUDA_ERROR_STUB_LIBRARY`, as NVIDIA's stub does.

use std::collections::BTreeSet;
use std::path::Path;

use super::DevError;

/// The driver API's exported names declared in `cuda.h`'s text (`cuInit`, and the
/// versioned names its `#define cuX cuX_v2` lines map to), sorted, without duplicates.
///
/// A `#define` whose target is `__CUDA_API_PTDS(cuX_v2)` / `__CUDA_API_PTSZ(cuX)` gives
/// both the name and its per-thread-stream form (`cuX_v2_ptds`, `cuX_ptsz`), which a
/// program built with `--default-stream per-thread` calls.
pub fn symbols_from_header(cuda_h: &str) -> Vec<String> {
    let text = strip_comments(cuda_h);
    let mut out = BTreeSet::new();
    // Declarations: `CUDAAPI` then the name then `(`, whitespace and line breaks between.
    let mut rest = text.as_str();
    while let Some(i) = rest.find("CUDAAPI") {
        let before_ok = rest[..i].chars().next_back().is_none_or(|c| !is_ident(c));
        rest = &rest[i + "CUDAAPI".len()..];
        if !before_ok || rest.starts_with(is_ident) {
            continue;
        }
        let after = rest.trim_start();
        let name: String = after.chars().take_while(|c| is_ident(*c)).collect();
        if is_driver_name(&name) && after[name.len()..].trim_start().starts_with('(') {
            out.insert(name);
        }
    }
    // `#define cuX cuX_v2`, `#define cuX __CUDA_API_PTDS(cuX_v2)`.
    for line in text.lines() {
        let line = line.trim_start();
        let Some(d) = line.strip_prefix('#') else {
            continue;
        };
        let Some(d) = d.trim_start().strip_prefix("define") else {
            continue;
        };
        let mut words = d.split_whitespace();
        let (Some(name), Some(target), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        if !is_driver_name(name) {
            continue;
        }
        if is_driver_name(target) {
            out.insert(target.to_string());
            continue;
        }
        for (wrapper, suffix) in [("__CUDA_API_PTDS(", "_ptds"), ("__CUDA_API_PTSZ(", "_ptsz")] {
            if let Some(inner) = target
                .strip_prefix(wrapper)
                .and_then(|t| t.strip_suffix(')'))
                && is_driver_name(inner)
            {
                out.insert(inner.to_string());
                out.insert(format!("{inner}{suffix}"));
            }
        }
    }
    out.into_iter().collect()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `cuInit`, `cuMemAlloc_v2`: `cu` then a capital letter, then an identifier.
fn is_driver_name(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 2 && s.starts_with("cu") && b[2].is_ascii_uppercase() && s.chars().all(is_ident)
}

/// The text without `/* … */` and `// …` comments (line breaks kept).
fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                out.push(' ');
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

const EHDR: usize = 64;
const PHDR: usize = 56;
const PHNUM: usize = 4;
const SHDR: usize = 64;
const SYM: usize = 24;
/// Segments 64 KiB aligned, so kernels with 64 KiB pages map them too.
const ALIGN: u64 = 0x1_0000;

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_GNU_STACK: u32 = 0x6474_e551;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;

const DT_NULL: u64 = 0;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_STRSZ: u64 = 10;
const DT_SYMENT: u64 = 11;
const DT_SONAME: u64 = 14;

const SHT_PROGBITS: u32 = 1;
const SHT_STRTAB: u32 = 3;
const SHT_HASH: u32 = 5;
const SHT_DYNAMIC: u32 = 6;
const SHT_DYNSYM: u32 = 11;
const SHF_WRITE: u64 = 1;
const SHF_ALLOC: u64 = 2;
const SHF_EXECINSTR: u64 = 4;

/// Section indexes, in the order the headers are written.
const SEC_DYNSYM: u32 = 2;
const SEC_DYNSTR: u32 = 3;
const SEC_TEXT: u16 = 4;
const SEC_SHSTRTAB: u16 = 6;

/// One section header.
#[derive(Default)]
struct Shdr {
    name: u32,
    kind: u32,
    flags: u64,
    /// (address, file offset)
    at: (u64, u64),
    size: usize,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
}

/// `mov eax, 34 (CUDA_ERROR_STUB_LIBRARY); ret`.
const BODY: [u8; 6] = [0xb8, 34, 0, 0, 0, 0xc3];

/// The SysV ELF hash of a symbol name.
fn sysv_hash(name: &str) -> u32 {
    let mut h: u32 = 0;
    for b in name.bytes() {
        h = (h << 4).wrapping_add(u32::from(b));
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

fn put16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}

/// The bytes of an x86-64 shared library with SONAME `soname` exporting `symbols`
/// (sorted and without duplicates here; names that are not C identifiers are left out).
pub fn stub_bytes(soname: &str, symbols: &[String]) -> Vec<u8> {
    let names: Vec<&str> = symbols
        .iter()
        .map(String::as_str)
        .filter(|s| !s.is_empty() && s.chars().all(is_ident))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // .dynstr: the soname, then the names.
    let mut dynstr = vec![0u8];
    let mut name_at = |s: &str| {
        let at = dynstr.len() as u32;
        dynstr.extend_from_slice(s.as_bytes());
        dynstr.push(0);
        at
    };
    let soname_at = name_at(soname);
    let sym_names: Vec<u32> = names.iter().map(|n| name_at(n)).collect();
    let shstrtab_names = [
        "",
        ".hash",
        ".dynsym",
        ".dynstr",
        ".text",
        ".dynamic",
        ".shstrtab",
    ];
    let mut shstrtab = Vec::new();
    let sh_name: Vec<u32> = shstrtab_names
        .iter()
        .map(|n| {
            let at = shstrtab.len() as u32;
            shstrtab.extend_from_slice(n.as_bytes());
            shstrtab.push(0);
            at
        })
        .collect();

    let nsyms = names.len() + 1; // symbol 0 is the null symbol
    let nbucket = nsyms.div_ceil(2).max(1);
    let hash_off = EHDR + PHDR * PHNUM;
    let hash_len = 4 * (2 + nbucket + nsyms);
    let dynsym_off = (hash_off + hash_len).next_multiple_of(8);
    let dynstr_off = dynsym_off + SYM * nsyms;
    let text_off = (dynstr_off + dynstr.len()).next_multiple_of(16);
    let text_len = BODY.len();
    let rx_end = text_off + text_len;
    // The writable segment: its own page in the file, the next 64 KiB window in memory.
    let dyn_off = rx_end.next_multiple_of(0x1000);
    let dyn_addr = (dyn_off as u64).next_multiple_of(ALIGN) + ALIGN;
    let dynamic = [
        (DT_SONAME, u64::from(soname_at)),
        (DT_HASH, hash_off as u64),
        (DT_STRTAB, dynstr_off as u64),
        (DT_SYMTAB, dynsym_off as u64),
        (DT_STRSZ, dynstr.len() as u64),
        (DT_SYMENT, SYM as u64),
        (DT_NULL, 0),
    ];
    let dyn_len = 16 * dynamic.len();
    let shstrtab_off = dyn_off + dyn_len;
    let shdr_off = (shstrtab_off + shstrtab.len()).next_multiple_of(8);

    let mut b = Vec::with_capacity(shdr_off + SHDR * shstrtab_names.len());
    // ELF header: 64-bit, little-endian, version 1, System V ABI, a shared object.
    b.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    b.extend_from_slice(&[0; 8]);
    put16(&mut b, 3); // ET_DYN
    put16(&mut b, 62); // EM_X86_64
    put32(&mut b, 1);
    put64(&mut b, 0); // no entry point
    put64(&mut b, EHDR as u64);
    put64(&mut b, shdr_off as u64);
    put32(&mut b, 0);
    put16(&mut b, EHDR as u16);
    put16(&mut b, PHDR as u16);
    put16(&mut b, PHNUM as u16);
    put16(&mut b, SHDR as u16);
    put16(&mut b, shstrtab_names.len() as u16);
    put16(&mut b, SEC_SHSTRTAB);
    // Program headers: (type, flags, offset, address, size, align).
    let phdrs = [
        (PT_LOAD, PF_R | PF_X, 0, 0, rx_end as u64, ALIGN),
        (
            PT_LOAD,
            PF_R | PF_W,
            dyn_off as u64,
            dyn_addr,
            dyn_len as u64,
            ALIGN,
        ),
        (
            PT_DYNAMIC,
            PF_R | PF_W,
            dyn_off as u64,
            dyn_addr,
            dyn_len as u64,
            8,
        ),
        (PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 16), // no executable stack
    ];
    for (kind, flags, off, addr, size, align) in phdrs {
        put32(&mut b, kind);
        put32(&mut b, flags);
        put64(&mut b, off);
        put64(&mut b, addr);
        put64(&mut b, addr);
        put64(&mut b, size);
        put64(&mut b, size);
        put64(&mut b, align);
    }
    // SysV hash: buckets hold the first symbol of each chain, chains the next.
    let mut buckets = vec![0u32; nbucket];
    let mut chains = vec![0u32; nsyms];
    for (i, name) in names.iter().enumerate() {
        let sym = i as u32 + 1;
        let slot = sysv_hash(name) as usize % nbucket;
        chains[sym as usize] = buckets[slot];
        buckets[slot] = sym;
    }
    debug_assert_eq!(b.len(), hash_off);
    put32(&mut b, nbucket as u32);
    put32(&mut b, nsyms as u32);
    buckets
        .iter()
        .chain(&chains)
        .for_each(|v| put32(&mut b, *v));
    b.resize(dynsym_off, 0);
    b.extend_from_slice(&[0; SYM]);
    for at in &sym_names {
        put32(&mut b, *at);
        b.push(0x12); // STB_GLOBAL, STT_FUNC
        b.push(0); // default visibility
        put16(&mut b, SEC_TEXT);
        put64(&mut b, text_off as u64);
        put64(&mut b, BODY.len() as u64);
    }
    debug_assert_eq!(b.len(), dynstr_off);
    b.extend_from_slice(&dynstr);
    b.resize(text_off, 0);
    b.extend_from_slice(&BODY);
    b.resize(dyn_off, 0);
    for (tag, value) in dynamic {
        put64(&mut b, tag);
        put64(&mut b, value);
    }
    debug_assert_eq!(b.len(), shstrtab_off);
    b.extend_from_slice(&shstrtab);
    b.resize(shdr_off, 0);
    // Section headers; `.dynamic` is the only one whose address is not its offset.
    let at = |off: usize| (off as u64, off as u64);
    let sections = [
        Shdr::default(),
        Shdr {
            name: sh_name[1],
            kind: SHT_HASH,
            flags: SHF_ALLOC,
            at: at(hash_off),
            size: hash_len,
            link: SEC_DYNSYM,
            align: 8,
            entsize: 4,
            ..Shdr::default()
        },
        Shdr {
            name: sh_name[2],
            kind: SHT_DYNSYM,
            flags: SHF_ALLOC,
            at: at(dynsym_off),
            size: SYM * nsyms,
            link: SEC_DYNSTR,
            info: 1, // the first global symbol
            align: 8,
            entsize: SYM as u64,
        },
        Shdr {
            name: sh_name[3],
            kind: SHT_STRTAB,
            flags: SHF_ALLOC,
            at: at(dynstr_off),
            size: dynstr.len(),
            align: 1,
            ..Shdr::default()
        },
        Shdr {
            name: sh_name[4],
            kind: SHT_PROGBITS,
            flags: SHF_ALLOC | SHF_EXECINSTR,
            at: at(text_off),
            size: text_len,
            align: 16,
            ..Shdr::default()
        },
        Shdr {
            name: sh_name[5],
            kind: SHT_DYNAMIC,
            flags: SHF_ALLOC | SHF_WRITE,
            at: (dyn_addr, dyn_off as u64),
            size: dyn_len,
            link: SEC_DYNSTR,
            align: 8,
            entsize: 16,
            ..Shdr::default()
        },
        Shdr {
            name: sh_name[6],
            kind: SHT_STRTAB,
            at: (0, shstrtab_off as u64),
            size: shstrtab.len(),
            align: 1,
            ..Shdr::default()
        },
    ];
    for sh in sections {
        put32(&mut b, sh.name);
        put32(&mut b, sh.kind);
        put64(&mut b, sh.flags);
        put64(&mut b, sh.at.0);
        put64(&mut b, sh.at.1);
        put64(&mut b, sh.size as u64);
        put32(&mut b, sh.link);
        put32(&mut b, sh.info);
        put64(&mut b, sh.align);
        put64(&mut b, sh.entsize);
    }
    b
}

/// Writes an x86-64 ELF shared library at `path` with SONAME `soname` exporting
/// `symbols` (functions), with the section headers a linker reads (`.dynsym`, `.dynstr`,
/// `.dynamic`, `.hash`). Written beside and renamed into place: a reader never sees
/// half a library.
pub fn write_stub(path: &Path, soname: &str, symbols: &[String]) -> Result<(), DevError> {
    let bytes = stub_bytes(soname, symbols);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.part"));
    // A leftover (even a link someone put there) is removed, never written through.
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| DevError::io(&tmp, e))?;
    std::io::Write::write_all(&mut f, &bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            DevError::io(&tmp, e)
        })?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        DevError::io(path, e)
    })
}

/// The largest stub [`read_exports`] reads.
const MAX_STUB: u64 = 64 << 20;

/// A shared library's SONAME and the functions it defines, read through its section
/// headers as a linker reads them (what [`write_stub`] wrote, or NVIDIA's own stub).
pub fn read_exports(path: &Path) -> Result<(Option<String>, Vec<String>), DevError> {
    use object::read::elf::{Dyn, FileHeader};
    use object::{Object, ObjectSymbol};
    let malformed = |detail: String| DevError::Malformed {
        path: path.to_path_buf(),
        detail,
    };
    // Bounded: NVIDIA's stub is a few hundred KB; a far larger file is not a stub.
    let mut bytes = Vec::new();
    {
        use std::io::Read;
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_STUB).read_to_end(&mut bytes))
            .map_err(|e| DevError::io(path, e))?;
    }
    if bytes.len() as u64 >= MAX_STUB {
        return Err(malformed(format!("larger than {MAX_STUB} bytes")));
    }
    let data = bytes.as_slice();
    let elf = object::read::elf::ElfFile64::<object::Endianness>::parse(data)
        .map_err(|e| malformed(e.to_string()))?;
    if elf.kind() != object::ObjectKind::Dynamic {
        return Err(malformed("not a shared library".into()));
    }
    let endian = elf.endian();
    let sections = elf
        .elf_header()
        .sections(endian, data)
        .map_err(|e| malformed(e.to_string()))?;
    let soname = match sections
        .dynamic(endian, data)
        .map_err(|e| malformed(e.to_string()))?
    {
        Some((dynamic, link)) => {
            let strings = sections
                .strings(endian, data, link)
                .map_err(|e| malformed(e.to_string()))?;
            dynamic
                .iter()
                .find(|d| d.tag(endian) == object::elf::DT_SONAME)
                .and_then(|d| d.string(endian, strings).ok())
                .map(|s| String::from_utf8_lossy(s).into_owned())
        }
        None => None,
    };
    let mut names: Vec<String> = elf
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    Ok((soname, names))
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::read::elf::Dyn;
    use object::{Object, ObjectSection, ObjectSymbol};

    /// Lines of cuda.h as NVIDIA writes them: the version defines (plain and
    /// per-thread-stream), declarations on one line and split over two, a deprecated
    /// one, a comment that mentions a name, and the CUDAAPI define itself.
    const EXCERPT: &str = r#"
#define cuCtxCreate                         cuCtxCreate_v4
#define cuMemAlloc                          cuMemAlloc_v2
#define cuMemcpyHtoD                        __CUDA_API_PTDS(cuMemcpyHtoD_v2)
#define cuStreamQuery                       __CUDA_API_PTSZ(cuStreamQuery)
#define CUDA_VERSION 13050
#ifdef _WIN32
#define CUDAAPI __stdcall
#else
#define CUDAAPI
#endif
/**
 * \brief Initialize the CUDA driver API, see CUresult CUDAAPI cuNotReal(void)
 */
CUresult CUDAAPI cuInit(unsigned int Flags);
CUresult CUDAAPI cuDriverGetVersion(int *driverVersion);
__CUDA_DEPRECATED CUresult CUDAAPI cuCtxAttach(CUcontext *pctx, unsigned int flags);
CUresult CUDAAPI
cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra);
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);
typedef CUresult (CUDAAPI *PFN_cuInit)(unsigned int Flags);
"#;

    #[test]
    fn the_header_gives_declared_and_versioned_names() {
        let s = symbols_from_header(EXCERPT);
        assert_eq!(
            s,
            [
                "cuCtxAttach",
                "cuCtxCreate_v4",
                "cuDriverGetVersion",
                "cuInit",
                "cuLaunchKernelEx",
                "cuMemAlloc",
                "cuMemAlloc_v2",
                "cuMemcpyHtoD_v2",
                "cuMemcpyHtoD_v2_ptds",
                "cuStreamQuery",
                "cuStreamQuery_ptsz",
            ]
        );
    }

    #[test]
    fn the_stub_is_a_shared_library_with_its_soname_and_the_names_defined() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("libcuda.so");
        let syms = symbols_from_header(EXCERPT);
        write_stub(&p, "libcuda.so.1", &syms).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let f = object::File::parse(&*bytes).unwrap();
        assert_eq!(f.kind(), object::ObjectKind::Dynamic);
        assert_eq!(f.architecture(), object::Architecture::X86_64);
        // The soname, read through the .dynamic section.
        let object::File::Elf64(elf) = &f else {
            panic!("not ELF64")
        };
        let endian = elf.endian();
        let data = &*bytes;
        let sections = elf.elf_section_table();
        let (dynamic, link) = sections
            .dynamic(endian, data)
            .unwrap()
            .expect("a .dynamic section");
        let strings = sections.strings(endian, data, link).unwrap();
        let soname = dynamic
            .iter()
            .find(|d| d.tag(endian) == object::elf::DT_SONAME)
            .map(|d| d.string(endian, strings).unwrap())
            .unwrap();
        assert_eq!(soname, b"libcuda.so.1");
        // Every name is a defined, global function of .text.
        let text = f.section_by_name(".text").unwrap().index();
        let exported: Vec<String> = f
            .dynamic_symbols()
            .filter(|s| s.is_definition() && s.is_global() && s.section_index() == Some(text))
            .map(|s| s.name().unwrap().to_string())
            .collect();
        assert_eq!(exported, syms);
        for name in [".hash", ".dynsym", ".dynstr", ".dynamic", ".shstrtab"] {
            assert!(f.section_by_name(name).is_some(), "{name} missing");
        }
        // The hash table finds each name as the loader would.
        let hash = f.section_by_name(".hash").unwrap().data().unwrap();
        let word = |i: usize| u32::from_le_bytes(hash[4 * i..4 * i + 4].try_into().unwrap());
        let nbucket = word(0) as usize;
        let dynsym: Vec<String> = f
            .dynamic_symbols()
            .map(|s| s.name().unwrap().to_string())
            .collect();
        for (i, name) in dynsym.iter().enumerate() {
            let mut at = word(2 + sysv_hash(name) as usize % nbucket) as usize;
            while at != 0 && at != i + 1 {
                at = word(2 + nbucket + at) as usize;
            }
            assert_eq!(at, i + 1, "{name} not reachable through .hash");
        }
        let (so, names) = read_exports(&p).unwrap();
        assert_eq!(so.as_deref(), Some("libcuda.so.1"));
        assert_eq!(names, syms);
        // Written again, the same bytes: nothing half-written stays beside it.
        write_stub(&p, "libcuda.so.1", &syms).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), bytes);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn no_names_still_makes_a_valid_library() {
        let b = stub_bytes("libx.so.1", &[]);
        let f = object::File::parse(&*b).unwrap();
        assert_eq!(f.dynamic_symbols().count(), 0);
    }
}
