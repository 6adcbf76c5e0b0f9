//! Lays component wheels out as the tree NVIDIA's installer makes, so every tool that
//! knows a toolkit folder (nvcc.profile, CMake, PyTorch's cpp_extension, our detection)
//! finds what it expects:
//!
//! | wheel (`nvidia/cu13/…`, `nvidia/cuda_nvcc/…`) | Windows            | Linux            |
//! |-----------------------------------------------|--------------------|------------------|
//! | `bin/`                                        | `bin\`             | `bin/`           |
//! | `bin/x86_64/` (13.x DLLs)                     | `bin\x64\`         | —                |
//! | `lib/`                                        | `lib\` (`lib\x64`) | `lib64/` (+ `lib` → `lib64`) |
//! | `cccl/lib/cmake/`                             | `lib\cmake\`       | `lib64/cmake/`   |
//! | `include/`, `nvvm/`                           | as is              | as is            |
//!
//! Then it is completed for building programs as NVIDIA's installer lays a toolkit down
//! (`devlayout::complete`: link names, the driver stub, import libraries, pkg-config
//! files); the record says so (`dev_layout`), and a tree of ours built before that is
//! completed in place on the next run.
//!
//! The tree is built in a staging folder beside the destination and renamed into place,
//! so the destination is either the old tree or the complete new one, never half of each
//! (`swap.rs`); a folder we did not build is never replaced.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use serde::{Deserialize, Serialize};

use super::{WheelError, swap};
use crate::compat::Os;
use crate::devlayout::{Completion, DevError};
use crate::message::Message;
use crate::msg;
use crate::version::Version;

/// Our record of what a wheel-built tree holds (in the tree's `.cuda-setup/`).
pub const RECORD: &str = "toolkit-wheels.json";

/// The development layout a tree built now has ([`Record::dev_layout`]); a record with
/// less is completed ([`complete_in_place`]).
pub const DEV_LAYOUT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssembleSpec {
    pub version: Version,
    pub wheels: Vec<PathBuf>,
    pub dir: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub version: Version,
    /// Wheel file names, sorted.
    pub wheels: Vec<String>,
    pub files: usize,
    /// [`DEV_LAYOUT`] once the tree was completed for building programs; 0 (absent) in
    /// records written before that, whose tree the next run completes.
    #[serde(default)]
    pub dev_layout: u32,
    /// Every file and link the build made, relative with `/` (`.cuda-setup/` aside):
    /// what is not named here is the user's, and a rebuild carries it over
    /// ([`super::keep`]). None in records written before; such a tree's rebuild keeps
    /// the previous tree whole inside the new one instead of deleting it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<String>>,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub changed: bool,
    /// A complete toolkit we did not build was at the destination and is kept.
    pub kept_foreign: bool,
    pub files: usize,
    pub bytes: u64,
    /// What was added for building programs: to the new tree, or to a tree of ours built
    /// before the development layout (then `completed` is true and nothing was rebuilt).
    pub completion: Completion,
    pub completed: bool,
    /// What the rebuild carried over from the tree it replaced.
    pub carried: super::keep::Carried,
    /// The replaced tree, kept whole at this path inside the new one because its record
    /// (written by an older cuda-setup) does not say which files are the user's.
    pub kept_previous: Option<PathBuf>,
}

/// An I/O error while writing the tree; a full drive is told apart.
fn write_err(path: &Path, e: std::io::Error) -> WheelError {
    if crate::platform::is_disk_full(&e) {
        return WheelError::DiskFull {
            path: path.to_path_buf(),
            needed: None,
            free: crate::platform::free_space(path).ok(),
        };
    }
    io(path, e)
}

fn io(path: &Path, e: std::io::Error) -> WheelError {
    WheelError::io(path, crate::error::cause(e))
}

fn dev_err(e: DevError) -> WheelError {
    match e {
        DevError::Io { path, source } => WheelError::io(&path, source),
        DevError::Malformed { path, detail } => WheelError::io(&path, crate::error::text(detail)),
    }
}

