//! `simrob replay`: recordings in the viewer, or exported.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use simrob_viewer::record::Recording;

/// What `--export` writes.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Export {
    /// Each robot's and ball's pose over time:
    /// `time,iteration,entity,kind,x,y,z,rot_x,rot_y,rot_z` (metres, radians, simulated s).
    Csv,
}

/// Arguments of `simrob replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The recording (written by `simrob serve --record FILE`; it may still be being written).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Port of the viewer (0 picks a free port).
    #[arg(long, value_name = "N", default_value_t = 8080)]
    pub http_port: u16,
    /// Address the viewer listens on.
    #[arg(long, value_name = "IP", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
    /// Speed of the replay: recorded simulated seconds per wall second.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub speed: f64,
    /// Export the recording instead of serving the viewer.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub export: Option<Export>,
    /// Where --export writes (default: standard output).
    #[arg(long, value_name = "OUT", requires = "export")]
    pub output: Option<PathBuf>,
}

pub fn run(args: ReplayArgs) -> Result<()> {
    let recording = Recording::open(&args.file)
        .with_context(|| format!("cannot read the recording {}", args.file.display()))?;
    if let Some(Export::Csv) = args.export {
        return export_csv(&recording, args.output.as_ref());
    }
    let first = recording.frames.first().map(|f| (f.iteration, f.time));
    let last = recording.frames.last().map(|f| (f.iteration, f.time));
    let name = format!(
        "replay of {} ({})",
        args.file.display(),
        recording.header.source
    );
    let count = recording.frames.len();
    let (viewer, player) = simrob_viewer::replay::serve_replay(
        recording,
        SocketAddr::new(args.bind, args.http_port),
        &name,
    )
    .with_context(|| format!("cannot serve the replay on port {}", args.http_port))?;
    player.set_speed(args.speed).map_err(anyhow::Error::msg)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .context("cannot install the Ctrl-C handler")?;
    println!("viewer on http://{}", viewer.addr());
    if let (Some((i0, t0)), Some((i1, t1))) = (first, last) {
        println!("{count} frames: iterations {i0}–{i1}, simulated time {t0:.3}–{t1:.3} s");
    }
    player.play();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

fn export_csv(recording: &Recording, output: Option<&PathBuf>) -> Result<()> {
    match output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let mut out = std::io::BufWriter::new(file);
            recording
                .export_csv(&mut out)
                .and_then(|()| out.flush())
                .with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            recording
                .export_csv(&mut out)
                .and_then(|()| out.flush())
                .context("cannot write the CSV")
        }
    }
}
