//! The one replay player of the 3D and the 2D views: the same commands in both, paced by a
//! clock-free core.
//!
//! * [`Playhead`]: where a replay is and how it moves on, without a clock: every call gets
//!   the wall time `now` (seconds on any fixed origin) and the frames' playback times.
//! * [`Command`]: the page's replay commands, read once for both views:
//!   `{"cmd":"play"}`, `{"cmd":"pause"}`, `{"cmd":"step","value":FRAMES}` (pauses, then
//!   moves on that many frames, 1 by default; negative goes back),
//!   `{"cmd":"seek","time":SECONDS}` (the frame shown at that simulated time) or
//!   `{"cmd":"seek","value":INDEX}`, `{"cmd":"speed","value":F}` (recorded seconds per wall
//!   second, F > 0).
//! * [`Player`]: a [`Playhead`] over a [`Reel`] (the frames and how to show one: the 3D
//!   view's [`crate::replay`], the 2D view's [`crate::view2d::replay`]), with the thread
//!   that moves it on. Its [`Clock`] is handed in by the shell ([`wall_clock`]); tests hand
//!   in their own and call [`Player::tick`].
//!
//! Playback starts when the first page connects if the shell asks for that
//! ([`Player::wait_for_page`]); Play before that only arms it (state `waiting`). A player
//! whose reel is not finished (a recording still being written) waits on its last frame for
//! the next ones, looking every [`FOLLOW_POLL`]; a finished one stops there (state
//! `ended`), and Play from there starts again at frame 0.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use crate::{Backend, CommandError};

/// The slowest and fastest replay speeds accepted.
pub const SPEEDS: (f64, f64) = (1e-3, 1e4);
/// How often a player following a recording being written looks for new frames.
pub const FOLLOW_POLL: Duration = Duration::from_millis(250);
/// The most steps one `step` command may take.
const MAX_STEP: f64 = 1e9;

/// Whether `speed` is a replay speed [`SPEEDS`] allows.
pub fn speed_allowed(speed: f64) -> bool {
    (SPEEDS.0..=SPEEDS.1).contains(&speed)
}

/// Wall seconds on a fixed origin: what a player's pacing reads.
pub type Clock = Arc<dyn Fn() -> f64 + Send + Sync>;

/// The shell's clock: seconds since this call.
pub fn wall_clock() -> Clock {
    let start = Instant::now();
    Arc::new(move || start.elapsed().as_secs_f64())
}

/// Where a replay is and how it moves on, without a clock: every call gets the wall time
/// `now` (seconds on any fixed origin) and the frames' playback times (non-decreasing).
#[derive(Clone, Debug, PartialEq)]
pub struct Playhead {
    /// The frame shown.
    pub index: usize,
    /// Moving on by itself.
    pub playing: bool,
    /// Recorded seconds per wall second.
    pub speed: f64,
    /// A page is (or has been) connected; until then playing holds the frame.
    pub watched: bool,
    /// (wall, simulated) time the pacing counts from.
    anchor: (f64, f64),
}

impl Playhead {
    /// Paused on frame 0 at `speed`, waiting for a page.
    pub fn new(speed: f64) -> Playhead {
        Playhead {
            index: 0,
            playing: false,
            speed: speed.clamp(SPEEDS.0, SPEEDS.1),
            watched: false,
            anchor: (0.0, 0.0),
        }
    }

    fn restart(&mut self, now: f64, times: &[f64]) {
        self.anchor = (now, times.get(self.index).copied().unwrap_or(0.0));
    }

    /// Plays from the frame shown (from frame 0 when a finished recording is on its last).
    pub fn play(&mut self, now: f64, times: &[f64], finished: bool) {
        if finished && self.index + 1 >= times.len() {
            self.index = 0;
        }
        self.playing = true;
        self.restart(now, times);
    }

    /// Stops moving on.
    pub fn pause(&mut self) {
        self.playing = false;
    }

    /// Shows frame `index` (clamped to the recording); a playing replay goes on from there.
    pub fn seek(&mut self, index: usize, now: f64, times: &[f64]) {
        self.index = index.min(times.len().saturating_sub(1));
        self.restart(now, times);
    }