/// Where a wheel entry goes in the toolkit tree; None for files that stay out
/// (`RECORD`, `WHEEL`, …). Licences go to `.cuda-setup/licenses/<wheel>/`.
pub fn dest_of(os: Os, wheel: &str, name: &str) -> Result<Option<String>, String> {
    if name.contains('\\') || name.starts_with('/') || name.contains('\0') {
        return Err(format!("entry \"{name}\" has an unsafe name"));
    }
    if name.split('/').any(|c| c == ".." || c == ".") {
        return Err(format!("entry \"{name}\" climbs out of the wheel"));
    }
    crate::safe_path::entry_path(name)
        .map_err(|why| format!("entry \"{name}\" cannot be a file on Windows: {why}"))?;
    let mut parts = name.split('/');
    let first = parts.next().unwrap_or("");
    if first.ends_with(".dist-info") {
        let rest: Vec<&str> = parts.collect();
        return Ok(
            (rest.first() == Some(&"licenses") && rest.len() > 1).then(|| {
                format!(
                    "{}/licenses/{wheel}/{}",
                    crate::cudnn::txn::META,
                    rest[1..].join("/")
                )
            }),
        );
    }
    if first != "nvidia" {
        return Err(format!("entry \"{name}\" is outside nvidia/"));
    }
    let _package = parts
        .next()
        .ok_or_else(|| format!("entry \"{name}\" has no package folder"))?;
    let rest: Vec<&str> = parts.collect();
    if rest.is_empty() {
        return Ok(None);
    }
    let rel = rest.join("/");
    // Python package markers have no place in a toolkit.
    if rest.last().is_some_and(|f| *f == "__init__.py") || rest.contains(&"__pycache__") {
        return Ok(None);
    }
    let mapped = match os {
        Os::Windows => {
            if let Some(r) = rel.strip_prefix("bin/x86_64/") {
                format!("bin/x64/{r}")
            } else if let Some(r) = rel.strip_prefix("cccl/lib/") {
                format!("lib/{r}")
            } else {
                rel
            }
        }
        Os::Linux => {
            if let Some(r) = rel.strip_prefix("lib/") {
                format!("lib64/{r}")
            } else if let Some(r) = rel.strip_prefix("cccl/lib/") {
                format!("lib64/{r}")
            } else {
                rel
            }
        }
    };
    Ok(Some(mapped))
}

fn record_path(dir: &Path) -> PathBuf {
    dir.join(crate::cudnn::txn::META).join(RECORD)
}

/// Our record of the tree at `dir`: Ok(None) when there is none. A record is input like
/// any file on disk: it must be reached without leaving `dir` (no symbolic link on the
/// way), parse, and name only plain wheel file names; else the folder is not taken for
/// ours (so it is never replaced) and the error says why.
pub fn read_record(dir: &Path) -> Result<Option<Record>, WheelError> {
    let rel = Path::new(crate::cudnn::txn::META).join(RECORD);
    let bad = |detail: String| WheelError::BadRecord {
        path: record_path(dir).display().to_string(),
        detail,
    };
    let p = crate::safe_path::inside(dir, &rel).map_err(|e| bad(e.to_string()))?;
    // Bounded, never through a link; not set aside: the folder is not taken for ours, so
    // nothing in it is touched.
    let Some(b) = crate::state_file::read(&p).map_err(|r| bad(r.why))? else {
        return Ok(None);
    };
    let r: Record = serde_json::from_slice(&b).map_err(|e| bad(e.to_string()))?;
    for w in &r.wheels {
        crate::safe_path::file_name(w).map_err(|e| bad(e.to_string()))?;
    }
    Ok(Some(r))
}

/// Whether `dir` holds a tree we built (a valid record of ours).
pub fn is_ours(dir: &Path) -> bool {
    matches!(read_record(dir), Ok(Some(_)))
}

/// Who the destination belongs to, decided before anything is built.
enum Dest {
    /// Nothing there: the new tree goes in.
    Empty,
    /// Ours: replaced through [`swap::swap_in`] (the old tree comes back if the new fails).
    Ours(Record),
    /// Someone else's complete toolkit: kept as it is, nothing built.
    KeptForeign,
}

fn destination(
    dir: &Path,
    check: &dyn Fn(&Path) -> Result<(), WheelError>,
) -> Result<Dest, WheelError> {
    if std::fs::symlink_metadata(dir).is_err() {
        return Ok(Dest::Empty);
    }
    match read_record(dir)? {
        Some(r) => Ok(Dest::Ours(r)),
        None if check(dir).is_ok() => Ok(Dest::KeptForeign),
        None => Err(WheelError::NotOurs {
            dir: dir.display().to_string(),
        }),
    }
}

fn wheel_names(spec: &AssembleSpec) -> Vec<String> {
    let mut names: Vec<String> = spec
        .wheels
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    names.sort();
    names
}

