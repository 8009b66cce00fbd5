//! Replaying a [`Recording`] in the 3D viewer, with the one replay player
//! ([`crate::player`]).
//!
//! The player shows the recording's frames at the pace of the recorded simulated time
//! (each frame's `time`) multiplied by the speed; when it falls behind it skips to the frame
//! that is due. The page's replay controls are the player's commands (`play`, `pause`,
//! `{"cmd":"step","value":N}`, `{"cmd":"seek","time":S}` or `{"cmd":"seek","value":INDEX}`,
//! `{"cmd":"speed","value":F}`, see [`crate::player::Command`]); a program uses the
//! [`ReplayHandle`] instead. Every frame message carries
//! `"replay":{"count":N,"index":I,"playing":B,"speed":F,"waiting":B,"ended":B,"start":S,"end":S}`
//! (in the meta of its binary poses message, see [`Frame::encode`](crate::FrameView::encode))
//! so the page can show where it is.
//!
//! A replay served to browsers ([`serve_replay`], [`serve_file`]) holds its first frame until
//! a page connects: Play before that only arms it (`"waiting":true`), so nobody misses the
//! start. The status also names the simulated times of the first and last frames
//! (`"start"`, `"end"`) for the page's time slider, and `"ended"` once a finished recording
//! has played to its last frame.
//!
//! The player stops on the last frame (paused); Play from there starts again at frame 0.
//! Frames whose time goes backwards (a re-initialized simulation) follow at once: the
//! player paces by a playback time that never goes back (the recorded time, shifted after
//! each such jump, and after any gap longer than an hour). A player that follows its file (a
//! recording still being written, [`serve_file`]) waits on the last frame for the next ones
//! instead, checking the file every [`FOLLOW_POLL`].
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
use std::sync::Arc;

use serde::Serialize;

pub use crate::command::BadSpeed;
pub use crate::player::FOLLOW_POLL;
use crate::player::{wall_clock, Clock, Command, Controls, Player, Reel, Status};
use crate::record::{Recording, RecordingReader};
use crate::{responses_channel, Backend, Frame, Publisher, Viewer};

/// The longest wait between two frames, whatever the recorded times say.
const LONGEST_GAP: f64 = 3600.0;

/// The frames a player shows: a recording in memory, or a file read on demand.
pub trait FrameSource: Send + 'static {
    /// Frames available now.
    fn count(&self) -> usize;
    /// Frame `index`, or why it cannot be read (a damaged file, one replaced or cut short).
    fn frame(&mut self, index: usize) -> std::io::Result<Frame>;
    /// Simulated time of frame `index`.
    fn time(&mut self, index: usize) -> std::io::Result<f64> {
        self.frame(index).map(|f| f.time)
    }
    /// Looks for frames appended since; true if any came, an error if what was appended
    /// cannot be read.
    fn refresh(&mut self) -> std::io::Result<bool> {
        Ok(false)
    }
    /// True when no more frames will come.
    fn finished(&self) -> bool {
        true
    }
}

fn no_frame(index: usize, count: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!("frame {index}: the recording has {count} frames"),
    )
}

impl FrameSource for Vec<Frame> {
    fn count(&self) -> usize {
        self.len()
    }
    fn frame(&mut self, index: usize) -> std::io::Result<Frame> {
        self.get(index)
            .cloned()
            .ok_or_else(|| no_frame(index, self.len()))
    }
    fn time(&mut self, index: usize) -> std::io::Result<f64> {
        self.get(index)
            .map(|f| f.time)
            .ok_or_else(|| no_frame(index, self.len()))
    }
}

impl FrameSource for RecordingReader {
    fn count(&self) -> usize {
        self.len()
    }
    fn frame(&mut self, index: usize) -> std::io::Result<Frame> {
        RecordingReader::frame(self, index)
    }
    fn refresh(&mut self) -> std::io::Result<bool> {
        RecordingReader::refresh(self).map(|n| n > 0)
    }
    fn finished(&self) -> bool {
        self.is_finished()
    }
}

/// Where the player is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayStatus {
    /// Frames in the recording.
    pub count: usize,
    /// The frame shown, 0-based.
    pub index: usize,
    /// Moving on by itself (or armed, waiting for a page).
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
    /// Why the replay stopped short of the recording's end: the recording is damaged (or
    /// was replaced while it was followed). Absent while it reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The 3D view's reel: the frames, their playback times, where they are published.
