//! Places are input (#30). cuda-setup runs as Administrator or root, and the folders it
//! writes (`%ProgramData%\cuda-setup`, a shared downloads folder, a toolkit folder) may be
//! writable by other accounts, which can plant a symbolic link, a junction, a hard link or
//! a FIFO where we are about to write or read. This module is the one way we touch such
//! places:
//!
//! - [`Dir`]: a folder opened as a handle (cap-std), and everything under it reached
//!   relative to that handle, each folder on the way opened *without following a link*
//!   (`open_dir_nofollow`: `O_NOFOLLOW | O_DIRECTORY` on Unix, `FILE_FLAG_OPEN_REPARSE_POINT`
//!   and a check of the handle on Windows). A link swapped in between our check and our
//!   use is refused by the kernel, not by a check that can be raced.
//! - files we create are created new: what is at the name (a file, a planted link) is
//!   removed first, then `create_new` without following ([`Dir::create_new`]).
//! - files we read are opened without blocking and without following, checked on the
//!   handle to be a regular file, and bounded before one byte is read ([`read_regular`],
//!   [`Dir::read`]).
//! - when elevated, a folder we trust is ours: created by us with an owner and permissions
//!   only administrators/root can write; one that another account owns or can write is set
//!   aside and made anew ([`trusted_dir`], [`Dir::sub`]).
//!
//! Why cap-std (and cap-fs-ext) and not hand-rolled `openat` calls: it is made for exactly
//! this (all access relative to a directory handle, no escape through links or `..`), it
//! is maintained with Wasmtime's sandbox, and it covers Windows' reparse points as well
//! as Unix links with one API.

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::ambient_authority;

/// Why a file could not be read as one of ours.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}: it is a symbolic link or junction; refused", path.display())]
    Link { path: PathBuf },
    #[error("{}: it is not a regular file ({what}); refused", path.display())]
    NotRegular { path: PathBuf, what: &'static str },
    #[error("{}: {size} bytes, over the {max}-byte limit", path.display())]
    TooBig { path: PathBuf, size: u64, max: u64 },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

impl ReadError {
    pub fn path(&self) -> &Path {
        match self {
            ReadError::Link { path }
            | ReadError::NotRegular { path, .. }
            | ReadError::TooBig { path, .. }
            | ReadError::Io { path, .. } => path,
        }
    }
}

/// Whether an open failed because the last component is a link we refused to follow
/// (`ELOOP` on Linux, `EMLINK`/`EFTYPE` elsewhere; cap-std's own refusal on Windows).
fn is_link_refusal(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EMLINK))
            || e.to_string().contains("symlink")
    }
    #[cfg(not(unix))]
    {
        e.to_string().contains("symlink") || e.raw_os_error() == Some(1921) // ERROR_CANT_RESOLVE_FILENAME
    }
}

/// What a non-regular file is, for the message.
fn kind_of(ft: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() || ft.is_block_device() {
            return "a device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        return "a folder";
    }
    if ft.is_symlink() {
        return "a link";
    }
    "not a plain file"
}

/// Checks an open handle: a regular file, not a reparse point, at most `max` bytes.
fn check_handle(f: &std::fs::File, path: &Path, max: u64) -> Result<u64, ReadError> {
    let m = f.metadata().map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    #[cfg(windows)]
    {
        use std::os::windows::fs::MetadataExt;
        const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x400;
        if m.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            return Err(ReadError::Link {
                path: path.to_path_buf(),
            });
        }
    }
    if !m.is_file() {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            what: kind_of(&m.file_type()),
        });
    }
    if m.len() > max {
        return Err(ReadError::TooBig {
            path: path.to_path_buf(),
            size: m.len(),
            max,
        });
    }
    Ok(m.len())
}

/// Reads an open, checked handle to its end, never more than `max` bytes (a file that
/// grows while read is refused, not read on).
fn read_checked(f: std::fs::File, path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooBig {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            max,
        });
    }
    Ok(bytes)
}

/// Options for opening without blocking (a FIFO opened for reading would wait for a
/// writer for ever) and, unless `follow`, without following a link at the last component.
fn std_read_options(follow: bool) -> std::fs::OpenOptions {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        o.custom_flags(nofollow | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        if !follow {
            o.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
        }
    }
    o
}

/// Opens `path` for reading as a regular file of at most `max` bytes, without following a
/// link at its last component and without blocking; None when nothing is there. The
/// length is that of the handle, checked before anything is read.
pub fn open_regular(path: &Path, max: u64) -> Result<Option<(std::fs::File, u64)>, ReadError> {
    open_regular_with(path, max, false)
}

/// [`open_regular`], following a link at the last component when `follow`: for files we
/// only read and judge, where a link is the system's way (Debian's cuDNN headers are
/// alternatives links); the handle is still checked to be a regular file, bounded.
pub fn open_regular_with(
    path: &Path,
    max: u64,
    follow: bool,
) -> Result<Option<(std::fs::File, u64)>, ReadError> {
    let f = match std_read_options(follow).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if is_link_refusal(&e) => {
            return Err(ReadError::Link {
                path: path.to_path_buf(),
            });
        }
        Err(source) => {
            return Err(ReadError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let len = check_handle(&f, path, max)?;
    Ok(Some((f, len)))
}

/// The bytes of the regular file at `path` (see [`open_regular`]); None when there is none.
pub fn read_regular(path: &Path, max: u64) -> Result<Option<Vec<u8>>, ReadError> {
    match open_regular(path, max)? {
        Some((f, _)) => read_checked(f, path, max).map(Some),
        None => Ok(None),
    }
}

/// [`read_regular`] through links: for files we only read (see [`open_regular_with`]).
pub fn read_regular_following(path: &Path, max: u64) -> Result<Option<Vec<u8>>, ReadError> {
    match open_regular_with(path, max, true)? {
        Some((f, _)) => read_checked(f, path, max).map(Some),
        None => Ok(None),
    }
}

/// How many names the file behind `f` has (hard links). A file we verified and will run
/// must have one: another name is another account's way to rewrite it after our check.
pub fn link_count(f: &std::fs::File) -> io::Result<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Ok(f.metadata()?.nlink())
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{
            BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
        };
        // SAFETY: plain data: all zeroes is a valid value.
        let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: the handle is open for the call; `info` is plain data it fills in.
        if unsafe { GetFileInformationByHandle(f.as_raw_handle() as _, &mut info) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(u64::from(info.nNumberOfLinks))
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = f;
        Ok(1)
    }
}

/// Root, or the account we run as.
#[cfg(unix)]
fn uid_is_ours(uid: u32) -> bool {
    // SAFETY: geteuid has no preconditions.
    uid == 0 || uid == unsafe { libc::geteuid() }
}

/// Whether the file behind `f` belongs to this account or the administrators, so no
/// other account can rewrite it (Unix: owner root or our euid; Windows: checked by path
/// elsewhere — see [`crate::platform::written_by_us`]).
pub fn owned_by_us(f: &std::fs::File) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Ok(uid_is_ours(f.metadata()?.uid()))
    }
    #[cfg(not(unix))]
    {
        let _ = f;
        Ok(true)
    }
}

