//! Atomic file writes for SimRob's shells: the SimRob server's Save, the Mobile Robot
//! Simulator's map and snapshot files, and the command line's result files.
//!
//! [`write_atomically`] writes the bytes to a temporary file in the target's directory, flushes
//! it to disk (`fsync`), renames it over the target and then flushes the directory, so a
//! reader sees the old file or the new one, never a part, and a power cut after the call
//! returned keeps the new one. Each write has its own temporary file, named after the process
//! and a counter ([`TEMP_PREFIX`]`PID-N`), so processes and threads that write the same file
//! at once never trip over each other's temporary file; the last rename wins.
//! [`remove_stale_temps`] removes the temporary files a writer that was killed mid-write left
//! in a directory (a store calls it when it opens).
//!
//! This crate is not a file store: names, quotas, size limits and messages belong to its
//! callers. It depends on `std` alone.
#![warn(missing_docs)]

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

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
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let temp = dir.join(format!(
        "{TEMP_PREFIX}{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut f = File::create(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    // The rename is in the directory's entries: flush them too.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
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
}
