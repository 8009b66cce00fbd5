//! `simrob soccer spy`: the FutRob message receiver.

use std::sync::atomic::Ordering;

use anyhow::{bail, Result};
use clap::Args;
use simrob_futrob::config::DEFAULT_COMM_PORT;
use simrob_futrob::msg::{CommParams, DecodeError, Received, ROBOT_IDS};
use simrob_futrob::{Message, Role, TeamComm, BROADCAST};

use super::net;

#[derive(Args)]
pub struct SpyArgs {
    /// Receive as this robot id; 255 receives every message.
    #[arg(long, value_name = "ID", default_value_t = 255,
          value_parser = crate::flags::count(1i32, 255))]
    id: i32,
    /// Role of the robot emulated (1 goalkeeper, 2 field player).
    #[arg(long, default_value_t = 2, value_parser = crate::flags::count(1i32, 2))]
    role: i32,
    /// The team messages' UDP port (the robots' `commPort`), 1 to 65535.
    #[arg(long, value_name = "PORT", default_value_t = DEFAULT_COMM_PORT,
          value_parser = crate::flags::count(1u16, u16::MAX))]
    team_port: u16,
    /// Old spelling of `--team-port`.
    #[arg(long = "port", value_name = "PORT", hide = true,
          value_parser = crate::flags::renamed("port", "team-port", ""))]
    old_port: Option<String>,
    /// Exit after this many datagrams.
    #[arg(long, value_name = "N")]
    count: Option<u64>,
}

pub fn run(args: SpyArgs) -> Result<()> {
    let Some(role) = Role::from_code(args.role) else {
        bail!(
            "--role must be 1 (goalkeeper) or 2 (field player), not {}",
            args.role
        );
    };
    let stop = crate::shell::ctrl_c_flag()?;
    let sock = net::team_socket(args.team_port)?;
    // As robot 255 every message is for us; otherwise filter like that robot.
    let mut comm = TeamComm::new(args.id, role, CommParams::default());
    say!(
        "spy as robot {} ({}){} listening on udp port {}",
        args.id,
        role.name(),
        if args.id == BROADCAST {
            ": every message"
        } else {
            ""
        },
        args.team_port
    );
    // Any datagram fits: its true size is said when it is not a team message.
    let mut buf = vec![0u8; 65_536];
    let mut n_msg = 0u64;
    let (mut accepted, mut rejected) = (0u64, 0u64);
    // Counted, not kept: a flood of bad datagrams grew a list of them without end.
    let (mut bad_length, mut unknown_param, mut table_full) = (0u64, 0u64, 0u64);
    let mut bad_source = 0u64;
    let mut dropped = |e: DecodeError| match e {
        DecodeError::WrongLength(_) => bad_length += 1,
        DecodeError::UnknownParam(_) => unknown_param += 1,
    };
    let t0 = std::time::Instant::now();
    while !stop.load(Ordering::Relaxed) && args.count.is_none_or(|c| n_msg < c) {
        let Ok((n, _)) = sock.recv_from(&mut buf) else {
            continue;
        };
        n_msg += 1;
        let now = t0.elapsed().as_millis() as u64;
        let line = if args.id == BROADCAST {
            // Robot 255 accepts everything that decodes and comes from a robot id.
            match Message::decode(&buf[..n]) {
                Ok(m) if !ROBOT_IDS.contains(&m.source) => {
                    bad_source += 1;
                    format!("-----| [msg={n_msg}] DROPPED: the source is not a robot id (1-254) |----- {m}")
                }
                Ok(m) => {
                    accepted += 1;
                    format!("[msg={n_msg}] {m}")
                }
                Err(e) => {
                    dropped(e);
                    format!("-----| [msg={n_msg}] DROPPED |----- {e}")
                }
            }
        } else {
            match comm.handle_datagram(&buf[..n], now) {
                Received::Accepted(m) => {
                    accepted += 1;
                    format!("[msg={n_msg}] {m}")
                }
                Received::Own(m) | Received::NotForMe(m) => {
                    rejected += 1;
                    format!("-----| [msg={n_msg}] MSG REJECTED |----- {m}")
                }
                Received::Dropped(e) => {
                    dropped(e);
                    format!("-----| [msg={n_msg}] DROPPED |----- {e}")
                }
                Received::BadSource(m) => {
                    bad_source += 1;
                    format!("-----| [msg={n_msg}] DROPPED: the source is not a robot id (1-254) |----- {m}")
                }
                Received::TableFull(m) => {
                    table_full += 1;
                    format!("-----| [msg={n_msg}] DROPPED: the teammate table is full |----- {m}")
                }
            }
        };
        // Answering questions would change the team: the spy only listens.
        while comm.poll_transmit().is_some() {}
        say!("{line}");
    }
    let source = if bad_source > 0 {
        format!(", {bad_source} from a source not a robot id")
    } else {
        String::new()
    };
    let table = if table_full > 0 {
        format!(", {table_full} from new senders while the teammate table was full")
    } else {
        String::new()
    };
    say!(
        "spy: {n_msg} datagrams, {accepted} accepted, {rejected} rejected, {} dropped ({bad_length} bad length, {unknown_param} unknown param{source}{table})",
        bad_length + unknown_param + bad_source + table_full,
    );
    Ok(())
}