/// A folder held open as a handle; every path below it is reached relative to it.
#[derive(Debug)]
pub struct Dir {
    inner: cap_std::fs::Dir,
    path: PathBuf,
    /// Elevated: folders below must be ours ([`folder_is_ours`]); others are set aside.
    strict: bool,
    /// Opened only to read another run's records ([`trusted_dir_readonly`],
    /// [`readonly_dir`]): nothing is created, set aside or written through it.
    readonly: bool,
}

/// Splits a relative path into its folders and its last name; refuses `..`, absolute
/// paths and empty ones (a path from outside is checked by `safe_path` first; this is
/// the last line).
fn split(rel: &Path) -> io::Result<(Vec<&std::ffi::OsStr>, &std::ffi::OsStr)> {
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a plain relative path", rel.display()),
                ));
            }
        }
    }
    let last = parts
        .pop()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "an empty path"))?;
    Ok((parts, last))
}

fn nofollow() -> cap_std::fs::OpenOptions {
    let mut o = cap_std::fs::OpenOptions::new();
    o.follow(FollowSymlinks::No);
    o
}

impl Dir {
    /// Opens the folder at `path`. The folder itself must not be a link (its ancestors
    /// are the system's or the user's choice, not something we write into).
    pub fn open(path: &Path) -> io::Result<Dir> {
        let meta = std::fs::symlink_metadata(path)?;
        if meta.file_type().is_symlink() || is_reparse(&meta) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link or junction, not a folder of ours",
                    path.display()
                ),
            ));
        }
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let inner = match (parent, path.file_name()) {
            // Opened from its parent without following: a link swapped in after the
            // check above is refused by the open itself.
            (Some(p), Some(name)) => cap_std::fs::Dir::open_ambient_dir(p, ambient_authority())?
                .open_dir_nofollow(name)?,
            _ => cap_std::fs::Dir::open_ambient_dir(path, ambient_authority())?,
        };
        Ok(Dir {
            inner,
            path: path.to_path_buf(),
            strict: false,
            readonly: false,
        })
    }

    /// [`Dir::open`], creating the folder and its missing ancestors first.
    pub fn create(path: &Path) -> io::Result<Dir> {
        if std::fs::symlink_metadata(path).is_err() {
            std::fs::create_dir_all(path)?;
        }
        Dir::open(path)
    }

    /// Refuses a change through a handle opened only to read.
    fn writable(&self) -> io::Result<()> {
        if self.readonly {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} is opened only to read", self.path.display()),
            ));
        }
        Ok(())
    }

    /// Whether only administrators/root (or this account) can change this folder, judged
    /// on the handle (a folder renamed or swapped after we opened it does not matter).
    pub fn is_ours(&self) -> bool {
        folder_is_ours(&self.inner).unwrap_or(false)
    }

    /// Where this folder is, for messages and for code that still needs a path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The cap-std handle, for work this module has no call for.
    pub fn handle(&self) -> &cap_std::fs::Dir {
        &self.inner
    }

    /// The path of `rel` below this folder, for messages.
    pub fn display(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.path.join(rel)
    }

    /// The folder `rel` below this one, every component opened without following a link;
    /// missing ones are created when `create`. When strict (elevated), a folder on the way
    /// that is not ours is set aside and made anew.
    pub fn sub(&self, rel: impl AsRef<Path>, create: bool) -> io::Result<Dir> {
        let rel = rel.as_ref();
        let (mut folders, last) = split(rel)?;
        folders.push(last);
        let mut at = self.inner.try_clone()?;
        let mut path = self.path.clone();
        if create {
            self.writable()?;
        }
        for name in folders {
            path.push(name);
            if self.readonly {
                // Another run's folder: what is not a plain folder we may trust is not
                // read — and, unlike ours, never set aside.
                let d = at.open_dir_nofollow(name)?;
                if self.strict && !folder_is_ours(&d)? {
                    return Err(untrusted(&path));
                }
                at = d;
                continue;
            }
            at = match at.open_dir_nofollow(name) {
                Ok(d) if !self.strict || folder_is_ours(&d)? => d,
                Ok(_) => {
                    set_aside_untrusted(&at, name, &path)?;
                    make_dir(&at, name)?;
                    at.open_dir_nofollow(name)?
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                    // Another of our threads may make it first (parallel extraction):
                    // the open below still refuses anything but a real folder.
                    match make_dir(&at, name) {
                        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                        _ => {}
                    }
                    at.open_dir_nofollow(name)?
                }
                // A link, a junction or a file where our folder should be: someone else
                // put it there. Set aside (kept as evidence, never followed), then ours.
                Err(e)
                    if is_link_refusal(&e)
                        || e.kind() == io::ErrorKind::NotADirectory
                        || at.symlink_metadata(name).is_ok_and(|m| !m.is_dir()) =>
                {
                    set_aside_untrusted(&at, name, &path)?;
                    make_dir(&at, name)?;
                    at.open_dir_nofollow(name)?
                }
                Err(e) => return Err(e),
            };
        }
        Ok(Dir {
            inner: at,
            path,
            strict: self.strict,
            readonly: self.readonly,
        })
    }

    /// The folder holding `rel` (created when `create`), and `rel`'s last name.
    fn parent_of<'a>(&self, rel: &'a Path, create: bool) -> io::Result<(Dir, &'a std::ffi::OsStr)> {
        let (folders, last) = split(rel)?;
        if folders.is_empty() {
            return Ok((self.try_clone()?, last));
        }
        let sub: PathBuf = folders.iter().collect();
        Ok((self.sub(sub, create)?, last))
    }

    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            inner: self.inner.try_clone()?,
            path: self.path.clone(),
            strict: self.strict,
            readonly: self.readonly,
        })
    }

    /// Creates the file `rel` new, for writing: whatever is at the name (a file, or a link
    /// someone planted — never what it points at) is removed first, then the file is
    /// created with `create_new` and without following. Folders on the way are created.
    pub fn create_new(&self, rel: impl AsRef<Path>) -> io::Result<std::fs::File> {
        self.writable()?;
        let (dir, name) = self.parent_of(rel.as_ref(), true)?;
        dir.remove(name)?;
        let mut o = nofollow();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            o.mode(0o644);
        }
        Ok(dir.inner.open_with(name, &o)?.into_std())
    }

    /// Opens the existing file `rel` for reading and writing (a download resumed): not
    /// through a link, a regular file with one name. Anything else is an error (the caller
    /// starts the file anew with [`Dir::create_new`]).
    pub fn open_rw(&self, rel: impl AsRef<Path>) -> io::Result<std::fs::File> {
        self.writable()?;
        let (dir, name) = self.parent_of(rel.as_ref(), false)?;
        let mut o = cap_std::fs::OpenOptions::new();
        o.read(true).write(true);
        let f = dir.open_regular_in(name, o)?;
        let shown = dir.display(name);
        if link_count(&f)? != 1 {
            return Err(io::Error::other(format!(
                "{} has another name (a hard link); refused",
                shown.display()
            )));
        }
        Ok(f)
    }

    /// Opens the regular file `rel` for reading, bounded (see [`open_regular`]).
    pub fn open_read(
        &self,
        rel: impl AsRef<Path>,
        max: u64,
    ) -> Result<Option<(std::fs::File, u64)>, ReadError> {
        let rel = rel.as_ref();
        let shown = self.display(rel);
        let io = |source| ReadError::Io {
            path: shown.clone(),
            source,
        };
        let (dir, name) = match self.parent_of(rel, false) {
            Ok(x) => x,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        let mut o = nofollow();
        o.read(true);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            o.custom_flags(libc::O_NONBLOCK);
        }
        let f = match dir.inner.open_with(name, &o) {
            Ok(f) => f.into_std(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) if is_link_refusal(&e) => return Err(ReadError::Link { path: shown }),
            Err(e) => return Err(io(e)),
        };
        let len = check_handle(&f, &shown, max)?;
        Ok(Some((f, len)))
    }

    /// The bytes of the regular file `rel`, bounded; None when there is none.
    pub fn read(&self, rel: impl AsRef<Path>, max: u64) -> Result<Option<Vec<u8>>, ReadError> {
        let rel = rel.as_ref();
        match self.open_read(rel, max)? {
            Some((f, _)) => read_checked(f, &self.display(rel), max).map(Some),
            None => Ok(None),
        }
    }

    /// Writes `bytes` to `rel` so a reader sees the old or the new content: into
    /// `<name>.tmp` created new, synced when `sync`, then renamed over `rel` (a rename
    /// replaces a link at `rel` itself, never writes through it).
    pub fn write_atomic(&self, rel: impl AsRef<Path>, bytes: &[u8], sync: bool) -> io::Result<()> {
        self.writable()?;
        let (dir, name) = self.parent_of(rel.as_ref(), true)?;
        dir.test_disk_full()?;
        let mut tmp = name.to_os_string();
        tmp.push(".tmp");
        let mut f = dir.create_new(&tmp)?;
        io::Write::write_all(&mut f, bytes)?;
        if sync {
            f.sync_all()?;
        }
        drop(f);
        dir.inner.rename(&tmp, &dir.inner, name)
    }

    /// Debug builds only: a folder holding `.cuda-setup-test-disk-full` answers every
    /// write with "the drive is full" (ENOSPC / ERROR_DISK_FULL), so a test can reach that
    /// failure without a full drive (and without a link to `/dev/full`, which we no longer
    /// follow). Release builds never look.
    fn test_disk_full(&self) -> io::Result<()> {
        if cfg!(debug_assertions) && self.inner.exists(".cuda-setup-test-disk-full") {
            #[cfg(unix)]
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            #[cfg(windows)]
            return Err(io::Error::from_raw_os_error(112));
        }
        Ok(())
    }

    /// Renames `from` (the file or a link itself: a rename never follows) to `to` in
    /// `to_dir`, replacing what is there (a file or a link, never what it points at).
    pub fn rename(
        &self,
        from: impl AsRef<Path>,
        to_dir: &Dir,
        to: impl AsRef<Path>,
    ) -> io::Result<()> {
        self.writable()?;
        to_dir.writable()?;
        let (a, an) = self.parent_of(from.as_ref(), false)?;
        let (b, bn) = to_dir.parent_of(to.as_ref(), true)?;
        a.inner.rename(an, &b.inner, bn)
    }

    /// Removes the file or link `rel` (a link itself, never what it points at); nothing
    /// there is fine. A folder at the name is an error.
    pub fn remove(&self, rel: impl AsRef<Path>) -> io::Result<()> {
        self.writable()?;
        let (dir, name) = match self.parent_of(rel.as_ref(), false) {
            Ok(x) => x,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        match dir.inner.remove_file_or_symlink(name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            r => r,
        }
    }

    /// The metadata of `rel` itself (a link is reported as a link).
    pub fn symlink_metadata(&self, rel: impl AsRef<Path>) -> io::Result<cap_std::fs::Metadata> {
        let (dir, name) = self.parent_of(rel.as_ref(), false)?;
        dir.inner.symlink_metadata(name)
    }

    /// Opens the lock file `name` in this folder: for reading and writing (created when
    /// missing, never truncated) or only for reading; never through a link, and only a
    /// regular file. The folder is this handle, so a link swapped in for it after it was
    /// opened is not followed either.
    pub fn open_lock(&self, name: impl AsRef<Path>, write: bool) -> io::Result<std::fs::File> {
        if write {
            self.writable()?;
        }
        let (dir, name) = self.parent_of(name.as_ref(), false)?;
        let mut o = cap_std::fs::OpenOptions::new();
        o.read(true);
        if write {
            o.write(true).create(true);
        }
        dir.open_regular_in(name, o)
    }

    /// Opens `name` in this folder with `o`, never following a link at it and never
    /// waiting on a FIFO, and checks the handle: a regular file.
    fn open_regular_in(
        &self,
        name: &std::ffi::OsStr,
        mut o: cap_std::fs::OpenOptions,
    ) -> io::Result<std::fs::File> {
        o.follow(FollowSymlinks::No);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            o.custom_flags(libc::O_NONBLOCK);
        }
        let f = self.inner.open_with(name, &o)?.into_std();
        check_handle(&f, &self.display(name), u64::MAX)
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(f)
    }

    /// The folder `name` (one name) created new by us: whatever is at the name (a
    /// folder a killed run left, a link someone planted — the link itself, never what it
    /// points at) is removed first, then the folder is made with a create that fails if
    /// anything took the name meanwhile, and opened without following. For staging
    /// folders: never one we did not make.
    pub fn fresh_sub(&self, name: impl AsRef<Path>) -> io::Result<Dir> {
        self.writable()?;
        let name = name.as_ref();
        let (folders, last) = split(name)?;
        if !folders.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not one name", name.display()),
            ));
        }
        self.remove_all(last)?;
        make_dir(&self.inner, last)?;
        let inner = self.inner.open_dir_nofollow(last)?;
        Ok(Dir {
            inner,
            path: self.path.join(last),
            strict: self.strict,
            readonly: self.readonly,
        })
    }

    /// Whether `path` names this very folder, not followed if a link: code that still
    /// works by path (a tree finished in place, then renamed) checks first that nobody
    /// swapped the folder for a link or another folder since it was opened.
    pub fn is_at(&self, path: &Path) -> io::Result<bool> {
        let m = std::fs::symlink_metadata(path)?;
        if m.file_type().is_symlink() || is_reparse(&m) || !m.is_dir() {
            return Ok(false);
        }
        #[cfg(unix)]
        {
            use cap_std::fs::MetadataExt as _;
            use std::os::unix::fs::MetadataExt;
            let held = self.inner.dir_metadata()?;
            Ok(held.dev() == m.dev() && held.ino() == m.ino())
        }
        #[cfg(windows)]
        {
            use std::os::windows::fs::OpenOptionsExt;
            const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
            const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
            let there = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
                .open(path)?;
            let held = self.inner.try_clone()?.into_std_file();
            Ok(platform_win::file_id(&held)? == platform_win::file_id(&there)?)
        }
        #[cfg(not(any(unix, windows)))]
        {
            Ok(true)
        }
    }

    /// Removes `name` (one name) whatever it is: a folder with all it holds (links in it
    /// removed as links), or a file or link itself. Nothing there is fine.
    pub fn remove_all(&self, name: impl AsRef<Path>) -> io::Result<()> {
        self.writable()?;
        let name = name.as_ref();
        let r = match self.inner.symlink_metadata(name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
            // (cap-std's removal opens each folder without following, as std's does.)
            Ok(m) if m.is_dir() => self.inner.remove_dir_all(name),
            Ok(_) => self.inner.remove_file_or_symlink(name),
        };
        match r {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            r => r,
        }
    }
}

