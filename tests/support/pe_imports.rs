//! Real PE32+ DLLs that import other DLLs (an import directory and the names, nothing
//! else), so the missing-library walk (#33) is tested on files `object` reads as it reads
//! `torch_cuda.dll`. `pe.rs` writes DLLs with exports; this writes what they import.

#![allow(dead_code)]

fn put(b: &mut [u8], at: usize, v: &[u8]) {
    b[at..at + v.len()].copy_from_slice(v);
}

/// A DLL importing `imports`: headers, one `.idata` section at RVA 0x1000 (file offset
/// 0x200) holding the descriptors (20 bytes each, a zero one last) and the names.
pub fn dll(imports: &[&str]) -> Vec<u8> {
    const LFANEW: usize = 0x40;
    const COFF: usize = LFANEW + 4;
    const OPT: usize = COFF + 20;
    const OPT_SIZE: usize = 112 + 16 * 8;
    const SECTIONS: usize = OPT + OPT_SIZE;
    const RAW: usize = 0x200;
    const RVA: u32 = 0x1000;
    const SIZE: usize = 0x400;
    let mut b = vec![0u8; RAW + SIZE];
    put(&mut b, 0, b"MZ");
    put(&mut b, 0x3c, &(LFANEW as u32).to_le_bytes());
    put(&mut b, LFANEW, b"PE\0\0");
    put(&mut b, COFF, &0x8664u16.to_le_bytes()); // x86-64
    put(&mut b, COFF + 2, &1u16.to_le_bytes()); // one section
    put(&mut b, COFF + 16, &(OPT_SIZE as u16).to_le_bytes());
    put(&mut b, COFF + 18, &0x2022u16.to_le_bytes()); // a DLL
    put(&mut b, OPT, &0x20bu16.to_le_bytes()); // PE32+
    put(&mut b, OPT + 32, &0x1000u32.to_le_bytes());
    put(&mut b, OPT + 36, &0x200u32.to_le_bytes());
    put(&mut b, OPT + 108, &16u32.to_le_bytes()); // data directories
    let names_at = 20 * (imports.len() + 1);
    put(&mut b, OPT + 120, &RVA.to_le_bytes()); // the import directory
    put(&mut b, OPT + 124, &(names_at as u32).to_le_bytes());
    put(&mut b, SECTIONS, b".idata\0\0");
    put(&mut b, SECTIONS + 8, &(SIZE as u32).to_le_bytes());
    put(&mut b, SECTIONS + 12, &RVA.to_le_bytes());
    put(&mut b, SECTIONS + 16, &(SIZE as u32).to_le_bytes());
    put(&mut b, SECTIONS + 20, &(RAW as u32).to_le_bytes());
    let mut name = names_at;
    for (i, dll) in imports.iter().enumerate() {
        let rva = RVA + u32::try_from(name).unwrap();
        put(&mut b, RAW + 20 * i + 12, &rva.to_le_bytes());
        put(&mut b, RAW + name, dll.as_bytes());
        name += dll.len() + 1;
    }
    assert!(name <= SIZE, "the names fit the section");
    b
}
