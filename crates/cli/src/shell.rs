//! What the subcommands share, in a module that imports none of them: logging, Ctrl-C (and
//! SIGTERM, SIGHUP, and the end of standard input for a command that asks for it),
//! bounded file reads, quiet broken pipes.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};

/// Reads a file named on the command line or in a scenario: a regular file of at most `max`
/// bytes (a device, a FIFO or a huge file gets an error at once).
pub fn read_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    Ok(simrob_files::read_bounded(path, max)?)
}

/// Checks that `path`, named on the command line, is a regular file, without opening it: a
/// device, a FIFO or a directory gets an error at once (as [`read_file`] gives). For files
/// read as they grow rather than whole (recordings).
pub fn regular_file(path: &Path) -> std::io::Result<()> {
    simrob_files::regular_file(path)?;
    Ok(())
}

/// Sets `physicsthreads` from `--physics-threads` when given, and refuses more than one
/// thread in a simrob built without parallel physics (`serve` and `run` alike).
pub fn physics_threads(
    config: &mut simrob_session::ServerConfig,
    flag: Option<usize>,
) -> Result<()> {
    if let Some(n) = flag {
        config
            .set("physicsthreads", &n.to_string())
            .map_err(|e| anyhow::anyhow!("--physics-threads: {e}"))?;
    }
    if config.physics_threads > 1 && !simrob_world::PARALLEL_PHYSICS {
        anyhow::bail!(
            "{} physics threads asked for (--physics-threads or the configuration key \
             `physicsthreads`), but this simrob was built without parallel physics: build it \
             with `cargo build --release -p simrob --features parallel`, or use 1",
            config.physics_threads
        );
    }
    Ok(())
}

/// The server configuration in the file at `path` (`--config` of `serve`, `run` and `send`),
/// else the defaults.
pub fn read_config(path: Option<&Path>) -> Result<simrob_session::ServerConfig> {
    path.map_or_else(
        || Ok(simrob_session::ServerConfig::default()),
        |p| simrob_server::files::read_config(p).map_err(anyhow::Error::msg),
    )
}

/// The largest text file read from a path on the command line (64 MiB, as scenarios):
/// configurations, scripts, team and rule files.
pub const MAX_TEXT_FILE: u64 = simrob_swarm::scenario::MAX_FILE_BYTES;

/// The scenario a command was given, as its positional argument or as `--scenario` (clap
/// lets through one at most; a command that needs one makes clap require one of them).
pub fn scenario_given<T: Clone>(positional: &Option<T>, flag: &Option<T>) -> anyhow::Result<T> {
    match positional.as_ref().or(flag.as_ref()) {
        Some(s) => Ok(s.clone()),
        None => anyhow::bail!("give a scenario: SCENARIO or --scenario FILE"),
    }
}

/// A text file at `path` (`what` naming it in messages: `script`, `the team file`) of at most
/// `max` bytes; a larger one is an error naming it, its size, the limit and `raise_with`, the
/// flag that raises it.
pub fn read_text_within(path: &Path, what: &str, max: u64, raise_with: &str) -> Result<String> {
    let bytes = simrob_files::read_bounded(path, max).map_err(|e| {
        anyhow::anyhow!(e.message(&format!("{what} {}", path.display()), raise_with))
    })?;
    String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("cannot read {what} {}: not UTF-8 text", path.display()))
}

/// [`read_file`] as UTF-8 text.
pub fn read_text(path: &Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_file(path, max)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// Why a server could not listen on `url` (`udp://IP:PORT`, `tcp://IP:PORT`): the error with
/// that context, and, when the port is taken, what to do about it (the same words on every
/// server: `serve`, `mrs`, `coord serve` and `coord cc`). `server` names what may hold the
/// port ("simrob server", "Control Center").
pub fn cannot_listen(e: std::io::Error, url: &str, server: &str) -> anyhow::Error {
    let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
        format!(
            " (the port is taken, perhaps by another {server}: stop it, choose another \
             --port, or --port 0 for a free one)"
        )
    } else {
        String::new()
    };
    anyhow::Error::new(e).context(format!("cannot listen on {url}{hint}"))
}

