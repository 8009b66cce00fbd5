//! `simrob soccer match`: a 3-vs-3 FutRob match in-process, judged from the world.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{bail, Context, Result};
use clap::Args;
use simrob_session::{Snapshot, SnapshotModes};
use simrob_soccer::{Profile, Team};
use simrob_trials::matchplay::{coin_toss, play, play_watched, MatchParams, MatchSummary};
use simrob_viewer::record::Writer;
use simrob_viewer::{Frame, FrameView};

#[derive(Args)]
#[command(mut_arg("gui", crate::flags::gui_help(
    "Watch the match live in the web viewer (prints its address; the match kicks off when the first page connects, is played at --speed, and the page keeps the final score until Ctrl-C; the page only watches); on 127.0.0.1"
)))]
#[command(mut_arg("speed", |a| a.help(
    "With --gui or --ros2: simulated seconds per wall second, 0 (as fast as possible) or at least 0.000001 [default: 1]"
)))]
pub struct MatchArgs {
    /// Seed of the match: the same seed plays the same match.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Simulated seconds of play (or 50ms, 2s, 1min; 600: ten minutes), above 0 and at most
    /// 86400.
    #[arg(long, value_name = "S", default_value_t = 600.0, value_parser = match_duration)]
    pub duration: f64,
    /// Who kicks off: `alternate` (cyan for odd seeds, magenta for even ones, so that over
    /// consecutive seeds each team kicks off half of the matches), `toss` (a coin toss drawn
    /// from the seed), `cyan` or `magenta`. After a goal the team that conceded it kicks off.
    #[arg(long, default_value = "alternate", value_name = "WHO", value_parser = clap::builder::PossibleValuesParser::new(["alternate", "toss", "cyan", "magenta"]), ignore_case = true)]
    pub kick_off: String,
    /// `paper` (FutRob's measured camera errors, motion noise and falls) or `ideal`.
    #[arg(long, default_value = "paper", value_parser = clap::builder::PossibleValuesParser::new(super::case::PROFILES), ignore_case = true)]
    pub profile: String,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Record the match (25 frames per simulated second) for `simrob replay FILE`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Watch the match live in the web viewer (prints its address); the match kicks off when
    /// the first page connects, is played at --speed, and the page keeps the final score
    /// until Ctrl-C.
    #[command(flatten)]
    pub gui: crate::flags::Gui,
    /// With --gui or --ros2: simulated seconds per wall second (0 = as fast as possible).
    #[command(flatten)]
    pub speed: crate::flags::Speed,
    /// The match on ROS 2 (docs/ros2.md), watched: the brains play it.
    #[command(flatten)]
    pub ros2: crate::flags::Ros2,
}

/// The longest match `--duration` plays, simulated seconds (a day).
const MAX_DURATION_S: f64 = 86_400.0;

/// `--duration`: simulated seconds above 0 and at most [`MAX_DURATION_S`] (a bad one is a
/// command line that does not parse, status 2).
fn match_duration(text: &str) -> Result<f64, String> {
    match crate::flags::simulated_seconds(text)? {
        v if v > 0.0 && v <= MAX_DURATION_S => Ok(v),
        _ => Err(format!(
            "simulated seconds of play, greater than 0 and at most {MAX_DURATION_S} (a day), not {text}"
        )),
    }
}

/// Why the page only watches a match.
const WATCH_ONLY: &str = "this match is played by its FutRob brains: the page only watches";

/// The page only watches a match: its brains play it. Counts the pages that connected (the
/// match kicks off when the first does).
#[derive(Default)]
struct WatchOnly {
    pages: Mutex<u64>,
    changed: std::sync::Condvar,
}

impl WatchOnly {
    /// Waits until a page has connected, or `stop` is set (checked every 100 ms). Returns
    /// whether a page did.
    fn wait_for_page(&self, stop: &std::sync::atomic::AtomicBool) -> bool {
        let mut n = self.pages.lock().unwrap_or_else(PoisonError::into_inner);
        while *n == 0 {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return false;
            }
            n = self
                .changed
                .wait_timeout(n, std::time::Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }
}

impl simrob_viewer::Backend for WatchOnly {
    fn command(&self, _cmd: &serde_json::Value) -> Result<(), simrob_viewer::CommandError> {
        Err(simrob_viewer::CommandError::WatchOnly(WATCH_ONLY))
    }

