//! Swarm recordings replayed in the 2D view: the map, every robot, drone and item in the
//! state it was recorded in, who carries what, with the replay's controls (play, pause,
//! step, a time slider in simulated seconds, the speed).
//!
//! What it reads: a `simrob-swarm-recording` (JSON lines, written by
//! `simrob swarm run --record FILE`; see `simrob_swarm::seer`), indexed on open (the
//! position and simulated time of every snapshot line) and decoded a frame at a time, so a
//! recording of any length opens at once. A recording its writer has not finished (no `end`
//! line yet) is followed: the player waits on its last frame for the next ones. The
//! recording keeps no sizes, names or routes: bodies are drawn
//! [`BODY_HALF`]/[`ITEM_HALF`] map units across (robots as discs, drones as squares, as
//! live), items are labelled by id, and a carried
//! item's carrier is the body it was recorded exactly on (the swarm moves a carried item
//! with its carrier, pose for pose).
//!
//! The player is the one replay player of both views ([`crate::player`]: the clock-free
//! [`Playhead`], the same page commands as the 3D replay). Playback starts when the first
//! page connects (Play before that only arms it: the status says `waiting`); the status
//! says `playing`, `paused` or `ended`.

use std::collections::HashMap;
use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use simrob_record::swarm;

use super::{Body2d, Frame2d, Poi2d, Replay2d, Scene2d, Status2d, View2d};
use crate::player::{wall_clock, Command, Controls, Player, Reel, Status};
use crate::Guard;

/// The `format` of the recordings this module reads.
pub const FORMAT: &str = swarm::FORMAT;
/// Half the width of a robot or drone drawn in a replay, map units (the recording keeps no
/// sizes; the swarm's default body is a disc of radius 5).
pub const BODY_HALF: f64 = 5.0;
/// Half the width of an item drawn in a replay, map units.
pub const ITEM_HALF: f64 = 3.0;
pub use crate::player::{Playhead, FOLLOW_POLL, SPEEDS};

fn invalid(text: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, text)
}

/// A swarm recording read on demand (through the format's one reader,
/// [`simrob_record::swarm::Reader`]), with the 2D scene of its header.
pub struct SwarmRecording {
    path: PathBuf,
    reader: swarm::Reader<File>,
    scene: Scene2d,
}

impl std::fmt::Debug for SwarmRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwarmRecording")
            .field("path", &self.path)
            .field("frames", &self.reader.len())
            .field("finished", &self.reader.is_finished())
            .finish()
    }
}

/// The scene of a swarm recording's header line.
pub fn scene_from_header(line: &[u8]) -> Result<Scene2d, swarm::ReadError> {
    Ok(scene_of(&swarm::parse_header(line)?))
}

/// The 2D scene of a swarm recording's (checked) header.
pub fn scene_of(h: &swarm::Header) -> Scene2d {
    Scene2d {
        world: "swarm".into(),
        title: format!("replay of {} (seed {})", h.scenario, h.seed),
        units: "unit".into(),
        width: h.width,
        height: h.height,
        rects: h
            .walls
            .iter()
            .map(|w| [w[0] - w[2], w[1] - w[3], w[0] + w[2], w[1] + w[3]])
            .collect(),
        bitmap: None,
        labels: Vec::new(),
        pois: h
            .pois
            .iter()
            .filter(|p| p.x.is_finite() && p.y.is_finite())
            .map(|p| Poi2d {
                name: p.name.clone(),
                x: p.x,
                y: p.y,
            })
            .collect(),
        paths: h.paths.clone(),
        kinds: h.kinds.clone(),
        states: super::swarm::states(),
        version: 1,
    }
}

/// The frame of one snapshot line (line 0: a line of no file).
pub fn frame_from_snapshot(line: &[u8], scene: &Scene2d) -> Result<Frame2d, swarm::ReadError> {
    Ok(frame_of(swarm::parse_snapshot(line, 0)?, scene))
}

