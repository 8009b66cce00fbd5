//! Record a live run, read it back, export it, and replay it in a real browser (headless
//! Chromium): the page draws the robot where the recorded frame says.

use crate::headless;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use simrob_client::agent::Agent;
use simrob_viewer::record::{header_now, recorder, Recording, RecordingReader, FORMAT, VERSION};
use simrob_viewer::replay::serve_replay;
use simrob_viewer::{Frame, FrameBody, FrameEntity};

use crate::sumbot::{initialize, run_iterations, wheels};
use headless::{centroid, orange_pixels, screenshot, Page};

/// Runs the soccer scenario at real time with a recorder, drives the SumBot, stops.
fn record_a_run(dir: &Path) -> PathBuf {
    let file = dir.join("run.simrec");
    let mut server = crate::sumbot::soccer_server(dir, 1.0);
    let udp = server.local_addr().unwrap();
    server.add_observer(recorder(&file, &format!("udp://{udp}")).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || server.run(&flag).unwrap());

    let mut agent = Agent::connect(udp).unwrap();
    initialize(&mut agent, "driver", Duration::from_secs(2));
    // The robot lands, then both wheels +6 rad/s: towards −X.
    run_iterations(&mut agent, 50);
    wheels(&mut agent, 6.0, 6.0);
    run_iterations(&mut agent, 150);
    // The file can be read while it is written.
    let partial = Recording::open(&file).unwrap();
    assert!(partial.frames.len() > 10, "{} frames", partial.frames.len());
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    file
}

fn robot(frame: &Frame) -> [f64; 3] {
    frame
        .entities
        .iter()
        .find(|e| e.id == 3 && e.kind == "Robot")
        .and_then(|e| e.p)
        .expect("the SumBot's pose")
}

/// The centroid of the pixels close to the SumBot's orange.
fn robot_on_screen(img: &image::RgbaImage) -> (f64, f64) {
    let points = orange_pixels(img);
    assert!(
        points.len() > 50,
        "robot not drawn ({} orange pixels)",
        points.len()
    );
    centroid(&points)
}