/// Builds the tree from wheels already on disk. `progress(done, total)` in wheel bytes
/// (each entry counts its compressed share as it is written); `cancelled()` is polled
/// between chunks (a cancelled build leaves the destination untouched); `check(dir)`
/// says whether a tree at `dir` is a usable toolkit (nvcc, the runtime).
///
/// A folder at the destination that we did not build is never moved or deleted: a
/// complete toolkit there is kept (nothing is built), anything else is refused
/// ([`WheelError::NotOurs`]). A tree of ours is replaced only once the new one passes
/// `check` in its place; else the old one is put back. What a killed run left beside the
/// destination is restored or cleaned first ([`swap::recover`]).
///
/// The same as [`Build::begin`], [`Build::extract`] over `spec.wheels`, [`Build::finish`]:
/// the pipelined install feeds `extract` each wheel as its download is verified instead.
pub fn assemble(
    spec: &AssembleSpec,
    os: Os,
    progress: &(dyn Fn(u64, u64) + Sync),
    cancelled: &(dyn Fn() -> bool + Sync),
    check: &dyn Fn(&Path) -> Result<(), WheelError>,
) -> Result<Outcome, WheelError> {
    let b = match Build::begin(spec, os, check)? {
        Begin::Done(o) => return Ok(o),
        Begin::Build(b) => b,
    };
    // All the wheels are here: the whole tree's room is known before anything is written.
    let mut unpacked = 0u64;
    let mut packed = 0u64;
    for w in &spec.wheels {
        let (mut z, _) = open(w)?;
        unpacked = unpacked.saturating_add(unpacked_size(&mut z));
        packed = packed.saturating_add(std::fs::metadata(w).map(|m| m.len()).unwrap_or(0));
    }
    room(&b.staging, unpacked)?;
    b.extract(spec.wheels.iter().cloned(), packed, progress, cancelled)?;
    b.finish(check)
}

/// What [`Build::begin`] found at the destination.
pub enum Begin {
    /// Nothing to build: the tree of ours from these very wheels is there (completed in
    /// place if it was built before the development layout), or a complete toolkit we
    /// did not build is kept.
    Done(Outcome),
    /// A new tree is to be built in its staging folder.
    Build(Build),
}

/// A tree being built in its staging folder beside the destination, wheel by wheel as
/// each arrives. Dropped unfinished (an error, a cancel), the staging folder goes and the
/// destination is as it was; a kill leaves the staging folder, which the next run's
/// [`swap::recover`] deletes.
pub struct Build {
    spec: AssembleSpec,
    os: Os,
    staging: PathBuf,
    /// The staging folder held open: entries are written relative to it (#30). Let go
    /// (None) just before the swap: Windows renames no folder that has an open handle.
    held: Option<crate::place::Dir>,
    files: AtomicUsize,
    bytes: AtomicU64,
    /// The wheels [`Build::extract`] was given: the tree is finished only with all of
    /// `spec.wheels` in it.
    fed: Mutex<Vec<PathBuf>>,
    finished: bool,
}

/// One wheel entry to write: (wheel number, entry number, its compressed and unpacked
/// sizes, where it goes in the tree).
struct Task {
    wheel: usize,
    entry: usize,
    packed: u64,
    size: u64,
    /// Its name in the wheel, for an error.
    name: String,
    rel: String,
}

/// The entries waiting to be written, largest first (the longest inflate starts
/// earliest, so the workers finish together), and whether more wheels may come.
#[derive(Default)]
struct Queue {
    tasks: Vec<Task>,
    closed: bool,
}

impl Build {
    /// Recovers what a killed run left, decides who the destination belongs to, and
    /// makes an empty staging folder (see [`assemble`]).
    pub fn begin(
        spec: &AssembleSpec,
        os: Os,
        check: &dyn Fn(&Path) -> Result<(), WheelError>,
    ) -> Result<Begin, WheelError> {
        swap::recover(&spec.dir, &is_ours)?;
        let names = wheel_names(spec);
        match destination(&spec.dir, check)? {
            Dest::KeptForeign => {
                return Ok(Begin::Done(Outcome {
                    changed: false,
                    kept_foreign: true,
                    files: 0,
                    bytes: 0,
                    completion: Completion::default(),
                    completed: false,
                    carried: Default::default(),
                    kept_previous: None,
                }));
            }
            Dest::Ours(r)
                if r.wheels == names
                    && r.version == spec.version
                    && spec.dir.join("version.json").is_file() =>
            {
                // Built before the development layout: completed where it is (what it
                // holds stays, cuDNN installed into it included), not rebuilt.
                let completed = r.dev_layout < DEV_LAYOUT;
                let completion = if completed {
                    complete_in_place(os, &spec.dir)?
                } else {
                    Completion::default()
                };
                check(&spec.dir)?;
                return Ok(Begin::Done(Outcome {
                    changed: completed,
                    kept_foreign: false,
                    files: r.files,
                    bytes: 0,
                    completion,
                    completed,
                    carried: Default::default(),
                    kept_previous: None,
                }));
            }
            Dest::Ours(_) | Dest::Empty => {}
        }
        let parent = spec
            .dir
            .parent()
            .ok_or_else(|| WheelError::io(&spec.dir, crate::error::text("has no parent folder")))?;
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        let staging = swap::staging_path(&spec.dir);
        let held = fresh_staging(parent, &staging).map_err(|e| write_err(&staging, e))?;
        Ok(Begin::Build(Build {
            spec: spec.clone(),
            os,
            staging,
            held: Some(held),
            files: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
            fed: Mutex::new(Vec::new()),
            finished: false,
        }))
    }

