//! Real-layout Linux cuDNN tarballs (`cudnn-linux-x86_64-<version>_cuda<major>-archive.tar.xz`):
//! NVIDIA's folder, include/, lib/ with each library's real file and its two relative
//! symbolic links, a static library and its versioned link, LICENSE; written with the
//! `tar` crate (names set byte for byte, so hostile ones can be made) and xz-compressed.

#![allow(dead_code)]

use std::path::Path;

use super::cudnn_zip::{HEADERS_9, dll_bytes, version_header};

/// The shared libraries of cuDNN 9's Linux archive.
pub const LIBS_9: &[&str] = &[
    "libcudnn",
    "libcudnn_graph",
    "libcudnn_ops",
    "libcudnn_cnn",
    "libcudnn_adv",
    "libcudnn_heuristic",
    "libcudnn_engines_precompiled",
    "libcudnn_engines_runtime_compiled",
];

/// One tar entry, as it will be written.
#[derive(Debug, Clone)]
pub enum Item {
    Dir(String),
    File(String, Vec<u8>),
    Symlink(String, String),
    HardLink(String, String),
    Fifo(String),
    CharDevice(String),
    /// A GNU long-name record of this many bytes (for the next entry).
    LongNameRecord(usize),
    /// A PAX record `key=value` (for the next entry).
    Pax(String, String),
}

impl Item {
    pub fn name(&self) -> &str {
        match self {
            Item::Dir(n)
            | Item::File(n, _)
            | Item::Symlink(n, _)
            | Item::HardLink(n, _)
            | Item::Fifo(n)
            | Item::CharDevice(n) => n,
            Item::LongNameRecord(_) | Item::Pax(..) => "",
        }
    }
}

pub struct LinuxSpec {
    /// 4-part version, e.g. "9.10.2.21".
    pub version: &'static str,
    pub cuda_major: u32,
    /// Bytes per shared library.
    pub lib_size: usize,
}

impl LinuxSpec {
    pub fn top(&self) -> String {
        format!(
            "cudnn-linux-x86_64-{}_cuda{}-archive",
            self.version, self.cuda_major
        )
    }

    pub fn file_name(&self) -> String {
        format!("{}.tar.xz", self.top())
    }

    fn parts(&self) -> (u32, u32, u32) {
        let p: Vec<u32> = self
            .version
            .split('.')
            .map(|s| s.parse().unwrap())
            .collect();
        (p[0], p[1], p[2])
    }

    /// The archive's entries in NVIDIA's order: folders, headers, libraries, LICENSE.
    pub fn items(&self) -> Vec<Item> {
        let top = self.top();
        let (major, minor, patch) = self.parts();
        let mut items = vec![
            Item::Dir(format!("{top}/")),
            Item::Dir(format!("{top}/include/")),
        ];
        for h in HEADERS_9 {
            items.push(Item::File(
                format!("{top}/include/{h}"),
                format!("/* {h} {} */\n#pragma once\n", self.version).into_bytes(),
            ));
        }
        items.push(Item::File(
            format!("{top}/include/cudnn_version.h"),
            version_header(major, minor, patch).into_bytes(),
        ));
        items.push(Item::Dir(format!("{top}/lib/")));
        for (i, l) in LIBS_9.iter().enumerate() {
            let real = format!("{l}.so.{major}.{minor}.{patch}");
            items.push(Item::File(
                format!("{top}/lib/{real}"),
                dll_bytes(self.lib_size, 700 + i as u64),
            ));
            items.push(Item::Symlink(format!("{top}/lib/{l}.so.{major}"), real));
            items.push(Item::Symlink(
                format!("{top}/lib/{l}.so"),
                format!("{l}.so.{major}"),
            ));
        }
        items.push(Item::File(
            format!("{top}/lib/libcudnn_adv_static.a"),
            format!("!<arch>\nstatic library {}\n", self.version).into_bytes(),
        ));
        items.push(Item::Symlink(
            format!("{top}/lib/libcudnn_adv_static_v{major}.a"),
            "libcudnn_adv_static.a".into(),
        ));
        items.push(Item::File(
            format!("{top}/LICENSE"),
            b"NVIDIA Software License Agreement (stand-in text)\n".to_vec(),
        ));
        items
    }

    pub fn write(&self, path: &Path) {
        write_tar_xz(path, &self.items());
    }
}

