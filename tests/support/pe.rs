//! Real PE32+ (x64) DLLs written byte by byte, with an export table, so the import-library
//! tests need no Windows, no linker and no NVIDIA file: `llvm-readobj --coff-exports` and
//! `object` read them as they read `cublas64_13.dll`.
//!
//! Layout: the DOS header (`MZ`, `e_lfanew`), `PE\0\0`, the COFF header (AMD64, DLL), the
//! PE32+ optional header with its 16 data directories, and two sections: `.text`
//! (code, executable: one `ret` per exported function) and `.rdata` (read-only: 8 bytes
//! per exported data object, then the export directory — its address table, the sorted
//! name pointers, the ordinals, the DLL's name, the exported names and forwarder strings).

#![allow(dead_code)]

use std::path::Path;

const FILE_ALIGN: usize = 0x200;
const SECTION_ALIGN: u32 = 0x1000;
const HEADERS: usize = 0x200;
const TEXT_RVA: u32 = 0x1000;
/// Where the COFF header's machine field lies (a test writes another machine there).
pub const MACHINE_OFFSET: usize = 0x44;

/// What one DLL exports.
#[derive(Debug, Clone, Default)]
pub struct Dll {
    /// The DLL's own name, written in its export directory (`cublas64_13.dll`).
    pub name: String,
    /// Functions: an address in `.text`.
    pub functions: Vec<String>,
    /// Data objects: an address in `.rdata`, which does not execute.
    pub data: Vec<String>,
    /// Forwarded exports: (name, `OTHER.target`).
    pub forwards: Vec<(String, String)>,
    /// Functions exported by ordinal only, without a name.
    pub unnamed: usize,
    /// Zero bytes appended to reach at least this many bytes (as big as a real DLL).
    pub min_len: usize,
}

impl Dll {
    /// A DLL `name` exporting `functions`.
    pub fn new(name: &str, functions: &[&str]) -> Dll {
        Dll {
            name: name.to_string(),
            functions: functions.iter().map(|f| f.to_string()).collect(),
            ..Dll::default()
        }
    }

    pub fn data(mut self, data: &[&str]) -> Dll {
        self.data = data.iter().map(|d| d.to_string()).collect();
        self
    }

    pub fn forward(mut self, name: &str, to: &str) -> Dll {
        self.forwards.push((name.to_string(), to.to_string()));
        self
    }

    pub fn unnamed(mut self, n: usize) -> Dll {
        self.unnamed = n;
        self
    }

    pub fn min_len(mut self, n: usize) -> Dll {
        self.min_len = n;
        self
    }

    /// Every name exported, sorted (what an import library for it lists).
    pub fn names(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .functions
            .iter()
            .chain(&self.data)
            .cloned()
            .chain(self.forwards.iter().map(|(n, _)| n.clone()))
            .collect();
        all.sort();
        all.dedup();
        all
    }

    pub fn bytes(&self) -> Vec<u8> {
        build(self)
    }

    /// Writes the DLL at `path`.
    pub fn write(&self, path: &Path) {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(path, self.bytes()).unwrap();
    }
}

/// The bytes of a DLL `name` exporting `functions`.
pub fn dll(name: &str, functions: &[&str]) -> Vec<u8> {
    Dll::new(name, functions).bytes()
}

/// Writes `dir/<file>`, a DLL exporting `functions`; its own name is `file`.
pub fn write_dll(dir: &Path, file: &str, functions: &[&str]) {
    Dll::new(file, functions).write(&dir.join(file));
}

