//! Save/Load files: plain names in one directory, written atomically, within a quota; and
//! the server's configuration file ([`read_config`]).
//!
//! A name is a plain file name (`run1.xml`): no directories, no leading dot, no control
//! characters, at most [`MAX_NAME`] bytes. The directory holds at most
//! [`Quota::max_files`] save files and [`Quota::max_bytes`] bytes (configuration keys
//! `savedirectoryfiles`, `savedirectorybytes`); a Save past either is refused. Temporary files
//! a killed server left behind are removed when the store opens. Messages name the file, never
//! the directory's absolute path.

use std::path::{Path, PathBuf};

use simrob_files::{NameError, OverQuota, ReadError};
pub use simrob_files::{Quota, MAX_NAME};
use simrob_session::{ConfigError, ServerConfig};

/// Largest save file Load reads by default (bytes; the server's configuration key `maxsavefilebytes`).
pub const MAX_SAVE_FILE: u64 = 64 * 1024 * 1024;

/// Why a save file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The name is not acceptable (outside the directory, empty, NUL…).
    #[error("{0}")]
    Name(String),
    /// The operating system refused a file operation.
    #[error("cannot {action} {name}: {source}")]
    Io {
        /// What was being done (`save to`, `load`, `create the save directory`…).
        action: &'static str,
        /// The file or directory, as shown to the user.
        name: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file to load is not a file, or is larger than a save file may be.
    #[error("cannot load {name}: {problem}")]
    Content {
        /// The file's name as the request gave it.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The directory's quota would be exceeded.
    #[error("cannot save {name}: {problem}")]
    Quota {
        /// The file's name as the request gave it.
        name: String,
        /// Which limit it would pass (`savedirectoryfiles` or `savedirectorybytes`), with the figures.
        problem: String,
    },
}

pub(crate) fn io<'a>(
    action: &'static str,
    name: &'a str,
) -> impl FnOnce(std::io::Error) -> FileError + 'a {
    move |source| FileError::Io {
        action,
        name: name.to_string(),
        source,
    }
}

/// Where the server's Save and Load go. The shell provides it; tests may too.
pub trait SaveStore: Send {
    /// Writes `contents` under `name`, atomically (readers see the old file or the new one);
    /// returns the name written, relative to the store.
    fn save(&mut self, name: &str, contents: &str) -> Result<PathBuf, FileError>;
    /// Reads the file `name`.
    fn load(&mut self, name: &str) -> Result<String, FileError>;
    /// Limits what the store may hold from now on (stores without a quota ignore it).
    fn set_quota(&mut self, _quota: Quota) {}
    /// The largest file a save writes or a load reads from now on, bytes (configuration key
    /// `maxsavefilebytes`; stores without a limit ignore it).
    fn set_max_file_bytes(&mut self, _bytes: u64) {}
}

/// The path `name` stands for in `dir` (canonical), if it is a plain file name there (see
/// the module docs): no directories, no leading dot, no control characters, at most
/// [`MAX_NAME`] bytes, and no symbolic link leading out. `place` names `dir` in messages
/// (`the save directory`), never its path.
pub fn resolve_in(dir: &Path, name: &str, place: &str) -> Result<PathBuf, FileError> {
    simrob_files::resolve_in(dir, name.trim()).map_err(|e| {
        FileError::Name(match e {
            NameError::Empty => e.to_string(),
            NameError::ControlCharacters => format!("file {name:?} contains control characters"),
            NameError::TooLong { len } => {
                format!("file name of {len} bytes is longer than {MAX_NAME}")
            }
            NameError::NotPlain => format!(
                "file {name:?} is outside {place}: use a plain name in it, e.g. \"run1.xml\""
            ),
            NameError::LeadsOut => format!("file {name:?} leads outside {place}"),
        })
    })
}

/// [`resolve_in`] the folder `base` (a scenario's folder; empty: the current directory).
pub fn resolve_beside(base: &Path, name: &str, place: &str) -> Result<PathBuf, FileError> {
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let shown = base.display().to_string();
    let dir = base.canonicalize().map_err(io("open", &shown))?;
    resolve_in(&dir, name, place)
}

/// A [`SaveStore`] on a directory of the file system (see the module docs).
#[derive(Debug, Clone)]
pub struct DirStore {
    dir: PathBuf,
    quota: Quota,
    /// The largest file a save writes or a load reads, bytes.
    max_file: u64,
}

impl DirStore {
    /// A store on `dir` (created if missing) with the default [`Quota`].
    pub fn new(dir: impl Into<PathBuf>) -> Result<DirStore, FileError> {
        Self::with_quota(dir, Quota::default())
    }