/// Writes `items` as a tar, then xz-compresses it to `path`.
pub fn write_tar_xz(path: &Path, items: &[Item]) {
    let tar = tar_bytes(items);
    let out = std::fs::File::create(path).unwrap();
    let mut xz = lzma_rust2::XzWriter::new(out, lzma_rust2::XzOptions::with_preset(1)).unwrap();
    std::io::Write::write_all(&mut xz, &tar).unwrap();
    xz.finish().unwrap();
}

/// The plain tar of `items`: GNU headers whose names are copied byte for byte (the
/// `tar` crate's own setters refuse `..` and absolute paths, which the tests need).
pub fn tar_bytes(items: &[Item]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let long_name = |b: &mut tar::Builder<Vec<u8>>, name: &[u8]| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::GNULongName);
        h.as_old_mut().name[..13].copy_from_slice(b"././@LongLink");
        h.set_mode(0o644);
        h.set_size(name.len() as u64 + 1);
        h.set_cksum();
        let mut data = name.to_vec();
        data.push(0);
        b.append(&h, &data[..]).unwrap();
    };
    for item in items {
        if let Item::LongNameRecord(n) = item {
            long_name(&mut b, &vec![b'a'; *n]);
            continue;
        }
        if let Item::Pax(k, v) = item {
            // `<length> <key>=<value>\n`, the length counting itself.
            let body = format!(" {k}={v}\n");
            let mut len = body.len() + 1;
            while len.to_string().len() + body.len() != len {
                len += 1;
            }
            let record = format!("{len}{body}");
            let mut h = tar::Header::new_ustar();
            h.set_entry_type(tar::EntryType::XHeader);
            h.as_old_mut().name[..9].copy_from_slice(b"PaxHeader");
            h.set_mode(0o644);
            h.set_size(record.len() as u64);
            h.set_cksum();
            b.append(&h, record.as_bytes()).unwrap();
            continue;
        }
        let mut h = tar::Header::new_gnu();
        let (kind, link, data): (tar::EntryType, Option<&str>, &[u8]) = match item {
            Item::Dir(_) => (tar::EntryType::Directory, None, &[]),
            Item::File(_, d) => (tar::EntryType::Regular, None, d),
            Item::Symlink(_, t) => (tar::EntryType::Symlink, Some(t), &[]),
            Item::HardLink(_, t) => (tar::EntryType::Link, Some(t), &[]),
            Item::Fifo(_) => (tar::EntryType::Fifo, None, &[]),
            Item::CharDevice(_) => (tar::EntryType::Char, None, &[]),
            Item::LongNameRecord(_) | Item::Pax(..) => unreachable!(),
        };
        h.set_entry_type(kind);
        h.set_mode(match kind {
            tar::EntryType::Directory => 0o755,
            tar::EntryType::Symlink => 0o777,
            _ => 0o644,
        });
        h.set_size(data.len() as u64);
        h.set_mtime(1_750_000_000);
        let name = item.name().as_bytes();
        if name.len() > 100 {
            // As GNU tar does: the whole name in a record before, the header's cut short.
            long_name(&mut b, name);
        }
        let short = &name[..name.len().min(100)];
        h.as_old_mut().name[..short.len()].copy_from_slice(short);
        if let Some(t) = link {
            h.as_old_mut().linkname[..t.len()].copy_from_slice(t.as_bytes());
        }
        h.set_cksum();
        b.append(&h, data).unwrap();
    }
    b.into_inner().unwrap()
}

/// A Linux-layout CUDA toolkit folder (`cuda-X.Y`): version.json, bin/nvcc, the runtime
/// library in lib64, an include.
pub fn linux_toolkit(root: &Path, version: &str) -> std::path::PathBuf {
    let mm: Vec<&str> = version.split('.').collect();
    let dir = root.join(format!("cuda-{}.{}", mm[0], mm[1]));
    for d in ["bin", "include", "lib64"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    std::fs::write(
        dir.join("version.json"),
        format!(r#"{{"cuda":{{"name":"CUDA SDK","version":"{version}"}}}}"#),
    )
    .unwrap();
    std::fs::write(dir.join("bin/nvcc"), b"#!/bin/sh\n").unwrap();
    std::fs::write(
        dir.join(format!("lib64/libcudart.so.{}", mm[0])),
        b"ELF stand-in cudart",
    )
    .unwrap();
    std::fs::write(dir.join("include/cuda_runtime.h"), b"/* cuda_runtime.h */").unwrap();
    dir
}