/// A log writer besides standard error's (a FutRob robot's log file), with its own filter.
pub type ExtraLog =
    Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync + 'static>;

/// The `--log` filter of the command line (the top-level `simrob --log`, every command's).
static LOG_FILTER: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Keeps the command line's `--log` for a command that starts its logging itself
/// ([`init_logging_with`] with [`log_filter`]).
pub fn set_log_filter(filter: Option<String>) {
    if let Ok(mut f) = LOG_FILTER.lock() {
        *f = filter;
    }
}

/// The command line's `--log`, if given.
pub fn log_filter() -> Option<String> {
    LOG_FILTER.lock().ok().and_then(|f| f.clone())
}

/// Reads `--log FILTER`: a filter of `RUST_LOG`'s form (`info`, `warn,simrob::session=debug`).
pub fn parse_log_filter(s: &str) -> Result<String, String> {
    match tracing_subscriber::EnvFilter::try_new(s) {
        Ok(_) => Ok(s.to_string()),
        Err(_) => Err(
            "not a log filter: write a level (error, warn, info, debug, trace), \
             optionally followed by PART=LEVEL pairs, e.g. `info` or `warn,simrob::session=debug`"
                .into(),
        ),
    }
}

/// Sends the libraries' `tracing` logs to standard error, filtered by `filter` (`--log`),
/// else by `RUST_LOG`, else at `warn`; in colour only on a terminal (and without `NO_COLOR`),
/// so a log redirected to a file (a Slurm job's, `2> log`) holds plain text.
pub fn init_logging(filter: Option<&str>) -> Result<()> {
    init_logging_with(filter, None)
}

/// [`init_logging`], and `extra` (with its own filter) beside standard error.
pub fn init_logging_with(filter: Option<&str>, extra: Option<ExtraLog>) -> Result<()> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let (text, flag) = match filter {
        Some(f) => (f.to_string(), "--log"),
        None => (
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
            "RUST_LOG",
        ),
    };
    let filter = tracing_subscriber::EnvFilter::try_new(&text).with_context(|| {
        format!("{flag} {text:?} is not a log filter (try `info` or `warn,simrob=debug`)")
    })?;
    // A second subscriber (a test calling twice) keeps the first.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_filter(AskEachTime(filter));
    let _ = tracing_subscriber::registry()
        .with(extra)
        .with(stderr)
        .try_init();
    Ok(())
}

/// A per-layer filter whose callsites are asked at each event: `filter`'s "always" becomes
/// "sometimes". A per-layer filter keeps, per thread, whether it refused the event being
/// processed; a `tracing::enabled!` check it refuses leaves that mark behind (no event
/// follows to clear it), and an event whose callsite is cached "always" is not asked again,
/// so it finds the mark and is dropped. Asked each time, an event sets its own mark.
struct AskEachTime<F>(F);

impl<S, F: tracing_subscriber::layer::Filter<S>> tracing_subscriber::layer::Filter<S>
    for AskEachTime<F>
{
    fn enabled(
        &self,
        meta: &tracing::Metadata<'_>,
        cx: &tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        self.0.enabled(meta, cx)
    }

    fn callsite_enabled(
        &self,
        meta: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        let interest = self.0.callsite_enabled(meta);
        if interest.is_always() {
            tracing::subscriber::Interest::sometimes()
        } else {
            interest
        }
    }

    fn event_enabled(
        &self,
        event: &tracing::Event<'_>,
        cx: &tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        self.0.event_enabled(event, cx)
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        self.0.max_level_hint()
    }

    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        cx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        self.0.on_new_span(attrs, id, cx)
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        cx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        self.0.on_record(id, values, cx)
    }

    fn on_enter(&self, id: &tracing::span::Id, cx: tracing_subscriber::layer::Context<'_, S>) {
        self.0.on_enter(id, cx)
    }

    fn on_exit(&self, id: &tracing::span::Id, cx: tracing_subscriber::layer::Context<'_, S>) {
        self.0.on_exit(id, cx)
    }

    fn on_close(&self, id: tracing::span::Id, cx: tracing_subscriber::layer::Context<'_, S>) {
        self.0.on_close(id, cx)
    }
}

