//! The compact recording (`simrob-swarm-recording` version 2) written on its own thread:
//! observing never changes a run, what is written reads back, and a writer that falls behind
//! leaves snapshots out, counted and marked, with bounded memory.

use std::io::Write;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use simrob_record::swarm::Reader;
use simrob_swarm::scenario::{Overrides, Scenario};
use simrob_swarm::seer::{CompactRecorder, JsonLinesRecorder, Seer};
use simrob_swarm::Simulation;

fn drones(n: usize, seconds: f64) -> Simulation {
    let text = format!(
        "fps = 24\nduration = {seconds}\nseed = 11\n[generator]\nkind = \"drone-swarm\"\nrobots = {n}\n"
    );
    Scenario::from_toml_str(&text, Path::new("."))
        .expect("scenario parses")
        .build(&Overrides {
            full_duration: true,
            ..Overrides::default()
        })
        .expect("scenario builds")
}

fn end_state(sim: &Simulation) -> Vec<u64> {
    let w = sim.world();
    w.pose
        .iter()
        .flat_map(|(e, p)| {
            [
                u64::from(e.0),
                p.x.to_bits(),
                p.y.to_bits(),
                p.theta.to_bits(),
            ]
        })
        .collect()
}

/// A shared in-memory file; the first write waits until `gate` is closed (a disk that stalls).
#[derive(Clone)]
struct SharedFile {
    bytes: Arc<Mutex<Vec<u8>>>,
    gate: Arc<Mutex<Option<mpsc::Receiver<()>>>>,
}

impl SharedFile {
    fn new(gate: Option<mpsc::Receiver<()>>) -> Self {
        SharedFile {
            bytes: Arc::default(),
            gate: Arc::new(Mutex::new(gate)),
        }
    }
    fn contents(&self) -> Vec<u8> {
        self.bytes.lock().unwrap().clone()
    }
}

impl Write for SharedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(gate) = self.gate.lock().unwrap().take() {
            // Until the test closes the gate.
            while gate.recv().is_ok() {}
        }
        self.bytes.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn recording_does_not_change_the_run_and_reads_back() {
    let mut plain = drones(400, 4.0);
    let s0 = plain.run();
    let file = SharedFile::new(None);
    let mut recorded = drones(400, 4.0);
    let rec = CompactRecorder::new(file.clone(), 1, 64 << 20).unwrap();
    let stats = rec.stats();
    recorded.add_system(Box::new(Seer::new("drones", 1.0, vec![Box::new(rec)])));
    let mut json = drones(400, 4.0);
    json.add_system(Box::new(Seer::new(
        "drones",
        1.0,
        vec![Box::new(JsonLinesRecorder::new(std::io::sink()))],
    )));
    let (s1, s2) = (recorded.run(), json.run());
    recorded.finish(0.0);
    assert_eq!(end_state(&recorded), end_state(&plain), "compact recording");
    assert_eq!(end_state(&json), end_state(&plain), "JSON recording");
    assert_eq!(
        (s1.frames, s1.collisions, s1.arrived, s1.crashed, s1.events),
        (s0.frames, s0.collisions, s0.arrived, s0.crashed, s0.events)
    );
    assert_eq!(s2.events, s0.events);
    // t = 0, 1, 2, 3, 4 and the end (the same frame as t = 4: not taken twice).
    let bytes = file.contents();
    assert_eq!(stats.bytes(), bytes.len() as u64);
    let mut r = Reader::open(std::io::Cursor::new(bytes)).unwrap();
    assert_eq!(r.version(), 2);
    assert!(r.is_finished());
    assert_eq!(r.times(), &[0.0, 1.0, 2.0, 3.0, 4.0]);
    assert_eq!((stats.written(), stats.dropped()), (5, 0));
    assert!(r.dropped().is_empty());
    let last = r.snapshot(4).unwrap();
    let w = recorded.world();
    let drones: Vec<_> = last.entities.iter().filter(|e| e.kind == 1).collect();
    assert_eq!(drones.len(), 400);
    for e in &drones {
        let p = w.pose.get(simrob_swarm::EntityId(e.id)).unwrap();
        assert!((e.x - p.x).abs() <= 0.0005 && (e.y - p.y).abs() <= 0.0005);
    }
    assert!(drones.iter().any(|e| e.state == "hovering"));
    // About 7 bytes a drone a snapshot (positions to 1/1000; 35 as JSON lines).
    let per = stats.bytes() as f64 / 5.0 / 400.0;
    assert!(per < 12.0, "{per} bytes a drone a snapshot");
}