fn align(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

enum Target {
    Function(usize),
    Data(usize),
    Forward(String),
}

fn build(d: &Dll) -> Vec<u8> {
    // .text: 16 bytes per function (`ret`, then `int3` padding), named ones then unnamed.
    let n_code = d.functions.len() + d.unnamed;
    let text_len = (n_code * 16).max(1);
    let mut text = vec![0xCCu8; text_len];
    for i in 0..n_code {
        text[i * 16] = 0xC3;
    }
    let rdata_rva = TEXT_RVA + align(text_len, SECTION_ALIGN as usize) as u32;

    // The named exports in the order the loader's binary search needs: by bytes.
    let mut named: Vec<(String, Target)> = Vec::new();
    for (i, f) in d.functions.iter().enumerate() {
        named.push((f.clone(), Target::Function(i)));
    }
    for (i, v) in d.data.iter().enumerate() {
        named.push((v.clone(), Target::Data(i)));
    }
    for (n, to) in &d.forwards {
        named.push((n.clone(), Target::Forward(to.clone())));
    }
    named.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let n_functions = named.len() + d.unnamed;

    // .rdata: the data objects, then the export directory and its tables and strings.
    let data_len = d.data.len() * 8;
    let dir_off = align(data_len, 8);
    let eat_off = dir_off + 40;
    let names_off = eat_off + 4 * n_functions;
    let ords_off = names_off + 4 * named.len();
    let strings_off = ords_off + 2 * named.len();
    let mut strings = Vec::new();
    let string = |s: &str, strings: &mut Vec<u8>| -> u32 {
        let at = strings_off + strings.len();
        strings.extend_from_slice(s.as_bytes());
        strings.push(0);
        at as u32
    };
    let dll_name_at = string(&d.name, &mut strings);
    let name_at: Vec<u32> = named.iter().map(|(n, _)| string(n, &mut strings)).collect();
    let forward_at: Vec<Option<u32>> = named
        .iter()
        .map(|(_, t)| match t {
            Target::Forward(to) => Some(string(to, &mut strings)),
            _ => None,
        })
        .collect();
    let end = strings_off + strings.len();
    let mut rdata = vec![0u8; end];
    let rva = |off: usize| rdata_rva + off as u32;
    // The export directory.
    put32(&mut rdata, dir_off + 12, rva(dll_name_at as usize));
    put32(&mut rdata, dir_off + 16, 1); // ordinal base
    put32(&mut rdata, dir_off + 20, n_functions as u32);
    put32(&mut rdata, dir_off + 24, named.len() as u32);
    put32(&mut rdata, dir_off + 28, rva(eat_off));
    put32(&mut rdata, dir_off + 32, rva(names_off));
    put32(&mut rdata, dir_off + 36, rva(ords_off));
    for (i, (_, t)) in named.iter().enumerate() {
        let address = match t {
            Target::Function(f) => TEXT_RVA + (*f as u32) * 16,
            Target::Data(v) => rdata_rva + (*v as u32) * 8,
            Target::Forward(_) => rva(forward_at[i].unwrap() as usize),
        };
        put32(&mut rdata, eat_off + 4 * i, address);
        put32(&mut rdata, names_off + 4 * i, rva(name_at[i] as usize));
        put16(&mut rdata, ords_off + 2 * i, i as u16);
    }
    for u in 0..d.unnamed {
        let f = d.functions.len() + u;
        put32(
            &mut rdata,
            eat_off + 4 * (named.len() + u),
            TEXT_RVA + f as u32 * 16,
        );
    }
    rdata[end - strings.len()..].copy_from_slice(&strings);
    let export_rva = rva(dir_off);
    let export_size = (end - dir_off) as u32;

    let text_raw = align(text.len(), FILE_ALIGN);
    let rdata_raw = align(rdata.len(), FILE_ALIGN);
    let image_size = rdata_rva + align(rdata.len(), SECTION_ALIGN as usize) as u32;
    let mut out = vec![0u8; HEADERS + text_raw + rdata_raw];

    // DOS header.
    out[0..2].copy_from_slice(b"MZ");
    put32(&mut out, 0x3C, 0x40);
    // PE signature and COFF header.
    out[0x40..0x44].copy_from_slice(b"PE\0\0");
    let coff = 0x44;
    put16(&mut out, coff, 0x8664); // AMD64
    put16(&mut out, coff + 2, 2); // sections
    put16(&mut out, coff + 16, 240); // optional header
    put16(&mut out, coff + 18, 0x2022); // executable image, large address aware, DLL
    // PE32+ optional header.
    let opt = coff + 20;
    put16(&mut out, opt, 0x20B);
    out[opt + 2] = 14;
    put32(&mut out, opt + 4, text_raw as u32);
    put32(&mut out, opt + 8, rdata_raw as u32);
    put32(&mut out, opt + 20, TEXT_RVA); // base of code
    put64(&mut out, opt + 24, 0x1_8000_0000); // image base
    put32(&mut out, opt + 32, SECTION_ALIGN);
    put32(&mut out, opt + 36, FILE_ALIGN as u32);
    put16(&mut out, opt + 40, 6); // OS version
    put16(&mut out, opt + 48, 6); // subsystem version
    put32(&mut out, opt + 56, image_size);
    put32(&mut out, opt + 60, HEADERS as u32);
    put16(&mut out, opt + 68, 2); // Windows GUI
    put16(&mut out, opt + 70, 0x0160); // high-entropy VA, dynamic base, NX
    put64(&mut out, opt + 72, 0x10_0000);
    put64(&mut out, opt + 80, 0x1000);
    put64(&mut out, opt + 88, 0x10_0000);
    put64(&mut out, opt + 96, 0x1000);
    put32(&mut out, opt + 108, 16); // data directories
    put32(&mut out, opt + 112, export_rva);
    put32(&mut out, opt + 116, export_size);
    // Section headers.
    let sections = opt + 240;
    let section = |out: &mut Vec<u8>, at: usize, name: &[u8], vsize, rva, raw, ptr, flags| {
        out[at..at + name.len()].copy_from_slice(name);
        put32(out, at + 8, vsize);
        put32(out, at + 12, rva);
        put32(out, at + 16, raw);
        put32(out, at + 20, ptr);
        put32(out, at + 36, flags);
    };
    section(
        &mut out,
        sections,
        b".text",
        text.len() as u32,
        TEXT_RVA,
        text_raw as u32,
        HEADERS as u32,
        0x6000_0020, // code, execute, read
    );
    section(
        &mut out,
        sections + 40,
        b".rdata",
        rdata.len() as u32,
        rdata_rva,
        rdata_raw as u32,
        (HEADERS + text_raw) as u32,
        0x4000_0040, // initialised data, read
    );
    out[HEADERS..HEADERS + text.len()].copy_from_slice(&text);
    out[HEADERS + text_raw..HEADERS + text_raw + rdata.len()].copy_from_slice(&rdata);
    if out.len() < d.min_len {
        out.resize(d.min_len, 0);
    }
    out
}
