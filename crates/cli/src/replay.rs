//! `simrob replay`: recordings in the viewer, or exported.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use simrob_viewer::record::{RecordingReader, Writer};

/// What `--export` writes.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Export {
    /// Every posed entity's pose over time (robots, balls, humanoids, drones, items; its
    /// `kind` says which): `time,iteration,entity,kind,x,y,z,roll,pitch,yaw` (metres,
    /// radians, simulated s). A recording without frames gives the header line only, with a
    /// warning on standard error (exit status 0).
    Csv,
    /// The recording again in the compact format (`simrob-recording` version 2): converts a
    /// JSON-lines or swarm recording; needs --out.
    Simrec,
}

/// Arguments of `simrob replay`.
#[derive(clap::Args)]
#[command(mut_arg(
    "gui",
    crate::flags::gui_help("Where the viewer is served (always, unless --export); on 127.0.0.1")
))]
#[command(mut_arg("speed", |a| a.help(
    "The replay's pace: recorded seconds per wall second, 0.001 to 10000 [default: 1]"
).value_parser(replay_speed)))]
pub struct ReplayArgs {
    /// The recording: `simrob serve --record FILE` (compact or the older JSON lines; shown
    /// in the 3D viewer) or `simrob swarm run --record FILE` (shown in the 2D view). A
    /// recording still being written is followed: the replay waits on its last frame for
    /// the next ones.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where the viewer listens: always served (unless --export), on 127.0.0.1:8080 unless
    /// `--gui=ADDR`.
    #[command(flatten)]
    pub gui: crate::flags::Gui,
    /// Old spelling of `--gui=IP`.
    #[arg(long, value_name = "IP", hide = true)]
    pub bind: Option<IpAddr>,
    /// The replay's pace, `--speed F`: recorded seconds per wall second, 0.001 to 10000
    /// (default 1).
    #[command(flatten)]
    pub speed: crate::flags::Speed,
    /// Export the recording instead of serving the viewer.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub export: Option<Export>,
    /// Where --export writes (default: standard output).
    #[arg(long, short = 'o', value_name = "FILE", requires = "export")]
    pub out: Option<PathBuf>,
    /// Old spelling of `--out`.
    #[arg(long = "output", value_name = "FILE", hide = true,
          value_parser = crate::flags::renamed("output", "out", ""))]
    pub old_output: Option<String>,
}

/// A replay's `--speed`: a number from 0.001 to 10,000 ([`simrob_viewer::player::SPEEDS`];
/// anything else does not parse: exit status 2).
fn replay_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if simrob_viewer::player::speed_allowed(f) => Ok(f),
        _ => Err(format!(
            "{s:?}: recorded seconds per wall second, a number from {} to {}",
            simrob_viewer::player::SPEEDS.0,
            simrob_viewer::player::SPEEDS.1
        )),
    }
}

pub fn run(args: ReplayArgs) -> Result<()> {
    let cannot = || format!("cannot read the recording {}", args.file.display());
    // Looked at before it is opened: opening a FIFO would wait for a writer.
    crate::shell::regular_file(&args.file).with_context(cannot)?;
    let mut recording = RecordingReader::open(&args.file).with_context(cannot)?;
    let exported = match args.export {
        Some(Export::Csv) => Some(export_csv(&mut recording, args.out.as_ref())),
        Some(Export::Simrec) => Some(convert(&mut recording, args.out.as_ref())),
        None => None,
    };
    if let Some(result) = exported {
        // Only an export that went through says how much it exported.
        if result.is_ok() {
            warn_if_unfinished(&recording, "exported");
            warn_if_no_frames(&recording, args.export, args.out.as_ref());
        }
        return result;
    }
    // Ctrl-C is caught before the address is printed: whoever reads it may stop us at once.
    let stop = crate::shell::ctrl_c_flag()?;
    let mut gui = args.gui.addr().unwrap_or_default();
    if let Some(ip) = args.bind {
        eprintln!("--bind {ip} is an old spelling: use --gui={ip} (or --gui={ip}:PORT)");
        gui.ip = gui.ip.or(Some(ip));
    }
    let bind = gui.resolve(IpAddr::V4(Ipv4Addr::LOCALHOST))?;
    let speed = args.speed.or_real_time();
    if recording.kind() == simrob_viewer::record::Kind::Swarm {
        return replay_2d(&args, bind, speed, &stop);
    }
    let count = recording.len();
    let ends = if count > 0 {
        let a = recording.frame(0)?;
        let b = recording.frame(count - 1)?;
        Some(((a.iteration, a.time), (b.iteration, b.time)))
    } else {
        None
    };
    let name = format!(
        "replay of {} ({})",
        args.file.display(),
        recording.header().source
    );
    let following = match recording.kind() {
        // A JSON-lines recording has no end mark: it may or may not still grow.
        simrob_viewer::record::Kind::JsonLines => Following::Maybe,
        _ if recording.is_finished() => Following::No,
        _ => Following::Yes,
    };
    if count == 0 && following == Following::No {
        anyhow::bail!(
            "the recording {} has no frames (its run was stopped before its first frame, as a soccer match stopped before kick-off): nothing to replay",
            args.file.display()
        );
    }
    let (viewer, player) =
        simrob_viewer::replay::serve_file_guarded(recording, bind, &name, args.gui.guard()?)
            .map_err(|e| {
                // A recording found damaged is the recording's fault, not the address's.
                let blame = if e.kind() == std::io::ErrorKind::InvalidData {
                    cannot()
                } else {
                    format!("cannot serve the replay on {bind}")
                };
                anyhow::Error::new(e).context(blame)
            })?;
    player.set_speed(speed).map_err(anyhow::Error::msg)?;
    println!("viewer on http://{}", viewer.addr());
    if let Some(((i0, t0), (i1, t1))) = ends {
        println!(
            "{count} {}: iterations {i0}–{i1}, simulated time {t0:.3}–{t1:.3} s",
            frames_word(count)
        );
    }
    play_until_ctrl_c(&stop, following, || player.play())
}

