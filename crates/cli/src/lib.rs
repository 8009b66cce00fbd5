//! `simrob`: the multi-robot simulator's command line, as a library.
//!
//! The `simrob` binary is [`main_with_args`] with the process's arguments; the Python
//! package's `simrob` command calls the same function through its extension module, so both
//! run the same command line.
#![warn(missing_docs)]

mod batch;
mod coord;
mod demo;
mod flags;
mod mrs;
mod netbed;
mod plot;
mod replay;
mod run;
mod send;
mod serve;
mod shell;
mod soccer;
mod swarm;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// `simrob --version`: the version, and whether this build steps the 3D physics on several
/// threads (`--physics-threads`), which only a build with the `parallel` feature does.
const VERSION: &str = if simrob_world::PARALLEL_PHYSICS {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (parallel physics: --physics-threads above 1)"
    )
} else {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (physics on one thread; --features parallel for more)"
    )
};

/// simrob — a multi-robot simulator: a 3D physics world driven by SimRob XML messages, a 2D
/// world for many robots.
#[derive(Parser)]
#[command(name = "simrob", version = VERSION, about, long_about = None)]
struct Cli {
    /// What to log on standard error: a level (`info`, `debug`…) or a level for each part of
    /// simrob, e.g. `warn,simrob::session=debug`. Every command takes it, before or after its
    /// name. Default: $RUST_LOG, else `warn`.
    #[arg(long, value_name = "FILTER", global = true, value_parser = shell::parse_log_filter)]
    log: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario headless and print the robots' and balls' poses.
    ///
    /// A scenario is a file of SimRob XML messages (as in the SimRob manual), applied in order; the
    /// simulation is initialized if the file does not do it.
    Run(run::RunArgs),
    /// Serve the 3D world to SimRob agents over UDP (the SimRob manual's protocol).
    ///
    /// Prints `listening on udp://IP:PORT` when ready; Ctrl-C stops it.
    Serve(serve::ServeArgs),
    /// The demonstration agent: starts a server (or uses --server), creates the SumBot, the
    /// soccer field and the ball, and drives the robot from the arrow keys or a timed script.
    Demo(demo::DemoArgs),
    /// The commander: send any SimRob command to a server and print the responses.
    Send(send::SendArgs),
    /// Replay a recording in the viewer (`simrob serve --record`: 3D; `simrob swarm run
    /// --record`: the 2D view), or export it.
    Replay(replay::ReplayArgs),
    /// The Mobile Robot Simulator: Nomad-200 robots in a 2D map, driven over TCP with its
    /// text protocol.
    Mrs(mrs::MrsArgs),
    /// Many robots at high abstraction on the 2D world: HMR Sim's model (scripts, drones,
    /// a warehouse) for tens of thousands of robots.
    #[command(subcommand)]
    Swarm(swarm::SwarmCommand),
    /// Coordination of robot teams: Control Center, Time Server, robot agents, Contract Net.
    #[command(subcommand)]
    Coord(coord::CoordCommand),
    /// The lossy-network test bed: relays that lose, duplicate, reorder and delay UDP
    /// datagrams (seeded, so a run can be repeated) or slow, stall and cut TCP connections,
    /// to put between a client and a server. Loopback addresses only, unless told otherwise.
    #[command(subcommand)]
    Netbed(netbed::NetbedCommand),
    /// The FutRob humanoid soccer team: players, a whole team, the message spy and sender.
    #[command(subcommand)]
    Soccer(soccer::SoccerCommand),
    /// Parameter sweeps: run any simrob subcommand that prints a JSON summary over scenarios ×
    /// seeds × a parameter grid, in parallel here or as a Slurm job array; one CSV and one
    /// JSON-lines row per run.
    Batch(batch::BatchArgs),
    /// Figures for papers (PNG or SVG): trajectories over the field or map, recorded
    /// quantities over time, a sweep's metric against a parameter with its spread over seeds.
    #[command(subcommand)]
    Plot(plot::PlotCommand),
    /// Print a shell completion script on standard output.
    ///
    /// For bash: `mkdir -p ~/.local/share/bash-completion/completions && simrob completions
    /// bash > ~/.local/share/bash-completion/completions/simrob`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

/// Runs the command line `args` (the program name first, as `std::env::args_os` gives it) and
/// returns its exit status: 0 success, 1 an error (its message on standard error), 2 a command
/// line that does not parse (a message saying what is wrong, and the usage), 128 + the signal when Ctrl-C (130), SIGTERM (143) or
/// SIGHUP (129) stopped it. The same for every subcommand; `send` adds 3 (no answer within
/// its --timeout).
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    ExitCode::from(exit_status(args))
}