#[cfg(windows)]
fn is_reparse(m: &std::fs::Metadata) -> bool {
    use std::os::windows::fs::MetadataExt;
    m.file_attributes() & 0x400 != 0
}

#[cfg(not(windows))]
fn is_reparse(_: &std::fs::Metadata) -> bool {
    false
}

/// A new folder `name` in `dir`: 0755 on Unix whatever the umask (a folder of ours that
/// others can write would be set aside next time); on Windows it inherits our DACL.
fn make_dir(dir: &cap_std::fs::Dir, name: &std::ffi::OsStr) -> io::Result<()> {
    #[cfg(unix)]
    {
        use cap_std::fs::{DirBuilder, DirBuilderExt};
        let mut b = DirBuilder::new();
        b.mode(0o755);
        dir.create_dir_with(name, &b)
    }
    #[cfg(not(unix))]
    {
        dir.create_dir(name)
    }
}

/// Renames `name` in `dir` (the entry itself: a rename never follows a link) to
/// `<name>.<label>-<unix seconds>[-n]` beside it: kept as evidence, never deleted. The new
/// name. The one way we set things aside: rejected state files (`rejected`), folders not
/// ours (`untrusted`).
pub fn set_aside_in(
    dir: &cap_std::fs::Dir,
    name: &std::ffi::OsStr,
    label: &str,
) -> io::Result<std::ffi::OsString> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for n in 0..100 {
        let mut to = name.to_os_string();
        to.push(format!(".{label}-{secs}"));
        if n > 0 {
            to.push(format!("-{n}"));
        }
        if dir.symlink_metadata(&to).is_ok() {
            continue;
        }
        dir.rename(name, dir, &to)?;
        return Ok(to);
    }
    Err(io::Error::other("no free name to set it aside under"))
}