/// The 2D frame of a (checked) snapshot.
pub fn frame_of(snap: swarm::Snapshot, scene: &Scene2d) -> Frame2d {
    let item_kind = scene.kinds.iter().position(|k| k == "item");
    let drone_kind = scene.kinds.iter().position(|k| k == "drone");
    let item_state = scene.state("item");
    let carried_state = scene.state("carried");
    let mut f = Frame2d {
        scene: scene.version,
        frame: snap.frame,
        time: snap.t,
        ..Frame2d::default()
    };
    f.bodies.reserve(snap.entities.len());
    let mut counts: Vec<usize> = vec![0; scene.states.len()];
    for e in snap.entities {
        let is_item = item_kind.is_some_and(|k| k == e.kind as usize);
        let mut state = scene.state(&e.state);
        if is_item && state == 0 {
            state = item_state;
        }
        if let Some(c) = counts.get_mut(usize::from(state)) {
            *c += 1;
        }
        let half = if is_item { ITEM_HALF } else { BODY_HALF };
        f.bodies.push(Body2d {
            id: e.id,
            x: e.x,
            y: e.y,
            theta: e.theta,
            half: [half, half],
            kind: u8::try_from(e.kind).unwrap_or(u8::MAX),
            state,
            // Drones are squares (their collider is a box), as the live view draws them.
            disc: !is_item && drone_kind.is_none_or(|k| k != e.kind as usize),
        });
    }
    // A carried item sits exactly on its carrier (same recorded pose).
    let key = |b: &Body2d| (b.x.to_bits(), b.y.to_bits());
    let carriers: HashMap<(u64, u64), u32> = f
        .bodies
        .iter()
        .filter(|b| b.state != carried_state && b.state != item_state)
        .map(|b| (key(b), b.id))
        .collect();
    for b in f.bodies.iter().filter(|b| b.state == carried_state) {
        if let Some(&c) = carriers.get(&key(b)) {
            f.carried.push([b.id, c]);
        }
    }
    f.figures
        .push(("entities".into(), f.bodies.len().to_string()));
    for (s, n) in scene.states.iter().zip(&counts) {
        if *n > 0 && !s.name.is_empty() {
            f.figures.push((s.name.clone(), n.to_string()));
        }
    }
    f
}

impl SwarmRecording {
    /// Opens `path`, reads its header and indexes every complete snapshot.
    pub fn open(path: &Path) -> std::io::Result<SwarmRecording> {
        let named = |e: swarm::ReadError| invalid(format!("{}: {e}", path.display()));
        let reader = swarm::Reader::open(File::open(path)?).map_err(named)?;
        let scene = scene_of(reader.header());
        Ok(SwarmRecording {
            path: path.to_path_buf(),
            reader,
            scene,
        })
    }

    /// The static map.
    pub fn scene(&self) -> &Scene2d {
        &self.scene
    }

    /// Snapshots indexed so far.
    pub fn len(&self) -> usize {
        self.reader.len()
    }

    /// No snapshot indexed yet.
    pub fn is_empty(&self) -> bool {
        self.reader.is_empty()
    }

    /// Simulated times of the snapshots.
    pub fn times(&self) -> &[f64] {
        self.reader.times()
    }

    /// Whether the writer ended the recording (its `end` line is there).
    pub fn is_finished(&self) -> bool {
        self.reader.is_finished()
    }

    /// Indexes the complete lines appended since the last call; returns how many snapshots
    /// it added. A snapshot without a readable time, or earlier than the one before, is an
    /// error naming its line.
    pub fn refresh(&mut self) -> std::io::Result<usize> {
        self.reader
            .refresh()
            .map_err(|e| invalid(format!("{}: {e}", self.path.display())))
    }

    /// Frame `index`.
    pub fn frame(&mut self, index: usize) -> std::io::Result<Frame2d> {
        let snap = self
            .reader
            .snapshot(index)
            .map_err(|e| invalid(format!("{}: {e}", self.path.display())))?;
        Ok(frame_of(snap, &self.scene))
    }
}

/// The 2D view's reel: a swarm recording and the view it is published to.
struct Swarm2d {
    recording: SwarmRecording,
    view: Option<View2d>,
    /// Why the recording cannot be read further (damaged, or replaced while it was
    /// followed): the replay follows it no more.
    damage: Option<String>,
}

impl Swarm2d {
    /// The recording cannot be read further: logged and told to the page once, and the
    /// replay follows the file no more (it was looked at again every [`FOLLOW_POLL`]).
    fn damaged(&mut self, e: &std::io::Error) {
        if self.damage.is_some() {
            return;
        }
        let text = format!("{e}: the replay stops after frame {}", self.recording.len());
        tracing::error!("replay: {text}");
        if let Some(v) = &self.view {
            v.response(&format!("Error: {text}"));
        }
        self.damage = Some(text);
    }
}