/// [`main_with_args`] with the exit status as a number (for callers that hand it on, such as
/// the Python package's `simrob` command).
pub fn exit_status<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    // A command-line error is a message, not a crash: no backtrace with it even when
    // RUST_BACKTRACE is set (panics keep theirs). RUST_LIB_BACKTRACE=1 brings them back.
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        std::env::set_var("RUST_LIB_BACKTRACE", "0");
    }
    shell::quiet_broken_pipe();
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    // `--gui 8081` (a space where `=` belongs) would be read as the next argument.
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(message) = flags::gui_with_a_space(&words) {
        eprintln!("{message}\n\nFor more information, try '--help'.");
        return 2;
    }
    let cli = match command()
        .try_get_matches_from(&args)
        .and_then(|mut m| <Cli as clap::FromArgMatches>::from_arg_matches_mut(&mut m))
    {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code().clamp(0, 255) as u8;
        }
    };
    // Logging starts once, here, for every command; `soccer player` adds its robot's log file
    // (its configuration says which) and starts it itself.
    shell::set_log_filter(cli.log.clone());
    let own_log = matches!(
        &cli.command,
        Command::Soccer(soccer::SoccerCommand::Player(_))
    );
    let result = if own_log {
        run(cli)
    } else {
        shell::init_logging(cli.log.as_deref()).and_then(|()| run(cli))
    };
    if let Err(e) = &result {
        eprintln!("Error: {e:?}");
    }
    match (shell::stop_status(), result) {
        (Some(status), _) => status,
        (None, Ok(())) => 0,
        (None, Err(_)) => 1,
    }
}

/// The command line: [`Cli`], every value of every subcommand allowed to be a negative
/// number (`--robots -3` reaches the command's own check and its clear message instead of
/// clap's "unexpected argument '-3'", whose tip `-- -3` does not work for an option).
fn command() -> clap::Command {
    fn negatives(cmd: clap::Command) -> clap::Command {
        cmd.mut_args(|a| {
            if a.get_action().takes_values() {
                plain_numbers(a.allow_negative_numbers(true))
            } else {
                a
            }
        })
        .mut_subcommands(negatives)
    }
    let cli = flags::Ros2::per_command(<Cli as clap::CommandFactory>::command());
    negatives(cli).mut_subcommand("send", |send| {
        // Each action's parameters, ranges and defaults, from the one table the server
        // checks requests against.
        send.mut_subcommand("action", |a| {
            a.after_help(simrob_soccer::action::actions_help())
        })
    })
}

/// Parses `value` with `arg`'s own value parser, as clap would on a command line.
fn parse_with(arg: &clap::Arg, value: &str) -> Result<(), clap::Error> {
    clap::Command::new("t")
        .arg(
            clap::Arg::new("v")
                .long("v")
                .allow_negative_numbers(true)
                .value_parser(arg.get_value_parser().clone()),
        )
        .try_get_matches_from(["t", "--v", value])
        .map(|_| ())
}