    /// Writes the wheels `wheels` yields into the staging tree, each as soon as it is
    /// yielded (a blocking iterator: the pipelined install yields a wheel when its
    /// download is verified). Entries are written by one worker per core, largest first,
    /// while the next wheel is awaited. `total` is the wheels' bytes, for `progress`.
    /// Stops at the first error, or when `cancelled()`; the caller drops the build then.
    pub fn extract(
        &self,
        wheels: impl Iterator<Item = PathBuf>,
        total: u64,
        progress: &(dyn Fn(u64, u64) + Sync),
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<(), WheelError> {
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 8));
        let queue = (Mutex::new(Queue::default()), Condvar::new());
        let failed: Mutex<Option<WheelError>> = Mutex::new(None);
        let stop = AtomicBool::new(false);
        let paths: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());
        let done = AtomicU64::new(0);
        let fail = |e: WheelError| {
            let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
            f.get_or_insert(e);
            stop.store(true, Ordering::SeqCst);
            queue.1.notify_all();
        };
        let halted = || stop.load(Ordering::SeqCst) || cancelled();
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    let mut open_zips: Vec<Option<zip::ZipArchive<Archive>>> = Vec::new();
                    let mut buf = vec![0u8; 1 << 20];
                    loop {
                        let task = {
                            let mut q = queue.0.lock().unwrap_or_else(|p| p.into_inner());
                            loop {
                                if halted() {
                                    break None;
                                }
                                if let Some(t) = q.tasks.pop() {
                                    break Some(t);
                                }
                                if q.closed {
                                    break None;
                                }
                                // Woken by a new wheel, the end, or a failure; the timeout
                                // notices a cancel.
                                q = queue
                                    .1
                                    .wait_timeout(q, std::time::Duration::from_millis(100))
                                    .unwrap_or_else(|p| p.into_inner())
                                    .0;
                            }
                        };
                        let Some(task) = task else { break };
                        let (path, name) =
                            paths.lock().unwrap_or_else(|p| p.into_inner())[task.wheel].clone();
                        if open_zips.len() <= task.wheel {
                            open_zips.resize_with(task.wheel + 1, || None);
                        }
                        let z = match &mut open_zips[task.wheel] {
                            Some(z) => z,
                            slot => match open(&path) {
                                Ok((z, _)) => slot.insert(z),
                                Err(e) => return fail(e),
                            },
                        };
                        let r = self.write_entry(
                            z,
                            &name,
                            &task,
                            &mut buf,
                            &|n| {
                                let d = done.fetch_add(n, Ordering::Relaxed) + n;
                                progress(d.min(total), total);
                            },
                            &halted,
                        );
                        if let Err(e) = r {
                            return fail(e);
                        }
                    }
                });
            }
            // This thread takes the wheels as they come and queues their entries.
            let feed = || -> Result<(), WheelError> {
                for w in wheels {
                    if halted() {
                        break;
                    }
                    let (mut z, name) = open(&w)?;
                    room(&self.staging, unpacked_size(&mut z))?;
                    let stem = name.trim_end_matches(".whl").to_string();
                    let number = {
                        let mut p = paths.lock().unwrap_or_else(|p| p.into_inner());
                        p.push((w.clone(), name.clone()));
                        p.len() - 1
                    };
                    self.fed
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(w.clone());
                    let mut tasks = Vec::new();
                    for i in 0..z.len() {
                        let e = z.by_index_raw(i).map_err(|err| WheelError::Layout {
                            wheel: name.clone(),
                            detail: err.to_string(),
                        })?;
                        if e.is_dir() {
                            continue;
                        }
                        let entry = String::from_utf8_lossy(e.name_raw()).into_owned();
                        let layout = |detail: String| WheelError::Layout {
                            wheel: name.clone(),
                            detail,
                        };
                        // Refused before any of this wheel is written.
                        if e.unix_mode().is_some_and(|m| m & 0o170000 == 0o120000) {
                            return Err(layout(format!("entry \"{entry}\" is a symbolic link")));
                        }
                        if let Some(rel) = dest_of(self.os, &stem, &entry).map_err(layout)? {
                            tasks.push(Task {
                                wheel: number,
                                entry: i,
                                packed: e.compressed_size(),
                                size: e.size(),
                                name: entry.clone(),
                                rel,
                            });
                        }
                    }
                    let mut q = queue.0.lock().unwrap_or_else(|p| p.into_inner());
                    q.tasks.extend(tasks);
                    // Popped from the end: the largest entry is taken first.
                    q.tasks.sort_by_key(|t| t.size);
                    queue.1.notify_all();
                }
                Ok(())
            };
            if let Err(e) = feed() {
                fail(e);
            }
            queue.0.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
            queue.1.notify_all();
        });
        if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        if cancelled() {
            return Err(WheelError::io(
                &self.staging,
                crate::error::text("cancelled"),
            ));
        }
        Ok(())
    }

    /// Writes one entry to its place in the staging tree; `advance(n)` with its share of
    /// the wheel's bytes as it goes.
    fn write_entry(
        &self,
        z: &mut zip::ZipArchive<Archive>,
        name: &str,
        task: &Task,
        buf: &mut [u8],
        advance: &dyn Fn(u64),
        halted: &dyn Fn() -> bool,
    ) -> Result<(), WheelError> {
        let damaged = |entry: &str, err: &dyn std::fmt::Display| WheelError::Layout {
            wheel: name.to_string(),
            detail: format!("entry \"{entry}\" is damaged: {err}"),
        };
        let mut e = z
            .by_index(task.entry)
            .map_err(|err| damaged(&task.name, &err))?;
        let dest = self.staging.join(&task.rel);
        // Created new relative to the staging folder held open: no link on the way, or
        // at the name, is followed (#30).
        let mut f = self
            .held()?
            .create_new(&task.rel)
            .map_err(|err| write_err(&dest, err))?;
        let (mut written, mut counted) = (0u64, 0u64);
        loop {
            if halted() {
                return Err(WheelError::io(&dest, crate::error::text("cancelled")));
            }
            let n = e.read(buf).map_err(|err| damaged(&task.name, &err))?;
            if n == 0 {
                break;
            }
            std::io::Write::write_all(&mut f, &buf[..n]).map_err(|err| write_err(&dest, err))?;
            written += n as u64;
            // This entry's share of the wheel's bytes, so far.
            let share = (u128::from(written) * u128::from(task.packed)
                / u128::from(task.size.max(1))) as u64;
            let share = share.min(task.packed);
            advance(share - counted);
            counted = share;
        }
        advance(task.packed.saturating_sub(counted));
        #[cfg(unix)]
        if let Some(mode) = e.unix_mode()
            && mode & 0o111 != 0
        {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(0o755))
                .map_err(|err| io(&dest, err))?;
        }
        self.files.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(written, Ordering::Relaxed);
        // A test kills the run here: part of the tree in staging, downloads still going.
        crate::lock::test_pause("wheels_unpacking");
        Ok(())
    }

    /// The staging folder's handle, until the swap lets it go.
    fn held(&self) -> Result<&crate::place::Dir, WheelError> {
        self.held.as_ref().ok_or_else(|| {
            WheelError::io(
                &self.staging,
                crate::error::text("the staging folder was already handed over"),
            )
        })
    }

    /// The tree is finished and swapped in by path: the staging folder's name must still
    /// be the folder we made and wrote (not a link, nor another folder, swapped in since).
    fn still_held(&self) -> Result<(), WheelError> {
        match self.held()?.is_at(&self.staging) {
            Ok(true) => Ok(()),
            Ok(false) => Err(WheelError::io(
                &self.staging,
                crate::error::text(
                    "the staging folder was replaced (by a link or another folder) while the toolkit was being built; refused",
                ),
            )),
            Err(e) => Err(io(&self.staging, e)),
        }
    }

    /// Completes the staging tree (links, `version.json`, the development layout, our
    /// record) and swaps it in, checked in place ([`swap::swap_in`]).
    pub fn finish(
        mut self,
        check: &dyn Fn(&Path) -> Result<(), WheelError>,
    ) -> Result<Outcome, WheelError> {
        let out = self.staging.clone();
        self.still_held()?;
        let (spec, os) = (&self.spec, self.os);
        let fed = self.fed.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(w) = spec.wheels.iter().find(|w| !fed.contains(w)) {
            // A stream that ended early (its downloads stopped): never a partial tree.
            return Err(WheelError::io(
                w,
                crate::error::text("this wheel was not unpacked; the toolkit was not put in place"),
            ));
        }
        // nvcc.profile in the wheels links against $(TOP)/lib; NVIDIA's runfile tree has both.
        #[cfg(unix)]
        if os == Os::Linux && out.join("lib64").is_dir() && !out.join("lib").exists() {
            std::os::unix::fs::symlink("lib64", out.join("lib")).map_err(|e| io(&out, e))?;
        }
        write_version_json(spec, &out)?;
        // What NVIDIA's installer has for building programs and the wheels lack.
        let completion = crate::devlayout::complete(os, &out, &spec.version).map_err(dev_err)?;
        let files = self.files.load(Ordering::Relaxed);
        let record = Record {
            version: spec.version.clone(),
            wheels: wheel_names(spec),
            files,
            dev_layout: DEV_LAYOUT,
            paths: Some(super::keep::list_tree(&out)?),
        };
        write_record(&out, &record)?;
        // The tree replaced is judged now (it may have changed while the wheels came):
        // still ours, and what in it is the user's, carried into the new tree.
        let (carried, keep_old) = match std::fs::symlink_metadata(&spec.dir) {
            Err(_) => (Default::default(), None),
            Ok(_) => {
                let Some(old) = read_record(&spec.dir)? else {
                    return Err(WheelError::NotOurs {
                        dir: spec.dir.display().to_string(),
                    });
                };
                let carried = super::keep::carry(&spec.dir, &old, &out, &spec.version)?;
                let keep = old
                    .paths
                    .is_none()
                    .then(|| spec.dir.join(swap::kept_name(&out)));
                (carried, keep)
            }
        };
        self.still_held()?;
        // Our handle goes before the rename: Windows refuses to move a folder held open
        // ("sharing violation"); the check just above is the last use.
        self.held = None;
        swap::swap_in(&out, &spec.dir, check, keep_old.as_deref())?;
        self.finished = true;
        Ok(Outcome {
            changed: true,
            kept_foreign: false,
            files,
            bytes: self.bytes.load(Ordering::Relaxed),
            completion,
            completed: false,
            carried,
            kept_previous: keep_old,
        })
    }
}

