//! `simrob netbed`: the lossy-network test bed's relays (`simrob-netbed`) as commands, to put
//! between a client and a server by hand: UDP (SimRob agents and server) with seeded loss,
//! duplication, reordering, delay and jitter; TCP (Mobile Robot Simulator, coordination)
//! with a delay, stalls and cuts typed at the terminal.

use std::io::{BufRead, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use simrob_netbed::{Impairment, LinkStats, TcpRelay, UdpRelay};

/// Subcommands of `simrob netbed`.
#[derive(clap::Subcommand)]
pub enum NetbedCommand {
    /// A UDP relay between SimRob agents and a server that loses, duplicates, reorders and
    /// delays datagrams, each from a seeded random stream: the same seed and traffic give the
    /// same losses in every run.
    ///
    /// Agents send to the --listen address instead of the server's; the relay rewrites the
    /// port in their Register_Agent so the server's answers and broadcasts come back
    /// through it too. Both ways are impaired alike unless --only says otherwise. Prints
    /// `listening on udp://IP:PORT` when ready; type `stats` for what it did so far; Ctrl-C
    /// (or `quit`) stops it and prints the totals. Example: simrob netbed udp --listen
    /// 127.0.0.1:5006 --to 127.0.0.1:5005 --loss 0.05 --delay 50ms --jitter 20ms --seed 1
    Udp(UdpArgs),
    /// A TCP relay between clients and a server (the Mobile Robot Simulator, the
    /// coordination Control Center) that can slow, stall and cut the connections.
    ///
    /// Clients connect to the --listen address instead of the server's. Type at the
    /// terminal: `delay 50ms` (hold every chunk that long; `delay 0` for none), `stall`
    /// (forward nothing, the connections stay open), `resume`, `cut` (close every open
    /// connection at both ends), `stats`, `quit`. Prints `listening on tcp://IP:PORT` when
    /// ready; Ctrl-C stops it.
    Tcp(TcpArgs),
}

/// Where the relay listens and where it relays to.
#[derive(clap::Args)]
pub struct Ends {
    /// The server's address (IP:PORT, or a host name that resolves to one).
    #[arg(long, value_name = "ADDR")]
    to: String,
    /// Where clients reach the relay (port 0: any free port, printed).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Allow addresses other than loopback (127.0.0.0/8, ::1): the impaired traffic then
    /// crosses a real network. Without it the relay only works on this machine.
    #[arg(long)]
    allow_non_loopback: bool,
}

impl Ends {
    fn resolve(&self) -> Result<(SocketAddr, SocketAddr)> {
        let to = self
            .to
            .to_socket_addrs()
            .with_context(|| format!("--to {}: not an address (IP:PORT)", self.to))?
            .next()
            .with_context(|| format!("--to {}: no address for it", self.to))?;
        if !self.allow_non_loopback {
            for (flag, a) in [("--listen", self.listen), ("--to", to)] {
                if !a.ip().is_loopback() {
                    bail!(
                        "{flag} {a} is not a loopback address: the relay stays on this machine \
                         unless you pass --allow-non-loopback"
                    );
                }
            }
        }
        simrob_netbed::check_ends(self.listen, to)
            .map_err(|e| anyhow::anyhow!("--to {}: {e} (--listen {})", self.to, self.listen))?;
        Ok((self.listen, to))
    }
}

/// Arguments of `simrob netbed udp`.
#[derive(clap::Args)]
pub struct UdpArgs {
    #[command(flatten)]
    ends: Ends,
    /// Probability that a datagram is lost (0 to 1).
    #[arg(long, default_value_t = 0.0, value_name = "P", value_parser = parse_probability)]
    loss: f64,
    /// Probability that a datagram that is not lost arrives twice (0 to 1).
    #[arg(long, default_value_t = 0.0, value_name = "P", value_parser = parse_probability)]
    dup: f64,
    /// Probability that a datagram is held back until the next one of its agent that is not
    /// held has gone, so that one overtakes it (0 to 1): this share of the datagrams arrives
    /// out of order. At most 64 are held for an agent at once; one held 20 ms past its time
    /// with no follower goes anyway.
    #[arg(long, default_value_t = 0.0, value_name = "P", value_parser = parse_probability)]
    reorder: f64,
    /// Delay added to every datagram, in seconds (or 50ms, 2s, 1min), at most 3600.
    #[arg(long, default_value = "0ms", value_parser = parse_duration, value_name = "S",
          allow_hyphen_values = true)]
    delay: Duration,
    /// Each datagram's delay varies by up to this either way (uniformly; at most --delay), in
    /// seconds (or 50ms, 2s, 1min).
    #[arg(long, default_value = "0ms", value_parser = parse_duration, value_name = "S",
          allow_hyphen_values = true)]
    jitter: Duration,
    /// Seed of the random stream (each agent's datagrams meet the same fates in every run).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Impair only one way: `up` (agents to server) or `down` (server to agents).
    #[arg(long, value_name = "WAY", value_parser = ["up", "down"])]
    only: Option<String>,
    /// Forget an agent (close its socket towards the server) after this long without a
    /// datagram either way, in seconds (or 50ms, 2s, 1min), more than 0, at most 3600.
    #[arg(long, default_value = "60s", value_parser = parse_flow_idle, value_name = "S")]
    flow_idle: Duration,
    /// Agents relayed at once (a socket towards the server each), at least 1: a new agent
    /// past them is not relayed until one is forgotten (--flow-idle).
    #[arg(long, value_name = "N", default_value_t = simrob_netbed::MAX_FLOWS,
          value_parser = crate::flags::count(1usize, usize::MAX))]
    max_flows: usize,
    /// Bytes of datagrams on their way at once (delayed, or held back for reordering), at
    /// least 1: a copy past them is dropped and counted as overflowed.
    #[arg(long, value_name = "BYTES", default_value_t = simrob_netbed::MAX_QUEUED_BYTES,
          value_parser = crate::flags::count(1usize, usize::MAX))]
    max_queued_bytes: usize,
}

