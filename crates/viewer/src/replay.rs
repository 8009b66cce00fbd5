//! Replaying a [`Recording`] in the viewer.
//!
//! A player thread publishes the recording's frames to the viewer at the pace of the recorded
//! simulated time (each frame's `time`) multiplied by the speed; when it falls behind it skips
//! to the frame that is due. The page's replay controls are the commands of the
//! [`Backend`] (`{"cmd":"play"}`, `{"cmd":"pause"}`, `{"cmd":"seek","value":INDEX}` with a
//! frame index, `{"cmd":"speed","value":F}` with F > 0); a program uses the
//! [`ReplayHandle`] instead. Every frame message carries
//! `"replay":{"count":N,"index":I,"playing":B,"speed":F,"waiting":B,"ended":B,"start":S,"end":S}`
//! (in the meta of its binary poses message, see [`Frame::encode`]) so the page can show where
//! it is.
//!
//! A replay served to browsers ([`serve_replay`], [`serve_file`]) holds its first frame until
//! a page connects: Play before that only arms it (`"waiting":true`), so nobody misses the
//! start. The status also names the simulated times of the first and last frames
//! (`"start"`, `"end"`) for the page's time slider, and `"ended"` once a finished recording
//! has played to its last frame.
//!
//! The player stops on the last frame (paused); Play from there starts again at frame 0.
//! Frames whose time goes backwards (a re-initialized simulation) follow at once. A player
//! that follows its file (a recording still being written, [`serve_file`]) waits on the last
//! frame for the next ones instead, checking the file every [`FOLLOW_POLL`].
//!
//! ```no_run
//! # fn main() -> std::io::Result<()> {
//! use simrob_viewer::record::Recording;
//! let recording = Recording::open(std::path::Path::new("run.simrec"))?;
//! let (viewer, player) =
//!     simrob_viewer::replay::serve_replay(recording, "127.0.0.1:8080".parse().unwrap(), "run")?;
//! println!("viewer on http://{}", viewer.addr());
//! player.play();
//! # Ok(())
//! # }
//! ```

use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::record::{Recording, RecordingReader};
use crate::{responses_channel, Backend, CommandError, Frame, Publisher, Viewer};

/// The longest wait between two frames, whatever the recorded times say.
const LONGEST_GAP: f64 = 3600.0;
/// The fastest and slowest speeds accepted.
const SPEEDS: (f64, f64) = (1e-3, 1e4);
/// How often a following player looks for new frames.
pub const FOLLOW_POLL: Duration = Duration::from_millis(250);

/// The frames a player shows: a recording in memory, or a file read on demand.
pub trait FrameSource: Send + 'static {
    /// Frames available now.
    fn count(&self) -> usize;
    /// Frame `index`, or `None` if it cannot be read.
    fn frame(&mut self, index: usize) -> Option<Frame>;
    /// Simulated time of frame `index`.
    fn time(&mut self, index: usize) -> Option<f64> {
        self.frame(index).map(|f| f.time)
    }
    /// Looks for frames appended since; true if any came.
    fn refresh(&mut self) -> bool {
        false
    }
    /// True when no more frames will come.
    fn finished(&self) -> bool {
        true
    }
}

impl FrameSource for Vec<Frame> {
    fn count(&self) -> usize {
        self.len()
    }
    fn frame(&mut self, index: usize) -> Option<Frame> {
        self.get(index).cloned()
    }
    fn time(&mut self, index: usize) -> Option<f64> {
        self.get(index).map(|f| f.time)
    }
}

impl FrameSource for RecordingReader {
    fn count(&self) -> usize {
        self.len()
    }
    fn frame(&mut self, index: usize) -> Option<Frame> {
        RecordingReader::frame(self, index)
            .map_err(|e| tracing::warn!("replay: {e}"))
            .ok()
    }
    fn refresh(&mut self) -> bool {
        RecordingReader::refresh(self)
            .map_err(|e| tracing::warn!("replay: {e}"))
            .is_ok_and(|n| n > 0)
    }
    fn finished(&self) -> bool {
        self.is_finished()
    }
}

