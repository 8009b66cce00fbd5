//! Files for SimRob's shells: reading a file named from outside within a size, the plain
//! names a directory of files takes, and atomic writes (the SimRob server's Save and Load, the
//! Mobile Robot Simulator's map and snapshot files, the command line's and Python's scenario,
//! configuration and result files).
//!
//! [`read_bounded`] reads a regular file of at most a given size: a device, a FIFO or a
//! directory is refused before it is opened (opening a FIFO would wait for a writer), and a
//! file that grows while it is read stops at the limit. [`regular_file`] is its first look,
//! for files read otherwise (a recording followed as it grows). [`ReadError::message`] and
//! [`over_limit`] are the one wording of a file refused for its size, for every command,
//! server and the Python package (the file, its size, the limit and how to raise it).
//!
//! [`check_plain_name`] and [`resolve_in`] are the one rule for a file named by a client or a
//! scenario in a directory of the user's (a server's save directory, the MRS map directory, a
//! scenario's folder): a plain name, at most [`MAX_NAME`] bytes, no `/` or `\`, no leading
//! `.`, no control characters, and no symbolic link leading out.
//!
//! [`write_atomically`] writes the bytes to a temporary file in the target's directory, flushes
//! it to disk (`fsync`), renames it over the target and then flushes the directory, so a
//! reader sees the old file or the new one, never a part, and a power cut after the call
//! returned keeps the new one. Each write has its own temporary file, named after the process
//! and a counter ([`TEMP_PREFIX`]`PID-N`), so processes and threads that write the same file
//! at once never trip over each other's temporary file; the last rename wins.
//! [`AtomicFile`] is the same for a file written as a stream (an export): renamed over the
//! target only on success. [`same_file`] tells whether two paths are one file (an export's
//! output naming its input).
//! [`remove_stale_temps`] removes the temporary files a writer that was killed mid-write left
//! in a directory (a store calls it when it opens).
//!
//! [`Quota`] is how much a directory of files may hold (files and bytes); its callers count
//! what they hold.
//!
//! This crate is not a file store: counting, size limits and messages naming the directory
//! belong to its callers. It depends on `std` alone.
#![warn(missing_docs)]

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why [`read_bounded`] read nothing.
#[derive(Debug)]
pub enum ReadError {
    /// The path names a device, a FIFO or a directory.
    NotAFile,
    /// The file is larger than the limit (or grew past it while it was read).
    TooLarge {
        /// Its size, or the bytes read when it grew past the limit.
        len: u64,
        /// The limit, in bytes.
        max: u64,
    },
    /// The operating system's error (`NotFound` for a missing file).
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotAFile => {
                f.write_str("not a regular file (a device, a FIFO or a directory)")
            }
            ReadError::TooLarge { len, max } => {
                write!(f, "{len} bytes is more than the {max}-byte limit")
            }
            ReadError::Io(e) => e.fmt(f),
        }
    }
}

impl ReadError {
    /// What a user reads when a file they named was not read: `subject` names the file as
    /// the caller's words do (`scenario big.xml`, `the map m.drawio`) and `raise_with` says
    /// how to raise the limit (`--max-scenario-bytes BYTES`). Over the limit, the message names
    /// the file, its size, the limit and `raise_with` ([`over_limit`]); otherwise it is
    /// `cannot read SUBJECT: ` and the reason.
    pub fn message(&self, subject: &str, raise_with: &str) -> String {
        match self {
            ReadError::TooLarge { len, max } => over_limit(subject, Some(*len), *max, raise_with),
            e => format!("cannot read {subject}: {e}"),
        }
    }
}

/// The one wording of a file or stream refused for its size: `SUBJECT is LEN bytes, more
/// than the MAX-byte limit: raise it with RAISE_WITH` (without `is LEN bytes,` when the size
/// is not known, as for standard input read up to the limit).
pub fn over_limit(subject: &str, len: Option<u64>, max: u64, raise_with: &str) -> String {
    match len {
        Some(len) => format!(
            "{subject} is {len} bytes, more than the {max}-byte limit: raise it with {raise_with}"
        ),
        None => format!("{subject} is more than the {max}-byte limit: raise it with {raise_with}"),
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        ReadError::Io(e)
    }
}