impl Drop for Build {
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

/// The staging folder `staging` (in `parent`) created new by us: whatever is at its
/// name — a killed run's leftover, a link someone planted — is removed first (a link as a
/// link, never what it points at), then made with a create that fails if anything took
/// the name meanwhile (#30).
fn fresh_staging(parent: &Path, staging: &Path) -> std::io::Result<crate::place::Dir> {
    let name = staging
        .file_name()
        .ok_or_else(|| std::io::Error::other("a staging folder with no name"))?;
    crate::place::Dir::open(&crate::platform::canonical(parent))?.fresh_sub(name)
}

/// A wheel as the zip reader reads it: its decoder pulls 8 KiB at a time, so reads go
/// through a buffer. Each entry starts with a seek, which empties the buffer and fills it
/// whole, and nearly all of a toolkit's 2,267 entries are small headers: 64 KiB keeps that
/// waste near 140 MB where 1 MiB read 2 GB more than the 1.8 GB of wheels.
type Archive = std::io::BufReader<std::fs::File>;
const READ_BUFFER: usize = 64 << 10;

/// A wheel opened for reading, and its file name.
fn open(w: &Path) -> Result<(zip::ZipArchive<Archive>, String), WheelError> {
    let name = w
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let f = std::fs::File::open(w).map_err(|e| io(w, e))?;
    let f = std::io::BufReader::with_capacity(READ_BUFFER, f);
    let z = zip::ZipArchive::new(f).map_err(|e| WheelError::Layout {
        wheel: name.clone(),
        detail: format!("not a readable wheel: {e}"),
    })?;
    Ok((z, name))
}

/// What a wheel's entries take unpacked.
fn unpacked_size(z: &mut zip::ZipArchive<Archive>) -> u64 {
    (0..z.len())
        .filter_map(|i| z.by_index_raw(i).ok().map(|e| e.size()))
        .fold(0u64, u64::saturating_add)
}

/// Refuses, as a full drive, to unpack `needed` bytes where less is free.
fn room(out: &Path, needed: u64) -> Result<(), WheelError> {
    match crate::platform::free_space(out.parent().unwrap_or(out)) {
        Ok(free) if free < needed => Err(WheelError::DiskFull {
            path: out.to_path_buf(),
            needed: Some(needed),
            free: Some(free),
        }),
        _ => Ok(()),
    }
}

/// Writes `record` into the tree at `dir`, beside and renamed into place: a record is
/// never seen half-written (a broken one would make the tree not ours).
fn write_record(dir: &Path, record: &Record) -> Result<(), WheelError> {
    let rp = record_path(dir);
    std::fs::create_dir_all(rp.parent().expect("has parent")).map_err(|e| io(&rp, e))?;
    let tmp = rp.with_extension("json.part");
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(record).expect("serialisable"),
    )
    .map_err(|e| write_err(&tmp, e))?;
    std::fs::rename(&tmp, &rp).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(&rp, e)
    })
}

