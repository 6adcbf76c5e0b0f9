use super::*;

fn put(b: &mut [u8], at: usize, v: &[u8]) {
    b[at..at + v.len()].copy_from_slice(v);
}

/// A minimal PE32+ DLL importing `imports` (headers, one `.idata` section at RVA 0x1000).
pub(crate) fn pe(imports: &[&str]) -> Vec<u8> {
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
    put(&mut b, COFF, &0x8664u16.to_le_bytes());
    put(&mut b, COFF + 2, &1u16.to_le_bytes());
    put(&mut b, COFF + 16, &(OPT_SIZE as u16).to_le_bytes());
    put(&mut b, COFF + 18, &0x2022u16.to_le_bytes());
    put(&mut b, OPT, &0x20bu16.to_le_bytes());
    put(&mut b, OPT + 32, &0x1000u32.to_le_bytes());
    put(&mut b, OPT + 36, &0x200u32.to_le_bytes());
    put(&mut b, OPT + 108, &16u32.to_le_bytes());
    let names_at = 20 * (imports.len() + 1);
    put(&mut b, OPT + 120, &RVA.to_le_bytes());
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

/// A minimal ELF64 shared object (little-endian) with `DT_NEEDED` entries, a
/// `DT_RUNPATH` and a `DT_RPATH`: one PT_LOAD over the whole file, one PT_DYNAMIC. Read,
/// never loaded.
pub(crate) fn elf(needed: &[&str], runpath: Option<&str>, rpath: Option<&str>) -> Vec<u8> {
    const EHDR: usize = 64;
    const PHDR: usize = 56;
    const BASE: u64 = 0x40_0000;
    let mut strings = vec![0u8];
    let mut add = |s: &str| {
        let at = strings.len() as u64;
        strings.extend_from_slice(s.as_bytes());
        strings.push(0);
        at
    };
    let mut dyns: Vec<(u64, u64)> = needed.iter().map(|n| (1, add(n))).collect();
    if let Some(r) = runpath {
        dyns.push((29, add(r)));
    }
    if let Some(r) = rpath {
        dyns.push((15, add(r)));
    }
    let dyn_at = EHDR + 2 * PHDR;
    let dyn_len = (dyns.len() + 3) * 16;
    let str_at = dyn_at + dyn_len;
    dyns.push((5, BASE + str_at as u64)); // DT_STRTAB (an address)
    dyns.push((10, strings.len() as u64)); // DT_STRSZ
    dyns.push((0, 0));
    let total = str_at + strings.len();
    let mut b = vec![0u8; total];
    put(&mut b, 0, b"\x7fELF");
    b[4] = 2; // 64-bit
    b[5] = 1; // little-endian
    b[6] = 1; // version
    put(&mut b, 16, &3u16.to_le_bytes()); // ET_DYN
    put(&mut b, 18, &62u16.to_le_bytes()); // x86-64
    put(&mut b, 20, &1u32.to_le_bytes());
    put(&mut b, 32, &(EHDR as u64).to_le_bytes()); // e_phoff
    put(&mut b, 52, &(EHDR as u16).to_le_bytes());
    put(&mut b, 54, &(PHDR as u16).to_le_bytes());
    put(&mut b, 56, &2u16.to_le_bytes());
    let ph = |b: &mut Vec<u8>, i: usize, ty: u32, off: u64, len: u64| {
        let p = EHDR + i * PHDR;
        put(b, p, &ty.to_le_bytes());
        put(b, p + 4, &4u32.to_le_bytes());
        put(b, p + 8, &off.to_le_bytes());
        put(b, p + 16, &(BASE + off).to_le_bytes());
        put(b, p + 24, &(BASE + off).to_le_bytes());
        put(b, p + 32, &len.to_le_bytes());
        put(b, p + 40, &len.to_le_bytes());
        put(b, p + 48, &8u64.to_le_bytes());
    };
    ph(&mut b, 0, 1, 0, total as u64);
    ph(&mut b, 1, 2, dyn_at as u64, (dyns.len() * 16) as u64);
    for (i, (tag, val)) in dyns.iter().enumerate() {
        put(&mut b, dyn_at + 16 * i, &tag.to_le_bytes());
        put(&mut b, dyn_at + 16 * i + 8, &val.to_le_bytes());
    }
    put(&mut b, str_at, &strings);
    b
}

fn write(p: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// The tree of #33: `_C.pyd → torch_cuda.dll → cudnn_ops64_9.dll`, torch's layout.
fn torch_tree(root: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let torch = root.join("site-packages/torch");
    let lib = torch.join("lib");
    let sys32 = root.join("Windows/System32");
    write(
        &torch.join("_C.cp311-win_amd64.pyd"),
        &pe(&["torch_python.dll", "python311.dll", "KERNEL32.dll"]),
    );
    write(
        &lib.join("torch_python.dll"),
        &pe(&["torch_cuda.dll", "api-ms-win-crt-runtime-l1-1-0.dll"]),
    );
    write(
        &lib.join("torch_cuda.dll"),
        &pe(&[
            "cudnn_ops64_9.dll",
            "VCRUNTIME140.dll",
            "ext-ms-win-foo-l1-1-0.dll",
        ]),
    );
    write(&root.join("Python311/python311.dll"), &pe(&[]));
    write(&sys32.join("vcruntime140.dll"), b"not read: a system file");
    (torch.join("_C.cp311-win_amd64.pyd"), lib, sys32)
}

fn python38(root: &Path, lib: &Path, sys32: &Path, path: Vec<PathBuf>) -> Search {
    Search::Windows(WindowsSearch {
        load_dir_first: true,
        dirs: vec![
            root.join("Python311"),
            lib.to_path_buf(),
            sys32.to_path_buf(),
        ],
        system: vec![sys32.to_path_buf()],
        unsearched: path,
    })
}

#[test]
fn the_missing_dll_is_named_with_its_chain() {
    let d = tempfile::tempdir().unwrap();
    let (pyd, lib, sys32) = torch_tree(d.path());
    let w = walk(&pyd, &python38(d.path(), &lib, &sys32, Vec::new()));
    assert_eq!(w.missing.len(), 1, "{w:?}");
    let m = &w.missing[0];
    assert_eq!(m.name, "cudnn_ops64_9.dll");
    assert_eq!(
        m.chain_text(),
        "_C.cp311-win_amd64.pyd → torch_python.dll → torch_cuda.dll → cudnn_ops64_9.dll"
    );
    assert_eq!(m.unsearched, None);
    // API sets and KnownDLLs (KERNEL32) are never missing; vcruntime140 is in System32
    // (names compared ignoring case) and, being Windows', not read.
    assert!(w.unreadable.is_empty(), "{:?}", w.unreadable);
    // Put where the loader looks (any case), nothing is missing.
    write(&lib.join("CUDNN_OPS64_9.DLL"), &pe(&["KERNEL32.dll"]));
    let w = walk(&pyd, &python38(d.path(), &lib, &sys32, Vec::new()));
    assert!(w.missing.is_empty(), "{w:?}");
}

#[test]
fn a_dll_only_on_path_is_still_missing_and_says_where_it_is() {
    let d = tempfile::tempdir().unwrap();
    let (pyd, lib, sys32) = torch_tree(d.path());
    let on_path = d.path().join("CUDA/v12.4/bin");
    write(&on_path.join("cudnn_ops64_9.dll"), &pe(&[]));
    let w = walk(
        &pyd,
        &python38(d.path(), &lib, &sys32, vec![on_path.clone()]),
    );
    assert_eq!(w.missing.len(), 1, "{w:?}");
    assert_eq!(w.missing[0].unsearched.as_deref(), Some(on_path.as_path()));
}

#[test]
fn a_system32_dll_is_present_and_not_walked() {
    let d = tempfile::tempdir().unwrap();
    let (pyd, lib, sys32) = torch_tree(d.path());
    write(
        &sys32.join("cudnn_ops64_9.dll"),
        b"Windows' own: never read",
    );
    let w = walk(&pyd, &python38(d.path(), &lib, &sys32, Vec::new()));
    assert!(w.missing.is_empty(), "{w:?}");
    assert!(w.unreadable.is_empty(), "{:?}", w.unreadable);
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_huge_file_at_a_name_does_not_block() {
    let d = tempfile::tempdir().unwrap();
    let (pyd, lib, sys32) = torch_tree(d.path());
    // A FIFO is no library: the loader looks on, and so do we (without waiting for a
    // writer).
    let fifo = lib.join("cudnn_ops64_9.dll");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let w = walk(&pyd, &python38(d.path(), &lib, &sys32, Vec::new()));
    assert_eq!(w.missing.len(), 1, "{w:?}");
    std::fs::remove_file(&fifo).unwrap();
    // A 5 GiB sparse file is present, but its tables are not read.
    let f = std::fs::File::create(&fifo).unwrap();
    f.set_len(5 << 30).unwrap();
    let w = walk(&pyd, &python38(d.path(), &lib, &sys32, Vec::new()));
    assert!(w.missing.is_empty(), "{w:?}");
    assert_eq!(w.unreadable.len(), 1, "{:?}", w.unreadable);
}

#[test]
fn elf_needed_runpath_and_rpath_are_read() {
    let b = elf(
        &["libcudnn.so.9", "libc.so.6"],
        Some("$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN"),
        None,
    );
    let deps = elf_deps(b.as_slice()).unwrap();
    assert_eq!(deps.needed, ["libcudnn.so.9", "libc.so.6"]);
    assert_eq!(deps.runpath, ["$ORIGIN/../../nvidia/cudnn/lib", "$ORIGIN"]);
    assert!(deps.rpath.is_empty());
    let deps = elf_deps(elf(&[], None, Some("/opt/x")).as_slice()).unwrap();
    assert_eq!(deps.rpath, ["/opt/x"]);
    // Cut anywhere: an error or the whole answer, never a panic.
    for len in 0..b.len() {
        let _ = elf_deps(&b[..len]);
    }
    assert!(elf_deps(pe(&["a.dll"]).as_slice()).is_err());
}

fn linux(root: &Path) -> LinuxSearch {
    LinuxSearch {
        default_dirs: vec![root.join("usr/lib/x86_64-linux-gnu"), root.join("lib")],
        root: root.to_path_buf(),
        ..LinuxSearch::default()
    }
}

#[test]
fn elf_runpath_origin_is_followed_and_the_missing_needed_named() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site-packages");
    let torch_lib = site.join("torch/lib");
    write(
        &site.join("torch/_C.cpython-311-x86_64-linux-gnu.so"),
        &elf(&["libtorch_python.so"], Some("$ORIGIN/lib"), None),
    );
    write(
        &torch_lib.join("libtorch_python.so"),
        &elf(
            &["libcudnn.so.9", "libc.so.6"],
            Some("$ORIGIN/../../nvidia/cudnn/lib"),
            None,
        ),
    );
    write(
        &d.path().join("usr/lib/x86_64-linux-gnu/libc.so.6"),
        &elf(&[], None, None),
    );
    let cudnn = site.join("nvidia/cudnn/lib");
    write(
        &cudnn.join("libcudnn.so.9"),
        &elf(&["libcudnn_graph.so.9"], None, None),
    );
    let start = site.join("torch/_C.cpython-311-x86_64-linux-gnu.so");
    let w = walk(&start, &Search::Linux(linux(d.path())));
    assert_eq!(w.missing.len(), 1, "{w:?}");
    assert_eq!(
        w.missing[0].chain_text(),
        "_C.cpython-311-x86_64-linux-gnu.so → libtorch_python.so → libcudnn.so.9 → libcudnn_graph.so.9"
    );
    // RUNPATH applies to the object's own needs only: libcudnn.so.9 has none, so its
    // sibling is not found through torch's RUNPATH. ld.so.cache finds it.
    write(&cudnn.join("libcudnn_graph.so.9"), &elf(&[], None, None));
    let w = walk(&start, &Search::Linux(linux(d.path())));
    assert_eq!(w.missing.len(), 1, "{w:?}");
    let mut l = linux(d.path());
    l.cache.insert(
        "libcudnn_graph.so.9".into(),
        PathBuf::from("/opt/cudnn/libcudnn_graph.so.9"),
    );
    write(
        &d.path().join("opt/cudnn/libcudnn_graph.so.9"),
        &elf(&[], None, None),
    );
    assert!(walk(&start, &Search::Linux(l)).missing.is_empty());
    // An RPATH (no RUNPATH) is inherited by what the object loads.
    write(
        &torch_lib.join("libtorch_python.so"),
        &elf(
            &["libcudnn.so.9", "libc.so.6"],
            None,
            Some("$ORIGIN/../../nvidia/cudnn/lib"),
        ),
    );
    let w = walk(&start, &Search::Linux(linux(d.path())));
    assert!(w.missing.is_empty(), "{w:?}");
}

#[test]
fn ld_so_cache_is_parsed_and_damage_is_empty() {
    // The new format, built here: header (48 bytes), two entries, the strings.
    let mut b = Vec::new();
    b.extend_from_slice(b"glibc-ld.so.cache1.1");
    let strings_at = 48 + 2 * 24;
    let names = [
        "libcuda.so.1\0",
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1\0",
        "libz.so.1\0",
        "/lib/libz.so.1\0",
    ];
    let total: usize = names.iter().map(|n| n.len()).sum();
    b.extend_from_slice(&2u32.to_le_bytes());
    b.extend_from_slice(&(total as u32).to_le_bytes());
    b.resize(48, 0);
    let mut at = strings_at;
    let mut offs = Vec::new();
    for n in names {
        offs.push(at as u32);
        at += n.len();
    }
    for e in 0..2 {
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&offs[2 * e].to_le_bytes());
        b.extend_from_slice(&offs[2 * e + 1].to_le_bytes());
        b.extend_from_slice(&[0u8; 12]);
    }
    for n in names {
        b.extend_from_slice(n.as_bytes());
    }
    let c = parse_ld_so_cache(&b);
    assert_eq!(
        c.get("libcuda.so.1"),
        Some(&PathBuf::from("/usr/lib/x86_64-linux-gnu/libcuda.so.1"))
    );
    assert_eq!(c.get("libz.so.1"), Some(&PathBuf::from("/lib/libz.so.1")));
    for len in 0..b.len() {
        let _ = parse_ld_so_cache(&b[..len]);
    }
    assert!(parse_ld_so_cache(b"garbage").is_empty());
    // This machine's own cache, where there is one, names libc.
    if Path::new("/etc/ld.so.cache").is_file() {
        let real = read_ld_so_cache(Path::new("/etc/ld.so.cache"));
        assert!(real.contains_key("libc.so.6"), "{} entries", real.len());
    }
}