/// A number argument read by clap's own parser for its type (whose errors are Rust's: "invalid
/// digit found in string", "invalid float literal") reads it with [`flags::count`] (the
/// type's range) or [`flags::number`] instead, which say what they take. An argument whose
/// parser is its own (a range, a unit) keeps it: clap's own takes every value of its type
/// (every whole number of it; `NaN` for a float), which a parser of its own does not. The
/// parsers are tried here, so a visible argument's parser says nothing when it reads.
fn plain_numbers(a: clap::Arg) -> clap::Arg {
    use std::any::TypeId;
    // An old spelling kept hidden says so when read: not tried here.
    if a.is_hide_set() {
        return a;
    }
    let id = a.get_value_parser().type_id();
    let takes = |v: &str| parse_with(&a, v).is_ok();
    macro_rules! whole {
        ($($t:ty),*) => {
            $(if id == TypeId::of::<$t>()
                && takes(&<$t>::MIN.to_string())
                && takes(&<$t>::MAX.to_string())
            {
                return a.value_parser(flags::count(<$t>::MIN, <$t>::MAX));
            })*
        };
    }
    whole!(u8, u16, u32, u64, usize, i8, i16, i32, i64);
    if id == TypeId::of::<f64>() && takes("NaN") && takes("-1e300") {
        return a.value_parser(flags::number);
    }
    a
}