/// Arguments of `simrob netbed tcp`.
#[derive(clap::Args)]
pub struct TcpArgs {
    #[command(flatten)]
    ends: Ends,
    /// Delay every chunk forwarded by this much from the start, in seconds (or 50ms, 2s,
    /// 1min), at most 3600 (`delay` at the terminal changes it).
    #[arg(long, default_value = "0ms", value_parser = parse_duration, value_name = "S",
          allow_hyphen_values = true)]
    delay: Duration,
    /// Connections open at once (1 to 1024): a client that comes when this many are open is
    /// closed at once.
    #[arg(long, value_name = "N", default_value_t = simrob_netbed::DEFAULT_MAX_CONNECTIONS,
          value_parser = parse_max_connections)]
    max_connections: usize,
}

/// `--max-connections`: 1 to [`simrob_netbed::MAX_CONNECTIONS`].
fn parse_max_connections(s: &str) -> Result<usize, String> {
    let max = simrob_netbed::MAX_CONNECTIONS;
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("{s:?}: a whole number from 1 to {max}")),
    }
}

/// `--loss`, `--dup`, `--reorder`: a probability from 0 to 1.
fn parse_probability(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("{s:?}: a probability from 0 to 1")),
    }
}

/// `--flow-idle`: a time more than 0, at most 3600 s.
fn parse_flow_idle(s: &str) -> Result<Duration, String> {
    crate::flags::seconds_above_0(MAX_SECONDS)(s).map(Duration::from_secs_f64)
}

/// The longest delay, jitter or idle time, seconds.
const MAX_SECONDS: f64 = 3600.0;

/// A delay or a jitter ([`crate::flags::seconds`]), from 0 to 3600 s.
fn parse_duration(s: &str) -> Result<Duration, String> {
    crate::flags::seconds_from(0.0, MAX_SECONDS)(s).map(Duration::from_secs_f64)
}

pub fn run(cmd: NetbedCommand) -> Result<()> {
    match cmd {
        NetbedCommand::Udp(args) => udp(args),
        NetbedCommand::Tcp(args) => tcp(args),
    }
}