/// Sets aside a folder (or what stands where it should be) that is not ours, saying so
/// in the run log.
fn set_aside_untrusted(
    dir: &cap_std::fs::Dir,
    name: &std::ffi::OsStr,
    shown: &Path,
) -> io::Result<PathBuf> {
    let to = set_aside_in(dir, name, "untrusted").map_err(|e| {
        io::Error::other(format!(
            "{} is not ours and could not be set aside: {e}",
            shown.display()
        ))
    })?;
    tracing::warn!(
        target: "cuda_setup::place",
        "{} was not ours (another account owns or can write it); set aside",
        shown.display()
    );
    Ok(shown.with_file_name(to))
}

/// Who owns a folder and whether another account can write it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Owner {
    /// The owner as the OS names it (`uid 1000`, `BUILTIN\Users`).
    pub owner: String,
    /// Whether only administrators/root (or this account) can write it.
    pub ours: bool,
}

/// Whether the open folder `d` can be written only by administrators/root or us.
fn folder_is_ours(d: &cap_std::fs::Dir) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use cap_std::fs::MetadataExt;
        let m = d.dir_metadata()?;
        // SAFETY: geteuid has no preconditions.
        Ok(unix_mode_is_ours(m.uid(), m.mode(), unsafe {
            libc::geteuid()
        }))
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        let f = d.try_clone()?.into_std_file();
        platform_win::handle_is_ours(f.as_raw_handle() as _)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = d;
        Ok(true)
    }
}

