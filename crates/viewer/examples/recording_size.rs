//! Recording size and replay start, JSON lines (version 1) against compact (version 2), on
//! the soccer scene: the SumBot drives an arc for N iterations (default 6,000: one simulated
//! minute at 10 ms) and every iteration is recorded both ways. Then the time to open each
//! file and show its first and last frame — what `simrob replay` does before it serves.
//!
//! ```sh
//! cargo run --release -p simrob-viewer --example recording_size            # 6,000 iterations
//! cargo run --release -p simrob-viewer --example recording_size -- 360000  # one simulated hour
//! ```

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use simrob_protocol::{
    decode_datagram, CommandKeys, ControlRequest, EntityId, EntityRequest, MotorCommand, Request,
};
use simrob_session::{LocalCommand, ServerConfig, Session};
use simrob_viewer::record::{header_now, RecordingReader, Writer};
use simrob_viewer::{Frame, FrameView};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let iterations: u64 = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 6000,
    };
    let dir = std::env::temp_dir().join(format!("simrob-recording-size-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let config = ServerConfig {
        receiver_port: 0,
        real_time_factor: 0.0,
        save_directory: dir.clone(),
        ..ServerConfig::default()
    };
    let mut core = Session::new(config);
    // Recording is observing: without an observer or an agent the session would not run.
    core.set_observed(true);
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/soccer.xml");
    let mut requests = decode_datagram(&std::fs::read(scenario)?, &CommandKeys::default())
        .into_iter()
        .collect::<Result<Vec<Request>, _>>()?;
    requests.push(Request::Control {
        request: ControlRequest::InitializeSimulation,
        response: None,
    });
    requests.push(Request::Entity {
        request: EntityRequest::RobotMotorControl {
            entity_id: EntityId(3),
            motors: vec![
                MotorCommand {
                    wheel_joint_id: 0,
                    value: 6.0,
                },
                MotorCommand {
                    wheel_joint_id: 1,
                    value: 4.0,
                },
            ],
        },
        response: None,
    });
    for r in requests {
        core.handle_command(LocalCommand::Request(r), Instant::now())?;
    }

    let v1_path = dir.join("v1.simrec");
    let v2_path = dir.join("v2.simrec");
    let mut v1 = BufWriter::new(std::fs::File::create(&v1_path)?);
    writeln!(v1, "{}", serde_json::to_string(&header_now("soccer"))?)?;
    let mut v2 = Writer::create(&v2_path, "soccer")?;
    let started = Instant::now();
    let mut done = 0;
    while done < iterations {
        if !core.handle_timeout(Instant::now()) {
            if core.poll_timeout(Instant::now()).is_none() {
                return Err(format!("the simulation stopped after {done} iterations").into());
            }
            continue;
        }
        let frame = Frame::of(&core.snapshot());
        writeln!(v1, "{}", serde_json::to_string(&frame)?)?;
        v2.write_frame(&frame)?;
        done += 1;
    }
    v1.flush()?;
    drop(v1);
    v2.finish()?;
    let wall = started.elapsed().as_secs_f64();
    let last = Frame::of(&core.snapshot());
    let robot = last.entities.iter().find(|e| e.id == 3).and_then(|e| e.p);
    println!(
        "{iterations} iterations ({:.1} simulated s) in {wall:.1} s wall; the SumBot ended at {robot:?}",
        last.time
    );
    let (s1, s2) = (size(&v1_path)?, size(&v2_path)?);
    println!(
        "JSON lines (v1): {:>12} bytes, {:>7.1} bytes/iteration",
        s1,
        s1 as f64 / iterations as f64
    );
    println!(
        "compact (v2):    {:>12} bytes, {:>7.1} bytes/iteration, {:.2}% of v1",
        s2,
        s2 as f64 / iterations as f64,
        100.0 * s2 as f64 / s1 as f64
    );
    for (name, path) in [("v1", &v1_path), ("v2", &v2_path)] {
        let t = Instant::now();
        let mut reader = RecordingReader::open(path)?;
        let n = reader.len();
        let first = reader.frame(0)?;
        let end = reader.frame(n - 1)?;
        println!(
            "replay start ({name}): {:.3} s to index {n} frames and show frames {} and {}",
            t.elapsed().as_secs_f64(),
            first.iteration,
            end.iteration
        );
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

fn size(path: &Path) -> std::io::Result<u64> {
    Ok(std::fs::metadata(path)?.len())
}