impl From<ReadError> for std::io::Error {
    fn from(e: ReadError) -> Self {
        use std::io::ErrorKind;
        match e {
            ReadError::Io(e) => e,
            ReadError::NotAFile => std::io::Error::new(ErrorKind::InvalidInput, e.to_string()),
            ReadError::TooLarge { .. } => {
                std::io::Error::new(ErrorKind::FileTooLarge, e.to_string())
            }
        }
    }
}

/// The metadata of the regular file at `path`, looked at without opening it; a device, a
/// FIFO or a directory is [`ReadError::NotAFile`] (opening a FIFO would wait for a writer,
/// reading `/dev/zero` would never end). For a file read otherwise than whole by
/// [`read_bounded`] (a recording followed as it grows): call it before opening the file.
pub fn regular_file(path: &Path) -> Result<std::fs::Metadata, ReadError> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile);
    }
    Ok(meta)
}

/// Reads the file at `path`: a regular file of at most `max` bytes, else a [`ReadError`]
/// (nothing is read from a device or a FIFO, and a file that grows while it is read stops at
/// `max`).
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let meta = regular_file(path)?;
    if meta.len() > max {
        return Err(ReadError::TooLarge {
            len: meta.len(),
            max,
        });
    }
    let file = File::open(path)?;
    // The path may have been replaced between the look and the opening.
    if !file.metadata()?.is_file() {
        return Err(ReadError::NotAFile);
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge {
            len: bytes.len() as u64,
            max,
        });
    }
    Ok(bytes)
}

/// How much a directory of files may hold, in files and in bytes together: the SimRob
/// server's save directory (configuration keys `savedirectoryfiles`, `savedirectorybytes`)
/// and what a Mobile Robot Simulator writes into its map directory (`--max-snapshots`,
/// `--max-snapshot-bytes`). Each caller counts what it holds and words the refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Most files.
    pub max_files: usize,
    /// Most bytes of them together.
    pub max_bytes: u64,
}

impl Default for Quota {
    /// 1,000 files, 256 MiB.
    fn default() -> Self {
        Quota {
            max_files: 1000,
            max_bytes: 256 << 20,
        }
    }
}

/// Which limit of a [`Quota`] a write would pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverQuota {
    /// One file more than `max_files`.
    Files,
    /// More bytes than `max_bytes`.
    Bytes,
}

impl Quota {
    /// Whether `files` files of `bytes` bytes in all (the file about to be written counted
    /// in both) stay within the quota; the number of files is checked first.
    pub fn admits(&self, files: usize, bytes: u64) -> Result<(), OverQuota> {
        if files > self.max_files {
            Err(OverQuota::Files)
        } else if bytes > self.max_bytes {
            Err(OverQuota::Bytes)
        } else {
            Ok(())
        }
    }
}

/// The longest plain file name, in bytes (what common file systems allow).
pub const MAX_NAME: usize = 255;

/// Why a name is not a plain file name in a directory ([`check_plain_name`], [`resolve_in`]).
/// The messages name neither the directory nor the name: callers add them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// The name is empty.
    Empty,
    /// The name has control characters.
    ControlCharacters,
    /// The name is longer than [`MAX_NAME`] bytes.
    TooLong {
        /// Its length, in bytes.
        len: usize,
    },
    /// The name has a `/` or a `\`, or starts with `.` (another directory, a hidden file).
    NotPlain,
    /// The name is a symbolic link to somewhere outside the directory.
    LeadsOut,
}

impl std::fmt::Display for NameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NameError::Empty => f.write_str("a file name is needed"),
            NameError::ControlCharacters => {
                f.write_str("a file name may not contain control characters")
            }
            NameError::TooLong { len } => {
                write!(f, "a file name of {len} bytes is longer than {MAX_NAME}")
            }
            NameError::NotPlain => f.write_str("not a plain file name (no '/', no leading '.')"),
            NameError::LeadsOut => f.write_str("a link leading out of the directory"),
        }
    }
}

impl std::error::Error for NameError {}

