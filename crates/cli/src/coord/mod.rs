//! `simrob coord`: coordination of heterogeneous robot teams — the networked Control Center
//! and Time Server, robot agents for the SimRob server and the Mobile Robot Simulator, swarm
//! robots joining from a swarm simulation, and the comparison of allocation policies.

mod compare;
mod map;
mod menu;
mod net;
mod robot;
mod server;
mod swarm;

use anyhow::Result;

/// Subcommands of `simrob coord`.
#[derive(clap::Subcommand)]
pub enum CoordCommand {
    /// The Control Center and Time Server on TCP, headless: robots connect, operators send
    /// requests; prints the task-state changes and, with --log-dir, writes the three logs.
    Serve(server::ServeArgs),
    /// The Control Center with the operator's terminal menu: list robots, send or announce
    /// tasks, abort, clear, switch the allocation policy. Logs go to --log-dir
    /// (default coord-logs/): tasks.log, status.log, states.log. With --gui, the map of
    /// robots and task states in the browser at the same time.
    Cc(server::ServeArgs),
    /// A robot agent: drives a SumBot on a SimRob server (--server) or a Nomad on a Mobile
    /// Robot Simulator (--mrs) with the tasks the Control Center gives it.
    Robot(robot::RobotArgs),
    /// A swarm scenario whose robots join a Control Center (HMR Sim-style robots beside the
    /// networked ones).
    Swarm(swarm::SwarmArgs),
    /// Compare allocation policies (Contract Net, Hungarian, greedy) on a swarm scenario over
    /// many seeds: makespan, travel, tasks per hour, messages, idle time.
    Compare(compare::CompareArgs),
}

pub fn run(cmd: CoordCommand) -> Result<()> {
    match cmd {
        CoordCommand::Serve(args) => server::run(args, false),
        CoordCommand::Cc(args) => server::run(args.with_default_logs(), true),
        CoordCommand::Robot(args) => robot::run(args),
        CoordCommand::Swarm(args) => swarm::run(args),
        CoordCommand::Compare(args) => compare::run(args),
    }
}