/// Unix: owned by root or by `me`, and no write bit for the group or others.
#[cfg(unix)]
fn unix_mode_is_ours(uid: u32, mode: u32, me: u32) -> bool {
    (uid == 0 || uid == me) && mode & 0o022 == 0
}

fn untrusted(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} can be written by another account, or is a link; not read",
            path.display()
        ),
    )
}

/// Another run's state folder, opened only to read its records (#33: the machine-wide
/// folder, read by a run without administrator rights). None when there is none. Trusted
/// only as [`trusted_dir`] would keep it: not a link or junction (opened without
/// following), owned by administrators/root (or this account) and writable by no other
/// account (Unix: no group/other write bit; Windows: no Everyone/Users/… write entry);
/// folders below are judged the same way. Unlike [`trusted_dir`] nothing is created, set
/// aside or written: a folder that fails is an error (`PermissionDenied`), left as it is.
pub fn trusted_dir_readonly(path: &Path) -> io::Result<Option<Dir>> {
    let Some(mut d) = readonly_dir(path)? else {
        return Ok(None);
    };
    if !folder_is_ours(&d.inner)? {
        return Err(untrusted(path));
    }
    d.strict = true;
    Ok(Some(d))
}

/// A folder opened only to read (no ownership rule: for records that are only reported,
/// never acted on): not a link or junction itself, nothing created, set aside or written
/// through it; files in it are read as every state file ([`Dir::read`]: no link, regular,
/// bounded). None when there is none.
pub fn readonly_dir(path: &Path) -> io::Result<Option<Dir>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
        Ok(m) if m.file_type().is_symlink() || is_reparse(&m) || !m.is_dir() => {
            return Err(untrusted(path));
        }
        Ok(_) => {}
    }
    let mut d = Dir::open(path)?;
    d.readonly = true;
    Ok(Some(d))
}

/// Who owns the folder at `path`, and whether it is ours in the sense of [`trusted_dir`].
pub fn owner_of(path: &Path) -> io::Result<Owner> {
    let d = cap_std::fs::Dir::open_ambient_dir(path, ambient_authority())?;
    let ours = folder_is_ours(&d)?;
    #[cfg(unix)]
    let owner = {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path)?;
        format!("uid {} (mode {:o})", m.uid(), m.mode() & 0o7777)
    };
    #[cfg(not(unix))]
    let owner = if ours {
        "Administrators".to_string()
    } else {
        "another account".to_string()
    };
    Ok(Owner { owner, ours })
}

/// A folder we keep state in, trusted as ours. Not elevated: created as it is (it lies
/// in the user's own profile). Elevated: every folder we create is made so that only
/// administrators/root can write it (Unix 0755, owned by root; Windows an explicit DACL:
/// Administrators and SYSTEM full control, Users read); an existing folder that is a link,
/// or that another account owns or can write, is set aside (renamed, kept as evidence)
/// and made anew. Folders below, reached through [`Dir::sub`], get the same rule.
pub fn trusted_dir(path: &Path, elevated: bool) -> io::Result<Dir> {
    if !elevated {
        return Dir::create(path);
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        let not_a_folder = meta.file_type().is_symlink() || is_reparse(&meta) || !meta.is_dir();
        let ours = !not_a_folder && owner_of(path).is_ok_and(|o| o.ours);
        if !ours {
            let parent = path.parent().unwrap_or(Path::new("."));
            let name = path
                .file_name()
                .ok_or_else(|| io::Error::other("a state folder with no name"))?;
            let pdir = cap_std::fs::Dir::open_ambient_dir(parent, ambient_authority())?;
            set_aside_untrusted(&pdir, name, path)?;
        }
    }
    if std::fs::symlink_metadata(path).is_err() {
        if let Some(p) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(p)?;
        }
        create_private_dir(path)?;
    }
    let mut d = Dir::open(path)?;
    // Unix: a folder we just made 0755 as root is ours by construction; checking again
    // catches one swapped in meanwhile. Windows: our DACL is explicit, and Wine (the
    // tests) reports its own owner and ACL, so the check there is the one above.
    if cfg!(unix) && !folder_is_ours(&d.inner)? {
        return Err(io::Error::other(format!(
            "{} can be written by another account; refused",
            path.display()
        )));
    }
    d.strict = true;
    Ok(d)
}

/// Creates the folder `path` (its parent exists) writable by administrators/root only.
fn create_private_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new().mode(0o755).create(path)?;
        // The umask may have taken bits away, never added: set exactly 0755.
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
    }
    #[cfg(windows)]
    {
        platform_win::create_admin_only_dir(path)
    }
    #[cfg(not(any(unix, windows)))]
    {
        std::fs::create_dir(path)
    }
}