    fn connected(&self) {
        *self.pages.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.changed.notify_all();
    }

    fn watch_only(&self) -> Option<&'static str> {
        Some(WATCH_ONLY)
    }
}

/// The modes a recorded or viewed in-process world is shown with.
fn shown_modes() -> SnapshotModes {
    SnapshotModes {
        initialized: true,
        step_mode: false,
        sync_mode: false,
        auto_adjust: false,
        timestep: 0.01,
        gravity: -9.81,
        steps_per_iteration: 1,
        real_time_factor: 0.0,
    }
}

/// Whether the match is over: its clock has reached its length.
fn full_time(arena: &simrob_trials::Arena, s: &MatchSummary) -> bool {
    arena.now_ms() >= (s.duration_s * 1000.0).round() as u64
}

/// What the live view shows over the field: the score, the match clock (`full time` at the
/// end) and each robot's role and the action it last started.
fn caption(arena: &simrob_trials::Arena, s: &MatchSummary) -> String {
    let mut text = format!(
        "{}cyan {} : {} magenta    {} / {}",
        if full_time(arena, s) {
            "full time · "
        } else {
            ""
        },
        s.goals[0],
        s.goals[1],
        clock(arena.now_ms() as f64 / 1000.0),
        length(s.duration_s)
    );
    for team in [Team::Cyan, Team::Magenta] {
        let robots: Vec<String> = arena
            .players()
            .iter()
            .filter(|p| p.team == team)
            .map(|p| {
                let role = match p.role {
                    simrob_futrob::Role::Goalkeeper => "keeper",
                    simrob_futrob::Role::FieldPlayer => "player",
                };
                let action = p.started.last().map_or("-", |(_, a)| a.as_str());
                format!("{} {role} {action}", p.entity)
            })
            .collect();
        text.push_str(&format!("\n{}: {}", team.as_str(), robots.join(" · ")));
    }
    text
}