/// Where the player is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReplayStatus {
    /// Frames in the recording.
    pub count: usize,
    /// The frame shown, 0-based.
    pub index: usize,
    pub playing: bool,
    /// Recorded simulated seconds per wall second.
    pub speed: f64,
    /// Playing, but held on the current frame until a page connects.
    pub waiting: bool,
    /// Stopped on the last frame of a recording that will not grow.
    pub ended: bool,
    /// Simulated time of the first frame, s.
    pub start: f64,
    /// Simulated time of the last frame, s.
    pub end: f64,
}

struct State {
    index: usize,
    playing: bool,
    speed: f64,
    /// When the frame at `index` was due.
    shown_at: Instant,
    stop: bool,
    /// A page is (or has been) connected; until then playing holds the current frame.
    watched: bool,
}

struct Shared {
    frames: Mutex<Box<dyn FrameSource>>,
    follow: bool,
    state: Mutex<State>,
    wake: Condvar,
    out: OnceLock<Publisher>,
    /// (frame count, first time, last time), refreshed when the count changes.
    ends: Mutex<(usize, f64, f64)>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent whatever panicked while holding it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The frames (always locked after the state).
    fn source(&self) -> MutexGuard<'_, Box<dyn FrameSource>> {
        self.frames.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count(&self) -> usize {
        self.source().count()
    }

    fn status(&self, st: &State) -> ReplayStatus {
        let (count, start, end, finished) = {
            let mut source = self.source();
            let count = source.count();
            let mut ends = self.ends.lock().unwrap_or_else(|p| p.into_inner());
            if ends.0 != count && count > 0 {
                let start = source.time(0).unwrap_or(0.0);
                let end = source.time(count - 1).unwrap_or(start);
                *ends = (count, start, end);
            }
            (count, ends.1, ends.2, source.finished())
        };
        ReplayStatus {
            count,
            index: st.index,
            playing: st.playing,
            speed: st.speed,
            waiting: st.playing && !st.watched,
            ended: !st.playing && finished && st.index + 1 >= count,
            start,
            end,
        }
    }

    /// A page connected: a replay waiting for one starts now.
    fn connected(&self) {
        let mut st = self.lock();
        if !st.watched {
            st.watched = true;
            st.shown_at = Instant::now();
            self.changed(&st);
        }
    }

    /// Publishes the current frame with the player's status.
    fn publish(&self, st: &State) {
        let Some(out) = self.out.get() else {
            return;
        };
        let Some(frame) = self.source().frame(st.index) else {
            return;
        };
        crate::publish_with(out, &frame, Some(&self.status(st)));
    }

    /// Wall time from frame `i` to frame `i + 1` at `speed`.
    fn gap(&self, i: usize, speed: f64) -> Duration {
        let mut source = self.source();
        let (Some(a), Some(b)) = (source.time(i), source.time(i + 1)) else {
            return Duration::ZERO;
        };
        let secs = ((b - a) / speed).clamp(0.0, LONGEST_GAP);
        Duration::try_from_secs_f64(secs).unwrap_or(Duration::ZERO)
    }

    fn changed(&self, st: &State) {
        self.publish(st);
        self.wake.notify_all();
    }

    fn play(&self) {
        let mut st = self.lock();
        if st.index + 1 >= self.count() && !self.follow {
            st.index = 0;
        }
        st.playing = true;
        st.shown_at = Instant::now();
        self.changed(&st);
    }

    fn pause(&self) {
        let mut st = self.lock();
        st.playing = false;
        self.changed(&st);
    }

    fn seek(&self, index: usize) {
        let mut st = self.lock();
        st.index = index.min(self.count().saturating_sub(1));
        st.shown_at = Instant::now();
        self.changed(&st);
    }

    fn set_speed(&self, speed: f64) -> Result<(), BadSpeed> {
        if !speed.is_finite() || speed <= 0.0 {
            return Err(BadSpeed(speed));
        }
        let mut st = self.lock();
        st.speed = speed.clamp(SPEEDS.0, SPEEDS.1);
        st.shown_at = Instant::now();
        self.changed(&st);
        Ok(())
    }