#[cfg(windows)]
mod platform_win {
    //! Windows: the DACL we give our state folder, and the check of an existing one.
    use std::io;
    use std::os::windows::ffi::OsStrExt;
    use std::path::Path;
    use windows_sys::Win32::Foundation::{HANDLE, LocalFree};
    use windows_sys::Win32::Security::Authorization::{
        ConvertStringSecurityDescriptorToSecurityDescriptorW, GetSecurityInfo, SDDL_REVISION_1,
        SE_FILE_OBJECT,
    };
    use windows_sys::Win32::Security::{
        ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, DACL_SECURITY_INFORMATION, GetAce, IsWellKnownSid,
        OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID, SECURITY_ATTRIBUTES,
        WinBuiltinAdministratorsSid, WinLocalSystemSid,
    };
    use windows_sys::Win32::Storage::FileSystem::CreateDirectoryW;

    /// Protected (no inherited entries): Administrators and SYSTEM full control, for the
    /// folder and all below; Users read and execute.
    const SDDL: &str = "D:P(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)(A;OICI;0x1200a9;;;BU)";

    /// The volume and file index of an open file or folder (what makes it this one).
    pub fn file_id(f: &std::fs::File) -> io::Result<(u32, u32, u32)> {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{
            BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
        };
        // SAFETY: plain data: all zeroes is a valid value.
        let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: the handle is open for the call; `info` is plain data it fills in.
        if unsafe { GetFileInformationByHandle(f.as_raw_handle() as _, &mut info) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((
            info.dwVolumeSerialNumber,
            info.nFileIndexHigh,
            info.nFileIndexLow,
        ))
    }

    pub fn create_admin_only_dir(path: &Path) -> io::Result<()> {
        let sddl: Vec<u16> = SDDL.encode_utf16().chain([0]).collect();
        let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
        let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `sddl` is NUL-terminated; `sd` is allocated by the call, freed below.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        let sa = SECURITY_ATTRIBUTES {
            nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: sd,
            bInheritHandle: 0,
        };
        // SAFETY: `wide` is NUL-terminated; `sa` points at a valid descriptor.
        let made = unsafe { CreateDirectoryW(wide.as_ptr(), &sa) };
        let err = io::Error::last_os_error();
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW.
        unsafe { LocalFree(sd as _) };
        if made == 0 {
            return Err(err);
        }
        Ok(())
    }

    /// The rights that let an account change what is in a folder.
    const WRITE_RIGHTS: u32 = 0x0002 /* FILE_ADD_FILE */
        | 0x0004 /* FILE_ADD_SUBDIRECTORY */
        | 0x0040 /* FILE_DELETE_CHILD */
        | 0x0001_0000 /* DELETE */
        | 0x0004_0000 /* WRITE_DAC */
        | 0x0008_0000 /* WRITE_OWNER */
        | 0x1000_0000 /* GENERIC_ALL */
        | 0x4000_0000 /* GENERIC_WRITE */;

    /// An owner we trust: the administrators, SYSTEM, or the account we run as (as on
    /// Unix, where root or our own uid is trusted).
    fn trusted_owner(sid: PSID) -> bool {
        // SAFETY: `sid` points into a live security descriptor.
        unsafe {
            IsWellKnownSid(sid, WinBuiltinAdministratorsSid) != 0
                || IsWellKnownSid(sid, WinLocalSystemSid) != 0
                || is_our_user(sid)
        }
    }

    /// The groups through which *another* account gets in: a folder that grants any of
    /// them a right to change it can be planted into by every user of the PC (the
    /// default `C:\ProgramData` ACL lets Users add files to every new sub-folder).
    fn broad_group(sid: PSID) -> bool {
        use windows_sys::Win32::Security::{
            WinAnonymousSid, WinAuthenticatedUserSid, WinBuiltinGuestsSid, WinBuiltinUsersSid,
            WinInteractiveSid, WinWorldSid,
        };
        // SAFETY: `sid` points into a live security descriptor.
        unsafe {
            [
                WinWorldSid,
                WinBuiltinUsersSid,
                WinAuthenticatedUserSid,
                WinInteractiveSid,
                WinBuiltinGuestsSid,
                WinAnonymousSid,
            ]
            .into_iter()
            .any(|w| IsWellKnownSid(sid, w) != 0)
        }
    }

    /// Whether `sid` is the user of this process's token.
    unsafe fn is_our_user(sid: PSID) -> bool {
        use windows_sys::Win32::Foundation::CloseHandle;
        use windows_sys::Win32::Security::{EqualSid, GetTokenInformation, TOKEN_QUERY, TokenUser};
        use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: the token handle is closed below; the buffer is large enough for a
        // TOKEN_USER and its SID (checked by the call's return value).
        unsafe {
            if OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) == 0 {
                return false;
            }
            let mut buf = [0u64; 64];
            let mut len = 0u32;
            let ok = GetTokenInformation(
                token,
                TokenUser,
                buf.as_mut_ptr().cast(),
                std::mem::size_of_val(&buf) as u32,
                &mut len,
            ) != 0;
            CloseHandle(token);
            if !ok {
                return false;
            }
            let user = &*(buf.as_ptr() as *const windows_sys::Win32::Security::TOKEN_USER);
            EqualSid(user.User.Sid, sid) != 0
        }
    }