impl Reel for Swarm2d {
    fn count(&self) -> usize {
        self.recording.len()
    }

    fn finished(&self) -> bool {
        self.damage.is_some() || self.recording.is_finished()
    }

    fn refresh(&mut self) -> bool {
        if self.damage.is_some() {
            return false;
        }
        match self.recording.refresh() {
            Ok(n) => n > 0,
            Err(e) => {
                self.damaged(&e);
                false
            }
        }
    }

    fn times(&self) -> &[f64] {
        self.recording.times()
    }

    fn show(&mut self, index: usize, status: &Status) {
        match self.recording.frame(index) {
            Ok(mut f) => {
                let times = self.recording.times();
                f.status = Status2d {
                    state: status.state.into(),
                    speed: status.speed,
                    controls: true,
                };
                f.replay = Some(Replay2d {
                    count: status.count,
                    index,
                    start: times.first().copied().unwrap_or(0.0),
                    end: times.last().copied().unwrap_or(0.0),
                    following: !status.finished,
                });
                if let Some(v) = &self.view {
                    v.publish(&f);
                }
            }
            Err(e) => self.damaged(&e),
        }
    }
}

/// A swarm recording served in the 2D view; dropping it stops the player and the page.
pub struct SwarmReplay {
    player: Arc<Player<Swarm2d>>,
}

impl SwarmReplay {
    /// Serves the 2D view of `recording` on `bind` (port 0 picks a free one), paused on its
    /// first frame at `speed` (recorded seconds per wall second, > 0). Refuses a finished
    /// recording without snapshots.
    pub fn serve(
        recording: SwarmRecording,
        bind: SocketAddr,
        speed: f64,
        guard: Guard,
    ) -> std::io::Result<SwarmReplay> {
        if recording.is_empty() && recording.is_finished() {
            return Err(invalid(format!(
                "{}: the recording has no snapshots",
                recording.path.display()
            )));
        }
        let hello = format!("replay of {}", recording.path.display());
        let scene = recording.scene.clone();
        let player = Player::new(
            Swarm2d {
                recording,
                view: None,
                damage: None,
            },
            wall_clock(),
        );
        player.wait_for_page();
        player
            .command(Command::Speed(speed))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let view = View2d::serve(
            bind,
            Arc::new(Controls(Arc::downgrade(&player))),
            "swarm",
            &hello,
            "replay",
            guard,
        )?;
        view.set_scene(&scene);
        player.with_reel(|reel, _| reel.view = Some(view));
        player.show();
        player.spawn("replay-2d")?;
        Ok(SwarmReplay { player })
    }

    /// The page's address.
    pub fn addr(&self) -> SocketAddr {
        self.player.with_reel(|reel, _| {
            reel.view
                .as_ref()
                .map_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)), |v| v.addr())
        })
    }

    /// Where the replay is: its state word (`waiting`, `playing`, `paused`, `ended`), the
    /// frame shown and the frames indexed.
    pub fn status(&self) -> (&'static str, usize, usize) {
        let s = self.player.status();
        (s.state, s.index, s.count)
    }

    /// Plays (from the first page's connection on).
    pub fn play(&self) {
        let _ = self.player.command(Command::Play);
    }
}

