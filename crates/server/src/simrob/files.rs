//! Save/Load files, confined to one directory, written atomically.

use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest save file Load reads (bytes).
pub const MAX_SAVE_FILE: u64 = 512 * 1024 * 1024;

/// Why a save file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The name is not acceptable (outside the directory, empty, NUL…).
    #[error("{0}")]
    Name(String),
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot load {path}: {problem}")]
    Content { path: PathBuf, problem: String },
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> FileError + 'a {
    move |source| FileError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Where the server's Save and Load go. The shell provides it; tests may too.
pub trait SaveStore: Send {
    /// Writes `contents` under `name`, atomically (readers see the old file or the new one).
    fn save(&mut self, name: &str, contents: &str) -> Result<PathBuf, FileError>;
    /// Reads the file `name`.
    fn load(&mut self, name: &str) -> Result<String, FileError>;
}

/// A [`SaveStore`] on a directory of the file system. A name is resolved inside the directory;
/// names that leave it (`..`, absolute paths elsewhere, symbolic links pointing out) are refused.
#[derive(Debug, Clone)]
pub struct DirStore {
    dir: PathBuf,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl DirStore {
    /// A store on `dir` (created if missing).
    pub fn new(dir: impl Into<PathBuf>) -> Result<DirStore, FileError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(io("create the save directory", &dir))?;
        let dir = dir
            .canonicalize()
            .map_err(io("open the save directory", &dir))?;
        Ok(DirStore { dir })
    }

    /// The directory, canonical.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path `name` stands for, if it stays inside the directory.
    pub fn resolve(&self, name: &str) -> Result<PathBuf, FileError> {
        let refuse = || {
            FileError::Name(format!(
                "file {name:?} is outside the save directory {} (use a name inside it, e.g. \"run1.xml\")",
                self.dir.display()
            ))
        };
        let trimmed = name.trim();
        if trimmed.is_empty() {
            return Err(FileError::Name("a file name is needed".into()));
        }
        if trimmed.contains('\0') {
            return Err(FileError::Name(format!(
                "file {name:?} contains a NUL character"
            )));
        }
        let path = Path::new(trimmed);
        let relative: PathBuf = if path.is_absolute() {
            path.strip_prefix(&self.dir)
                .map_err(|_| refuse())?
                .to_path_buf()
        } else {
            path.to_path_buf()
        };
        let mut clean = PathBuf::new();
        for c in relative.components() {
            match c {
                Component::Normal(part) => clean.push(part),
                Component::CurDir => {}
                _ => return Err(refuse()),
            }
        }
        if clean.as_os_str().is_empty() {
            return Err(FileError::Name(format!(
                "{name:?} names the save directory itself, not a file"
            )));
        }
        let full = self.dir.join(&clean);
        // Symbolic links may not lead out: the existing part of the path must stay inside.
        let mut existing = full.clone();
        while !existing.exists() {
            if !existing.pop() {
                break;
            }
        }
        if let Ok(real) = existing.canonicalize() {
            if !real.starts_with(&self.dir) {
                return Err(refuse());
            }
        }
        Ok(full)
    }
}

impl SaveStore for DirStore {
    fn save(&mut self, name: &str, contents: &str) -> Result<PathBuf, FileError> {
        let path = self.resolve(name)?;
        let parent = path.parent().unwrap_or(&self.dir).to_path_buf();
        std::fs::create_dir_all(&parent).map_err(io("create", &parent))?;
        let file_name = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| "save".into());
        let temp = parent.join(format!(
            ".{file_name}.tmp-{}-{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&temp)?;
            f.write_all(contents.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&temp, &path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            io("save to", &path)(e)
        })?;
        Ok(path)
    }

    fn load(&mut self, name: &str) -> Result<String, FileError> {
        let path = self.resolve(name)?;
        let content = |problem: String| FileError::Content {
            path: path.clone(),
            problem,
        };
        let meta = std::fs::metadata(&path).map_err(io("load", &path))?;
        if !meta.is_file() {
            return Err(content("not a file".into()));
        }
        if meta.len() > MAX_SAVE_FILE {
            return Err(content(format!(
                "{} bytes is larger than the {MAX_SAVE_FILE}-byte limit",
                meta.len()
            )));
        }
        let bytes = std::fs::read(&path).map_err(io("load", &path))?;
        String::from_utf8(bytes).map_err(|_| content("the file is not UTF-8 text".into()))
    }
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
    fn names_stay_inside_the_directory() {
        let d = temp_dir("resolve");
        let store = DirStore::new(&d).unwrap();
        let root = store.dir().to_path_buf();
        assert_eq!(store.resolve("a.xml").unwrap(), root.join("a.xml"));
        assert_eq!(
            store.resolve("./runs/a.xml").unwrap(),
            root.join("runs/a.xml")
        );
        assert_eq!(
            store.resolve(root.join("b.xml").to_str().unwrap()).unwrap(),
            root.join("b.xml")
        );
        for bad in [
            "../a.xml",
            "runs/../../a.xml",
            "/etc/passwd",
            "",
            ".",
            "/home/current_user/simulation.xml",
        ] {
            assert!(store.resolve(bad).is_err(), "{bad}");
        }
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
        }
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::remove_dir_all(&outside);
    }

    #[test]
    fn save_is_atomic_and_load_reads_back() {
        let d = temp_dir("save");
        let mut store = DirStore::new(&d).unwrap();
        store.save("run.xml", "first").unwrap();
        store.save("run.xml", "second").unwrap();
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
}