#[test]
fn a_recorded_run_reads_back_exports_and_replays_in_the_browser() {
    let dir = std::env::temp_dir().join(format!("simrob-replay-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = record_a_run(&dir);

    // The file: a JSON header line, then compact blocks, finished when the server stopped.
    let bytes = std::fs::read(&file).unwrap();
    let first = bytes.split(|&b| b == b'\n').next().unwrap();
    let header: serde_json::Value = serde_json::from_slice(first).unwrap();
    assert_eq!(header["format"], FORMAT);
    assert_eq!(header["version"], VERSION);
    assert!(header["source"].as_str().unwrap().starts_with("udp://"));
    assert!(header["started_unix_ms"].as_u64().unwrap() > 0);
    let reader = RecordingReader::open(&file).unwrap();
    assert!(reader.is_finished());
    let recording = Recording::open(&file).unwrap();
    assert_eq!(recording.frames.len(), reader.len());
    assert!(
        recording.frames.len() > 50,
        "{} frames",
        recording.frames.len()
    );
    for pair in recording.frames.windows(2) {
        assert_eq!(
            pair[1].iteration,
            pair[0].iteration + 1,
            "one line per iteration"
        );
        assert!(pair[1].time > pair[0].time || pair[0].bodies.is_empty());
    }
    // The robot moved (towards −X).
    let last = recording.frames.len() - 1;
    let early = recording
        .frames
        .iter()
        .position(|f| f.time >= 0.3)
        .expect("a frame after 0.3 s");
    let (a, b) = (
        robot(&recording.frames[early]),
        robot(&recording.frames[last]),
    );
    assert!(b[0] < a[0] - 0.05, "the robot did not move: {a:?} → {b:?}");

    // The CSV: a header row, one row per frame and robot or ball.
    let mut csv = Vec::new();
    recording.export_csv(&mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "time,iteration,entity,kind,x,y,z,roll,pitch,yaw");
    let posed: usize = recording
        .frames
        .iter()
        .map(|f| {
            f.entities
                .iter()
                .filter(|e| e.p.is_some() && e.kind != "Field")
                .count()
        })
        .sum();
    assert_eq!(rows.len() - 1, posed);
    let last_robot_row = rows
        .iter()
        .rev()
        .find(|r| r.split(',').nth(2) == Some("3"))
        .unwrap();
    let cols: Vec<&str> = last_robot_row.split(',').collect();
    assert_eq!(cols[3], "Robot");
    assert_eq!(cols[1], recording.frames[last].iteration.to_string());
    assert!((cols[4].parse::<f64>().unwrap() - b[0]).abs() < 1e-6);

    // The replay in the browser: top view, 200 px per metre, centred on the origin.
    let frames = recording.frames.clone();
    let (viewer, player) =
        serve_replay(recording, "127.0.0.1:0".parse().unwrap(), "test replay").unwrap();
    player.play();
    player.pause();
    let url = format!(
        "http://{}/?view=top&scale=200&cx=0&cy=0&labels=0&panel=0",
        viewer.addr()
    );
    let mut drawn = Vec::new();
    for (index, name) in [(early, "early.png"), (last, "last.png")] {
        player.seek(index);
        let status = player.status();
        assert_eq!((status.index, status.playing), (index, false));
        let img = screenshot(&url, &dir.join(name), 800, 600);
        let (px, py) = robot_on_screen(&img);
        let p = robot(&frames[index]);
        let (ex, ey) = (400.0 + 200.0 * p[0], 300.0 - 200.0 * p[1]);
        assert!(
            (px - ex).abs() < 6.0 && (py - ey).abs() < 6.0,
            "frame {index}: robot drawn at ({px:.1}, {py:.1}), the recording says ({ex:.1}, {ey:.1})"
        );
        drawn.push(px);
    }
    assert!(
        drawn[1] < drawn[0] - 10.0,
        "the robot did not move on screen: {drawn:?}"
    );
    drop(player);
    drop(viewer);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A ball rolling along X for `n` frames of `dt` simulated seconds.
fn rolling_ball(n: u64, dt: f64) -> Recording {
    let frames = (0..n)
        .map(|i| {
            let p = [i as f64 * 0.001, 0.0, 0.02];
            Frame {
                iteration: i,
                time: i as f64 * dt,
                initialized: true,
                timestep: dt,
                ..crate::wire::ball_at(1, p)
            }
        })
        .collect();
    Recording {
        header: header_now("test"),
        frames,
    }
}

#[test]
fn the_replay_page_says_replay_shows_the_real_speed_and_starts_when_a_browser_connects() {
    let dir = std::env::temp_dir().join(format!("simrob-replay-page-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // 100 simulated seconds: at speed 2.5, 40 s of playing, longer than the page takes to load.
    let (viewer, player) = serve_replay(
        rolling_ball(2001, 0.05),
        "127.0.0.1:0".parse().unwrap(),
        "rolling ball",
    )
    .unwrap();
    player.set_speed(2.5).unwrap();
    player.play();
    // No page yet: armed, held on the first frame.
    let status = player.status();
    assert!(status.playing && status.waiting, "{status:?}");
    assert_eq!(status.index, 0);
    assert_eq!((status.start, status.end), (0.0, 100.0));

    let url = format!("http://{}/", viewer.addr());
    let mut page = Page::open(&url, &dir.join("profile"), 800, 600);
    let describe = "document.getElementById('status').textContent";
    page.wait_for("document.body.dataset.replay === 'playing'", describe);
    // The page connected: the player runs.
    assert!(!player.status().waiting);
    assert_eq!(page.eval("document.body.dataset.mode"), "replay");
    assert_eq!(page.text("mode"), "REPLAY");
    assert_eq!(
        page.eval("getComputedStyle(document.getElementById('sim')).display"),
        "none"
    );
    assert_eq!(page.text("r-state"), "playing");
    // The status line is written when the frame is drawn, after the replay panel.
    page.wait_for(
        "document.getElementById('status').textContent.startsWith('replay · playing · t = ')",
        describe,
    );
    assert_eq!(page.eval("document.getElementById('r-speed').value"), "2.5");
    assert_eq!(page.text("r-start"), "0.00 s");
    assert_eq!(page.text("r-end"), "100.00 s");
    assert!(page.text("r-time").ends_with(" of 100.00 s"));

    // Paused at 20 s.
    player.pause();
    player.seek(400);
    page.wait_for(
        "document.body.dataset.replay === 'paused' && simrob.frame.iteration === 400",
        describe,
    );
    assert_eq!(page.text("r-time"), "t = 20.00 s of 100.00 s");
    page.wait_for(
        "document.getElementById('status').textContent.startsWith('replay · paused · t = 20.00 s')",
        describe,
    );
    assert_eq!(page.eval("document.getElementById('seek').value"), "400");

    // Played to the end.
    player.seek(1998);
    player.play();
    page.wait_for("document.body.dataset.replay === 'ended'", describe);
    assert!(player.status().ended);
    assert_eq!(page.text("r-state"), "ended");
    assert!(page.text("r-time").starts_with("t = 100.00 s"));
    drop(page);
    drop(player);
    drop(viewer);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// Pinned formats: the bytes a recording is written as and the frames read back from each
// format, bit for bit (a hash of the bytes, or of the frames' debug text, which prints every
// f64 exactly). A change here changes what every existing recording means.

/// FNV-1a, 64 bits.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn debug_hash<T: std::fmt::Debug>(value: &T) -> u64 {
    fnv(format!("{value:?}").as_bytes())
}

/// A short run: five static boxes, a robot on a curve (values that 32-bit floats round), a
/// ball that appears at frame 100 and a re-initialization at frame 250 (time starts again).
fn pinned_frames() -> Vec<Frame> {
    (0..300u64)
        .map(|i| {
            let k = if i >= 250 { i - 250 } else { i };
            let t = k as f64 * 0.01;
            let mut bodies: Vec<FrameBody> = (0..5)
                .map(|b| FrameBody {
                    e: 1,
                    id: b,
                    shape: "Box".into(),
                    dims: [0.1 * f64::from(b + 1), 0.2, 0.3],
                    material: b % 2,
                    mass: -1.0,
                    p: [f64::from(b) * 0.7, 0.0, 0.15],
                    r: [0.0; 3],
                    v: [0.0; 3],
                    w: [0.0; 3],
                })
                .collect();
            let robot_p = [(t * 0.37).sin(), (t * 0.21).cos() * 0.5, 0.025];
            let robot_r = [0.0, 0.0, t * 1.1];
            bodies.push(FrameBody {
                e: 3,
                id: 0,
                shape: "Cylinder".into(),
                dims: [0.05, 0.03, 0.0],
                material: 2,
                mass: 0.31,
                p: robot_p,
                r: robot_r,
                v: [0.37 * (t * 0.37).cos(), -0.105 * (t * 0.21).sin(), 0.0],
                w: [0.0, 0.0, 1.1],
            });
            let mut entities = vec![
                FrameEntity {
                    id: 1,
                    kind: "Field".into(),
                    p: None,
                    r: None,
                },
                FrameEntity {
                    id: 3,
                    kind: "Robot".into(),
                    p: Some(robot_p),
                    r: Some(robot_r),
                },
            ];
            if i >= 100 {
                let ball = [1.0 / 3.0 + (i / 7) as f64 * 0.013, -0.2, 0.021];
                entities.push(FrameEntity {
                    id: 4,
                    kind: "Ball".into(),
                    p: Some(ball),
                    r: Some([0.0; 3]),
                });
            }
            Frame {
                iteration: if i >= 250 { i - 250 } else { i + 1000 },
                time: t,
                initialized: i % 50 != 3,
                paused: i % 90 == 7,
                sync: i % 2 == 0,
                auto_adjust: i > 200,
                timestep: 0.01,
                gravity: -9.81,
                steps_per_iteration: 1 + (i % 3) as u32,
                real_time_factor: 1.0 + (i as f64) * 0.001,
                bodies,
                entities,
            }
        })
        .collect()
}

/// The pinned frames as a version-2 recording, and its header line.
fn pinned_v2() -> (serde_json::Value, Vec<u8>) {
    let mut out = Vec::new();
    let mut w = simrob_viewer::record::Writer::new(&mut out, "pin").unwrap();
    for f in &pinned_frames() {
        w.write_frame(f).unwrap();
    }
    w.finish().unwrap();
    let cut = out.iter().position(|&b| b == b'\n').unwrap() + 1;
    let header = serde_json::from_slice(&out[..cut]).unwrap();
    (header, out[cut..].to_vec())
}

#[test]
fn pinned_a_compact_recording_is_written_and_read_back_bit_for_bit() {
    let (header, blocks) = pinned_v2();
    assert_eq!(header["format"], "simrob-recording");
    assert_eq!(header["version"], 2);
    assert_eq!(header["source"], "pin");
    assert_eq!((blocks.len(), fnv(&blocks)), (PIN_V2_LEN, PIN_V2_BYTES));
    let dir = std::env::temp_dir().join(format!("simrob-pin-v2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pin.simrec");
    let mut file = serde_json::to_vec(&header).unwrap();
    file.push(b'\n');
    file.extend_from_slice(&blocks);
    std::fs::write(&path, &file).unwrap();
    let read = Recording::open(&path).unwrap();
    assert_eq!(read.frames.len(), 300);
    assert_eq!(debug_hash(&read.frames), PIN_V2_FRAMES);
    let mut csv = Vec::new();
    RecordingReader::open(&path)
        .unwrap()
        .export_csv(&mut csv)
        .unwrap();
    assert_eq!((csv.len(), fnv(&csv)), (PIN_CSV_LEN, PIN_CSV));
    let mut again = Vec::new();
    read.export_csv(&mut again).unwrap();
    assert_eq!(again, csv);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pinned_a_json_lines_recording_reads_back_bit_for_bit() {
    let frames = pinned_frames();
    let mut text = String::from(
        "{\"format\":\"simrob-recording\",\"version\":1,\"source\":\"pin\",\"started_unix_ms\":1}\n",
    );
    for f in &frames {
        text.push_str(&serde_json::to_string(f).unwrap());
        text.push('\n');
    }
    assert_eq!(fnv(text.as_bytes()), PIN_V1_TEXT);
    let parsed = Recording::parse(&text).unwrap();
    assert_eq!(debug_hash(&parsed.frames), PIN_V1_FRAMES);
    let dir = std::env::temp_dir().join(format!("simrob-pin-v1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pin.simrec");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(Recording::open(&path).unwrap(), parsed);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A swarm run's recording, written by the swarm's recorder.
fn pinned_swarm_recording() -> Vec<u8> {
    use simrob_swarm::seer::{Consumer, EntitySnap, Header, JsonLinesRecorder, PoiInfo, Snapshot};
    let mut out = Vec::new();
    let mut rec = JsonLinesRecorder::new(&mut out);
    rec.header(&Header {
        scenario: "pin".into(),
        seed: 7,
        fps: 24.0,
        snapshot_period: 0.25,
        width: 400.0,
        height: 300.0,
        kinds: vec!["world".into(), "robot".into(), "item".into()],
        walls: vec![[50.0, 0.0, 50.0, 2.0], [0.0, 150.0, 2.0, 150.0]],
        pois: vec![PoiInfo {
            name: "dock".into(),
            x: 20.5,
            y: 30.25,
        }],
        paths: vec![[20.5, 30.25, 200.0, 100.0]],
    })
    .unwrap();
    for frame in 0..40u64 {
        let t = frame as f64 * 0.25;
        let entities = (0..6u32)
            .map(|id| {
                let item = id >= 4;
                let carried = item && frame >= 20 && id == 4;
                let x = 100.0 + f64::from(id) * 10.0 + (t * 0.3 + f64::from(id)).sin() * 7.0;
                let y = 80.0 + (t / 3.0) * f64::from(id);
                let (x, y) = if carried {
                    (100.0 + (t * 0.3).sin() * 7.0, 80.0)
                } else {
                    (x, y)
                };
                EntitySnap {
                    id,
                    kind: if item { 2 } else { 1 },
                    x,
                    y,
                    theta: t * 0.1 * f64::from(id),
                    state: if carried {
                        "carried"
                    } else if id == 2 && frame > 30 {
                        "done"
                    } else {
                        ""
                    },
                    half: [5.0, 5.0],
                }
            })
            .collect();
        rec.snapshot(&Snapshot {
            frame: frame * 6,
            t,
            entities,
        })
        .unwrap();
        if frame == 10 {
            rec.log(&simrob_swarm::sim::LogLine {
                t,
                entity: Some(3),
                text: "{\"type\":\"snapshot\" in a note".into(),
            })
            .unwrap();
            rec.clock(2, 0.125).unwrap();
        }
    }
    rec.finish(&simrob_swarm::sim::Summary {
        scenario: "pin".into(),
        seed: 7,
        frames: 240,
        ..Default::default()
    })
    .unwrap();
    drop(rec);
    out
}

#[test]
fn pinned_a_swarm_recording_is_written_and_read_back_bit_for_bit() {
    let bytes = pinned_swarm_recording();
    assert_eq!((bytes.len(), fnv(&bytes)), (PIN_SWARM_LEN, PIN_SWARM_BYTES));
    let dir = std::env::temp_dir().join(format!("simrob-pin-swarm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pin.jsonl");
    std::fs::write(&path, &bytes).unwrap();
    // As 3D frames.
    let read = Recording::open(&path).unwrap();
    assert_eq!(read.frames.len(), 40);
    assert_eq!(debug_hash(&read.frames), PIN_SWARM_FRAMES);
    // As 2D frames.
    let mut r2 = simrob_viewer::view2d::replay::SwarmRecording::open(&path).unwrap();
    assert!(r2.is_finished());
    assert_eq!(debug_hash(r2.scene()), PIN_SWARM_SCENE);
    let frames: Vec<_> = (0..r2.len()).map(|i| r2.frame(i).unwrap()).collect();
    assert_eq!(frames.len(), 40);
    assert_eq!(debug_hash(&frames), PIN_SWARM_FRAMES_2D);
    let _ = std::fs::remove_dir_all(&dir);
}

const PIN_V2_LEN: usize = 11112;
const PIN_V2_BYTES: u64 = 10635135613586569727;
const PIN_V2_FRAMES: u64 = 4509668995622097624;
const PIN_CSV_LEN: usize = 25994;
const PIN_CSV: u64 = 4083286920807338041;
const PIN_V1_TEXT: u64 = 74959215225505658;
// Read with serde_json's exact float parsing (`float_roundtrip`), as the `simrob` binary always
// did (it reached the reader through the coordination crate) and as simrob-record now asks for
// itself, so the figure no longer depends on which crates a build includes.
const PIN_V1_FRAMES: u64 = 8165980258088952958;
const PIN_SWARM_LEN: usize = 9311;
const PIN_SWARM_BYTES: u64 = 11448146840944996926;
// Entities named by their kind (drones, items; a kind without a name a robot), positions in
// metres divided from map units (660 units: 6.6, not 6.6000000000000005).
const PIN_SWARM_FRAMES: u64 = 11709980330416777208;
const PIN_SWARM_SCENE: u64 = 10368991805376975563;
const PIN_SWARM_FRAMES_2D: u64 = 7372890250329668621;

/// A recording of `n` frames of the rolling ball written to `path` (compact), its blocks
/// flushed; the writer finishes the file when dropped.
fn write_compact(path: &Path, n: u64) -> simrob_viewer::record::Writer<std::fs::File> {
    let mut writer = simrob_viewer::record::Writer::create(path, "test").unwrap();
    for f in rolling_ball(n, 0.01).frames {
        writer.write_frame(&f).unwrap();
    }
    writer.flush().unwrap();
    writer
}

/// A damaged block with more of the file after it is an error at the start, as the export
/// says (it was served and skipped, a warning a frame in the log).
#[test]
fn a_damaged_recording_is_refused_before_it_is_served() {
    let dir = std::env::temp_dir().join(format!("simrob-replay-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("damaged.simrec");
    // Three blocks (256 frames each at most) and the end mark.
    write_compact(&path, 700).finish().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let header_len = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    // The second block's payload: its header is whole (the index opens), its deflate
    // stream is not.
    let first_len = u32::from_le_bytes(bytes[header_len + 4..header_len + 8].try_into().unwrap());
    let second = header_len + 32 + first_len as usize;
    for b in &mut bytes[second + 32 + 8..second + 32 + 16] {
        *b = 0xff;
    }
    std::fs::write(&path, &bytes).unwrap();
    let reader = RecordingReader::open(&path).unwrap();
    let e = simrob_viewer::replay::serve_file(reader, "127.0.0.1:0".parse().unwrap(), "damaged")
        .err()
        .expect("a damaged recording is refused");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
    assert!(
        e.to_string().contains(&format!("block at byte {second}")),
        "names the damaged block: {e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A followed recording that turns unreadable (replaced, or bytes that are no block
/// appended) is told to the page once, as an error in its response panel and in the replay
/// status of the frame shown; the replay plays on to the frames it has and stops following
/// (it logged a warning every 250 ms and the page was never told).
#[test]
fn a_followed_recording_that_turns_unreadable_is_told_to_the_page() {
    use std::io::Write;
    use tungstenite::Message;
    let dir = std::env::temp_dir().join(format!("simrob-replay-replaced-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("live.simrec");
    let writer = write_compact(&path, 3);
    let reader = RecordingReader::open(&path).unwrap();
    assert!(!reader.is_finished());
    let (viewer, player) =
        simrob_viewer::replay::serve_file(reader, "127.0.0.1:0".parse().unwrap(), "live").unwrap();
    player.play();
    let addr = viewer.addr();
    let stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let (mut ws, _) = tungstenite::client::client(format!("ws://{addr}/ws"), stream).unwrap();
    // The page is connected once its hello and the first frame came.
    let mut frame_seen = false;
    while !frame_seen {
        if let Message::Binary(b) = ws.read().expect("a message") {
            frame_seen = simrob_viewer::wire_meta(&b).unwrap()["type"] == "frame";
        }
    }
    // Not a block where the next block was due.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&[0xee; 64])
        .unwrap();
    let (mut response, mut status_error) = (None, None);
    while response.is_none() || status_error.is_none() {
        match ws.read().expect("the page is told") {
            Message::Text(t) => {
                let m: serde_json::Value = serde_json::from_str(t.as_str()).unwrap();
                if m["type"] == "response" {
                    assert!(response.is_none(), "told once: {m}");
                    response = m["text"].as_str().map(str::to_owned);
                }
            }
            Message::Binary(b) => {
                let meta = simrob_viewer::wire_meta(&b).unwrap();
                if let Some(e) = meta["replay"]["error"].as_str() {
                    status_error = Some(e.to_owned());
                }
            }
            // The viewer pings a page every third of its idle timeout (20 s): the error comes
            // within one look at the file (every 250 ms), long before.
            Message::Ping(_) => panic!("the page was not told within a ping's interval"),
            _ => {}
        }
    }
    let response = response.unwrap();
    assert!(
        response.starts_with("error: ") && response.contains("not a recording block"),
        "{response}"
    );
    assert!(status_error.unwrap().contains("not a recording block"));
    assert!(player.damage().is_some());
    drop(writer);
    drop(player);
    drop(viewer);
    let _ = std::fs::remove_dir_all(&dir);
}
