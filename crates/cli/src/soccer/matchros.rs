//! `simrob soccer match --ros2`: the match watched on ROS 2 (see `simrob_ros2::soccer`).

use anyhow::{bail, Context, Result};
use simrob_ros2::soccer::{MatchFrame, Player, SoccerRos};
use simrob_trials::matchplay::MatchSummary;
use simrob_trials::Arena;

/// The participant for `flags`, or none without --ros2. `speed` paces the match (0 when the
/// 2D view paces it).
pub(super) fn start(flags: &crate::flags::Ros2, speed: f64) -> Result<Option<SoccerRos>> {
    let Some(discovery) = check(flags)? else {
        return Ok(None);
    };
    let ros = SoccerRos::new(simrob_ros2::soccer::Options {
        discovery,
        rates: flags.rates(),
        speed,
    })
    .context("cannot start the ROS 2 participant")?;
    eprintln!("{}", crate::flags::Ros2::banner(discovery));
    Ok(Some(ros))
}

/// Checks the ROS 2 flags and environment (`ROS_AUTOMATIC_DISCOVERY_RANGE`, …) without
/// starting anything: the discovery to use with `--ros2`, `None` without. A match calls it
/// before it creates a file or announces a viewer, so a refusal is all it prints.
pub(super) fn check(flags: &crate::flags::Ros2) -> Result<Option<simrob_ros2::env::Discovery>> {
    if !flags.ros2 {
        return Ok(None);
    }
    if flags.ros2_lockstep {
        bail!("--ros2-lockstep: a match is played by its FutRob brains, nothing on the ROS side to wait for");
    }
    flags.refuse_sensor_rate("soccer match")?;
    Ok(Some(flags.discovery()?))
}

/// Publishes the match as it is now.
pub(super) fn publish(ros: &mut SoccerRos, arena: &Arena, s: &MatchSummary) {
    let players = arena
        .players()
        .iter()
        .filter_map(|p| {
            let q = arena.robot_pose(p.entity)?;
            Some(Player {
                entity: p.entity,
                team: p.team.as_str(),
                pose: [q.x, q.y, q.heading],
            })
        })
        .collect();
    let w = arena.world();
    let time = ros.on_grid(w.iteration(), w.sim_time(), w.iteration_seconds());
    ros.publish(&MatchFrame {
        time,
        players,
        ball: arena.ball(),
        goals: s.goals,
        events: &s.events,
    });
}