/// "frame" for one, else "frames".
fn frames_word(count: usize) -> &'static str {
    if count == 1 {
        "frame"
    } else {
        "frames"
    }
}

/// Whether the replay follows a recording that is still being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Following {
    /// The file has its end mark.
    No,
    /// No end mark yet: the writer is still at it (or died).
    Yes,
    /// The format has no end mark (JSON lines): frames appended later are played too.
    Maybe,
}

/// Says whether the recording is still being written, starts playing and serves until
/// Ctrl-C.
fn play_until_ctrl_c(stop: &AtomicBool, following: Following, play: impl FnOnce()) -> Result<()> {
    match following {
        Following::Yes => println!("following: the recording is still being written"),
        Following::Maybe => println!(
            "following: a JSON-lines recording does not mark its end, so frames appended to it are played too"
        ),
        Following::No => {}
    }
    play();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// A swarm recording in the 2D view (the map, robots, drones and items by state).
fn replay_2d(args: &ReplayArgs, bind: SocketAddr, speed: f64, stop: &AtomicBool) -> Result<()> {
    use simrob_viewer::view2d::replay::{SwarmRecording, SwarmReplay};
    if !simrob_viewer::player::speed_allowed(speed) {
        anyhow::bail!(
            "--speed {}: recorded seconds per wall second, a number from {} to {}",
            speed,
            simrob_viewer::player::SPEEDS.0,
            simrob_viewer::player::SPEEDS.1
        );
    }
    let recording = SwarmRecording::open(&args.file)
        .with_context(|| format!("cannot read the recording {}", args.file.display()))?;
    let (count, following) = (
        recording.len(),
        if recording.is_finished() {
            Following::No
        } else {
            Following::Yes
        },
    );
    let ends = (
        recording.times().first().copied(),
        recording.times().last().copied(),
    );
    let replay = SwarmReplay::serve(recording, bind, speed, args.gui.guard()?)
        .with_context(|| format!("cannot serve the replay on {bind}"))?;
    println!(
        "2D view on http://{} (the replay starts when a page connects)",
        replay.addr()
    );
    if let (Some(t0), Some(t1)) = ends {
        println!("{count} snapshots: simulated time {t0:.2}–{t1:.2} s");
    }
    play_until_ctrl_c(stop, following, || replay.play())
}

/// A writer that remembers whether writing failed: an export's error is then told apart as
/// the output's (cannot write) or the recording's (cannot read).
struct Watched<W: Write> {
    inner: W,
    failed: bool,
}

impl<W: Write> Watched<W> {
    fn new(inner: W) -> Watched<W> {
        Watched {
            inner,
            failed: false,
        }
    }
}

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.failed |= r.is_err();
        r
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.failed |= r.is_err();
        r
    }
}