/// Runs the subcommand.
fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Send(args) => send::run(args),
        Command::Mrs(args) => mrs::run(args),
        Command::Swarm(cmd) => swarm::run(cmd),
        Command::Coord(cmd) => coord::run(cmd),
        Command::Soccer(cmd) => soccer::run(cmd),
        Command::Netbed(cmd) => netbed::run(cmd),
        Command::Batch(args) => batch::run(args),
        Command::Plot(cmd) => plot::run(cmd),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "simrob", &mut script);
            // `simrob completions bash | head` closes the pipe early: not an error.
            match std::io::Write::write_all(&mut std::io::stdout().lock(), &script) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
                _ => Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod vocabulary {
    //! One spelling for each shared concept on every subcommand.

    /// Every subcommand (at any depth) with its path.
    fn walk(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        // clap's own `help` subcommands take no flags.
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let p = format!("{path} {}", sub.get_name());
            out.push((p.clone(), sub.clone()));
            walk(sub, p, out);
        }
    }

    /// Parses `value` with `arg`'s own value parser; the error as clap prints it.
    fn parse(arg: &clap::Arg, value: &str) -> Result<(), String> {
        super::parse_with(arg, value).map_err(|e| e.to_string())
    }

    /// Words of the internals that help texts leave out.
    const JARGON: &[&str] = &[
        "GRI line",
        "deflate",
        "ODE CFM",
        "ODE ERP",
        "clap's",
        "Broadcast -1",
        "forged",
        "DDS participants",
        "what an array task does",
    ];

    /// Value names that are also what a flag of that name takes (`--seed <SEED>`).
    const PLAIN_NAMES: &[&str] = &[
        "FILE", "DIR", "PORT", "ID", "NAME", "SEED", "PROFILE", "TITLE", "POLICY", "ROLE", "PARAM",
        "SIZE", "FORMAT", "KEY", "PATH", "SPEC", "TYPE", "IP", "SERIES", "SCENARIO", "POLICIES",
        "SEEDS", "SIZES", "TIME",
    ];

    /// Words in the names of flags whose value is a time.
    const TIME_WORDS: &[&str] = &[
        "time",
        "delay",
        "period",
        "window",
        "duration",
        "jitter",
        "idle",
        "silence",
        "every-seconds",
        "snapshot-every",
        "make-room-after",
        "reconnect-for",
    ];

    /// The old spellings of renamed flags: still read, refused with exit status 2 and a
    /// message naming the new spelling.
    const RENAMED: &[(&str, &str, &str, &str)] = &[
        ("soccer player", "duration", "wall-duration", "5"),
        ("soccer team", "duration", "wall-duration", "5"),
        ("soccer player", "config", "robot-config", "a.config"),
        ("demo", "every", "every-seconds", "2"),
        ("coord robot", "simrob", "server", "127.0.0.1:5005"),
        ("batch", "simrob", "binary", "/bin/simrob"),
        ("soccer case", "record", "record-dir", "runs"),
        ("swarm bench", "robots", "sizes", "10,20"),
        ("replay", "output", "out", "poses.csv"),
        ("soccer player", "comm-port", "team-port", "10020"),
        ("soccer spy", "port", "team-port", "10020"),
        ("soccer send-msg", "port", "team-port", "10020"),
        ("plot trajectory", "output", "out", "f.png"),
        ("plot series", "output", "out", "f.png"),
        ("plot batch", "output", "out", "f.png"),
    ];

    #[test]
    fn old_spellings_are_refused_with_the_new_one() {
        for (path, old, new, value) in RENAMED {
            let mut line: Vec<&str> = vec!["simrob"];
            line.extend(path.split(' '));
            let old_flag = format!("--{old}");
            line.extend([old_flag.as_str(), value]);
            let e = match super::command().try_get_matches_from(&line) {
                Ok(_) => panic!("{line:?} parses"),
                Err(e) => e,
            };
            let text = e.to_string();
            assert_eq!(e.exit_code(), 2, "{line:?}: {text}");
            assert!(
                text.contains(&format!("write --{new} {value}")),
                "{line:?}: {text}"
            );
        }
    }

    #[test]
    fn every_command_takes_log() {
        for line in [
            "simrob coord serve --log info",
            "simrob --log debug netbed udp --to 127.0.0.1:9",
            "simrob soccer spy --log warn,simrob::session=debug",
        ] {
            let parsed = super::command().try_get_matches_from(line.split(' '));
            assert!(
                parsed.is_ok(),
                "{line}: {}",
                parsed.err().map(|e| e.to_string()).unwrap_or_default()
            );
        }
        let e = super::command()
            .try_get_matches_from(["simrob", "mrs", "--log", "x=y=z"])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("e.g. `info`"), "{e}");
    }

    #[test]
    fn each_shared_concept_has_one_visible_spelling() {
        let mut root = super::command();
        root.build();
        let mut all = Vec::new();
        walk(&root, "simrob".into(), &mut all);
        let mut wrong = Vec::new();
        for (path, cmd) in &all {
            let visible: Vec<&clap::Arg> = cmd
                .get_arguments()
                .filter(|a| !a.is_hide_set() && a.get_long().is_some())
                .collect();
            for a in &visible {
                let long = a.get_long().unwrap_or_default();
                // Old spellings, hidden where they are still accepted.
                for old in [
                    "http-port",
                    "real-time-factor",
                    "time-factor",
                    "rtf",
                    "random-seed",
                    "silent",
                    "recording",
                    "rec",
                    "summary-json",
                ] {
                    if long == old {
                        wrong.push(format!("{path}: --{long} is visible (an old spelling)"));
                    }
                }
                if long == "gui" {
                    let optional = a.get_num_args().is_some_and(|n| n.min_values() == 0)
                        && a.is_require_equals_set();
                    if !optional {
                        wrong.push(format!("{path}: --gui does not take an optional =ADDR"));
                    }
                }
                // A value's name says what to write (N, S, ADDR, FILE…), not the field it fills.
                let names = a
                    .get_value_names()
                    .filter(|_| a.get_action().takes_values())
                    .unwrap_or_default();
                for name in names {
                    let echo = long.to_uppercase().replace('-', "_");
                    let unit = ["RAD_S", "M_S2"].contains(&name.as_str());
                    if (name.contains('_') && !unit)
                        || (name.as_str() == echo && !PLAIN_NAMES.contains(&name.as_str()))
                    {
                        wrong.push(format!("{path}: --{long} <{name}>"));
                    }
                }
                // Flags are switches, the others take a value, the same everywhere.
                let takes_value = a.get_action().takes_values();
                match long {
                    "json" | "quiet" if takes_value => {
                        wrong.push(format!("{path}: --{long} takes a value"))
                    }
                    "speed" | "seed" | "record" if !takes_value => {
                        wrong.push(format!("{path}: --{long} without a value"))
                    }
                    _ => {}
                }
            }
            // Two names for one concept, both visible.
            for (a, b) in [
                ("speed", "real-time-factor"),
                ("gui", "http-port"),
                ("json", "format-json"),
            ] {
                let has = |n: &str| visible.iter().any(|x| x.get_long() == Some(n));
                if has(a) && has(b) {
                    wrong.push(format!("{path}: both --{a} and --{b}"));
                }
            }
            // A number's error says what the flag takes, not Rust's words for it (positional
            // arguments too).
            for a in cmd
                .get_arguments()
                .filter(|a| a.get_action().takes_values())
            {
                for v in ["x", "1.5.", "-"] {
                    if let Err(e) = parse(a, v) {
                        if ["invalid digit", "invalid float literal", "cannot parse"]
                            .iter()
                            .any(|rust| e.contains(rust))
                        {
                            wrong.push(format!("{path}: {}: {e}", a.get_id()));
                        }
                    }
                }
            }
            // Help in the user's words: not the internals' (the protocol's wire, the recording's
            // encoding, the physics engine's parameters, the argument parser).
            let mut texts: Vec<String> = cmd
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .flat_map(|a| [a.get_help(), a.get_long_help()])
                .chain([cmd.get_about(), cmd.get_long_about(), cmd.get_after_help()])
                .flatten()
                .map(|h| h.to_string())
                .collect();
            texts.retain(|t| !t.is_empty());
            for t in &texts {
                for jargon in JARGON {
                    if t.contains(jargon) {
                        wrong.push(format!("{path}: help says {jargon:?}: {t}"));
                    }
                }
            }
            // What to log, on every command (the top-level --log, global).
            if !visible.iter().any(|a| a.get_long() == Some("log")) {
                wrong.push(format!("{path}: no --log"));
            }
            // One meaning for each name (a value parsed by the flag's own parser).
            for a in &visible {
                let long = a.get_long().unwrap_or_default();
                // Every time is read by one parser: seconds, or 50ms, 2s, 1min (Slurm's
                // --time of `batch --slurm` is Slurm's own format).
                let is_time = a.get_action().takes_values()
                    && TIME_WORDS.iter().any(|w| long.contains(w))
                    && !(path == "simrob batch" && long == "time");
                if is_time {
                    let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
                    if !help.contains("(or 50ms, 2s, 1min") {
                        wrong.push(format!(
                            "{path}: --{long}'s help does not say how a time is written"
                        ));
                    }
                    if a.get_value_names() != Some(&["S".into()]) {
                        wrong.push(format!("{path}: --{long} <S> is not its value's name"));
                    }
                    // Each form is read (a value out of the flag's range is refused by the
                    // same parser, its message naming the range and the forms).
                    for ok in ["2s", "50ms", "0.01min", "1"] {
                        match parse(a, ok) {
                            Err(e)
                                if !(e.contains("(or 50ms, 2s, 1min)") && e.contains(" to ")) =>
                            {
                                wrong.push(format!("{path}: --{long} {ok} is refused: {e}"))
                            }
                            _ => {}
                        }
                    }
                    for bad in ["-1", "nan", "inf", "x"] {
                        match parse(a, bad) {
                            Ok(()) => wrong.push(format!("{path}: --{long} {bad} is taken")),
                            Err(e) if !e.contains("(or 50ms, 2s, 1min)") => wrong
                                .push(format!("{path}: --{long} {bad}: {e} (not the time parser)")),
                            Err(_) => {}
                        }
                    }
                }
                match long {
                    // Simulated seconds everywhere (wall-clock time is --wall-duration).
                    "duration" => {
                        let e = parse(a, "-1").err().unwrap_or_default();
                        if !e.contains("simulated seconds") {
                            wrong.push(format!("{path}: --duration is not simulated seconds: {e}"));
                        }
                    }
                    // Iterations (`run`); seconds between lines are --every-seconds.
                    "every" if parse(a, "3").is_err() || parse(a, "0.5").is_ok() => {
                        wrong.push(format!("{path}: --every is not a count of iterations"))
                    }
                    // One count (several sizes are --sizes).
                    "robots"
                        if parse(a, "3").is_err()
                            || a.get_value_delimiter().is_some()
                            || matches!(a.get_action(), clap::ArgAction::Append) =>
                    {
                        wrong.push(format!("{path}: --robots is not one count"))
                    }
                    // One file (a directory of recordings is --record-dir).
                    "record" if a.get_value_names() != Some(&["FILE".into()]) => {
                        wrong.push(format!("{path}: --record is not a FILE"))
                    }
                    // A server's configuration (a robot's is --robot-config).
                    "config" => {
                        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
                        if !help.to_lowercase().contains("configuration") {
                            wrong.push(format!("{path}: --config is not a configuration: {help}"));
                        }
                    }
                    // The SimRob server is --server; the binary batch runs is --binary.
                    "simrob" => wrong.push(format!("{path}: --simrob is visible")),
                    _ if long != "server"
                        && a.get_help().is_some_and(|h| {
                            let h = h.to_string();
                            h.contains("`simrob serve`") || h.contains("SimRob server")
                        })
                        && a.get_value_names().is_some_and(|n| {
                            n.iter().any(|n| ["ADDR", "IP:PORT"].contains(&n.as_str()))
                        })
                        && !path.starts_with("simrob netbed") =>
                    {
                        wrong.push(format!(
                            "{path}: --{long} names a SimRob server (write --server)"
                        ))
                    }
                    // The FutRob team messages' port is --team-port.
                    "comm-port" => wrong.push(format!("{path}: --comm-port (write --team-port)")),
                    "port" if path.starts_with("simrob soccer") => {
                        wrong.push(format!("{path}: --port (the team's is --team-port)"))
                    }
                    // What a command writes is -o/--out.
                    "output" | "output-file" | "out-file" | "out-dir" | "output-dir" => {
                        wrong.push(format!("{path}: --{long} (write -o/--out)"))
                    }
                    "out" if a.get_short() != Some('o') => {
                        wrong.push(format!("{path}: --out without -o"))
                    }
                    _ if a.get_short() == Some('o') && long != "out" => {
                        wrong.push(format!("{path}: -o is --{long}, not --out"))
                    }
                    _ => {}
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        // The viewer is `--gui[=ADDR]` wherever a page is served.
        for path in [
            "simrob serve",
            "simrob demo",
            "simrob replay",
            "simrob mrs",
            "simrob swarm run",
            "simrob soccer match",
            "simrob coord cc",
        ] {
            let (_, cmd) = all
                .iter()
                .find(|(p, _)| p == path)
                .unwrap_or_else(|| panic!("no subcommand {path}"));
            assert!(
                cmd.get_arguments().any(|a| a.get_long() == Some("gui")),
                "{path} has no --gui"
            );
        }
        // `--gui 8081` (a space where `=` belongs) is refused on each, whatever follows it.
        for (path, cmd) in &all {
            if !cmd.get_arguments().any(|a| a.get_long() == Some("gui")) {
                continue;
            }
            let mut line: Vec<String> = path.split(' ').map(String::from).collect();
            line.extend(["--gui".into(), "8081".into()]);
            let says = super::flags::gui_with_a_space(&line).unwrap_or_default();
            assert!(says.contains("write --gui=8081"), "{path}: {says}");
        }
    }
}