/// Raises the open-files limit for `count` of `what`, each holding `each` sockets; says so on
/// standard error when the hard limit keeps it lower (fewer of them can be relayed at once).
fn enough_open_files(count: usize, each: u64, what: &str) {
    let needed = simrob_netbed::open_files_needed(count, each);
    if let Some(limit) = simrob_netbed::raise_open_files(needed) {
        if limit < needed {
            eprintln!(
                "netbed: this process may open at most {limit} files (its hard limit, `ulimit \
                 -Hn`), so fewer than {count} {what} at once (each holds {each} socket{}): \
                 raise the hard limit (as root) for more",
                if each == 1 { "" } else { "s" }
            );
        }
    }
}

fn udp(args: UdpArgs) -> Result<()> {
    let (listen, to) = args.ends.resolve()?;
    if args.jitter > args.delay {
        bail!(
            "--jitter {} ms is larger than --delay {} ms: a datagram's delay would be negative",
            ms(args.jitter),
            ms(args.delay)
        );
    }
    let imp = Impairment {
        loss: args.loss,
        duplicate: args.dup,
        reorder: args.reorder,
        delay: args.delay,
        jitter: args.jitter,
        seed: args.seed,
    };
    // The two ways draw from different streams of the same seed.
    let down = Impairment {
        seed: args.seed ^ 0x9e37_79b9_7f4a_7c15,
        ..imp
    };
    let (up, down) = match args.only.as_deref() {
        Some("up") => (imp, Impairment::clean()),
        Some("down") => (Impairment::clean(), down),
        _ => (imp, down),
    };
    let terminal = Terminal::start()?;
    enough_open_files(args.max_flows, 1, "agents with a flow");
    let limits = simrob_netbed::UdpLimits {
        max_flows: args.max_flows,
        max_queued_bytes: args.max_queued_bytes,
    };
    let relay = if args.ends.allow_non_loopback {
        UdpRelay::start_any(listen, to, up, down, limits)
    } else {
        UdpRelay::start_on_within(listen, to, up, down, limits)
    }
    .with_context(|| format!("cannot start the relay on {listen}"))?;
    relay.set_flow_idle(args.flow_idle);
    println!("listening on udp://{}", relay.addr());
    println!(
        "relaying to udp://{to}: {}",
        match args.only.as_deref() {
            Some(way) => format!("{} ({way} only)", describe(&imp)),
            None => format!("{} (both ways)", describe(&imp)),
        }
    );
    std::io::stdout().flush()?;
    let show = |relay: &UdpRelay| {
        let s = relay.stats();
        println!(
            "agents {} (forgotten {}, datagrams from agents with no room {}, with no socket {}); \
             up: {}; down: {}; bytes on their way {}",
            s.flows,
            s.expired,
            s.no_flow,
            s.no_socket,
            link(&s.up),
            link(&s.down),
            s.queued_bytes
        );
    };
    terminal.run(|line| match line {
        "stats" => {
            show(&relay);
            Ok(true)
        }
        "quit" => Ok(false),
        "" => Ok(true),
        other => {
            println!("unknown command {other:?}: stats or quit");
            Ok(true)
        }
    })?;
    show(&relay);
    Ok(())
}

fn tcp(args: TcpArgs) -> Result<()> {
    let (listen, to) = args.ends.resolve()?;
    let terminal = Terminal::start()?;
    enough_open_files(args.max_connections, 2, "connections");
    let relay = if args.ends.allow_non_loopback {
        TcpRelay::start_any(listen, to)
    } else {
        TcpRelay::start_on(listen, to)
    }
    .with_context(|| format!("cannot start the relay on {listen}"))?;
    relay.set_delay(args.delay);
    relay.set_max_connections(args.max_connections);
    println!("listening on tcp://{}", relay.addr());
    println!(
        "relaying to tcp://{to} (delay {} ms); type delay TIME, stall, resume, cut, stats or quit",
        ms(args.delay)
    );
    std::io::stdout().flush()?;
    let show = |relay: &TcpRelay| {
        let s = relay.stats();
        println!(
            "connections {}, cut {}, bytes forwarded {}, open {}, refused {}",
            s.connections, s.cut, s.bytes, s.open, s.refused
        );
    };
    terminal.run(|line| {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("delay"), Some(t)) => match parse_duration(t) {
                Ok(d) => {
                    relay.set_delay(d);
                    println!("delay {} ms", ms(d));
                }
                Err(e) => println!("delay {e}"),
            },
            (Some("stall"), None) => {
                relay.stall(true);
                println!("stalled: nothing is forwarded until resume");
            }
            (Some("resume"), None) => {
                relay.stall(false);
                println!("resumed");
            }
            (Some("cut"), None) => {
                let before = relay.stats().cut;
                relay.cut();
                println!("cut {} connections", relay.stats().cut - before);
            }
            (Some("stats"), None) => show(&relay),
            (Some("quit"), None) => return Ok(false),
            (None, _) => {}
            _ => {
                println!("unknown command {line:?}: delay TIME, stall, resume, cut, stats or quit")
            }
        }
        Ok(true)
    })?;
    show(&relay);
    Ok(())
}