struct Frames {
    source: Box<dyn FrameSource>,
    follow: bool,
    /// Playback time of every frame read so far (non-decreasing).
    timeline: Vec<f64>,
    /// Recorded time of the last frame in `timeline`.
    last_time: f64,
    /// Playback time minus recorded time since the last jump.
    offset: f64,
    /// (frame count, first time, last time), refreshed when the count changes.
    ends: (usize, f64, f64),
    out: Option<Publisher>,
    /// The response panel of the pages, told once when the recording turns out damaged.
    responses: Option<tokio::sync::broadcast::Sender<String>>,
    /// The first frame that could not be read, and why: the replay plays no further.
    damage: Option<Damage>,
    /// The last frame published and its status (published again, with the damage, when
    /// the recording turns out damaged).
    shown: Option<(Frame, ReplayStatus)>,
}

/// Why a replay stopped short of its recording's end.
struct Damage {
    /// The reader's error.
    cause: String,
    /// The error, and where the replay stops.
    text: String,
}

impl Frames {
    fn new(source: Box<dyn FrameSource>, follow: bool) -> Frames {
        let mut frames = Frames {
            source,
            follow,
            timeline: Vec::new(),
            last_time: 0.0,
            offset: 0.0,
            ends: (0, 0.0, 0.0),
            out: None,
            responses: None,
            damage: None,
            shown: None,
        };
        frames.extend();
        frames
    }

    /// The recording cannot be read further (`e`): the replay plays only the frames before
    /// it and follows the file no more. Once the replay publishes, this is logged and told
    /// to the pages once ([`Frames::tell`]).
    fn damaged(&mut self, e: &std::io::Error) {
        if self.damage.is_some() {
            return;
        }
        self.damage = Some(Damage {
            cause: e.to_string(),
            text: format!(
                "{e}: the replay stops after frame {} of {}",
                self.timeline.len(),
                self.source.count().max(self.timeline.len())
            ),
        });
        if self.out.is_some() {
            self.tell();
        }
    }

    /// Logs the damage and tells the pages: in the response panel, and in the status of the
    /// frame shown, published again (pages connecting later get it too).
    fn tell(&mut self) {
        let Some(Damage { text, .. }) = &self.damage else {
            return;
        };
        tracing::error!("replay: {text}");
        if let Some(r) = &self.responses {
            let _ = r.send(format!("error: {text}"));
        }
        if let (Some(out), Some((frame, status))) = (self.out.clone(), self.shown.as_mut()) {
            status.error = Some(text.clone());
            crate::publish_with(&out, frame, Some(&*status));
        }
    }

    /// Reads the times of the frames not in the timeline yet: the recorded time, shifted
    /// so that it never goes back and never jumps more than [`LONGEST_GAP`]. A frame that
    /// cannot be read ends the timeline ([`Frames::damaged`]).
    fn extend(&mut self) {
        if self.damage.is_some() {
            return;
        }
        for i in self.timeline.len()..self.source.count() {
            let t = match self.source.time(i) {
                Ok(t) if t.is_finite() => t,
                Ok(_) => self.last_time,
                Err(e) => {
                    self.damaged(&e);
                    return;
                }
            };
            let p = match self.timeline.last() {
                None => t,
                Some(&before) => {
                    let gap = t - self.last_time;
                    if !(0.0..=LONGEST_GAP).contains(&gap) {
                        self.offset = before + gap.clamp(0.0, LONGEST_GAP) - t;
                    }
                    (t + self.offset).max(before)
                }
            };
            self.timeline.push(p);
            self.last_time = t;
        }
    }

    fn status(&mut self, s: &Status) -> ReplayStatus {
        if self.ends.0 != s.count && s.count > 0 {
            // The recorded times, as read into the timeline.
            let start = self.source.time(0).unwrap_or(0.0);
            let end = self.source.time(s.count - 1).unwrap_or(start);
            self.ends = (s.count, start, end);
        }
        ReplayStatus {
            count: s.count,
            index: s.index,
            playing: s.playing,
            speed: s.speed,
            waiting: s.state == "waiting",
            ended: s.state == "ended",
            start: self.ends.1,
            end: self.ends.2,
            error: self.damage.as_ref().map(|d| d.text.clone()),
        }
    }
}

impl Reel for Frames {
    fn count(&self) -> usize {
        self.timeline.len()
    }

    fn finished(&self) -> bool {
        !self.follow || self.damage.is_some() || self.source.finished()
    }