    /// A store on `dir` (created if missing) holding at most `quota`. Temporary files left
    /// by a server that was killed during a Save are removed.
    pub fn with_quota(dir: impl Into<PathBuf>, quota: Quota) -> Result<DirStore, FileError> {
        let dir = dir.into();
        let shown = dir.display().to_string();
        std::fs::create_dir_all(&dir).map_err(io("create the save directory", &shown))?;
        let dir = dir
            .canonicalize()
            .map_err(io("open the save directory", &shown))?;
        let removed = simrob_files::remove_stale_temps(&dir);
        if removed > 0 {
            tracing::info!("removed {removed} temporary files left by an interrupted Save");
        }
        Ok(DirStore {
            dir,
            quota,
            max_file: MAX_SAVE_FILE,
        })
    }

    /// The directory, canonical.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path `name` stands for, if it is a plain file name (see the module docs).
    pub fn resolve(&self, name: &str) -> Result<PathBuf, FileError> {
        resolve_in(&self.dir, name, "the save directory")
    }

    /// Files and bytes in the directory, not counting `except`.
    fn usage(&self, except: &Path) -> (usize, u64) {
        let mut files = 0;
        let mut bytes = 0;
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                if e.path() == except {
                    continue;
                }
                if let Ok(m) = e.metadata() {
                    if m.is_file() {
                        files += 1;
                        bytes += m.len();
                    }
                }
            }
        }
        (files, bytes)
    }
}

impl SaveStore for DirStore {
    fn set_quota(&mut self, quota: Quota) {
        self.quota = quota;
    }

    fn set_max_file_bytes(&mut self, bytes: u64) {
        self.max_file = bytes;
    }

    fn save(&mut self, name: &str, contents: &str) -> Result<PathBuf, FileError> {
        let path = self.resolve(name)?;
        let name = name.trim();
        loadable_size_within(name, contents.len() as u64, self.max_file)?;
        let (files, bytes) = self.usage(&path);
        let bytes = bytes + contents.len() as u64;
        if let Err(over) = self.quota.admits(files + 1, bytes) {
            let problem = match over {
                OverQuota::Files => format!(
                    "the save directory already holds {files} files, the most allowed (configuration key savedirectoryfiles)"
                ),
                OverQuota::Bytes => format!(
                    "the save directory would hold {bytes} bytes, more than {} (configuration key savedirectorybytes)",
                    self.quota.max_bytes
                ),
            };
            return Err(FileError::Quota {
                name: name.into(),
                problem,
            });
        }
        simrob_files::write_atomically(&path, contents.as_bytes()).map_err(io("save to", name))?;
        Ok(PathBuf::from(name))
    }

    fn load(&mut self, name: &str) -> Result<String, FileError> {
        let path = self.resolve(name)?;
        read_save_within(&path, name.trim(), self.max_file)
    }
}

/// Refuses a save of `bytes` bytes that Load would not read back (more than
/// [`MAX_SAVE_FILE`]): nothing is written.
pub fn loadable_size(name: &str, bytes: u64) -> Result<(), FileError> {
    loadable_size_within(name, bytes, MAX_SAVE_FILE)
}

/// [`loadable_size`] for a limit of `max` bytes (configuration key `maxsavefilebytes`).
pub fn loadable_size_within(name: &str, bytes: u64, max: u64) -> Result<(), FileError> {
    if bytes > max {
        return Err(FileError::Quota {
            name: name.into(),
            problem: format!(
                "the file would be {bytes} bytes, more than the {max} a Load reads (configuration key maxsavefilebytes); nothing was written"
            ),
        });
    }
    Ok(())
}

/// The text of the save file at `path` (`name` in messages): a regular file of at most
/// [`MAX_SAVE_FILE`] bytes, UTF-8.
pub fn read_save(path: &Path, name: &str) -> Result<String, FileError> {
    read_save_within(path, name, MAX_SAVE_FILE)
}

/// [`read_save`] for a limit of `max` bytes (configuration key `maxsavefilebytes`).
pub fn read_save_within(path: &Path, name: &str, max: u64) -> Result<String, FileError> {
    let content = |problem: String| FileError::Content {
        name: name.into(),
        problem,
    };
    let bytes = simrob_files::read_bounded(path, max).map_err(|e| match e {
        ReadError::Io(source) => io("load", name)(source),
        ReadError::NotAFile => content("not a file".into()),
        ReadError::TooLarge { .. } => content(format!(
            "{e}: raise it with the configuration key maxsavefilebytes"
        )),
    })?;
    String::from_utf8(bytes).map_err(|_| content("the file is not UTF-8 text".into()))
}

/// The largest configuration file [`read_config`] reads, in bytes (64 MiB). Fixed: the file
/// is read before any of its keys, so none of them can set it (a complete file is over
/// ten thousand times smaller).
pub const MAX_CONFIG_FILE: u64 = 64 << 20;