    /// Pauses, then moves `frames` frames on (back when negative), within the recording.
    pub fn step(&mut self, frames: i64, now: f64, times: &[f64]) {
        self.pause();
        let n = usize::try_from(frames.unsigned_abs()).unwrap_or(usize::MAX);
        let to = if frames > 0 {
            self.index.saturating_add(n)
        } else {
            self.index.saturating_sub(n)
        };
        self.seek(to, now, times);
    }

    /// The last frame at or before simulated time `t` (the first frame before it starts).
    pub fn index_at(times: &[f64], t: f64) -> usize {
        times.partition_point(|&x| x <= t).saturating_sub(1)
    }

    /// Recorded seconds per wall second, within [`SPEEDS`] (anything else is refused).
    pub fn set_speed(&mut self, speed: f64, now: f64, times: &[f64]) -> Result<(), CommandError> {
        if !speed_allowed(speed) {
            return Err(crate::command::BadSpeed(speed).into());
        }
        self.speed = speed;
        self.restart(now, times);
        Ok(())
    }

    /// A page connected: a replay waiting for one starts now.
    pub fn connected(&mut self, now: f64, times: &[f64]) {
        if !self.watched {
            self.watched = true;
            self.restart(now, times);
        }
    }

    /// Moves on to the frame due at `now` (skipping those a slow reader missed); stops on
    /// the last frame of a finished recording. Returns whether anything changed.
    pub fn advance(&mut self, now: f64, times: &[f64], finished: bool) -> bool {
        if !self.playing || !self.watched || times.is_empty() {
            return false;
        }
        let due = self.anchor.1 + (now - self.anchor.0) * self.speed;
        let index = Self::index_at(times, due).max(self.index);
        let moved = index != self.index;
        self.index = index;
        if finished && self.index + 1 >= times.len() {
            self.playing = false;
            return true;
        }
        moved
    }

    /// The wall time the next frame is due, if one will come by itself.
    pub fn next_due(&self, times: &[f64]) -> Option<f64> {
        if !self.playing || !self.watched {
            return None;
        }
        let next = times.get(self.index + 1)?;
        Some(self.anchor.0 + (next - self.anchor.1).max(0.0) / self.speed)
    }

    /// `waiting` (for a page), `playing`, `paused` or `ended`.
    pub fn state(&self, count: usize, finished: bool) -> &'static str {
        if self.playing && !self.watched {
            "waiting"
        } else if self.playing {
            "playing"
        } else if finished && self.index + 1 >= count {
            "ended"
        } else {
            "paused"
        }
    }
}

/// A replay command from the page or a program, the same in every view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Command {
    /// Plays from the frame shown.
    Play,
    /// Stops moving on.
    Pause,
    /// Pauses and moves this many frames on (back when negative).
    Step(i64),
    /// Shows the frame at this simulated time.
    SeekTime(f64),
    /// Shows this frame.
    SeekIndex(usize),
    /// Recorded seconds per wall second.
    Speed(f64),
}

impl Command {
    /// Reads a page command (`{"cmd":…}`, see the module's documentation).
    pub fn parse(cmd: &serde_json::Value) -> Result<Command, CommandError> {
        let name = crate::command::name(cmd)?;
        let value = cmd.get("value").and_then(|v| v.as_f64());
        Ok(match name {
            "play" => Command::Play,
            "pause" => Command::Pause,
            "step" => {
                let n = value.unwrap_or(1.0);
                if !(n.is_finite() && n.fract() == 0.0 && n != 0.0) {
                    return Err(CommandError::Usage(
                        "step: a whole number of frames, not 0 (negative goes back)",
                    ));
                }
                if n.abs() > MAX_STEP {
                    return Err(CommandError::Usage(
                        "step: at most 1000000000 frames either way (seek goes anywhere at once)",
                    ));
                }
                Command::Step(n as i64)
            }
            "seek" => {
                if let Some(t) = cmd.get("time") {
                    match t.as_f64().filter(|t| t.is_finite()) {
                        Some(t) => Command::SeekTime(t),
                        None => {
                            return Err(CommandError::Usage("seek: a time in simulated seconds"))
                        }
                    }
                } else {
                    let Some(value) = cmd.get("value") else {
                        return Err(CommandError::Usage(
                            "seek needs \"time\" (simulated seconds) or \"value\" (a frame index)",
                        ));
                    };
                    let index = value.as_u64().ok_or(CommandError::Usage(
                        "seek: \"value\" is a frame index, a whole number from 0",
                    ))?;
                    Command::SeekIndex(usize::try_from(index).unwrap_or(usize::MAX))
                }
            }
            "speed" => Command::Speed(value.ok_or(CommandError::Usage(
                "speed needs \"value\": a number greater than 0",
            ))?),
            other => {
                return Err(CommandError::NotInReplay {
                    name: other.to_string(),
                    takes: " (play, pause, step, seek, speed)",
                })
            }
        })
    }
}