/// Completes a finished tree of ours at `dir` for building programs
/// ([`crate::devlayout::complete`]) and marks its record with [`DEV_LAYOUT`]. Idempotent;
/// a tree without a valid record of ours is refused, untouched.
pub fn complete_in_place(os: Os, dir: &Path) -> Result<Completion, WheelError> {
    let Some(mut record) = read_record(dir)? else {
        return Err(WheelError::NotOurs {
            dir: dir.display().to_string(),
        });
    };
    // cuDNN's files in the tree belong to its own transaction, which links them itself.
    let cudnn: Vec<String> = crate::cudnn::txn::read_manifest(dir)
        .ok()
        .flatten()
        .map(|m| m.files.into_iter().map(|f| f.path).collect())
        .unwrap_or_default();
    let completion = crate::devlayout::complete::complete_except(os, dir, &record.version, &cudnn)
        .map_err(dev_err)?;
    if record.dev_layout < DEV_LAYOUT {
        record.dev_layout = DEV_LAYOUT;
        // What was added is ours too (a record without a list stays without one).
        if let Some(paths) = &mut record.paths {
            let c = &completion;
            for p in c
                .links
                .iter()
                .chain(&c.import_libs)
                .chain(&c.stubs)
                .chain(&c.files)
            {
                if !paths.contains(p) {
                    paths.push(p.clone());
                }
            }
            paths.sort();
        }
        write_record(dir, &record)?;
    }
    Ok(completion)
}