/// The one flag Ctrl-C raises, for every command of this process: the handler is installed
/// by the first call (before a command prints the address it serves on); later calls return
/// the same flag. SIGTERM (`kill`, `timeout`, Slurm at a job's time limit) and SIGHUP (the
/// terminal closed) raise it too, so a server stopped so still finishes its recording; a
/// second signal while the command stops ends the process at once, once no
/// [`FinishBeforeExit`] is held (a recording being finished, and its summary). A command that
/// stops on it ends with status 128 + the signal (130 for Ctrl-C; [`stop_status`]).
pub(crate) fn ctrl_c_flag() -> Result<Arc<AtomicBool>> {
    if let Some(flag) = CTRL_C.get() {
        return Ok(flag.clone());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    on_stop_signals(move |signal| {
        if request_stop(&flag, signal) {
            return;
        }
        // Stopping already because standard input closed: this is the first signal (Ctrl-C in
        // a terminal reaches a team's robots just as the team closes their pipes); the stop
        // goes on, ending with this signal's status.
        if STOPPED_BY_STDIN.swap(false, Ordering::SeqCst) {
            STOP_SIGNAL.store(signal, Ordering::SeqCst);
            return;
        }
        // A second signal.
        FinishBeforeExit::wait_for_none();
        std::process::exit(128 + signal);
    })?;
    Ok(CTRL_C.get_or_init(|| stop).clone())
}

/// Stops the command as `signal` does: raises `flag` and runs the [`on_ctrl_c`] actions.
/// False (and nothing done) when the command is already stopping.
fn request_stop(flag: &AtomicBool, signal: i32) -> bool {
    if STOP_SIGNAL
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return false;
    }
    flag.store(true, Ordering::SeqCst);
    let actions = ON_CTRL_C.lock().unwrap_or_else(|e| e.into_inner());
    for a in actions.iter() {
        a();
    }
    true
}

/// The command is stopping because its standard input closed (and no signal came since).
static STOPPED_BY_STDIN: AtomicBool = AtomicBool::new(false);

/// SIGHUP's number: a command stopped because standard input closed ends as after SIGHUP
/// (status 129), as one whose terminal closed.
const HANG_UP: i32 = 1;

/// From now on, the end of standard input (the pipe closed by the program that started this
/// one, or that program ended, however it ended) stops the command as SIGHUP does: the flag
/// of [`ctrl_c_flag`] raised, status 129. What arrives before the end is read and ignored.
/// A thread waits on the read, nothing polls. Already stopping, the end changes nothing (it
/// is not a second signal), and the first signal after it is not one either: it only sets
/// the status (130 for Ctrl-C).
pub(crate) fn stop_when_stdin_closes() -> Result<()> {
    let flag = ctrl_c_flag()?;
    std::thread::Builder::new()
        .name("simrob-stdin".into())
        .spawn(move || {
            use std::io::Read;
            let mut input = std::io::stdin().lock();
            let mut buf = [0u8; 1024];
            loop {
                match input.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // Standard input unreadable (a terminal hung up): gone as well.
                    Err(_) => break,
                }
            }
            // Marked first, so that a signal that lands in between finds it.
            STOPPED_BY_STDIN.store(true, Ordering::SeqCst);
            if !request_stop(&flag, HANG_UP) {
                STOPPED_BY_STDIN.store(false, Ordering::SeqCst);
            }
        })
        .context("cannot watch standard input (--stop-when-stdin-closes)")?;
    Ok(())
}

/// Runs `handle` (on a thread of its own) with each SIGINT, SIGTERM or SIGHUP.
#[cfg(unix)]
fn on_stop_signals(handle: impl Fn(i32) + Send + 'static) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("cannot install the Ctrl-C handler")?;
    std::thread::Builder::new()
        .name("simrob-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                handle(signal);
            }
        })
        .context("cannot install the Ctrl-C handler")?;
    Ok(())
}

