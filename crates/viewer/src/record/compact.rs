//! The compact recording's writer in the shell: the codec is `simrob_record::simrec`'s; this
//! stamps the start time, creates the file and logs an error on drop.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use simrob_record::simrec;

use super::{header_now, VERSION};
use crate::Frame;

/// Writes a version-2 recording ([`simrec::Writer`]): [`Writer::write_frame`] per iteration;
/// blocks are closed every [`super::BLOCK_FRAMES`] frames or by [`Writer::flush`];
/// [`Writer::finish`] (or dropping the writer) closes the last block and marks the file
/// finished.
pub struct Writer<W: Write> {
    inner: simrec::Writer<W>,
}

impl Writer<File> {
    /// Creates (or truncates) `path` and writes the header.
    pub fn create(path: &Path, source: &str) -> std::io::Result<Writer<File>> {
        Writer::new(File::create(path)?, source)
    }
}

impl<W: Write> Writer<W> {
    /// Writes the header of a recording of `source`, starting now, to `out`.
    pub fn new(out: W, source: &str) -> std::io::Result<Writer<W>> {
        let mut header = header_now(source);
        header.version = VERSION;
        Ok(Writer {
            inner: simrec::Writer::new(out, &header)?,
        })
    }

    /// Appends one frame (written out when its block closes).
    pub fn write_frame(&mut self, frame: &Frame) -> std::io::Result<()> {
        self.inner.write_frame(frame)
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.inner.frames()
    }

    /// Closes the current block (if it has frames) and flushes it to the file.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }

    /// Closes the last block and marks the recording finished.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.inner.close()
    }
}

impl<W: Write> Drop for Writer<W> {
    fn drop(&mut self) {
        if let Err(e) = self.inner.close() {
            tracing::error!("recording not closed: {e}");
        }
    }
}