/// The words for what the development layout added, for the step's detail; None when
/// nothing was added (the plain "built" or "already built" words say all).
pub fn completion_message(
    o: &Outcome,
    version: &Version,
    wheels: usize,
    dir: &Path,
) -> Option<Message> {
    let c = &o.completion;
    let configs = c.files.len();
    if !c.import_libs.is_empty() || !c.unreadable.is_empty() {
        return Some(if c.unreadable.is_empty() {
            msg!(
                "step_assembled_dev_windows",
                version = version,
                wheels = wheels,
                dir = dir.display(),
                files = o.files,
                import_libs = c.import_libs.len()
            )
        } else {
            msg!(
                "step_assembled_dev_windows_unreadable",
                version = version,
                wheels = wheels,
                dir = dir.display(),
                files = o.files,
                import_libs = c.import_libs.len(),
                unreadable = c.unreadable.join(", ")
            )
        });
    }
    // The Linux words name links and the stub; a tree given neither (a Windows tree that
    // only got its nvcc.profile) has nothing worth a sentence.
    if c.links.is_empty() && c.stubs.is_empty() {
        return None;
    }
    let no_driver_stub = c
        .no_stub
        .iter()
        .any(|s| s == crate::devlayout::complete::DRIVER_STUB);
    // The same facts either way; the words differ by whether the stub could be made.
    let key = if no_driver_stub {
        "step_assembled_dev_linux_no_stub"
    } else {
        "step_assembled_dev_linux"
    };
    Some(
        Message::new(key)
            .with("version", version)
            .with("wheels", wheels)
            .with("dir", dir.display())
            .with("files", o.files)
            .with("links", c.links.len())
            .with("configs", configs),
    )
}