    /// The player thread: advances while playing, sleeps otherwise.
    fn run(&self) {
        let mut st = self.lock();
        loop {
            if st.stop {
                return;
            }
            if self.follow && (!st.playing || !st.watched || st.index + 1 >= self.count()) {
                // Waiting for the writer: look at the file now and then.
                let grew = self.source().refresh();
                if grew {
                    self.publish(&st);
                    continue;
                }
                st = self
                    .wake
                    .wait_timeout(st, FOLLOW_POLL)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0);
                if st.playing {
                    st.shown_at = Instant::now();
                }
                continue;
            }
            if !st.playing || !st.watched {
                st = self.wake.wait(st).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            if st.index + 1 >= self.count() {
                st.playing = false;
                self.publish(&st);
                continue;
            }
            let now = Instant::now();
            let due = st.shown_at + self.gap(st.index, st.speed);
            if due > now {
                st = self
                    .wake
                    .wait_timeout(st, due - now)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0);
                continue;
            }
            // Every frame that is due; only the last is shown.
            let (mut index, mut at) = (st.index + 1, due);
            let count = self.count();
            while index + 1 < count {
                let next = at + self.gap(index, st.speed);
                if next > now {
                    break;
                }
                index += 1;
                at = next;
            }
            st.index = index;
            st.shown_at = if now.saturating_duration_since(at) > Duration::from_secs(1) {
                now
            } else {
                at
            };
            self.publish(&st);
        }
    }
}

/// Controls a replay; dropping it stops the player thread (the viewer keeps serving the last
/// frame until it is dropped too).
pub struct ReplayHandle {
    shared: Arc<Shared>,
}

impl ReplayHandle {
    /// A player of `recording`, paused at frame 0 at speed 1. It publishes nothing until
    /// [`ReplayHandle::attach`].
    pub fn new(recording: Recording) -> ReplayHandle {
        ReplayHandle::from_source(Box::new(recording.frames), false)
    }

    /// A player of any [`FrameSource`]; with `follow`, it waits on the last frame for more
    /// (a file still being written) rather than stopping.
    pub fn from_source(source: Box<dyn FrameSource>, follow: bool) -> ReplayHandle {
        ReplayHandle {
            shared: Arc::new(Shared {
                frames: Mutex::new(source),
                follow,
                state: Mutex::new(State {
                    index: 0,
                    playing: false,
                    speed: 1.0,
                    shown_at: Instant::now(),
                    stop: false,
                    watched: true,
                }),
                wake: Condvar::new(),
                out: OnceLock::new(),
                ends: Mutex::new((0, 0.0, 0.0)),
            }),
        }
    }

    /// The commands of the page (give it to [`Viewer::start`]).
    pub fn backend(&self) -> Arc<dyn Backend> {
        Arc::new(ReplayBackend {
            shared: self.shared.clone(),
        })
    }

    /// Starts publishing into `publisher` (see [`Viewer::publisher`]): the current frame at
    /// once, then the player thread. Only the first call has an effect.
    pub fn attach(&self, publisher: Publisher) -> std::io::Result<()> {
        if self.shared.out.set(publisher).is_err() {
            return Ok(());
        }
        self.shared.publish(&self.shared.lock());
        let shared = self.shared.clone();
        std::thread::Builder::new()
            .name("replay".into())
            .spawn(move || shared.run())?;
        Ok(())
    }

    pub fn status(&self) -> ReplayStatus {
        self.shared.status(&self.shared.lock())
    }

    /// Holds playback on the current frame until a page connects (see [`Backend::connected`]);
    /// [`serve_replay`] and [`serve_file`] do this for their players.
    pub fn wait_for_page(&self) {
        self.shared.lock().watched = false;
    }

    /// The frame shown.
    pub fn frame(&self) -> Option<Frame> {
        let index = self.shared.lock().index;
        self.shared.source().frame(index)
    }

    /// Plays from the current frame (from frame 0 when on the last one).
    pub fn play(&self) {
        self.shared.play();
    }

    pub fn pause(&self) {
        self.shared.pause();
    }

    /// Shows frame `index` (clamped to the last frame); a playing replay goes on from there.
    /// The frame is published before this returns.
    pub fn seek(&self, index: usize) {
        self.shared.seek(index);
    }

    /// Recorded seconds per wall second; must be finite and greater than 0.
    pub fn set_speed(&self, speed: f64) -> Result<(), BadSpeed> {
        self.shared.set_speed(speed)
    }
}