/// The context of an export's error: writing `output` failed, or reading the recording did
/// (its error names the file and where), and then what became of the output.
fn export_error(
    recording: &RecordingReader,
    write_failed: bool,
    output: Option<&PathBuf>,
) -> String {
    match (write_failed, output) {
        (true, Some(path)) => format!("cannot write {}", path.display()),
        (true, None) => "cannot write the CSV".into(),
        (false, Some(path)) => format!(
            "cannot read the recording {} to the end: {} is not written",
            recording.path().display(),
            path.display()
        ),
        (false, None) => format!(
            "cannot read the recording {} to the end: the CSV on standard output stops there",
            recording.path().display()
        ),
    }
}

fn convert(recording: &mut RecordingReader, output: Option<&PathBuf>) -> Result<()> {
    let Some(path) = output else {
        anyhow::bail!("--export simrec needs --out FILE");
    };
    let source = recording.header().source.clone();
    let mut out = Watched::new(create_output(recording, path)?);
    let mut writer = Writer::new(&mut out, &source)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let mut write_failed = false;
    let result = recording
        .for_each(|f| writer.write_frame(f).inspect_err(|_| write_failed = true))
        .and_then(|()| writer.finish().inspect_err(|_| write_failed = true));
    let write_failed = write_failed || out.failed;
    result.with_context(|| export_error(recording, write_failed, output))?;
    out.inner
        .commit()
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The file `--out` names, written to a temporary file beside it and renamed over it only
/// when the export succeeded ([`simrob_files::AtomicFile`]): a failed export leaves no part
/// and an existing file as it was. The recording itself is refused as the output (writing it
/// would destroy what is read).
fn create_output(
    recording: &RecordingReader,
    path: &std::path::Path,
) -> Result<simrob_files::AtomicFile> {
    if simrob_files::same_file(recording.path(), path) {
        anyhow::bail!(
            "--out {} is the recording being exported: give another file",
            path.display()
        );
    }
    simrob_files::AtomicFile::create(path)
        .with_context(|| format!("cannot create {}", path.display()))
}

/// A compact or swarm recording ends with a mark its writer adds when it stops cleanly: without
/// it the file is still being written or was cut short (a killed recorder, a full disk, a
/// partial copy), and what was exported is only its whole blocks so far. Says so on standard
/// error; `done` says what was done with them (`exported`, `plotted`). (A JSON-lines
/// recording has no end mark.)
pub(crate) fn warn_if_unfinished(recording: &RecordingReader, done: &str) {
    use simrob_viewer::record::Kind;
    if recording.kind() != Kind::JsonLines && !recording.is_finished() {
        eprintln!(
            "warning: {} has no end mark: it is still being written or was cut short; \
             {done} its {} complete frames",
            recording.path().display(),
            recording.len()
        );
    }
}

/// A recording that holds no frames (its run was stopped before its first frame: a soccer
/// match stopped before kick-off; a server's and a swarm run's begin with the world as it
/// is when the recording starts) exports to an empty table —
/// the CSV's header line only, or a recording without frames — which is valid, so the export
/// succeeds (exit status 0); standard error says why there is nothing in it, the same for
/// every kind of recording. (One without its end mark has already been warned of by
/// [`warn_if_unfinished`], which counts what it exported.)
fn warn_if_no_frames(recording: &RecordingReader, export: Option<Export>, out: Option<&PathBuf>) {
    use simrob_viewer::record::Kind;
    let finished = recording.kind() == Kind::JsonLines || recording.is_finished();
    if !finished || !recording.is_empty() {
        return;
    }
    let what = match (export, out) {
        (Some(Export::Simrec), Some(path)) => format!("{} holds none either", path.display()),
        _ => "the CSV has its header line only".to_string(),
    };
    eprintln!(
        "warning: the recording {} holds no frames (its run was stopped before its first \
         frame, as a soccer match stopped before kick-off): {what}",
        recording.path().display()
    );
}

fn export_csv(recording: &mut RecordingReader, output: Option<&PathBuf>) -> Result<()> {
    match output {
        Some(path) => {
            let mut out = Watched::new(create_output(recording, path)?);
            let result = recording.export_csv(&mut out);
            let failed = out.failed;
            result.with_context(|| export_error(recording, failed, output))?;
            out.inner
                .commit()
                .with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            let mut out = Watched::new(std::io::BufWriter::new(std::io::stdout().lock()));
            let result = recording.export_csv(&mut out).and_then(|()| out.flush());
            let failed = out.failed;
            crate::shell::ignore_broken_pipe(
                result.with_context(|| export_error(recording, failed, None)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_frame_is_said_in_the_singular() {
        assert_eq!(super::frames_word(1), "frame");
        assert_eq!(super::frames_word(0), "frames");
        assert_eq!(super::frames_word(2), "frames");
    }
}
