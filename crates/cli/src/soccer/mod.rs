//! `simrob soccer`: the FutRob robot-soccer team as networked agents, and its message tools.

/// Prints a line on standard output, ignoring a closed pipe (a player keeps playing when
/// whoever read its output has gone).
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

mod body;
mod case;
mod logfmt;
mod matchcmd;
mod matchros;
mod net;
mod player;
mod send_msg;
mod sim;
mod spy;
mod team;

use anyhow::Result;
use clap::Subcommand;

/// The FutRob humanoid soccer team.
#[derive(Subcommand)]
pub enum SoccerCommand {
    /// Run one FutRob robot: its rules, world model, actions and team messages.
    ///
    /// Reads the robot's ini.config (id, role, rules file, log switches, vision stub,
    /// autoLookAtBall, and the tunables listed in docs/reference/config.md), announces itself
    /// to the team and plays until Ctrl-C or --wall-duration (or, with
    /// --stop-when-stdin-closes, until its standard input closes). Team events (teammates
    /// joining, their roles, teammates expiring) are printed on standard output. Every file and
    /// value is checked before the robot starts its log file or plays. Exit status: 0 when it
    /// played to the end, 1 when a file or value is refused or the simulator does not answer
    /// (or stops answering, --server-timeout), 130 after Ctrl-C, 129 when its standard input
    /// closed (--stop-when-stdin-closes).
    Player(player::PlayerArgs),
    /// Start a whole team: one `simrob soccer player` process per robot of a team file.
    ///
    /// The team file lists one ini.config per line (paths relative to the team file; `#`
    /// starts a comment). Every robot's files and the command line's values are checked
    /// before any robot starts. Each robot's output and errors are printed with its id in
    /// front. The robots end with the team, however it ends (Ctrl-C, kill -9): each watches a
    /// pipe from the team as its standard input (`soccer player --stop-when-stdin-closes`),
    /// which the team closes on Ctrl-C (robots still running --stop-grace later are killed).
    /// Exit status: 0 when every robot ended well, 1 when a file or value is refused (no robot
    /// started) or any robot failed (named at the end), 130 after Ctrl-C.
    Team(team::TeamArgs),
    /// The message spy: print every team message, or only those one robot would accept.
    ///
    /// With --id 255 (the default) every message is printed; with another id the spy
    /// behaves like that robot and reports the messages it would reject.
    Spy(spy::SpyArgs),
    /// Send one team message from flags, or use the FutRob sender's interactive prompt.
    SendMsg(send_msg::SendMsgArgs),
    /// Rerun one of FutRob's case studies in simulation: penalty-kick, penalty-save,
    /// discovery, relocation or pass.
    ///
    /// Each trial sets the scene up as FutRob's report describes it (with a person's placement
    /// error drawn from the seed), runs the FutRob brains on the simulated humanoids and judges
    /// the outcome from the physics. Prints one row per trial and the success rate with its
    /// 95 % interval beside the rate FutRob's real robots reached.
    Case(case::CaseArgs),
    /// Play a 3-vs-3 FutRob match in simulation (keeper and two field players a side).
    ///
    /// Kick-off, goals (the ball wholly over the goal line between the posts), restarts and
    /// balls put back after leaving the field are refereed from the world. At the end it
    /// prints what a coach wants to know: the score, who scored and when, each team's shots
    /// and how many were on target, the keepers' saves, passes completed, possession, falls,
    /// and what stood out (the longest spell without a strike, the longest exchange between
    /// two teammates). A shot is a strike heading for the goal fast enough to reach its line;
    /// on target if between the posts. --json gives the same with every strike and event;
    /// --record writes a recording for `simrob replay`.
    Match(Box<matchcmd::MatchArgs>),
}

/// Runs a `simrob soccer` subcommand.
pub fn run(cmd: SoccerCommand) -> Result<()> {
    match cmd {
        SoccerCommand::Player(a) => player::run(a),
        SoccerCommand::Team(a) => team::run(a),
        SoccerCommand::Spy(a) => spy::run(a),
        SoccerCommand::SendMsg(a) => send_msg::run(a),
        SoccerCommand::Case(a) => case::run(a),
        SoccerCommand::Match(a) => matchcmd::run(*a),
    }
}