/// A replay speed that is not a finite number greater than 0.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("the speed must be a number greater than 0")]
pub struct BadSpeed(pub f64);

impl Drop for ReplayHandle {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
    }
}

/// The page's replay controls.
struct ReplayBackend {
    shared: Arc<Shared>,
}

impl Backend for ReplayBackend {
    fn connected(&self) {
        self.shared.connected();
    }

    fn command(&self, cmd: &serde_json::Value) -> Result<(), CommandError> {
        match crate::command::name(cmd)? {
            "play" => self.shared.play(),
            "pause" => self.shared.pause(),
            "seek" => {
                let index =
                    cmd.get("value")
                        .and_then(|v| v.as_u64())
                        .ok_or(CommandError::Usage(
                            "seek needs \"value\": a frame index (0, 1, …)",
                        ))?;
                self.shared
                    .seek(usize::try_from(index).unwrap_or(usize::MAX));
            }
            "speed" => {
                let speed =
                    cmd.get("value")
                        .and_then(|v| v.as_f64())
                        .ok_or(CommandError::Usage(
                            "speed needs \"value\": a number greater than 0",
                        ))?;
                self.shared.set_speed(speed)?;
            }
            other => {
                return Err(CommandError::NotInReplay {
                    name: other.to_string(),
                    takes: "",
                })
            }
        }
        Ok(())
    }
}

/// Serves the viewer over `recording` on `bind` (port 0 picks a free one), titled `name`, in
/// replay mode, paused at frame 0: call [`ReplayHandle::play`] to start (playback begins when
/// the first page connects). Refuses a recording
/// without frames.
pub fn serve_replay(
    recording: Recording,
    bind: SocketAddr,
    name: &str,
) -> std::io::Result<(Viewer, ReplayHandle)> {
    if recording.frames.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the recording has no frames",
        ));
    }
    serve(ReplayHandle::new(recording), bind, name)
}

/// Serves the viewer over a recording file read on demand (see [`RecordingReader`]: any
/// length opens at once). A file its writer has not finished is followed: the player waits on
/// the last frame for the next ones. Refuses a finished recording without frames.
pub fn serve_file(
    reader: RecordingReader,
    bind: SocketAddr,
    name: &str,
) -> std::io::Result<(Viewer, ReplayHandle)> {
    if reader.is_empty() && reader.is_finished() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the recording has no frames",
        ));
    }
    let follow = !reader.is_finished();
    serve(
        ReplayHandle::from_source(Box::new(reader), follow),
        bind,
        name,
    )
}