/// Where a player is, as the reels show it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Status {
    /// Frames available.
    pub count: usize,
    /// The frame shown, 0-based.
    pub index: usize,
    /// `waiting`, `playing`, `paused` or `ended` ([`Playhead::state`]).
    pub state: &'static str,
    /// Moving on by itself (or armed, waiting for a page).
    pub playing: bool,
    /// Recorded seconds per wall second.
    pub speed: f64,
    /// No more frames will come.
    pub finished: bool,
}

/// The frames a [`Player`] plays and how it shows one.
pub trait Reel: Send + 'static {
    /// Frames available now.
    fn count(&self) -> usize;
    /// True when no more frames will come.
    fn finished(&self) -> bool;
    /// Looks for frames appended since (a recording being written); true if any came.
    fn refresh(&mut self) -> bool;
    /// The playback time of every available frame, non-decreasing.
    fn times(&self) -> &[f64];
    /// Shows frame `index` (publishes it to the view, with the player's status).
    fn show(&mut self, index: usize, status: &Status);
}

struct State<R> {
    reel: R,
    head: Playhead,
    stop: bool,
    /// What was last shown (index, state, command count, frames), to show only changes.
    shown: Option<(usize, &'static str, u64, usize)>,
    /// Bumped by every command, so a changed speed is shown too.
    version: u64,
}

/// A [`Playhead`] over a [`Reel`], moved on by [`Player::tick`] (its thread,
/// [`Player::spawn`], calls it when a frame is due).
pub struct Player<R: Reel> {
    state: Mutex<State<R>>,
    wake: Condvar,
    clock: Clock,
}

impl<R: Reel> Player<R> {
    /// A player of `reel`, paused on frame 0 at speed 1, watched (see
    /// [`Player::wait_for_page`]), paced by `clock`. It shows nothing until
    /// [`Player::show`] or a command.
    pub fn new(reel: R, clock: Clock) -> Arc<Player<R>> {
        let mut head = Playhead::new(1.0);
        head.watched = true;
        Arc::new(Player {
            state: Mutex::new(State {
                reel,
                head,
                stop: false,
                shown: None,
                version: 0,
            }),
            wake: Condvar::new(),
            clock,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State<R>> {
        // The state stays consistent whatever panicked while holding it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Calls `f` with the reel (to attach where it shows its frames, to read a frame).
    pub fn with_reel<T>(&self, f: impl FnOnce(&mut R, &Playhead) -> T) -> T {
        let mut st = self.lock();
        let st = &mut *st;
        f(&mut st.reel, &st.head)
    }

    /// Holds playback on the current frame until a page connects ([`Player::connected`]).
    pub fn wait_for_page(&self) {
        self.lock().head.watched = false;
    }

    fn status_of(st: &State<R>) -> Status {
        let count = st.reel.count();
        let finished = st.reel.finished();
        Status {
            count,
            index: st.head.index,
            state: st.head.state(count, finished),
            playing: st.head.playing,
            speed: st.head.speed,
            finished,
        }
    }

    /// Where the player is.
    pub fn status(&self) -> Status {
        Self::status_of(&self.lock())
    }

    /// Shows the frame shown, if anything changed since it was last shown.
    fn show_changes(st: &mut State<R>) {
        let status = Self::status_of(st);
        let key = (status.index, status.state, st.version, status.count);
        if st.shown == Some(key) || status.count == 0 {
            return;
        }
        st.shown = Some(key);
        st.reel.show(status.index, &status);
    }

    /// Shows the current frame (again).
    pub fn show(&self) {
        let mut st = self.lock();
        st.shown = None;
        Self::show_changes(&mut st);
    }

    /// Applies a change to the playhead, shows it and wakes the player.
    fn update(
        &self,
        f: impl FnOnce(&mut Playhead, f64, &[f64], bool) -> Result<(), CommandError>,
    ) -> Result<(), CommandError> {
        let now = (self.clock)();
        let mut st = self.lock();
        let st = &mut *st;
        let finished = st.reel.finished();
        f(&mut st.head, now, st.reel.times(), finished)?;
        st.version += 1;
        Self::show_changes(st);
        self.wake.notify_all();
        Ok(())
    }

    /// Carries out `command`; the frame it leads to is shown before this returns.
    pub fn command(&self, command: Command) -> Result<(), CommandError> {
        self.update(|h, now, times, finished| {
            match command {
                Command::Play => h.play(now, times, finished),
                Command::Pause => h.pause(),
                Command::Step(n) => h.step(n, now, times),
                Command::SeekTime(t) => h.seek(Playhead::index_at(times, t), now, times),
                Command::SeekIndex(i) => h.seek(i, now, times),
                Command::Speed(v) => h.set_speed(v, now, times)?,
            }
            Ok(())
        })
    }

    /// A page connected: a replay waiting for one starts now.
    pub fn connected(&self) {
        let _ = self.update(|head, now, times, _| {
            head.connected(now, times);
            Ok(())
        });
    }

    /// Moves on to the frame due now (looking for new frames first when on the last of a
    /// recording being written) and shows it. Returns the wall seconds until it is worth
    /// calling again (`None`: not before a command).
    pub fn tick(&self) -> Option<f64> {
        let now = (self.clock)();
        let mut st = self.lock();
        self.tick_locked(&mut st, now)
    }

    fn tick_locked(&self, st: &mut State<R>, now: f64) -> Option<f64> {
        let frame_gap = 1.0 / f64::from(crate::FRAME_RATE);
        let following = !st.reel.finished();
        if following && st.head.index + 1 >= st.reel.count() {
            st.reel.refresh();
        }
        let finished = st.reel.finished();
        st.head.advance(now, st.reel.times(), finished);
        Self::show_changes(st);
        match st.head.next_due(st.reel.times()) {
            Some(due) => Some((due - now).max(frame_gap)),
            None if !finished => Some(FOLLOW_POLL.as_secs_f64()),
            None => None,
        }
    }

    /// The player's thread: moves on while playing, sleeps until the next frame is due or
    /// a command wakes it, ends with [`Player::stop`].
    pub fn spawn(self: &Arc<Self>, name: &str) -> std::io::Result<()> {
        let player = self.clone();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || player.run())?;
        Ok(())
    }

    fn run(&self) {
        let mut st = self.lock();
        loop {
            if st.stop {
                return;
            }
            let now = (self.clock)();
            let wait = self.tick_locked(&mut st, now);
            st = match wait {
                Some(w) => {
                    self.wake
                        .wait_timeout(st, Duration::from_secs_f64(w.clamp(0.0, 3600.0)))
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self.wake.wait(st).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }

    /// Ends the player's thread.
    pub fn stop(&self) {
        self.lock().stop = true;
        self.wake.notify_all();
    }
}

/// The page's replay controls of a player (a weak link: the player belongs to its shell).
pub struct Controls<R: Reel>(pub Weak<Player<R>>);

impl<R: Reel> Backend for Controls<R> {
    fn connected(&self) {
        if let Some(player) = self.0.upgrade() {
            player.connected();
        }
    }

    fn command(&self, cmd: &serde_json::Value) -> Result<(), CommandError> {
        let command = Command::parse(cmd)?;
        self.0
            .upgrade()
            .ok_or(CommandError::Stopped("the replay"))?
            .command(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    const TIMES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

    #[test]
    fn the_playhead_waits_for_a_page_then_keeps_the_recorded_pace() {
        let mut h = Playhead::new(2.0);
        h.play(10.0, &TIMES, true);
        assert_eq!(h.state(5, true), "waiting");
        assert!(!h.advance(50.0, &TIMES, true), "no page: held on frame 0");
        assert_eq!(h.next_due(&TIMES), None);
        h.connected(100.0, &TIMES);
        assert_eq!(h.state(5, true), "playing");
        // At speed 2, frame 1 (0.25 s) is due 0.125 wall s after the start.
        assert_eq!(h.next_due(&TIMES), Some(100.125));
        assert!(!h.advance(100.1, &TIMES, true));
        assert!(h.advance(100.125, &TIMES, true));
        assert_eq!(h.index, 1);
        // A slow reader skips to the frame that is due.
        assert!(h.advance(100.4, &TIMES, true));
        assert_eq!(h.index, 3);
        assert!(h.advance(200.0, &TIMES, true));
        assert_eq!((h.index, h.playing, h.state(5, true)), (4, false, "ended"));
        // Play from the end starts again at frame 0.
        h.play(300.0, &TIMES, true);
        assert_eq!((h.index, h.state(5, true)), (0, "playing"));
    }

    #[test]
    fn a_followed_recording_plays_on_as_it_grows() {
        let mut h = Playhead::new(1.0);
        h.connected(0.0, &TIMES[..2]);
        h.play(0.0, &TIMES[..2], false);
        h.advance(5.0, &TIMES[..2], false);
        assert_eq!((h.index, h.state(2, false)), (1, "playing"));
        // New frames: the newest due is shown at once.
        h.advance(5.0, &TIMES, false);
        assert_eq!(h.index, 4);
    }

    #[test]
    fn seek_step_pause_and_speed_restart_the_pacing_from_the_frame_shown() {
        let mut h = Playhead::new(1.0);
        h.connected(0.0, &TIMES);
        h.seek(Playhead::index_at(&TIMES, 0.6), 0.0, &TIMES);
        assert_eq!(h.index, 2);
        assert_eq!(Playhead::index_at(&TIMES, -3.0), 0);
        assert_eq!(Playhead::index_at(&TIMES, 9.0), 4);
        h.play(1.0, &TIMES, true);
        h.set_speed(0.5, 1.0, &TIMES).expect("speed");
        assert_eq!(h.next_due(&TIMES), Some(1.5));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(h.set_speed(bad, 1.0, &TIMES).is_err());
        }
        assert_eq!(h.speed, 0.5);
        // Out of SPEEDS: refused naming the range (it was clamped without a word).
        for bad in [1e9, 1e-9] {
            let e = h.set_speed(bad, 1.0, &TIMES).unwrap_err().to_string();
            assert!(e.contains("0.001 to 10000"), "{bad}: {e}");
        }
        h.set_speed(SPEEDS.1, 1.0, &TIMES).expect("the fastest");
        h.set_speed(0.5, 1.0, &TIMES).expect("speed");
        h.pause();
        assert!(!h.advance(100.0, &TIMES, true));
        assert_eq!((h.index, h.state(5, true)), (2, "paused"));
        h.play(2.0, &TIMES, true);
        h.step(1, 2.0, &TIMES);
        assert_eq!((h.index, h.playing), (3, false));
        h.step(-10, 2.0, &TIMES);
        assert_eq!(h.index, 0);
        h.step(i64::MAX, 2.0, &TIMES);
        assert_eq!(h.index, 4);
    }

    #[test]
    fn the_commands_read_the_same_for_every_view() {
        let parse = |s: &str| Command::parse(&serde_json::from_str(s).unwrap());
        assert_eq!(parse(r#"{"cmd":"play"}"#).unwrap(), Command::Play);
        assert_eq!(parse(r#"{"cmd":"pause"}"#).unwrap(), Command::Pause);
        assert_eq!(parse(r#"{"cmd":"step"}"#).unwrap(), Command::Step(1));
        assert_eq!(
            parse(r#"{"cmd":"step","value":-3}"#).unwrap(),
            Command::Step(-3)
        );
        assert_eq!(
            parse(r#"{"cmd":"seek","time":2.5}"#).unwrap(),
            Command::SeekTime(2.5)
        );
        assert_eq!(
            parse(r#"{"cmd":"seek","value":7}"#).unwrap(),
            Command::SeekIndex(7)
        );
        assert_eq!(
            parse(r#"{"cmd":"speed","value":2}"#).unwrap(),
            Command::Speed(2.0)
        );
        for bad in [
            r#"{"cmd":"step","value":0}"#,
            r#"{"cmd":"step","value":1.5}"#,
            r#"{"cmd":"seek","value":-1}"#,
            r#"{"cmd":"seek","time":"x"}"#,
            r#"{"cmd":"speed"}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        // Each refusal says what was wrong with what was given.
        let said = |s: &str| parse(s).unwrap_err().to_string();
        for bad in [
            r#"{"cmd":"seek","value":-1}"#,
            r#"{"cmd":"seek","value":1.5}"#,
        ] {
            assert_eq!(
                said(bad),
                "seek: \"value\" is a frame index, a whole number from 0",
                "{bad}"
            );
        }
        assert!(said(r#"{"cmd":"step","value":1e12}"#).contains("at most 1000000000 frames"));
        assert!(said(r#"{"cmd":"step","value":0}"#).contains("not 0"));
        assert_eq!(
            parse(r#"{"cmd":"initialize"}"#).unwrap_err().to_string(),
            "\"initialize\" is not available in a replay (play, pause, step, seek, speed)"
        );
    }

    /// A reel of fixed times that remembers what it showed.
    struct Shown {
        times: Vec<f64>,
        count: usize,
        finished: bool,
        shown: Arc<Mutex<Vec<(usize, &'static str)>>>,
    }

    impl Reel for Shown {
        fn count(&self) -> usize {
            self.count
        }
        fn finished(&self) -> bool {
            self.finished
        }
        fn refresh(&mut self) -> bool {
            let grew = self.count < self.times.len();
            self.count = self.times.len();
            grew
        }
        fn times(&self) -> &[f64] {
            &self.times[..self.count]
        }
        fn show(&mut self, index: usize, status: &Status) {
            if let Ok(mut s) = self.shown.lock() {
                s.push((index, status.state));
            }
        }
    }

    /// A clock the test sets.
    fn manual() -> (Clock, Arc<AtomicU64>) {
        let at = Arc::new(AtomicU64::new(0f64.to_bits()));
        let read = at.clone();
        (
            Arc::new(move || f64::from_bits(read.load(Ordering::SeqCst))),
            at,
        )
    }

    #[test]
    fn a_player_moves_on_at_the_instants_it_is_handed() {
        let shown = Arc::new(Mutex::new(Vec::new()));
        let (clock, at) = manual();
        let set = |t: f64| at.store(t.to_bits(), Ordering::SeqCst);
        // Frames 1/128 s apart, instants on 1/512 s: every sum is exact.
        let times: Vec<f64> = (0..21).map(|i| f64::from(i) / 128.0).collect();
        let player = Player::new(
            Shown {
                times,
                count: 21,
                finished: true,
                shown: shown.clone(),
            },
            clock,
        );
        player.show();
        player.command(Command::Speed(4.0)).unwrap();
        set(8.0);
        player.command(Command::Play).unwrap();
        // 20/128 simulated seconds at speed 4: 20/512 wall seconds.
        set(8.0 + 8.0 / 512.0);
        assert_eq!(player.tick(), Some(1.0 / f64::from(crate::FRAME_RATE)));
        assert_eq!(
            (player.status().index, player.status().state),
            (8, "playing")
        );
        set(8.0 + 19.0 / 512.0);
        player.tick();
        assert_eq!(player.status().index, 19);
        set(8.0 + 20.0 / 512.0);
        assert_eq!(player.tick(), None, "ended: nothing more comes by itself");
        let s = player.status();
        assert_eq!((s.index, s.state, s.playing), (20, "ended", false));
        // Seek by time and step, paused.
        player.command(Command::SeekTime(0.105)).unwrap();
        assert_eq!(player.status().index, 13);
        player.command(Command::Step(-2)).unwrap();
        assert_eq!(player.status().index, 11);
        let seen = shown.lock().unwrap().clone();
        assert_eq!(seen.first(), Some(&(0, "paused")));
        assert!(seen.contains(&(20, "ended")));
        assert_eq!(seen.last(), Some(&(11, "paused")));
    }

    #[test]
    fn a_player_follows_a_growing_reel_and_waits_for_a_page() {
        let (clock, at) = manual();
        let player = Player::new(
            Shown {
                times: vec![0.0, 0.5, 1.0, 1.5],
                count: 2,
                finished: false,
                shown: Arc::default(),
            },
            clock,
        );
        player.wait_for_page();
        player.command(Command::Play).unwrap();
        at.store(5.0f64.to_bits(), Ordering::SeqCst);
        player.tick();
        assert_eq!(
            (player.status().index, player.status().state),
            (0, "waiting")
        );
        Controls(Arc::downgrade(&player)).connected();
        at.store(5.6f64.to_bits(), Ordering::SeqCst);
        // On the last frame: the reel is asked for more, and the newest due is shown.
        player.tick();
        player.tick();
        let s = player.status();
        assert_eq!((s.count, s.index, s.state), (4, 1, "playing"));
        let wait = player.tick().unwrap_or(0.0);
        assert!((wait - 0.4).abs() < 1e-9, "frame 2 is due at 6.0: {wait}");
    }
}