/// Runs `handle` with each Ctrl-C (as signal 2, SIGINT).
#[cfg(not(unix))]
fn on_stop_signals(handle: impl Fn(i32) + Send + 'static) -> Result<()> {
    ctrlc::set_handler(move || handle(2)).context("cannot install the Ctrl-C handler")
}

/// The signal that stopped this process's command (0: none yet).
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Also run `action` when Ctrl-C raises the flag (after raising it): it wakes a thread that
/// sleeps on something other than the flag.
pub(crate) fn on_ctrl_c(action: Box<dyn Fn() + Send>) {
    ON_CTRL_C
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(action);
}

static ON_CTRL_C: std::sync::Mutex<Vec<Box<dyn Fn() + Send>>> = std::sync::Mutex::new(Vec::new());

/// While one is held, a second stop signal does not end the process at once: it waits for
/// every one to be dropped, then ends it. A command that records holds one from the start
/// of its recording until the recording is finished and its summary printed: `timeout` and
/// Slurm send their signal to the command and to its process group, so it comes twice, and
/// the first one's clean stop (the recording finished) must not be cut short by the second.
pub(crate) struct FinishBeforeExit(());

/// How many [`FinishBeforeExit`] are held, and the signal thread's wait for none.
static FINISHING: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

impl FinishBeforeExit {
    pub(crate) fn hold() -> FinishBeforeExit {
        *FINISHING.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        FinishBeforeExit(())
    }

    fn wait_for_none() {
        let held = FINISHING.0.lock().unwrap_or_else(|e| e.into_inner());
        let _none = FINISHING
            .1
            .wait_while(held, |n| *n > 0)
            .unwrap_or_else(|e| e.into_inner());
    }
}

impl Drop for FinishBeforeExit {
    fn drop(&mut self) {
        let mut held = FINISHING.0.lock().unwrap_or_else(|e| e.into_inner());
        *held -= 1;
        if *held == 0 {
            FINISHING.1.notify_all();
        }
    }
}

/// Blocks until Ctrl-C, SIGTERM or SIGHUP stops the command (at once if one already has),
/// without polling: a page that stays after a run waits here. Needs [`ctrl_c_flag`] installed.
pub fn wait_for_stop() {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    // Registered before the flag is read: a signal after the read runs this action.
    on_ctrl_c(Box::new(move || {
        let _ = tx.send(());
    }));
    if !interrupted() {
        let _ = rx.recv();
    }
}

/// The flag of [`ctrl_c_flag`], once a command has installed it.
static CTRL_C: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Whether Ctrl-C (SIGINT), SIGTERM or SIGHUP stopped this process's command.
pub fn interrupted() -> bool {
    CTRL_C.get().is_some_and(|flag| flag.load(Ordering::SeqCst))
}

/// The exit status of a command stopped by a signal, as shells expect of a program the
/// signal ended: 128 + the signal (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP).
pub fn stop_status() -> Option<u8> {
    let signal = STOP_SIGNAL.load(Ordering::SeqCst);
    (interrupted() && signal > 0).then(|| (128 + signal).clamp(0, 255) as u8)
}

/// `simrob … | head`: printing to a pipe whose reader has stopped fails; `println!` then
/// panics. Every command ends quietly (status 0) instead, as Unix tools do. (SIGPIPE stays
/// ignored: the servers must survive clients that close their sockets.)
pub fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info)
    }));
}

/// Output piped into a reader that stopped early (`| head`, `| less` quit) is not an error:
/// the command just ends, as Unix tools do.
pub fn ignore_broken_pipe(result: Result<()>) -> Result<()> {
    match result {
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            Ok(())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_from_the_command_line_are_regular_files_within_a_limit() {
        // A device, a directory: refused at once, nothing read.
        for p in ["/dev/zero", "/"] {
            let e = read_text(std::path::Path::new(p), MAX_TEXT_FILE).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{p}: {e}");
        }
        let dir = std::env::temp_dir().join(format!("simrob-read-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.txt");
        std::fs::write(&f, "0 5 5\n").unwrap();
        assert_eq!(read_text(&f, MAX_TEXT_FILE).unwrap(), "0 5 5\n");
        let e = read_text(&f, 3).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert!(read_text(&f, MAX_TEXT_FILE).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
