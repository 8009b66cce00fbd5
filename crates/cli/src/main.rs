//! `simrob`: the multi-robot simulator's command-line entry point.

mod batch;
mod coord;
mod demo;
mod mrs;
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

/// simrob — a multi-robot simulator: a 3D physics world driven by SimRob XML messages, a 2D
/// world for many robots.
#[derive(Parser)]
#[command(name = "simrob", version, about, long_about = None)]
struct Cli {
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

/// Exit statuses, the same for every subcommand: 0 success, 1 an error (its message on
/// standard error), 2 a command line that does not parse (clap's), 130 stopped by Ctrl-C.
fn main() -> ExitCode {
    // A command-line error is a message, not a crash: no backtrace with it even when
    // RUST_BACKTRACE is set (panics keep theirs). RUST_LIB_BACKTRACE=1 brings them back.
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        std::env::set_var("RUST_LIB_BACKTRACE", "0");
    }
    shell::quiet_broken_pipe();
    let result = run(Cli::parse());
    if let Err(e) = &result {
        eprintln!("Error: {e:?}");
    }
    match result {
        _ if shell::interrupted() => ExitCode::from(130),
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
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
