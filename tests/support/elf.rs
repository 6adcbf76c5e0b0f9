//! Real ELF shared libraries written byte by byte, so the loader tests need no C compiler:
//! a soname, `DT_NEEDED` entries, and exported functions that each return a constant
//! (`int f(void) { return 0; }`, `unsigned long cudnnGetVersion(void) { return 90100; }`).
//! The system's dynamic loader opens them, resolves their symbols and runs the functions.
//!
//! Layout: one read-and-execute segment (ELF and program headers, the SysV hash table, the
//! symbols and their names, the code) and one writable segment holding `.dynamic` (glibc
//! adds the load address to its pointers in place). No section headers: the loader needs
//! none. Segments are 64 KiB aligned, so 64 KiB-page kernels map them too.

#![allow(dead_code)]

use std::path::Path;

const ALIGN: u64 = 0x1_0000;
const EHDR: usize = 64;
const PHDR: usize = 56;
const PHNUM: usize = 4;
const SYM: usize = 24;

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_GNU_STACK: u32 = 0x6474_e551;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;

const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_STRSZ: u64 = 10;
const DT_SYMENT: u64 = 11;
const DT_SONAME: u64 = 14;

/// The ELF machine number and a function body returning `value` for this build's CPU.
fn machine_code(value: u64) -> (u16, Vec<u8>) {
    if cfg!(target_arch = "x86_64") {
        // mov rax, imm64; ret
        let mut c = vec![0x48, 0xb8];
        c.extend_from_slice(&value.to_le_bytes());
        c.push(0xc3);
        (62, c)
    } else if cfg!(target_arch = "aarch64") {
        // movz x0, #v0; movk x0, #v1, lsl 16; movk …32; movk …48; ret
        let mut c = Vec::new();
        for hw in 0..4u32 {
            let imm = ((value >> (16 * hw)) & 0xffff) as u32;
            let op: u32 = if hw == 0 { 0xd280_0000 } else { 0xf280_0000 };
            c.extend_from_slice(&(op | (hw << 21) | (imm << 5)).to_le_bytes());
        }
        c.extend_from_slice(&0xd65f_03c0u32.to_le_bytes());
        (183, c)
    } else {
        panic!("tests/support/elf.rs writes x86_64 and aarch64 code only")
    }
}

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

/// A shared library named `soname` that needs `needed` and exports `functions`
/// (name, the value it returns).
pub fn shared_library(soname: &str, needed: &[&str], functions: &[(&str, u64)]) -> Vec<u8> {
    // Names: symbol names first, then the soname and the needed libraries.
    let mut strtab = vec![0u8];
    let mut name_at = |s: &str| {
        let at = strtab.len() as u32;
        strtab.extend_from_slice(s.as_bytes());
        strtab.push(0);
        at
    };
    let sym_names: Vec<u32> = functions.iter().map(|(n, _)| name_at(n)).collect();
    let soname_at = name_at(soname);
    let needed_at: Vec<u32> = needed.iter().map(|n| name_at(n)).collect();

    let nsyms = functions.len() + 1; // symbol 0 is the null symbol
    let nbucket = nsyms;
    let hash_off = EHDR + PHDR * PHNUM;
    let hash_len = 4 * (2 + nbucket + nsyms);
    let symtab_off = (hash_off + hash_len).next_multiple_of(8);
    let strtab_off = symtab_off + SYM * nsyms;
    let text_off = (strtab_off + strtab.len()).next_multiple_of(16);
    let mut machine = 0;
    let mut text = Vec::new();
    let mut code_at = Vec::new();
    for (_, value) in functions {
        let (m, code) = machine_code(*value);
        machine = m;
        code_at.push(text_off + text.len());
        text.extend_from_slice(&code);
        text.resize(text.len().next_multiple_of(16), 0);
    }
    let rx_end = text_off + text.len();
    // The writable segment: its own page in the file, the next 64 KiB window in memory.
    let dyn_off = rx_end.next_multiple_of(0x1000) as u64;
    let dyn_addr = dyn_off + ALIGN;
    let dynamic: Vec<(u64, u64)> = needed_at
        .iter()
        .map(|at| (DT_NEEDED, u64::from(*at)))
        .chain([
            (DT_SONAME, u64::from(soname_at)),
            (DT_HASH, hash_off as u64),
            (DT_STRTAB, strtab_off as u64),
            (DT_SYMTAB, symtab_off as u64),
            (DT_STRSZ, strtab.len() as u64),
            (DT_SYMENT, SYM as u64),
            (DT_NULL, 0),
        ])
        .collect();
    let dyn_len = 16 * dynamic.len() as u64;

    let mut b = Vec::new();
    // ELF header: 64-bit, little-endian, version 1, System V ABI, a shared object.
    b.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    b.extend_from_slice(&[0; 8]);
    put16(&mut b, 3); // ET_DYN
    put16(&mut b, machine);
    put32(&mut b, 1);
    put64(&mut b, 0); // no entry point
    put64(&mut b, EHDR as u64); // program headers follow
    put64(&mut b, 0); // no section headers
    put32(&mut b, 0);
    put16(&mut b, EHDR as u16);
    put16(&mut b, PHDR as u16);
    put16(&mut b, PHNUM as u16);
    put16(&mut b, 64);
    put16(&mut b, 0);
    put16(&mut b, 0);
    // Program headers: (type, flags, offset, address, size in file and in memory, align).
    let phdrs = [
        (PT_LOAD, PF_R | PF_X, 0, 0, rx_end as u64, ALIGN),
        (PT_LOAD, PF_R | PF_W, dyn_off, dyn_addr, dyn_len, ALIGN),
        (PT_DYNAMIC, PF_R | PF_W, dyn_off, dyn_addr, dyn_len, 8),
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
    for (i, (name, _)) in functions.iter().enumerate() {
        let sym = i as u32 + 1;
        let slot = sysv_hash(name) as usize % nbucket;
        chains[sym as usize] = buckets[slot];
        buckets[slot] = sym;
    }
    assert_eq!(b.len(), hash_off);
    put32(&mut b, nbucket as u32);
    put32(&mut b, nsyms as u32);
    buckets
        .iter()
        .chain(&chains)
        .for_each(|v| put32(&mut b, *v));
    b.resize(symtab_off, 0);
    b.extend_from_slice(&[0; SYM]);
    for (i, name) in sym_names.iter().enumerate() {
        put32(&mut b, *name);
        b.push(0x12); // STB_GLOBAL, STT_FUNC
        b.push(0); // default visibility
        put16(&mut b, 1); // defined (any section but SHN_UNDEF and SHN_ABS)
        put64(&mut b, code_at[i] as u64);
        put64(&mut b, 16);
    }
    b.extend_from_slice(&strtab);
    b.resize(text_off, 0);
    b.extend_from_slice(&text);
    b.resize(dyn_off as usize, 0);
    for (tag, value) in dynamic {
        put64(&mut b, tag);
        put64(&mut b, value);
    }
    b
}

/// Writes `dir/file`, a library whose soname is `file` (see [`shared_library`]).
pub fn write_library(dir: &Path, file: &str, needed: &[&str], functions: &[(&str, u64)]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(file), shared_library(file, needed, functions)).unwrap();
}