/// Shows the match live in a viewer, paced at `factor` simulated seconds per wall second, with
/// its score, clock and robots' actions over the field.
fn live_view(
    viewer: &simrob_viewer::Viewer,
    factor: f64,
) -> impl FnMut(&simrob_trials::Arena, &MatchSummary) {
    let frames = viewer.publisher();
    let start = std::time::Instant::now();
    let mut modes = shown_modes();
    modes.real_time_factor = factor;
    let mut n = 0u64;
    move |arena: &simrob_trials::Arena, summary: &MatchSummary| {
        let w = arena.world();
        n += 1;
        // 0: as fast as possible, never waiting.
        if factor > 0.0 {
            let due = start + std::time::Duration::from_secs_f64(w.sim_time() / factor);
            let now = std::time::Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        // Every third iteration, and the last: the page keeps the final score.
        if n.is_multiple_of(3) || full_time(arena, summary) {
            simrob_viewer::publish_captioned(
                &frames,
                &Frame::of(&Snapshot::of(w, modes.clone())),
                &caption(arena, summary),
            );
        }
    }
}

pub fn run(a: MatchArgs) -> Result<()> {
    let Some(profile) = Profile::named(&a.profile) else {
        bail!("unknown profile {:?}: choose paper or ideal", a.profile);
    };
    // ROS 2's flags and environment before a recording is created or a viewer announced.
    super::matchros::check(&a.ros2)?;
    // A recording's header says what made it.
    let source = format!(
        "simrob soccer match, profile {}, kick-off {} (seed {})",
        profile.name, a.kick_off, a.seed
    );
    let mut params = MatchParams::new(profile, a.seed, a.duration);
    params.stop = Some(crate::shell::ctrl_c_flag()?);
    params.kick_off = match a.kick_off.to_ascii_lowercase().as_str() {
        "alternate" => params.kick_off,
        "toss" => coin_toss(a.seed),
        other => Team::parse(other).with_context(|| {
            format!("unknown --kick-off {other:?}: choose alternate, toss, cyan or magenta")
        })?,
    };
    // A second stop signal waits until the recording is finished and the summary printed.
    let finishing = a
        .record
        .as_ref()
        .map(|_| crate::shell::FinishBeforeExit::hold());
    let recording = match &a.record {
        Some(path) => Some(Recording::create(path, &source)?),
        None => None,
    };
    let gui = a.gui.addr();
    let speed = a.speed.or_real_time();
    let watch = Arc::new(WatchOnly::default());
    let viewer = if let Some(gui) = gui {
        let bind = gui.resolve(crate::flags::LOCALHOST)?;
        let v = simrob_viewer::Viewer::start_guarded(
            bind,
            watch.clone(),
            simrob_viewer::responses_channel(),
            "simrob soccer match",
            "live",
            a.gui.guard()?,
        )
        .with_context(|| format!("cannot start the viewer on {bind} (try --gui=0)"))?;
        // Standard output is the summary's alone (one JSON object with --json).
        eprintln!("viewer on http://{}", v.addr());
        eprintln!("the match kicks off when the first page connects");
        Some(v)
    } else {
        None
    };
    let mut observers: Vec<simrob_trials::Observer> = Vec::new();
    if let Some(r) = &recording {
        observers.push(r.observer());
    }
    let observer: Option<simrob_trials::Observer> = if observers.is_empty() {
        None
    } else {
        Some(Box::new(move |w: &simrob_world::World| {
            for o in observers.iter_mut() {
                o(w);
            }
        }))
    };
    let stop = params.stop.clone();
    let interrupted = || {
        stop.as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    };
    let mut ros = super::matchros::start(&a.ros2, if gui.is_some() { 0.0 } else { speed })?;
    // Nobody misses the kick-off: a watched match starts when the first page connects.
    if let (Some(_), Some(stop)) = (&viewer, &stop) {
        watch.wait_for_page(stop);
    }
    let summary = match (&viewer, ros.as_mut()) {
        (None, None) => play(&params, observer)?,
        (v, mut ros) => {
            let mut live = v.as_ref().map(|v| live_view(v, speed));
            play_watched(&params, observer, &mut |arena, s| {
                if let Some(r) = ros.as_mut() {
                    super::matchros::publish(r, arena, s);
                }
                if let Some(l) = live.as_mut() {
                    l(arena, s);
                }
            })?
        }
    };
    if let Some(r) = recording {
        r.finish()?;
    }
    let text = if a.json {
        let mut doc = serde_json::to_value(&summary)?;
        if let Some(fields) = doc.as_object_mut() {
            fields.insert("saves".into(), serde_json::json!(saves(&summary)));
            let (from, to) = quietest_spell(&summary);
            fields.insert(
                "longest_without_strike_s".into(),
                serde_json::json!([from, to]),
            );
        }
        format!("{doc}\n")
    } else {
        report(&summary)
    };
    {
        let mut out = std::io::stdout().lock();
        match std::io::Write::write_all(&mut out, text.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            r => r?,
        }
    }
    drop(finishing);
    // The page keeps the final score until Ctrl-C.
    if let (Some(v), false) = (&viewer, interrupted()) {
        eprintln!(
            "the match has ended; the page stays on http://{} until Ctrl-C",
            v.addr()
        );
        crate::shell::wait_for_stop();
    }
    Ok(())
}

/// A recording of an in-process run (25 frames per simulated second) for `simrob replay`.
pub(super) struct Recording {
    state: Arc<Mutex<(Writer<std::fs::File>, Option<std::io::Error>)>>,
}

impl Recording {
    /// Creates the recording file.
    pub(super) fn create(path: &Path, source: &str) -> Result<Recording> {
        let writer = Writer::create(path, source)
            .with_context(|| format!("cannot create the recording {}", path.display()))?;
        Ok(Recording {
            state: Arc::new(Mutex::new((writer, None))),
        })
    }

    /// The observer that writes every fourth iteration (10 ms each) as a frame, and the
    /// last one a run shows it again when it ends (`Arena::end`: the state that decided a
    /// case trial), unless already written.
    pub(super) fn observer(&self) -> simrob_trials::Observer {
        let state = self.state.clone();
        let mut n = 0u64;
        let (mut last, mut written) = (None, None);
        let modes = shown_modes();
        Box::new(move |w: &simrob_world::World| {
            let iteration = w.iteration();
            if last == Some(iteration) {
                // The end of the run: its last state, if not written yet.
                if written == Some(iteration) {
                    return;
                }
            } else {
                last = Some(iteration);
                n += 1;
                if !n.is_multiple_of(4) {
                    return;
                }
            }
            written = Some(iteration);
            let mut st = state.lock().unwrap_or_else(PoisonError::into_inner);
            if st.1.is_none() {
                let frame = Frame::of(&Snapshot::of(w, modes.clone()));
                if let Err(e) = st.0.write_frame(&frame) {
                    st.1 = Some(e);
                }
            }
        })
    }

    /// Ends the recording (once the run, and so its observer, is over).
    pub(super) fn finish(self) -> Result<()> {
        let Ok(cell) = Arc::try_unwrap(self.state) else {
            bail!("the recording is still being written");
        };
        let (writer, err) = cell.into_inner().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = err {
            bail!("the recording failed: {e}");
        }
        writer.finish().context("cannot finish the recording")
    }
}

/// Each team's keeper's saves, `[cyan's, magenta's]`: the other team's shots, not goals,
/// that met the keeper.
fn saves(s: &MatchSummary) -> [usize; 2] {
    use simrob_trials::referee::{StrikeEnd, StrikeKind};
    let of = |team: &str| {
        s.strikes
            .iter()
            .filter(|x| x.kind == StrikeKind::Shot && x.team.is_some_and(|t| t != team))
            .filter(|x| x.end != StrikeEnd::Goal)
            .filter(|x| x.met == Some(s.keepers[(team == "magenta") as usize]))
            .count()
    };
    [of("cyan"), of("magenta")]
}

/// The longest spell in which nobody struck the ball, `(from, to)` in simulated seconds.
fn quietest_spell(s: &MatchSummary) -> (f64, f64) {
    let mut last = 0.0;
    let mut spell = (0.0, 0.0);
    for x in s.strikes.iter().map(|x| x.t).chain([s.played_s]) {
        if x - last > spell.1 - spell.0 {
            spell = (last, x);
        }
        last = x;
    }
    spell
}

/// `mm:ss` of a match time in seconds.
fn clock(t: f64) -> String {
    let t = t.max(0.0).floor() as u64;
    format!("{:02}:{:02}", t / 60, t % 60)
}

/// A length of play as `MM:SS`, with tenths when it is not whole seconds (`--duration 0.5`
/// is `00:00.5`, not `00:00`).
fn length(t: f64) -> String {
    let t = t.max(0.0);
    if (t - t.round()).abs() < 0.05 {
        clock(t.round())
    } else {
        let tenths = (t * 10.0).round() as u64;
        format!(
            "{:02}:{:02}.{}",
            tenths / 600,
            tenths / 10 % 60,
            tenths % 10
        )
    }
}

/// The end-of-match summary a coach reads: the score, who scored and when, each team's shots
/// (on target), passes (completed), possession and falls, and what stood out.
fn report(s: &MatchSummary) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let played = if s.played_s < s.duration_s {
        format!(
            "stopped at {} of {}",
            length(s.played_s),
            length(s.duration_s)
        )
    } else {
        format!("{} of play", length(s.duration_s))
    };
    let _ = writeln!(
        t,
        "FutRob 3 v 3 — profile {}, seed {}, {played}, {} kicked off",
        s.profile, s.seed, s.kick_off
    );
    let _ = writeln!(
        t,
        "Final score: cyan {} – {} magenta",
        s.goals[0], s.goals[1]
    );
    let role = |r: u32| {
        if s.keepers.contains(&r) {
            "keeper"
        } else {
            "field player"
        }
    };
    if s.goal_log.is_empty() {
        let _ = writeln!(t, "No goals.");
    }
    for g in &s.goal_log {
        let by = match (g.scorer, g.own_goal) {
            (Some(r), false) => format!("robot {r} ({})", role(r)),
            (Some(r), true) => format!("own goal by robot {r} ({})", role(r)),
            (None, _) => "off a post or wall".into(),
        };
        let _ = writeln!(t, "  {}  {:<8} {by}", clock(g.t), g.team);
    }
    let pct = |a: u32, b: u32| {
        if b == 0 {
            "-".to_string()
        } else {
            format!("{:.0} %", 100.0 * a as f64 / b as f64)
        }
    };
    let total = (s.possession_s[0] + s.possession_s[1]).max(1e-9);
    let _ = writeln!(t);
    let _ = writeln!(t, "                          cyan   magenta");
    let row = |t: &mut String, name: &str, a: String, b: String| {
        let _ = writeln!(t, "{name:<24} {a:>6}   {b:>7}");
    };
    row(
        &mut t,
        "goals",
        s.goals[0].to_string(),
        s.goals[1].to_string(),
    );
    row(
        &mut t,
        "shots (on target)",
        format!("{} ({})", s.shots[0], s.shots_on_target[0]),
        format!("{} ({})", s.shots[1], s.shots_on_target[1]),
    );
    let [cyan_saves, magenta_saves] = saves(s);
    row(
        &mut t,
        "keeper's saves",
        cyan_saves.to_string(),
        magenta_saves.to_string(),
    );
    row(
        &mut t,
        "passes completed",
        format!("{}/{}", s.passes_completed[0], s.passes[0]),
        format!("{}/{}", s.passes_completed[1], s.passes[1]),
    );
    row(
        &mut t,
        "possession",
        format!("{:.0} %", 100.0 * s.possession_s[0] / total),
        format!("{:.0} %", 100.0 * s.possession_s[1] / total),
    );
    row(
        &mut t,
        "falls",
        s.falls[0].to_string(),
        s.falls[1].to_string(),
    );
    row(
        &mut t,
        "put out of the circle",
        s.kickoff_infringements[0].to_string(),
        s.kickoff_infringements[1].to_string(),
    );
    let _ = writeln!(t);
    let _ = writeln!(t, "Notable:");
    let strikes = s.strikes.len();
    let _ = writeln!(
        t,
        "  {strikes} strikes of the ball, {} balls out of play, {} team messages",
        s.outs, s.messages
    );
    let spell = quietest_spell(s);
    if spell.1 - spell.0 >= 60.0 {
        let _ = writeln!(
            t,
            "  nobody struck the ball from {} to {}",
            clock(spell.0),
            clock(spell.1)
        );
    }
    let shots: u32 = s.shots.iter().sum();
    let on: u32 = s.shots_on_target.iter().sum();
    let goals: u32 = s.goals.iter().sum();
    if shots > 0 {
        let _ = writeln!(
            t,
            "  {on} of {shots} shots on target ({}), {goals} scored",
            pct(on, shots)
        );
    }
    match s.exchanges.iter().max_by_key(|e| e.strikes) {
        Some(e) => {
            let _ = writeln!(
                t,
                "  longest exchange: robots {} and {} ({}), {} strikes from {} to {}, {:+.1} m towards goal{}",
                e.robots[0],
                e.robots[1],
                e.team,
                e.strikes,
                clock(e.from_t),
                clock(e.to_t),
                e.progress_m,
                if e.is_loop() { " — a pass loop" } else { "" }
            );
        }
        None => {
            let _ = writeln!(t, "  no pass loops");
        }
    }
    let _ = writeln!(
        t,
        "(--json gives every strike, goal and event; docs/soccer.md says how each figure is counted)"
    );
    t
}

#[cfg(test)]
mod tests {
    use super::length;

    #[test]
    fn a_length_of_play_keeps_its_tenths() {
        assert_eq!(length(600.0), "10:00");
        assert_eq!(length(0.5), "00:00.5");
        assert_eq!(length(61.25), "01:01.3");
        assert_eq!(length(119.97), "02:00");
        assert_eq!(length(32.47), "00:32.5");
    }
}