/// Commands typed at the terminal, and Ctrl-C. Started before the relay, whose sockets may
/// use up the process's open files: the Ctrl-C hook needs descriptors of its own, and a hook
/// set up after the relay's agents took the last ones ended the relay at once.
struct Terminal {
    stop: Arc<AtomicBool>,
    /// Typed lines, or `None` for Ctrl-C.
    lines: mpsc::Receiver<Option<String>>,
}

impl Terminal {
    /// Hooks Ctrl-C and starts reading standard input.
    fn start() -> Result<Terminal> {
        let stop = crate::shell::ctrl_c_flag()?;
        let (tx, lines) = mpsc::channel::<Option<String>>();
        let on_stop = tx.clone();
        crate::shell::on_ctrl_c(Box::new(move || {
            let _ = on_stop.send(None);
        }));
        std::thread::Builder::new()
            .name("netbed-terminal".into())
            .spawn(move || {
                for line in std::io::stdin().lock().lines() {
                    let Ok(line) = line else { break };
                    if tx.send(Some(line)).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Terminal { stop, lines })
    }

    /// Runs commands until `act` says stop (false), Ctrl-C, or an error. The end of the
    /// input (a closed or empty standard input) stops only the reading: the relay keeps
    /// running until Ctrl-C.
    fn run(self, mut act: impl FnMut(&str) -> Result<bool>) -> Result<()> {
        // A Ctrl-C before the hook was in place raised only the flag.
        while !self.stop.load(Ordering::SeqCst) {
            match self.lines.recv() {
                Ok(Some(line)) => {
                    if !act(line.trim())? {
                        break;
                    }
                    std::io::stdout().flush()?;
                }
                Ok(None) | Err(_) => break,
            }
        }
        Ok(())
    }
}

/// `v` to three significant digits, without trailing zeros: 33.3, 0.5, 5, 1500.
fn readable(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (2 - v.abs().log10().floor() as i64).clamp(0, 12) as usize;
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A time in milliseconds as the banner shows it (`0.5`, `50`).
fn ms(d: Duration) -> String {
    readable(d.as_secs_f64() * 1e3)
}

fn describe(i: &Impairment) -> String {
    format!(
        "loss {} %, duplication {} %, reordering {} %, delay {} ± {} ms, seed {}",
        readable(i.loss * 100.0),
        readable(i.duplicate * 100.0),
        readable(i.reorder * 100.0),
        ms(i.delay),
        ms(i.jitter),
        i.seed
    )
}

fn link(s: &LinkStats) -> String {
    format!(
        "received {}, lost {}, duplicated {}, reordered {}, sent {}, waiting {}, overflowed {}",
        s.received, s.lost, s.duplicated, s.reordered, s.sent, s.waiting, s.overflowed
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_says_the_settings_in_use_readably() {
        let i = Impairment {
            loss: 0.333_333_333_3,
            duplicate: 0.05,
            reorder: 0.0001,
            delay: Duration::from_micros(500),
            jitter: Duration::from_micros(250),
            seed: 4,
        };
        assert_eq!(
            describe(&i),
            "loss 33.3 %, duplication 5 %, reordering 0.01 %, delay 0.5 ± 0.25 ms, seed 4"
        );
        assert_eq!(ms(Duration::from_millis(50)), "50");
        assert_eq!(ms(Duration::from_secs(3600)), "3600000");
        assert_eq!(readable(100.0), "100");
    }
}