fn serve(
    handle: ReplayHandle,
    bind: SocketAddr,
    name: &str,
) -> std::io::Result<(Viewer, ReplayHandle)> {
    handle.wait_for_page();
    let viewer = Viewer::start(bind, handle.backend(), responses_channel(), name, "replay")?;
    handle.attach(viewer.publisher())?;
    Ok((viewer, handle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Header;
    use tokio::sync::watch;

    fn recording(n: u64, dt: f64) -> Recording {
        Recording {
            header: Header::now("test"),
            frames: (0..n)
                .map(|i| Frame {
                    iteration: i,
                    time: i as f64 * dt,
                    ..Frame::default()
                })
                .collect(),
        }
    }

    fn last_message(rx: &watch::Receiver<Arc<crate::Encoded>>) -> serde_json::Value {
        crate::frame::wire_meta(&rx.borrow().poses).unwrap()
    }

    #[test]
    fn plays_at_the_recorded_pace_and_stops_on_the_last_frame() {
        let handle = ReplayHandle::new(recording(21, 0.01));
        let (tx, rx) = watch::channel(Arc::new(crate::Encoded::default()));
        handle.attach(tx).unwrap();
        let m = last_message(&rx);
        assert_eq!(m["type"], "frame");
        assert_eq!(m["iteration"], 0);
        assert_eq!(m["replay"]["count"], 21);
        assert_eq!(m["replay"]["playing"], false);
        // 0.2 simulated seconds at speed 4: 50 ms.
        handle.set_speed(4.0).unwrap();
        let started = Instant::now();
        handle.play();
        while handle.status().playing {
            assert!(started.elapsed() < Duration::from_secs(5), "never ended");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(started.elapsed() >= Duration::from_millis(45));
        assert_eq!(handle.status().index, 20);
        let m = last_message(&rx);
        assert_eq!(
            (m["iteration"].as_u64(), m["replay"]["playing"].as_bool()),
            (Some(20), Some(false))
        );
    }

    #[test]
    fn a_file_being_written_is_followed_to_its_newest_frame() {
        use crate::record::{RecordingReader, Writer};
        let dir = std::env::temp_dir().join(format!("simrob-follow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("live.simrec");
        let frame = |i: u64| Frame {
            iteration: i,
            time: i as f64 * 0.001,
            ..Frame::default()
        };
        let mut writer = Writer::create(&path, "live").unwrap();
        for i in 0..5 {
            writer.write_frame(&frame(i)).unwrap();
        }
        writer.flush().unwrap();
        let reader = RecordingReader::open(&path).unwrap();
        assert!(!reader.is_finished());
        let handle = ReplayHandle::from_source(Box::new(reader), true);
        let (tx, _rx) = watch::channel(Arc::new(crate::Encoded::default()));
        handle.attach(tx).unwrap();
        handle.play();
        for i in 5..40 {
            writer.write_frame(&frame(i)).unwrap();
        }
        writer.flush().unwrap();
        // The player picks the new frames up and plays on to the newest.
        let started = Instant::now();
        while handle.status().index < 39 {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "stuck at {:?}",
                handle.status()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let s = handle.status();
        assert_eq!((s.count, s.playing), (40, true), "still following");
        let mut check = RecordingReader::open(&path).unwrap();
        assert_eq!(
            check
                .frame(39)
                .map(|f| f.iteration)
                .map_err(|e| e.to_string()),
            Ok(39)
        );
        assert_eq!(handle.frame().map(|f| f.iteration), Some(39));
        drop(handle);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_served_replay_waits_for_a_page_and_reports_its_ends() {
        let handle = ReplayHandle::new(recording(3, 0.5));
        handle.wait_for_page();
        let (tx, rx) = watch::channel(Arc::new(crate::Encoded::default()));
        handle.attach(tx).unwrap();
        handle.play();
        let status = handle.status();
        assert!(
            status.playing && status.waiting && !status.ended,
            "{status:?}"
        );
        assert_eq!((status.index, status.start, status.end), (0, 0.0, 1.0));
        assert_eq!(last_message(&rx)["replay"]["waiting"], true);
        handle.backend().connected();
        assert!(!handle.status().waiting);
        assert_eq!(last_message(&rx)["replay"]["waiting"], false);
        handle.pause();
        handle.seek(2);
        let status = handle.status();
        assert!(status.ended && !status.playing, "{status:?}");
        assert_eq!(last_message(&rx)["replay"]["ended"], true);
    }

    #[test]
    fn the_page_commands_seek_pause_and_refuse_others() {
        let handle = ReplayHandle::new(recording(10, 1.0));
        let (tx, rx) = watch::channel(Arc::new(crate::Encoded::default()));
        handle.attach(tx).unwrap();
        let backend = handle.backend();
        let cmd = |s: &str| backend.command(&serde_json::from_str(s).unwrap());
        cmd(r#"{"cmd":"seek","value":7}"#).unwrap();
        assert_eq!(last_message(&rx)["iteration"], 7);
        cmd(r#"{"cmd":"seek","value":70}"#).unwrap();
        assert_eq!(handle.status().index, 9);
        cmd(r#"{"cmd":"play"}"#).unwrap();
        assert_eq!(handle.status().index, 0, "play on the last frame restarts");
        cmd(r#"{"cmd":"pause"}"#).unwrap();
        assert!(!handle.status().playing);
        cmd(r#"{"cmd":"speed","value":2.5}"#).unwrap();
        assert_eq!(last_message(&rx)["replay"]["speed"], 2.5);
        assert!(cmd(r#"{"cmd":"speed","value":0}"#).is_err());
        assert!(cmd(r#"{"cmd":"seek","value":-1}"#).is_err());
        assert_eq!(
            cmd(r#"{"cmd":"initialize"}"#).unwrap_err().to_string(),
            "\"initialize\" is not available in a replay"
        );
    }
}