    fn refresh(&mut self) -> bool {
        if self.damage.is_some() {
            return false;
        }
        let before = self.timeline.len();
        if let Err(e) = self.source.refresh() {
            self.damaged(&e);
            return false;
        }
        self.extend();
        self.timeline.len() > before
    }

    fn times(&self) -> &[f64] {
        &self.timeline
    }

    fn show(&mut self, index: usize, status: &Status) {
        let status = self.status(status);
        let Some(out) = self.out.clone() else {
            return;
        };
        match self.source.frame(index) {
            Ok(frame) => {
                crate::publish_with(&out, &frame, Some(&status));
                self.shown = Some((frame, status));
            }
            Err(e) => self.damaged(&e),
        }
    }
}

/// Controls a replay; dropping it stops the player thread (the viewer keeps serving the last
/// frame until it is dropped too).
pub struct ReplayHandle {
    player: Arc<Player<Frames>>,
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
        ReplayHandle::with_clock(source, follow, wall_clock())
    }

    /// [`ReplayHandle::from_source`] paced by `clock` (tests hand in their own, then call
    /// [`ReplayHandle::tick`]).
    pub fn with_clock(source: Box<dyn FrameSource>, follow: bool, clock: Clock) -> ReplayHandle {
        ReplayHandle {
            player: Player::new(Frames::new(source, follow), clock),
        }
    }

    /// The commands of the page (give it to [`Viewer::start`]).
    pub fn backend(&self) -> Arc<dyn Backend> {
        Arc::new(Controls(Arc::downgrade(&self.player)))
    }

    /// Starts publishing into `publisher` (see [`Viewer::publisher`]): the current frame at
    /// once, then the player thread. Only the first call has an effect.
    pub fn attach(&self, publisher: Publisher) -> std::io::Result<()> {
        self.attach_with(publisher, None)
    }

    /// [`ReplayHandle::attach`], telling the pages' response panel through `responses` when
    /// the recording turns out damaged.
    fn attach_with(
        &self,
        publisher: Publisher,
        responses: Option<tokio::sync::broadcast::Sender<String>>,
    ) -> std::io::Result<()> {
        let (first, damaged) = self.player.with_reel(|reel, _| {
            let first = reel.out.is_none();
            reel.out.get_or_insert(publisher);
            if first {
                reel.responses = responses;
            }
            (first, reel.damage.is_some())
        });
        if first {
            self.player.show();
            if damaged {
                // Found before there was anyone to tell.
                self.player.with_reel(|reel, _| reel.tell());
            }
            self.player.spawn("replay")?;
        }
        Ok(())
    }

    /// Moves on to the frame due now on the player's clock and publishes it (the player
    /// thread does this by itself when a frame is due).
    pub fn tick(&self) {
        self.player.tick();
    }

    /// Where the player is.
    pub fn status(&self) -> ReplayStatus {
        let status = self.player.status();
        self.player.with_reel(|reel, _| reel.status(&status))
    }

    /// Holds playback on the current frame until a page connects (see [`Backend::connected`]);
    /// [`serve_replay`] and [`serve_file`] do this for their players.
    pub fn wait_for_page(&self) {
        self.player.wait_for_page();
    }

    /// The frame shown.
    pub fn frame(&self) -> Option<Frame> {
        self.player
            .with_reel(|reel, head| reel.source.frame(head.index).ok())
    }

    /// Why the replay stopped short of the recording's end, once a frame could not be read
    /// (a damaged recording, or one replaced while it was followed).
    pub fn damage(&self) -> Option<String> {
        self.player
            .with_reel(|reel, _| reel.damage.as_ref().map(|d| d.text.clone()))
    }

    fn command(&self, command: Command) {
        // Only a speed can be refused, and set_speed checks it first.
        let _ = self.player.command(command);
    }

    /// Plays from the current frame (from frame 0 when on the last one).
    pub fn play(&self) {
        self.command(Command::Play);
    }

    /// Stops moving on.
    pub fn pause(&self) {
        self.command(Command::Pause);
    }

    /// Shows frame `index` (clamped to the last frame); a playing replay goes on from there.
    /// The frame is published before this returns.
    pub fn seek(&self, index: usize) {
        self.command(Command::SeekIndex(index));
    }

    /// Shows the last frame at or before simulated time `t` (the first before the
    /// recording starts); a playing replay goes on from there.
    pub fn seek_time(&self, t: f64) {
        if t.is_finite() {
            self.command(Command::SeekTime(t));
        }
    }

    /// Pauses and moves `frames` frames on (back when negative).
    pub fn step(&self, frames: i64) {
        self.command(Command::Step(frames));
    }

    /// Recorded seconds per wall second, from 0.001 to 10,000 ([`crate::player::SPEEDS`]).
    pub fn set_speed(&self, speed: f64) -> Result<(), BadSpeed> {
        if !crate::player::speed_allowed(speed) {
            return Err(BadSpeed(speed));
        }
        self.command(Command::Speed(speed));
        Ok(())
    }
}