impl Drop for SwarmReplay {
    fn drop(&mut self) {
        self.player.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene() -> Scene2d {
        scene_from_header(
            br#"{"type":"header","format":"simrob-swarm-recording","version":1,"scenario":"s","seed":3,"fps":10,"width":200,"height":100,"kinds":["world","robot","item"],"walls":[[10,20,5,2]],"pois":[{"name":"ward","x":5,"y":6}],"paths":[[0,0,1,1]]}"#,
        )
        .expect("header")
    }

    #[test]
    fn a_snapshot_becomes_a_frame_with_items_their_carriers_and_states() {
        let scene = scene();
        assert_eq!(scene.rects, vec![[5.0, 18.0, 15.0, 22.0]]);
        assert_eq!(scene.title, "replay of s (seed 3)");
        let f = frame_from_snapshot(
            br#"{"type":"snapshot","frame":40,"t":4,"entities":[[1,1,10.5,20,0.5,"ready"],[2,2,10.5,20,0.5,"carried"],[3,2,50,50,0,""],[4,1,50,50,0,"blocked"]]}"#,
            &scene,
        )
        .expect("frame");
        assert_eq!((f.frame, f.time, f.bodies.len()), (40, 4.0, 4));
        assert_eq!(f.carried, vec![[2, 1]], "carried by the robot it sits on");
        let state = |i: usize| scene.states[usize::from(f.bodies[i].state)].name.as_str();
        assert_eq!(
            [state(0), state(1), state(2), state(3)],
            ["ready", "carried", "item", "blocked"]
        );
        assert!(f.bodies[0].disc && !f.bodies[2].disc);
        assert!(f.figures.contains(&("carried".into(), "1".into())));
    }

    #[test]
    fn bad_headers_and_snapshots_are_refused_with_what_is_wrong() {
        for (header, want) in [
            (
                &br#"{"format":"simrob-recording","version":2,"width":1,"height":1}"#[..],
                "not a simrob-swarm-recording",
            ),
            (
                br#"{"format":"simrob-swarm-recording","version":3,"width":1,"height":1}"#,
                "version",
            ),
            (
                br#"{"format":"simrob-swarm-recording","version":1,"width":0,"height":1}"#,
                "positive",
            ),
            (
                br#"{"format":"simrob-swarm-recording","version":1}"#,
                "width",
            ),
            (b"not json", "header"),
        ] {
            let e = scene_from_header(header).expect_err("refused").to_string();
            assert!(e.contains(want), "{e}");
        }
        let scene = scene();
        for line in [
            &br#"{"frame":1,"t":0,"entities":[[1,1,"x",0,0,""]]}"#[..],
            br#"{"frame":1,"t":0}"#,
            br#"{"frame":1,"t":0,"entities":[[1,1,1e999,0,0,""]]}"#,
        ] {
            assert!(frame_from_snapshot(line, &scene).is_err());
        }
        assert_eq!(
            swarm::snapshot_time(br#"{"type":"snapshot","frame":3,"t":1.25,"entities":[]}"#),
            Some(1.25)
        );
        assert_eq!(
            swarm::snapshot_time(br#"{"type":"snapshot","frame":3}"#),
            None
        );
    }

    #[test]
    fn drones_replay_as_squares_and_robots_as_discs_as_live() {
        let header = br#"{"type":"header","format":"simrob-swarm-recording","version":1,"width":100,"height":100,"kinds":["world","robot","drone"]}"#;
        let h = swarm::parse_header(header).expect("header");
        let scene = scene_of(&h);
        let f = frame_from_snapshot(
            br#"{"type":"snapshot","frame":0,"t":0,"entities":[[1,1,10,5,0,""],[2,2,20,5,0,"flying"]]}"#,
            &scene,
        )
        .expect("frame");
        let disc: Vec<bool> = f.bodies.iter().map(|b| b.disc).collect();
        assert_eq!(disc, [true, false], "robot a disc, drone a square");
    }

    #[test]
    fn a_recording_is_indexed_as_it_grows_and_ends() {
        let dir = std::env::temp_dir().join(format!("simrob-replay2d-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("run.jsonl");
        let header = r#"{"type":"header","format":"simrob-swarm-recording","version":1,"width":100,"height":100,"kinds":["world","robot"]}"#;
        let snap = |k: u32| {
            format!(
                r#"{{"type":"snapshot","frame":{k},"t":{},"entities":[[1,1,{k},5,0,""]]}}"#,
                f64::from(k) * 0.5
            )
        };
        std::fs::write(
            &path,
            format!("{header}\n{}\n{{\"type\":\"log\"}}\n{}", snap(0), snap(1)),
        )
        .expect("write");
        let mut r = SwarmRecording::open(&path).expect("open");
        assert_eq!(
            (r.len(), r.is_finished()),
            (1, false),
            "the last line is not whole yet"
        );
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("append");
        write!(
            file,
            "\n{}\n{{\"summary\":{{}},\"type\":\"end\"}}\n",
            snap(2)
        )
        .expect("write");
        assert_eq!(r.refresh().expect("refresh"), 2);
        assert!(r.is_finished());
        assert_eq!(r.times(), &[0.0, 0.5, 1.0]);
        assert_eq!(r.frame(2).expect("frame").bodies[0].x, 2.0);
        assert!(r.frame(3).is_err());
        std::fs::write(&path, format!("{header}\n{}\n{}\n", snap(2), snap(1))).expect("write");
        let e = SwarmRecording::open(&path).expect_err("time goes back");
        assert!(e.to_string().contains("line 3"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