/// NVIDIA's `version.json`: `cuda.version` is the release, one object per component.
fn write_version_json(spec: &AssembleSpec, out: &Path) -> Result<(), WheelError> {
    let mut v = serde_json::Map::new();
    v.insert(
        "cuda".into(),
        serde_json::json!({"name": "CUDA SDK", "version": spec.version.to_string()}),
    );
    for w in &spec.wheels {
        let name = w
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(parsed) = super::index::WheelName::parse(&name) {
            let key = parsed.dist.trim_start_matches("nvidia-").replace('-', "_");
            v.insert(
                key,
                serde_json::json!({"name": parsed.dist, "version": parsed.version.to_string(), "source": "wheel"}),
            );
        }
    }
    let p = out.join("version.json");
    std::fs::write(&p, serde_json::to_vec_pretty(&v).expect("serialisable")).map_err(|e| io(&p, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_full_drive_while_writing_the_tree_is_disk_full_not_permissions() {
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let e = write_err(Path::new("/tmp/x"), full);
        assert!(matches!(e, WheelError::DiskFull { .. }), "{e:?}");
        let other = std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(matches!(
            write_err(Path::new("/tmp/x"), other),
            WheelError::Io { .. }
        ));
    }

    /// A wheel at `path` holding `files` (stored, as a test needs no compression).
    fn wheel(path: &Path, files: &[&str]) {
        let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for f in files {
            z.start_file(*f, opts).unwrap();
            std::io::Write::write_all(&mut z, f.as_bytes()).unwrap();
        }
        z.finish().unwrap();
    }

    /// The pipelined install feeds the build wheel by wheel: a stream that ends before
    /// every wheel of the spec came (its downloads stopped) never puts a tree in place,
    /// and its staging folder goes.
    #[test]
    fn a_build_short_of_a_wheel_is_never_put_in_place() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (
            d.path().join("a-1-py3-none-any.whl"),
            d.path().join("b-1-py3-none-any.whl"),
        );
        wheel(&a, &["nvidia/cu13/bin/nvcc", "nvidia/cu13/include/a.h"]);
        wheel(&b, &["nvidia/cu13/lib/libcudart.so.13"]);
        let spec = AssembleSpec {
            version: "13.5.0".parse().unwrap(),
            wheels: vec![a.clone(), b.clone()],
            dir: d.path().join("cuda-13.5"),
        };
        let Begin::Build(build) = Build::begin(&spec, Os::Linux, &|_| Ok(())).unwrap() else {
            panic!("nothing was there: a build begins");
        };
        build
            .extract([a].into_iter(), 0, &|_, _| {}, &|| false)
            .unwrap();
        let staging = swap::staging_path(&spec.dir);
        assert_eq!(
            std::fs::read(staging.join("include/a.h")).unwrap(),
            b"nvidia/cu13/include/a.h",
            "the wheel that came is unpacked at once"
        );
        let e = build.finish(&|_| Ok(())).unwrap_err();
        assert!(
            crate::error::chain(&e).contains("was not unpacked"),
            "{}",
            crate::error::chain(&e)
        );
        assert!(!spec.dir.exists(), "no tree without every wheel");
        assert!(!staging.exists(), "the staging folder goes");

        // Every wheel, each as it comes: the whole tree goes in.
        let Begin::Build(build) = Build::begin(&spec, Os::Linux, &|_| Ok(())).unwrap() else {
            panic!("still nothing there");
        };
        build
            .extract(spec.wheels.clone().into_iter(), 0, &|_, _| {}, &|| false)
            .unwrap();
        let o = build.finish(&|_| Ok(())).unwrap();
        assert_eq!(o.files, 3);
        assert!(spec.dir.join("lib64/libcudart.so.13").is_file());
        assert!(spec.dir.join("bin/nvcc").is_file());
    }

    #[test]
    fn layout_mapping() {
        let d = |os, n: &str| dest_of(os, "w", n).unwrap();
        assert_eq!(
            d(Os::Windows, "nvidia/cu13/bin/nvcc.exe").as_deref(),
            Some("bin/nvcc.exe")
        );
        assert_eq!(
            d(Os::Windows, "nvidia/cu13/bin/x86_64/cudart64_13.dll").as_deref(),
            Some("bin/x64/cudart64_13.dll")
        );
        assert_eq!(
            d(Os::Windows, "nvidia/cu13/lib/x64/cudart.lib").as_deref(),
            Some("lib/x64/cudart.lib")
        );
        assert_eq!(
            d(Os::Linux, "nvidia/cu13/lib/libcudart.so.13").as_deref(),
            Some("lib64/libcudart.so.13")
        );
        assert_eq!(
            d(Os::Linux, "nvidia/cu13/nvvm/bin/cicc").as_deref(),
            Some("nvvm/bin/cicc")
        );
        assert_eq!(
            d(Os::Linux, "nvidia/cu13/cccl/lib/cmake/cub/cub-config.cmake").as_deref(),
            Some("lib64/cmake/cub/cub-config.cmake")
        );
        assert_eq!(
            d(Os::Linux, "nvidia/cuda_nvcc/bin/ptxas").as_deref(),
            Some("bin/ptxas"),
            "12.x wheels: one folder per package"
        );
        assert_eq!(
            d(Os::Linux, "nvidia_cuda_nvcc-13.5.37.dist-info/RECORD"),
            None
        );
        assert_eq!(
            d(
                Os::Linux,
                "nvidia_cuda_nvcc-13.5.37.dist-info/licenses/License.txt"
            )
            .as_deref(),
            Some(".cuda-setup/licenses/w/License.txt")
        );
        assert_eq!(d(Os::Linux, "nvidia/__init__.py"), None);
        assert!(dest_of(Os::Linux, "w", "nvidia/cu13/../../etc/passwd").is_err());
        assert!(dest_of(Os::Linux, "w", "/etc/passwd").is_err());
        assert!(dest_of(Os::Linux, "w", "evil/bin/nvcc").is_err());
    }
}