    /// Owner the administrators, SYSTEM or us, and no entry that lets a broad group
    /// (Everyone, Users, Authenticated Users, …) change the folder.
    pub fn handle_is_ours(h: HANDLE) -> io::Result<bool> {
        let mut owner: PSID = std::ptr::null_mut();
        let mut dacl: *mut ACL = std::ptr::null_mut();
        let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `h` is an open handle; the out-pointers point into `sd`, freed below.
        let err = unsafe {
            GetSecurityInfo(
                h,
                SE_FILE_OBJECT,
                OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
                &mut owner,
                std::ptr::null_mut(),
                &mut dacl,
                std::ptr::null_mut(),
                &mut sd,
            )
        };
        if err != 0 {
            return Err(io::Error::from_raw_os_error(err as i32));
        }
        let mut ours = !owner.is_null() && trusted_owner(owner);
        // A null DACL grants everyone everything.
        if dacl.is_null() {
            ours = false;
        } else {
            // SAFETY: `dacl` is a valid ACL inside `sd`; each ACE pointer is read only
            // for the ACE types whose layout we name.
            let count = unsafe { (*dacl).AceCount };
            for i in 0..u32::from(count) {
                let mut ace: *mut core::ffi::c_void = std::ptr::null_mut();
                // SAFETY: `i` is below the ACL's count; `ace` is an out-pointer.
                if unsafe { GetAce(dacl, i, &mut ace) } == 0 {
                    continue;
                }
                // SAFETY: every ACE begins with its header.
                let header = unsafe { &*(ace as *const ACE_HEADER) };
                // ACCESS_ALLOWED_ACE_TYPE = 0
                if header.AceType != 0 {
                    continue;
                }
                // SAFETY: an ACCESS_ALLOWED_ACE, as its header's type says.
                let allowed = unsafe { &*(ace as *const ACCESS_ALLOWED_ACE) };
                let sid = (&allowed.SidStart) as *const u32 as PSID;
                if allowed.Mask & WRITE_RIGHTS != 0 && broad_group(sid) {
                    ours = false;
                }
            }
        }
        // SAFETY: allocated by GetSecurityInfo.
        unsafe { LocalFree(sd as _) };
        Ok(ours)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_new_never_through_a_link() {
        let d = tempfile::tempdir().unwrap();
        let root = Dir::create(&d.path().join("root")).unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"victim").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&victim, d.path().join("root/f")).unwrap();
        let mut f = root.create_new("f").unwrap();
        io::Write::write_all(&mut f, b"ours").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"victim");
        assert_eq!(std::fs::read(d.path().join("root/f")).unwrap(), b"ours");
        assert!(
            !std::fs::symlink_metadata(d.path().join("root/f"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_folder_on_the_way_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let root = Dir::create(&d.path().join("root")).unwrap();
        std::os::unix::fs::symlink(&out, d.path().join("root/logs")).unwrap();
        // A folder asked for where a link is: the link is set aside (kept), the folder
        // is made ours, and nothing reaches the link's target.
        root.create_new("logs/run.log").unwrap();
        root.write_atomic("logs/x.json", b"{}", false).unwrap();
        root.sub("logs", true).unwrap();
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
        let aside = std::fs::read_dir(d.path().join("root"))
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("logs.untrusted-")
            })
            .count();
        assert_eq!(aside, 1);
        assert!(
            std::fs::symlink_metadata(d.path().join("root/logs"))
                .unwrap()
                .is_dir()
        );
        // The root itself a link: refused too.
        std::os::unix::fs::symlink(&out, d.path().join("root2")).unwrap();
        assert!(Dir::open(&d.path().join("root2")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn reads_are_regular_bounded_and_never_block() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that lives across the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(matches!(
            read_regular(&fifo, 1 << 20),
            Err(ReadError::NotRegular { what: "a FIFO", .. })
        ));
        let zero = d.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(matches!(
            read_regular(&zero, 1 << 20),
            Err(ReadError::Link { .. })
        ));
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), 1 << 20),
            Err(ReadError::NotRegular { .. })
        ));
        let sparse = d.path().join("sparse");
        std::fs::File::create(&sparse)
            .unwrap()
            .set_len(2 << 30)
            .unwrap();
        assert!(matches!(
            read_regular(&sparse, 1 << 20),
            Err(ReadError::TooBig { .. })
        ));
        let root = Dir::open(d.path()).unwrap();
        assert!(matches!(
            root.read("fifo", 10),
            Err(ReadError::NotRegular { .. })
        ));
        assert!(matches!(root.read("zero", 10), Err(ReadError::Link { .. })));
        assert!(root.read("none", 10).unwrap().is_none());
        assert!(read_regular(&d.path().join("none"), 10).unwrap().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_fresh_folder_replaces_a_planted_link_and_parallel_creates_agree() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("keep"), b"theirs").unwrap();
        let root = Dir::create(&d.path().join("root")).unwrap();
        std::os::unix::fs::symlink(&out, d.path().join("root/staging")).unwrap();
        let s = root.fresh_sub("staging").unwrap();
        let m = std::fs::symlink_metadata(d.path().join("root/staging")).unwrap();
        assert!(m.is_dir() && !m.file_type().is_symlink());
        assert_eq!(std::fs::read(out.join("keep")).unwrap(), b"theirs");
        // A leftover folder of ours goes with what it holds.
        drop(s.create_new("a/b/f").unwrap());
        let s = root.fresh_sub("staging").unwrap();
        assert!(s.symlink_metadata("a").is_err());
        // Threads making the same folders at once all succeed.
        std::thread::scope(|t| {
            for i in 0..8 {
                let s = &s;
                t.spawn(move || drop(s.create_new(format!("x/y/z/{i}")).unwrap()));
            }
        });
        assert_eq!(
            std::fs::read_dir(s.path().join("x/y/z")).unwrap().count(),
            8
        );
        assert!(root.fresh_sub("a/b").is_err());
        // The folder held is still at its name; swapped for a link, it no longer is.
        let p = d.path().join("root/staging");
        assert!(s.is_at(&p).unwrap());
        std::fs::rename(&p, d.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(d.path().join("moved"), &p).unwrap();
        assert!(!s.is_at(&p).unwrap());
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_file_is_never_reached_through_a_link_nor_a_fifo() {
        let d = tempfile::tempdir().unwrap();
        let root = Dir::create(&d.path().join("root")).unwrap();
        let victim = d.path().join("victim");
        std::os::unix::fs::symlink(&victim, d.path().join("root/lock")).unwrap();
        assert!(root.open_lock("lock", true).is_err());
        assert!(!victim.exists(), "no file created through the link");
        let c = std::ffi::CString::new(d.path().join("root/fifo").to_str().unwrap()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that lives across the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(
            root.open_lock("fifo", false).is_err(),
            "refused, without blocking"
        );
        let f = root.open_lock("real", true).unwrap();
        f.try_lock().unwrap();
        // The folder itself a link: refused before any file is made.
        std::os::unix::fs::symlink(d.path(), d.path().join("linked")).unwrap();
        assert!(Dir::open(&d.path().join("linked")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_hard_linked_file_is_not_resumed() {
        let d = tempfile::tempdir().unwrap();
        let root = Dir::create(&d.path().join("root")).unwrap();
        std::fs::write(d.path().join("theirs"), b"x").unwrap();
        std::fs::hard_link(d.path().join("theirs"), d.path().join("root/f.part")).unwrap();
        assert!(root.open_rw("f.part").is_err());
        std::fs::write(d.path().join("root/g.part"), b"x").unwrap();
        assert!(root.open_rw("g.part").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_another_account_can_write_is_set_aside_when_elevated() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let state = d.path().join("state");
        std::fs::create_dir(&state).unwrap();
        std::fs::write(state.join("planted"), b"x").unwrap();
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
        let t = trusted_dir(&state, true).unwrap();
        let mode = std::fs::metadata(t.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        assert!(!state.join("planted").exists());
        let aside: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("state.untrusted-")
            })
            .collect();
        assert_eq!(aside.len(), 1, "the old folder is kept as evidence");
        // A world-writable folder below is set aside too.
        std::fs::create_dir(state.join("logs")).unwrap();
        std::fs::set_permissions(state.join("logs"), std::fs::Permissions::from_mode(0o777))
            .unwrap();
        let logs = t.sub("logs", true).unwrap();
        let mode = std::fs::metadata(logs.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o022, 0);
        // Our own folder is used as it is.
        std::fs::write(state.join("mine"), b"x").unwrap();
        let again = trusted_dir(&state, true).unwrap();
        assert!(again.path().join("mine").exists());
    }
    /// Another run's folder read by a run without rights (#33): trusted only when no
    /// other account can write it, and never changed by the reader — a link, a folder
    /// others can write, or a link below it is refused and left exactly as it was.
    #[cfg(unix)]
    #[test]
    fn a_folder_read_only_is_trusted_as_ours_and_never_changed() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        assert!(
            trusted_dir_readonly(&d.path().join("none"))
                .unwrap()
                .is_none()
        );
        let machine = d.path().join("machine");
        std::fs::create_dir_all(machine.join("guard")).unwrap();
        std::fs::write(machine.join("guard/r.json"), b"{}").unwrap();
        std::fs::set_permissions(&machine, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(
            machine.join("guard"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let m = trusted_dir_readonly(&machine).unwrap().unwrap();
        assert_eq!(m.read("guard/r.json", 10).unwrap().unwrap(), b"{}");
        assert!(m.read("guard/none.json", 10).unwrap().is_none());
        // Nothing is written, created or removed through it.
        assert!(m.write_atomic("x.json", b"{}", false).is_err());
        assert!(m.create_new("guard/y").is_err());
        assert!(m.sub("new", true).is_err());
        assert!(m.remove("guard/r.json").is_err());
        assert!(m.remove_all("guard").is_err());
        assert!(m.open_lock("lock", true).is_err());
        assert!(!machine.join("x.json").exists() && !machine.join("new").exists());
        assert!(machine.join("guard/r.json").exists());

        let names = |p: &Path| -> Vec<String> {
            let mut v: Vec<String> = std::fs::read_dir(p)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        let before = names(d.path());
        // A folder below that others can write: refused, not set aside.
        std::fs::set_permissions(
            machine.join("guard"),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
        assert!(m.read("guard/r.json", 10).is_err());
        assert!(machine.join("guard/r.json").exists());
        std::fs::set_permissions(
            machine.join("guard"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        // A link below: not followed, not set aside.
        std::fs::create_dir(d.path().join("elsewhere")).unwrap();
        std::fs::write(d.path().join("elsewhere/r.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(d.path().join("elsewhere"), machine.join("linked")).unwrap();
        assert!(m.read("linked/r.json", 10).is_err());
        assert!(
            std::fs::symlink_metadata(machine.join("linked"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // Group-writable, world-writable: not trusted, and left as it was.
        for mode in [0o775, 0o777] {
            std::fs::set_permissions(&machine, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = trusted_dir_readonly(&machine).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{mode:o}");
            let m = std::fs::metadata(&machine).unwrap().permissions().mode() & 0o777;
            assert_eq!(m, mode);
        }
        std::fs::set_permissions(&machine, std::fs::Permissions::from_mode(0o755)).unwrap();
        // The folder itself a link: refused, the link kept.
        let linked = d.path().join("linked-machine");
        std::os::unix::fs::symlink(&machine, &linked).unwrap();
        assert!(trusted_dir_readonly(&linked).is_err());
        assert!(readonly_dir(&linked).is_err());
        // Nothing was set aside anywhere.
        assert_eq!(names(&machine), ["guard", "linked"]);
        let mut want = before;
        want.extend(["elsewhere".to_string(), "linked-machine".to_string()]);
        want.sort();
        assert_eq!(names(d.path()), want);
        // Owned by another account (a test run as root can make one).
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        assert!(unix_mode_is_ours(0, 0o40755, me));
        assert!(unix_mode_is_ours(me, 0o40755, me));
        let other = if me == 4242 { 4243 } else { 4242 };
        assert!(!unix_mode_is_ours(other, 0o40755, me));
        assert!(!unix_mode_is_ours(0, 0o40775, me));
        assert!(!unix_mode_is_ours(0, 0o40757, me));
        if me == 0 {
            std::os::unix::fs::chown(&machine, Some(other), None).unwrap();
            assert!(trusted_dir_readonly(&machine).is_err());
            // Only reported, never acted on: no ownership rule.
            assert!(readonly_dir(&machine).unwrap().is_some());
        }
    }
}