/// Whether `name` is a plain file name (see the crate docs), as it is (no trimming).
pub fn check_plain_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.chars().any(char::is_control) {
        return Err(NameError::ControlCharacters);
    }
    if name.len() > MAX_NAME {
        return Err(NameError::TooLong { len: name.len() });
    }
    if name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(NameError::NotPlain);
    }
    Ok(())
}

/// The path of the plain file name `name` in `dir` (which should be canonical, so that a
/// link's target can be compared with it): [`check_plain_name`], and no symbolic link
/// leading out of `dir`. The file need not exist.
pub fn resolve_in(dir: &Path, name: &str) -> Result<PathBuf, NameError> {
    check_plain_name(name)?;
    let full = dir.join(name);
    if let Ok(real) = full.canonicalize() {
        if !real.starts_with(dir) {
            return Err(NameError::LeadsOut);
        }
    }
    Ok(full)
}

/// The prefix of the temporary files [`write_atomically`] creates (a leading dot hides them
/// from listings; file stores refuse names with a leading dot, so no user file has it).
pub const TEMP_PREFIX: &str = ".simrob-tmp-";

/// Counts this process's writes, so that two at once get two temporary files.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` through a temporary file in the same directory, flushed to disk,
/// and a rename; then flushes the directory so the rename itself is durable (best effort: a
/// file system that cannot flush a directory still gets the atomic rename). On an error the
/// temporary file is removed and `path` is unchanged.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// The directory `path` is in (`.` for a bare name).
fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A file written as a stream and put in place only when whole: [`AtomicFile::create`] opens
/// a temporary file in the target's directory (named as [`write_atomically`]'s),
/// [`AtomicFile::commit`] flushes it to disk and renames it over the target. Dropped without
/// a commit (an error midway), the temporary file is removed and the target is unchanged: no
/// partial file that looks complete, and an existing good file is never clobbered.
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<std::io::BufWriter<File>>,
    temp: PathBuf,
    target: PathBuf,
}