#[test]
fn a_writer_that_falls_behind_leaves_snapshots_out_counted_and_marked() {
    let (open_gate, gate) = mpsc::channel::<()>();
    let file = SharedFile::new(Some(gate));
    let mut sim = drones(50, 10.0);
    let mut plain = drones(50, 10.0);
    plain.run();
    // Room for one snapshot: the stalled writer holds it; every later one is left out.
    let rec = CompactRecorder::new(file.clone(), 1, 50 * 16 + 100).unwrap();
    let stats = rec.stats();
    sim.add_system(Box::new(Seer::new("drones", 1.0, vec![Box::new(rec)])));
    while sim.step() {}
    assert_eq!(stats.written(), 0, "the writer is stalled");
    assert!(
        stats.dropped() >= 9,
        "t = 1 … 10 left out: {}",
        stats.dropped()
    );
    assert_eq!(end_state(&sim), end_state(&plain), "the run did not wait");
    drop(open_gate);
    sim.finish(0.0);
    let (written, dropped) = (stats.written(), stats.dropped());
    assert!(
        written >= 1 && written + dropped == 11,
        "{written} + {dropped}"
    );
    let r = Reader::open(std::io::Cursor::new(file.contents())).unwrap();
    assert!(r.is_finished());
    assert_eq!(r.len() as u64, written);
    assert_eq!(r.dropped().len() as u64, dropped);
    assert_eq!(r.dropped()[0], 1.0);
}

/// The last snapshot of a run is stamped with its frame's time (`frame / fps`), as the run's
/// summary and the live view say; it once had the time of the last event handled (54.60 s for
/// the hospital's frame 1093, 54.65 s).
#[test]
fn the_last_snapshot_is_stamped_with_its_frames_time() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/swarm/hospital.toml");
    let mut sim = Scenario::load(&path)
        .expect("hospital")
        .build(&Overrides::default())
        .expect("build");
    let file = SharedFile::new(None);
    sim.add_system(Box::new(Seer::new(
        "hospital",
        0.25,
        vec![Box::new(JsonLinesRecorder::new(file.clone()))],
    )));
    let summary = sim.run();
    let mut r = Reader::open(std::io::Cursor::new(file.contents())).unwrap();
    assert!(r.is_finished());
    let last = r.snapshot(r.len() - 1).unwrap();
    assert_eq!(last.frame, summary.frames);
    assert!(
        (last.t - summary.simulated_seconds).abs() < 1e-9,
        "last snapshot: frame {} at t = {}, the run: {} s",
        last.frame,
        last.t,
        summary.simulated_seconds
    );
}

#[test]
fn recording_an_hmr_swarm_that_runs_to_its_duration_changes_nothing() {
    // HMR Sim's drones are pushed every 0.125 s, so a push falls due exactly at the end of a
    // 10 s run: it is not handled, with snapshots or without (every 0.1 s, or 0.07 s).
    let hmr = || {
        let text = "fps = 24\nduration = 10\nseed = 3\n[generator]\nkind = \"drone-swarm\"\n\
                    robots = 300\navoidance = \"hmr\"\n";
        Scenario::from_toml_str(text, Path::new("."))
            .unwrap()
            .build(&Overrides {
                full_duration: true,
                ..Overrides::default()
            })
            .unwrap()
    };
    let mut plain = hmr();
    let s0 = plain.run();
    for period in [0.1, 0.07] {
        let mut seen = hmr();
        seen.add_system(Box::new(Seer::new(
            "drones",
            period,
            vec![Box::new(JsonLinesRecorder::new(std::io::sink()))],
        )));
        let s = seen.run();
        assert_eq!(
            (s.frames, s.events, s.collisions, s.crashed, s.arrived),
            (s0.frames, s0.events, s0.collisions, s0.crashed, s0.arrived),
            "snapshots every {period} s"
        );
        assert_eq!(end_state(&seen), end_state(&plain), "every {period} s");
    }
}