impl Drop for ReplayHandle {
    fn drop(&mut self) {
        self.player.stop();
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
    serve(
        ReplayHandle::new(recording),
        bind,
        name,
        crate::Guard::default(),
    )
}

/// Serves the viewer over a recording file read on demand (see [`RecordingReader`]; the
/// player reads every frame's time once, when it starts). A file its writer has not finished
/// is followed: the player waits on the last frame for the next ones. Refuses a finished
/// recording without frames.
pub fn serve_file(
    reader: RecordingReader,
    bind: SocketAddr,
    name: &str,
) -> std::io::Result<(Viewer, ReplayHandle)> {
    serve_file_guarded(reader, bind, name, crate::Guard::default())
}

/// [`serve_file`] within other limits than the [`crate::Guard`]'s defaults.
pub fn serve_file_guarded(
    reader: RecordingReader,
    bind: SocketAddr,
    name: &str,
    guard: crate::Guard,
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
        guard,
    )
}

fn serve(
    handle: ReplayHandle,
    bind: SocketAddr,
    name: &str,
    guard: crate::Guard,
) -> std::io::Result<(Viewer, ReplayHandle)> {
    // Damage found at the start (every frame's time is read then) refuses the recording,
    // as an export does.
    let damage = handle
        .player
        .with_reel(|reel, _| reel.damage.as_ref().map(|d| d.cause.clone()));
    if let Some(cause) = damage {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, cause));
    }
    handle.wait_for_page();
    let responses = responses_channel();
    let viewer = Viewer::start_guarded(
        bind,
        handle.backend(),
        responses.clone(),
        name,
        "replay",
        guard,
    )?;
    handle.attach_with(viewer.publisher(), Some(responses))?;
    Ok((viewer, handle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::header_now;
    use tokio::sync::watch;

    fn recording(n: u64, dt: f64) -> Recording {
        Recording {
            header: header_now("test"),
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

    /// A clock the test sets, in seconds.
    fn manual() -> (Clock, impl Fn(f64)) {
        use std::sync::atomic::{AtomicU64, Ordering};
        let at = Arc::new(AtomicU64::new(0f64.to_bits()));
        let read = at.clone();
        let clock: Clock = Arc::new(move || f64::from_bits(read.load(Ordering::SeqCst)));
        (clock, move |t: f64| at.store(t.to_bits(), Ordering::SeqCst))
    }

    #[test]
    fn plays_at_the_recorded_pace_and_stops_on_the_last_frame() {
        let (clock, set) = manual();
        // Frames 1/128 s apart, instants on 1/512 s: every sum is exact.
        let handle =
            ReplayHandle::with_clock(Box::new(recording(21, 1.0 / 128.0).frames), false, clock);
        let (tx, rx) = watch::channel(Arc::new(crate::Encoded::default()));
        handle.attach(tx).unwrap();
        let m = last_message(&rx);
        assert_eq!(m["type"], "frame");
        assert_eq!(m["iteration"], 0);
        assert_eq!(m["replay"]["count"], 21);
        assert_eq!(m["replay"]["playing"], false);
        // 20/128 simulated seconds at speed 4: 20/512 wall seconds.
        handle.set_speed(4.0).unwrap();
        set(3.0);
        handle.play();
        set(3.0 + 10.0 / 512.0);
        handle.tick();
        assert_eq!(handle.status().index, 10);
        assert!(handle.status().playing);
        set(3.0 + 19.5 / 512.0);
        handle.tick();
        assert_eq!(handle.status().index, 19, "not due yet");
        set(3.0 + 20.0 / 512.0);
        handle.tick();
        let status = handle.status();
        assert_eq!(
            (status.index, status.playing, status.ended),
            (20, false, true)
        );
        let m = last_message(&rx);
        assert_eq!(
            (m["iteration"].as_u64(), m["replay"]["playing"].as_bool()),
            (Some(20), Some(false))
        );
        // Step and seek by time.
        handle.seek_time(5.0 / 128.0);
        assert_eq!(last_message(&rx)["iteration"], 5);
        handle.step(3);
        handle.step(-1);
        assert_eq!(last_message(&rx)["iteration"], 7);
        assert!(!handle.status().playing);
    }

    #[test]
    fn time_that_goes_back_plays_on_at_once() {
        let (clock, set) = manual();
        let mut frames = recording(6, 0.5).frames;
        // Re-initialized after frame 2: time starts again.
        for (k, f) in frames.iter_mut().enumerate().skip(3) {
            f.time = (k - 3) as f64 * 0.5;
        }
        let handle = ReplayHandle::with_clock(Box::new(frames), false, clock);
        let (tx, _rx) = watch::channel(Arc::new(crate::Encoded::default()));
        handle.attach(tx).unwrap();
        handle.play();
        set(1.0);
        handle.tick();
        assert_eq!(handle.status().index, 3, "frame 3 follows frame 2 at once");
        set(1.5);
        handle.tick();
        assert_eq!(handle.status().index, 4);
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
        let (clock, set) = manual();
        let handle = ReplayHandle::with_clock(Box::new(reader), true, clock);
        let (tx, _rx) = watch::channel(Arc::new(crate::Encoded::default()));
        handle.attach(tx).unwrap();
        handle.play();
        for i in 5..40 {
            writer.write_frame(&frame(i)).unwrap();
        }
        writer.flush().unwrap();
        // The player picks the new frames up and plays on to the newest.
        set(1.0);
        handle.tick();
        handle.tick();
        let s = handle.status();
        assert_eq!(
            (s.count, s.index, s.playing),
            (40, 39, true),
            "still following"
        );
        assert_eq!(handle.frame().map(|f| f.iteration), Some(39));
        drop(handle);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Frames whose file turns unreadable after `good` frames: every refresh fails.
    struct Breaking {
        frames: Vec<Frame>,
        refreshes: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl FrameSource for Breaking {
        fn count(&self) -> usize {
            self.frames.len()
        }
        fn frame(&mut self, index: usize) -> std::io::Result<Frame> {
            self.frames.frame(index)
        }
        fn refresh(&mut self) -> std::io::Result<bool> {
            self.refreshes
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "live.simrec: byte 90: not a recording block (the file is damaged)",
            ))
        }
        fn finished(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_followed_file_that_turns_unreadable_is_told_once_and_followed_no_more() {
        let refreshes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let source = Breaking {
            frames: recording(3, 0.5).frames,
            refreshes: refreshes.clone(),
        };
        let (clock, set) = manual();
        let handle = ReplayHandle::with_clock(Box::new(source), true, clock);
        let (tx, rx) = watch::channel(Arc::new(crate::Encoded::default()));
        let responses = crate::responses_channel();
        let mut told = responses.subscribe();
        handle.attach_with(tx, Some(responses)).unwrap();
        handle.play();
        for k in 1..=20 {
            set(f64::from(k));
            handle.tick();
        }
        let status = handle.status();
        assert_eq!(status.index, 2, "played what could be read");
        let error = status
            .error
            .clone()
            .expect("the status says why it stopped");
        assert!(
            error.contains("not a recording block") && error.contains("stops after frame 3"),
            "{error}"
        );
        assert!(status.ended, "followed no more: {status:?}");
        assert_eq!(
            refreshes.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "the file is looked at no more once it failed"
        );
        // The page: one response, and the frame shown carries the error.
        let text = told.try_recv().expect("the page is told");
        assert!(text.starts_with("error: ") && text.contains("not a recording block"));
        assert!(told.try_recv().is_err(), "told once");
        assert!(last_message(&rx)["replay"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("not a recording block")));
        assert_eq!(handle.damage(), Some(error));
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
        cmd(r#"{"cmd":"step","value":-2}"#).unwrap();
        assert_eq!(handle.status().index, 0);
        cmd(r#"{"cmd":"seek","time":4.5}"#).unwrap();
        assert_eq!(last_message(&rx)["iteration"], 4);
        assert_eq!(
            cmd(r#"{"cmd":"initialize"}"#).unwrap_err().to_string(),
            "\"initialize\" is not available in a replay (play, pause, step, seek, speed)"
        );
    }
}