impl AtomicFile {
    /// Opens a temporary file next to `target` (nothing is written to `target` yet).
    pub fn create(target: &Path) -> std::io::Result<AtomicFile> {
        let temp = dir_of(target).join(format!(
            "{TEMP_PREFIX}{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        // The name is this process's own: a file by that name is one a dead process of the
        // same id left, and is written over.
        let file = File::create(&temp)?;
        Ok(AtomicFile {
            file: Some(std::io::BufWriter::new(file)),
            temp,
            target: target.to_path_buf(),
        })
    }

    /// Flushes what was written to disk and renames it over the target.
    pub fn commit(mut self) -> std::io::Result<()> {
        let Some(buffered) = self.file.take() else {
            return Err(std::io::Error::other("already committed"));
        };
        let put = (|| {
            let file = buffered.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            drop(file);
            std::fs::rename(&self.temp, &self.target)
        })();
        if let Err(e) = put {
            let _ = std::fs::remove_file(&self.temp);
            return Err(e);
        }
        // The rename is in the directory's entries: flush them too (best effort: a file
        // system that cannot flush a directory still gets the atomic rename).
        if let Ok(d) = File::open(dir_of(&self.target)) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(std::io::Error::other("already committed")),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Whether `a` and `b` name the same existing file (the same device and inode on Unix, the
/// same canonical path elsewhere): a command that reads one and writes the other refuses it,
/// as writing would destroy what it reads. A path that does not exist is no file's.
pub fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    }
}

/// Whether `name` is one of [`write_atomically`]'s temporary files, or one of the form
/// `.NAME.tmp-PID-N` that earlier SimRob servers used for a Save in progress.
pub fn is_temp_name(name: &str) -> bool {
    if name.starts_with(TEMP_PREFIX) {
        return true;
    }
    name.starts_with('.')
        && name.rsplit_once(".tmp-").is_some_and(|(_, n)| {
            n.split('-')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// Removes the temporary files (see [`is_temp_name`]) that writers killed mid-write left in
/// `dir`; returns how many were removed. Only regular files directly in `dir` are touched;
/// a directory that cannot be read removes nothing.
pub fn remove_stale_temps(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        if is_temp_name(&e.file_name().to_string_lossy())
            && e.file_type().is_ok_and(|t| t.is_file())
            && std::fs::remove_file(e.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fresh directory for one test.
    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("simrob-atomic-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_replace_the_file_and_leave_no_temporary_file() {
        let d = temp_dir("replace");
        let p = d.join("out.txt");
        write_atomically(&p, b"first").unwrap();
        write_atomically(&p, b"second, longer").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second, longer");
        write_atomically(&p, b"").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"");
        assert_eq!(names(&d), ["out.txt"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_write_changes_nothing_and_leaves_no_temporary_file() {
        let d = temp_dir("fail");
        let target = d.join("target");
        // Renaming a file over a non-empty directory fails after the temporary file was
        // written and flushed: the directory stays, the temporary file goes.
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "kept").unwrap();
        assert!(write_atomically(&target, b"new").is_err());
        assert_eq!(std::fs::read(target.join("inside")).unwrap(), b"kept");
        assert_eq!(names(&d), ["target"]);
        // A directory that does not exist: an error, nothing created.
        let missing = d.join("missing").join("x.txt");
        let e = write_atomically(&missing, b"x").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(names(&d), ["target"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn threads_writing_one_file_at_once_each_use_their_own_temporary_file() {
        let d = temp_dir("threads");
        let p = d.join("shared.json");
        let contents: Vec<Vec<u8>> = (0..8)
            .map(|i| format!("{{\"writer\": {i}}}").repeat(1000).into_bytes())
            .collect();
        std::thread::scope(|s| {
            for c in &contents {
                let p = &p;
                s.spawn(move || {
                    for _ in 0..20 {
                        write_atomically(p, c).unwrap();
                    }
                });
            }
        });
        // Whoever renamed last wins, whole.
        let got = std::fs::read(&p).unwrap();
        assert!(contents.contains(&got), "a torn or mixed file");
        assert_eq!(names(&d), ["shared.json"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn stale_temporary_files_are_removed_and_nothing_else() {
        let d = temp_dir("stale");
        for n in [".simrob-tmp-123-4", ".run.xml.tmp-99-7", ".simrob-tmp-"] {
            std::fs::write(d.join(n), "half a write").unwrap();
        }
        for n in [
            "keep.xml",
            ".hidden",
            ".run.xml.tmp-",
            ".a.tmp-1-x",
            "run.tmp-1-2",
        ] {
            std::fs::write(d.join(n), "a file").unwrap();
        }
        // A directory with a temporary file's name is not a file: kept.
        std::fs::create_dir(d.join(".simrob-tmp-5-5")).unwrap();
        assert_eq!(remove_stale_temps(&d), 3);
        assert_eq!(
            names(&d),
            [
                ".a.tmp-1-x",
                ".hidden",
                ".run.xml.tmp-",
                ".simrob-tmp-5-5",
                "keep.xml",
                "run.tmp-1-2"
            ]
        );
        assert_eq!(remove_stale_temps(&d.join("no such directory")), 0);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn temporary_names_are_recognised() {
        assert!(is_temp_name(".simrob-tmp-1-2"));
        assert!(is_temp_name(".save.xml.tmp-10-0"));
        assert!(is_temp_name(".x.tmp-7"));
        assert!(!is_temp_name("simrob-tmp-1-2"));
        assert!(!is_temp_name(".x.tmp-7-"));
        assert!(!is_temp_name(".x.tmp-a"));
        assert!(!is_temp_name("x.tmp-1-2"));
    }

    #[test]
    fn bounded_reads_take_regular_files_up_to_the_limit() {
        let d = temp_dir("bounded");
        let small = d.join("small.txt");
        std::fs::write(&small, b"0123456789").unwrap();
        assert_eq!(read_bounded(&small, 10).unwrap(), b"0123456789");
        let e = read_bounded(&small, 9).unwrap_err();
        assert!(
            matches!(e, ReadError::TooLarge { len: 10, max: 9 }),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "10 bytes is more than the 9-byte limit");
        assert_eq!(
            e.message("scenario small.txt", "--max-x BYTES"),
            "scenario small.txt is 10 bytes, more than the 9-byte limit: raise it with --max-x BYTES"
        );
        assert_eq!(
            over_limit("standard input", None, 9, "--max-x BYTES"),
            "standard input is more than the 9-byte limit: raise it with --max-x BYTES"
        );
        assert!(matches!(read_bounded(&d, 100), Err(ReadError::NotAFile)));
        assert_eq!(
            ReadError::NotAFile.message("the map d", "-"),
            "cannot read the map d: not a regular file (a device, a FIFO or a directory)"
        );
        let missing = read_bounded(&d.join("none"), 100).unwrap_err();
        assert!(
            matches!(&missing, ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound),
            "{missing:?}"
        );
        // A device is refused before it is opened (reading /dev/zero would never end).
        if Path::new("/dev/zero").exists() {
            assert!(matches!(
                read_bounded(Path::new("/dev/zero"), 100),
                Err(ReadError::NotAFile)
            ));
        }
        let io: std::io::Error = ReadError::TooLarge { len: 2, max: 1 }.into();
        assert_eq!(io.kind(), std::io::ErrorKind::FileTooLarge);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn plain_names_stay_in_their_directory() {
        let d = temp_dir("names").canonicalize().unwrap();
        assert_eq!(resolve_in(&d, "run1.xml"), Ok(d.join("run1.xml")));
        assert_eq!(check_plain_name(""), Err(NameError::Empty));
        assert_eq!(check_plain_name("a\nb"), Err(NameError::ControlCharacters));
        let long = "x".repeat(MAX_NAME + 1);
        assert_eq!(
            check_plain_name(&long),
            Err(NameError::TooLong { len: MAX_NAME + 1 })
        );
        assert_eq!(check_plain_name(&long[..MAX_NAME]), Ok(()));
        for name in ["../x.xml", "/tmp/x.xml", "a/b", "a\\b", ".hidden", ".."] {
            assert_eq!(check_plain_name(name), Err(NameError::NotPlain), "{name}");
        }
        // A link inside the directory to a file outside it.
        #[cfg(unix)]
        {
            let outside = temp_dir("names-outside").canonicalize().unwrap();
            std::os::unix::fs::symlink(outside.join("t.xml"), d.join("link.xml")).unwrap();
            std::fs::write(outside.join("t.xml"), b"x").unwrap();
            assert_eq!(resolve_in(&d, "link.xml"), Err(NameError::LeadsOut));
            std::fs::remove_dir_all(&outside).unwrap();
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_quota_admits_up_to_its_limits_files_first() {
        let q = Quota {
            max_files: 2,
            max_bytes: 10,
        };
        assert_eq!(q.admits(2, 10), Ok(()));
        assert_eq!(q.admits(3, 10), Err(OverQuota::Files));
        assert_eq!(q.admits(2, 11), Err(OverQuota::Bytes));
        assert_eq!(q.admits(3, 11), Err(OverQuota::Files));
        assert_eq!(Quota::default().max_files, 1000);
    }

    #[test]
    fn an_atomic_file_appears_only_when_committed() {
        let d = temp_dir("stream");
        let target = d.join("out.csv");
        std::fs::write(&target, "good\n").unwrap();
        // Dropped midway (an error): the old file stays, no temporary file is left.
        {
            let mut f = AtomicFile::create(&target).unwrap();
            f.write_all(b"half").unwrap();
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "good\n");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        // Committed: the new file, whole.
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"new\n").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn same_file_sees_through_other_spellings() {
        let d = temp_dir("same");
        let a = d.join("a");
        std::fs::write(&a, "x").unwrap();
        assert!(same_file(&a, &d.join(".").join("a")));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&a, d.join("link")).unwrap();
            std::fs::hard_link(&a, d.join("hard")).unwrap();
            assert!(same_file(&a, &d.join("link")));
            assert!(same_file(&a, &d.join("hard")));
        }
        std::fs::write(d.join("b"), "x").unwrap();
        assert!(!same_file(&a, &d.join("b")));
        assert!(!same_file(&a, &d.join("missing")));
        let _ = std::fs::remove_dir_all(&d);
    }
}