/// Why [`read_config`] gave no configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// The file is missing, not a regular file, larger than [`MAX_CONFIG_FILE`] or not UTF-8.
    #[error("cannot read configuration {file}: {problem}")]
    Read {
        /// The file's path, as given.
        file: String,
        /// What is wrong.
        problem: String,
        /// There is no such file.
        missing: bool,
    },
    /// A key or value of the file is refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// The server configuration in the file at `path` (see [`ServerConfig::from_text`]): what
/// `simrob serve --config`, `simrob run --config`, `simrob send --config` and Python's
/// `World(config=)` read.
pub fn read_config(path: &Path) -> Result<ServerConfig, ConfigFileError> {
    let file = path.display().to_string();
    let unreadable = |problem: String, missing: bool| ConfigFileError::Read {
        file: file.clone(),
        problem,
        missing,
    };
    let bytes = simrob_files::read_bounded(path, MAX_CONFIG_FILE).map_err(|e| {
        let missing = matches!(&e, ReadError::Io(io) if io.kind() == std::io::ErrorKind::NotFound);
        let fixed = if matches!(e, ReadError::TooLarge { .. }) {
            " (a configuration file's own limit, which no key sets)"
        } else {
            ""
        };
        unreadable(format!("{e}{fixed}"), missing)
    })?;
    let text = String::from_utf8(bytes).map_err(|_| unreadable("not UTF-8 text".into(), false))?;
    Ok(ServerConfig::from_text(&file, &text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("simrob-files-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn names_are_plain_file_names_in_the_directory() {
        let d = temp_dir("resolve");
        let store = DirStore::new(&d).unwrap();
        let root = store.dir().to_path_buf();
        assert_eq!(store.resolve("a.xml").unwrap(), root.join("a.xml"));
        assert_eq!(store.resolve(" a.xml ").unwrap(), root.join("a.xml"));
        for bad in [
            "../a.xml",
            "runs/../../a.xml",
            "./runs/a.xml",
            "/etc/passwd",
            root.join("b.xml").to_str().unwrap(),
            "",
            ".",
            ".hidden",
            "a\u{1b}[2J.xml",
            "/home/current_user/simulation.xml",
        ] {
            let e = store.resolve(bad).unwrap_err().to_string();
            // The directory is never revealed (unless the name given holds it).
            let root = root.to_str().unwrap();
            assert!(bad.contains(root) || !e.contains(root), "{bad}: {e}");
        }
        assert!(store.resolve(&"x".repeat(300)).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_name_cannot_make_directories() {
        // Once, one name created a thousand nested directories.
        let d = temp_dir("nested");
        let mut store = DirStore::new(&d).unwrap();
        let deep = "a/".repeat(1000) + "x.xml";
        assert!(store.save(&deep, "x").is_err());
        assert!(!store.dir().join("a").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_configured_largest_save_file_bounds_saves_and_loads() {
        let d = temp_dir("maxfile");
        let mut store = DirStore::new(&d).unwrap();
        let text = "x".repeat(200);
        store.save("big.xml", &text).unwrap();
        store.set_max_file_bytes(100);
        let e = store.save("other.xml", &text).unwrap_err().to_string();
        assert!(
            e.contains("more than the 100 a Load reads (configuration key maxsavefilebytes)"),
            "{e}"
        );
        assert!(!store.dir().join("other.xml").exists());
        assert!(store.load("big.xml").is_err());
        store.set_max_file_bytes(200);
        assert_eq!(store.load("big.xml").unwrap(), text);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn saves_past_the_quota_are_refused_and_write_nothing() {
        let d = temp_dir("quota");
        let mut store = DirStore::with_quota(
            &d,
            Quota {
                max_bytes: 1000,
                max_files: 3,
            },
        )
        .unwrap();
        for i in 0..3 {
            store.save(&format!("s{i}.xml"), &"x".repeat(157)).unwrap();
        }
        // Replacing a file counts its new size, not both.
        store.save("s0.xml", &"y".repeat(300)).unwrap();
        let e = store.save("s3.xml", "x").unwrap_err().to_string();
        assert!(e.contains("savedirectoryfiles"), "{e}");
        let e = store
            .save("s1.xml", &"z".repeat(900))
            .unwrap_err()
            .to_string();
        assert!(e.contains("savedirectorybytes"), "{e}");
        assert_eq!(store.load("s1.xml").unwrap(), "x".repeat(157));
        assert_eq!(std::fs::read_dir(store.dir()).unwrap().count(), 3);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_save_that_load_would_refuse_is_refused_and_writes_nothing() {
        assert!(loadable_size("a.xml", MAX_SAVE_FILE).is_ok());
        let e = loadable_size("a.xml", MAX_SAVE_FILE + 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "cannot save a.xml: the file would be {} bytes, more than the {MAX_SAVE_FILE} a Load reads (configuration key maxsavefilebytes); nothing was written",
                MAX_SAVE_FILE + 1
            )
        );
        let d = temp_dir("too-large");
        let mut store = DirStore::with_quota(
            &d,
            Quota {
                max_bytes: 1 << 30,
                max_files: 3,
            },
        )
        .unwrap();
        let huge = "x".repeat(MAX_SAVE_FILE as usize + 1);
        assert!(store.save("big.xml", &huge).is_err());
        assert!(!store.dir().join("big.xml").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn temporary_files_of_an_interrupted_save_are_removed_at_start() {
        let d = temp_dir("stale");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(".simrob-tmp-123-4"), "half a save").unwrap();
        std::fs::write(d.join(".run.xml.tmp-99-7"), "half a save").unwrap();
        std::fs::write(d.join("keep.xml"), "a save").unwrap();
        let store = DirStore::new(&d).unwrap();
        let mut names: Vec<_> = std::fs::read_dir(store.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["keep.xml"]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn symlinks_cannot_lead_out() {
        let d = temp_dir("symlink");
        let store = DirStore::new(&d).unwrap();
        let outside = temp_dir("outside");
        std::fs::create_dir_all(&outside).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, store.dir().join("out")).unwrap();
            assert!(store.resolve("out/x.xml").is_err());
            std::fs::write(outside.join("x.xml"), "secret").unwrap();
            std::os::unix::fs::symlink(outside.join("x.xml"), store.dir().join("x.xml")).unwrap();
            assert!(store.resolve("x.xml").is_err());
        }
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::remove_dir_all(&outside);
    }

    #[test]
    fn load_refuses_fifos_directories_and_huge_files_at_once() {
        let d = temp_dir("special");
        let mut store = DirStore::new(&d).unwrap();
        // A FIFO would block a reader until someone wrote to it.
        let fifo = store.dir().join("pipe.xml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = store.load("pipe.xml").unwrap_err().to_string();
            assert!(e.contains("not a file"), "{e}");
        }
        std::fs::create_dir(store.dir().join("dir.xml")).unwrap();
        let e = store.load("dir.xml").unwrap_err().to_string();
        assert!(e.contains("not a file"), "{e}");
        // Sparse: 10 GB on paper, nothing on disk, nothing read.
        std::fs::File::create(store.dir().join("huge.xml"))
            .unwrap()
            .set_len(10_000_000_000)
            .unwrap();
        let e = store.load("huge.xml").unwrap_err().to_string();
        assert!(
            e.contains("10000000000 bytes") && e.contains(&MAX_SAVE_FILE.to_string()),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn save_is_atomic_and_load_reads_back() {
        let d = temp_dir("save");
        let mut store = DirStore::new(&d).unwrap();
        store.save("run.xml", "first").unwrap();
        assert_eq!(
            store.save("run.xml", "second").unwrap(),
            PathBuf::from("run.xml")
        );
        assert_eq!(store.load("run.xml").unwrap(), "second");
        // No temporary files are left behind.
        let names: Vec<_> = std::fs::read_dir(store.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(store
            .load("missing.xml")
            .unwrap_err()
            .to_string()
            .contains("missing.xml"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_configuration_file_is_read_within_bounds_or_refused_clearly() {
        let d = temp_dir("config");
        std::fs::create_dir_all(&d).unwrap();
        let good = d.join("simrob.toml");
        std::fs::write(&good, "maxvelocity = 20\n").unwrap();
        assert_eq!(read_config(&good).unwrap().limits.max_velocity, 20.0);
        let e = read_config(&d.join("none.toml")).unwrap_err();
        assert!(
            matches!(e, ConfigFileError::Read { missing: true, .. }),
            "{e}"
        );
        assert!(
            e.to_string().starts_with("cannot read configuration "),
            "{e}"
        );
        let e = read_config(&d).unwrap_err();
        assert!(
            matches!(e, ConfigFileError::Read { missing: false, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let latin1 = d.join("latin1.data");
        std::fs::write(&latin1, b"servername caf\xe9\n").unwrap();
        let e = read_config(&latin1).unwrap_err();
        assert!(e.to_string().ends_with("not UTF-8 text"), "{e}");
        let wrong = d.join("wrong.toml");
        std::fs::write(&wrong, "nosuchkey = 1\n").unwrap();
        let e = read_config(&wrong).unwrap_err();
        assert!(matches!(e, ConfigFileError::Config(_)), "{e}");
        assert!(e.to_string().contains("nosuchkey"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
