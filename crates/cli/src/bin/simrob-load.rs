//! `simrob-load`: load and soak test of a SimRob server over loopback.
//!
//! Starts `simrob serve` (the binary next to this one) on 127.0.0.1 with a scenario, or uses
//! a server given with `--server` (loopback addresses only). Then N agents register at once
//! (a registration storm: how many are confirmed), and each sends `Info_Request`s at M per
//! second for the duration. Every second it prints what was sent and answered, the server's
//! iterations per second and its resident memory; at the end: requests sent and answered,
//! datagrams lost, response latency p50/p99/max, iterations/s, memory first and last.
//!
//! Each answer is matched to the very request it answers, with the server's protocol as it
//! is: an agent's `n`-th request asks about the `n mod K`-th agent (K = min(agents, 1000)),
//! and the answer names that agent. A lost datagram therefore never shifts the latencies
//! of the answers after it.
//!
//! ```sh
//! cargo build --release -p simrob
//! target/release/simrob-load --agents 1000 --rate 100 --seconds 600
//! ```

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use simrob_protocol::{
    decode_server_message, encode_request, AgentRequest, AgentType, CommandKeys, Request, Response,
    ServerMessage,
};

/// Load and soak test of a SimRob server over loopback: N agents × M requests/s for a
/// bounded time, reporting datagrams lost, response latency, iterations/s and the server's
/// memory over time.
#[derive(Parser)]
#[command(name = "simrob-load")]
struct Args {
    /// Number of agents (each its own UDP socket).
    #[arg(long, default_value_t = 100)]
    agents: usize,
    /// Requests per second sent by each agent.
    #[arg(long, default_value_t = 10.0)]
    rate: f64,
    /// How long to send, in seconds (at most one hour).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// An already running server (a loopback address). Default: start `simrob serve`.
    #[arg(long, value_name = "ADDR")]
    server: Option<SocketAddr>,
    /// Its process id, to report its memory (with --server).
    #[arg(long, value_name = "PID")]
    pid: Option<u32>,
    /// Scenario for the server this tool starts.
    #[arg(long, value_name = "FILE", default_value = "scenarios/soccer.xml")]
    scenario: String,
    /// Simulated seconds per wall second of the server this tool starts (0 = as fast as
    /// possible).
    #[arg(long, default_value_t = 1.0)]
    real_time_factor: f64,
    /// Sending threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Print a line of the table every this many seconds.
    #[arg(long, default_value_t = 1, value_name = "SECONDS")]
    every: u64,
}

struct ServerProcess {
    child: Child,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(args: &Args) -> Result<(SocketAddr, ServerProcess)> {
    let exe = std::env::current_exe()?;
    let simrob = exe
        .parent()
        .map(|d| d.join("simrob"))
        .context("where is simrob?")?;
    let mut child = Command::new(&simrob)
        .args([
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--scenario",
            &args.scenario,
            "--real-time-factor",
            &args.real_time_factor.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {}", simrob.display()))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let process = ServerProcess { child };
    for line in lines.by_ref() {
        let line = line?;
        if let Some(a) = line.strip_prefix("listening on udp://") {
            let addr: SocketAddr = a.trim().parse()?;
            // Keep reading its output so it never blocks on a full pipe.
            std::thread::spawn(move || for _ in lines {});
            return Ok((addr, process));
        }
    }
    bail!("the server exited before listening")
}

/// Most agents requests ask about in turn: each agent's last this many requests are told
/// apart (a window of `MAX_WINDOW / rate` seconds).
const MAX_WINDOW: usize = 1000;

/// Most requests a sending thread sends before it reads the answers waiting.
const SEND_BURST: usize = 64;

/// Receive buffer asked for each agent's socket, bytes.
const TOOL_RECEIVE_BUFFER: usize = 1 << 20;

/// Processor time a process has used (user + system), in clock ticks of 1/100 s (Linux's
/// `USER_HZ`).
fn cpu_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces): state is field 3, utime 14.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// Datagrams the kernel dropped because a receive buffer was full (`/proc/net/udp`): at the
/// server's socket (bound to `server`), and at this tool's sockets (connected to it).
fn udp_drops(server: SocketAddr) -> Option<(u64, u64)> {
    let table = std::fs::read_to_string("/proc/net/udp").ok()?;
    let port = format!(":{:04X}", server.port());
    let (mut at_server, mut at_tool) = (0, 0);
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(local), Some(remote), Some(drops)) =
            (fields.get(1), fields.get(2), fields.last())
        else {
            continue;
        };
        let drops: u64 = drops.parse().unwrap_or(0);
        if local.ends_with(&port) && remote.ends_with(":0000") {
            at_server += drops;
        } else if remote.ends_with(&port) {
            at_tool += drops;
        }
    }
    Some((at_server, at_tool))
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

struct LoadAgent {
    socket: mio::net::UdpSocket,
    /// Index in the run (its key is `load<pid>-<index>`).
    index: usize,
    key: String,
    /// Its `Info_Request`, cut where the requested key goes: `head` + key + `tail`.
    head: Vec<u8>,
    tail: Vec<u8>,
    /// Requests sent so far: request `n` asks about the `n mod K`-th confirmed agent, so the
    /// answer (which names it) tells which request it answers.
    sent: u64,
    /// When each of the last K requests was sent, by `n mod K`; `None` once answered.
    in_flight: Vec<Option<Instant>>,
    next_send: Instant,
}

/// What an answer says, read without a full XML decode: the agent index in its key for an
/// `Agent_Information`, or a broadcast.
enum Answer {
    About(usize),
    Broadcast,
    Other,
}

/// Reads an answer as cheaply as possible (this tool shares the machine with the server it
/// measures): the text between `<Key>` and `</Key>` of an `<Agent_Information>`.
fn classify(data: &[u8], prefix: &[u8]) -> Answer {
    if data.starts_with(b"<Broadcast") {
        return Answer::Broadcast;
    }
    let Some(start) = find(data, b"<Key>") else {
        return Answer::Other;
    };
    let rest = &data[start + 5..];
    let Some(end) = find(rest, b"</Key>") else {
        return Answer::Other;
    };
    match rest[..end]
        .strip_prefix(prefix)
        .and_then(|d| std::str::from_utf8(d).ok())
        .and_then(|d| d.parse().ok())
    {
        Some(i) if find(data, b"<Agent_Information>").is_some() => Answer::About(i),
        _ => Answer::Other,
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[derive(Default)]
struct Totals {
    sent: AtomicU64,
    answered: AtomicU64,
    iteration: AtomicU64,
}

/// Makes `n` agents, each on its own loopback socket connected to `addr`, sends every
/// registration at once and waits (at most 5 s) for the confirmations. Returns the agents
/// and how many were confirmed.
fn register_storm(addr: SocketAddr, n: usize) -> Result<(Vec<LoadAgent>, usize)> {
    let keys = CommandKeys::default();
    let started = Instant::now();
    let mut poll = mio::Poll::new()?;
    let mut agents = Vec::with_capacity(n);
    for i in 0..n {
        let std_socket = UdpSocket::bind("127.0.0.1:0")?;
        std_socket.connect(addr)?;
        std_socket.set_nonblocking(true)?;
        // Room for a burst of answers while this tool waits for a processor: its own drops
        // would be counted against the server. (The OS may give less; drops are reported.)
        let _ = socket2::SockRef::from(&std_socket).set_recv_buffer_size(TOOL_RECEIVE_BUFFER);
        let mut socket = mio::net::UdpSocket::from_std(std_socket);
        poll.registry()
            .register(&mut socket, mio::Token(i), mio::Interest::READABLE)?;
        let local = socket.local_addr()?;
        // Keys unique to this run: a server keeps a key bound to the address that registered it.
        let key = format!("load{}-{i}", std::process::id());
        let register = Request::Agent(AgentRequest::RegisterAgent {
            agent_type: AgentType::RobotController,
            port: local.port(),
            ip: local.ip().to_string(),
            sync: false,
            // One agent receives every iteration's broadcast: the server's iterations/s.
            broadcast: if i == 0 { 0.0 } else { -1.0 },
            key: key.clone(),
        });
        socket.send(encode_request(&register, &keys).as_bytes())?;
        const MARK: &str = "REQUESTED0MARK";
        let template = encode_request(
            &Request::Agent(AgentRequest::InfoRequest {
                requester: key.clone(),
                requested: MARK.into(),
            }),
            &keys,
        );
        let at = template
            .find(MARK)
            .context("the request template has no mark")?;
        agents.push(LoadAgent {
            socket,
            index: i,
            key,
            head: template.as_bytes()[..at].to_vec(),
            tail: template.as_bytes()[at + MARK.len()..].to_vec(),
            sent: 0,
            in_flight: Vec::new(),
            next_send: started,
        });
    }
    let mut registered = 0usize;
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut buf = vec![0u8; 65536];
    let mut confirmed = vec![false; agents.len()];
    let mut events = mio::Events::with_capacity(1024);
    while registered < agents.len() {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        poll.poll(&mut events, Some(deadline - now))?;
        for event in events.iter() {
            let i = event.token().0;
            let a = &agents[i];
            while let Ok(n) = a.socket.recv(&mut buf) {
                if confirmed[i] {
                    continue;
                }
                if let Ok(ServerMessage::Response(Response::Text(t))) =
                    decode_server_message(&buf[..n])
                {
                    if t.contains(&format!("key {},", a.key)) {
                        confirmed[i] = true;
                        registered += 1;
                    }
                }
            }
        }
    }
    for a in &mut agents {
        poll.registry().deregister(&mut a.socket)?;
    }
    println!(
        "registration storm: {registered} of {} agents confirmed in {:.2} s",
        agents.len(),
        started.elapsed().as_secs_f64()
    );
    // Only confirmed agents send, and only about confirmed agents.
    let agents: Vec<LoadAgent> = agents
        .into_iter()
        .zip(confirmed)
        .filter_map(|(a, c)| c.then_some(a))
        .collect();
    Ok((agents, registered))
}

/// The agents requests ask about, in sequence order (request `n` asks about
/// `subjects.keys[n mod K]`), and the way back from an agent index to its place.
struct Subjects {
    keys: Vec<String>,
    slot_of: Vec<Option<usize>>,
    /// `load<pid>-`: what every key starts with.
    prefix: Vec<u8>,
}

/// Latencies, answers matched to their request, and answers that matched none (late beyond
/// the window of K requests, or duplicated).
#[derive(Default)]
struct Measured {
    latencies: Vec<u32>,
    unmatched: u64,
}

/// One sending thread: sends each of its agents' requests when due (the agents' send times
/// are spread evenly over the period, so they come due in turn), and waits on its sockets
/// (epoll) for the answers in between.
fn sender(
    mut shard: Vec<LoadAgent>,
    subjects: &Subjects,
    period: Duration,
    end: Instant,
    totals: &Totals,
    stop: &AtomicBool,
) -> Result<Measured> {
    let mut poll = mio::Poll::new()?;
    let window = subjects.keys.len().max(1);
    for (i, a) in shard.iter_mut().enumerate() {
        poll.registry()
            .register(&mut a.socket, mio::Token(i), mio::Interest::READABLE)?;
        a.in_flight = vec![None; window];
    }
    let mut events = mio::Events::with_capacity(1024);
    let mut buf = vec![0u8; 65536];
    let mut out = Vec::with_capacity(512);
    let mut measured = Measured::default();
    let receive = |a: &mut LoadAgent, buf: &mut [u8], measured: &mut Measured| {
        while let Ok(n) = a.socket.recv(buf) {
            match classify(&buf[..n], &subjects.prefix) {
                Answer::About(i) => {
                    let slot = subjects.slot_of.get(i).copied().flatten();
                    match slot.and_then(|s| a.in_flight[s].take()) {
                        Some(t) => {
                            let micros = t.elapsed().as_micros().min(u32::MAX as u128) as u32;
                            measured.latencies.push(micros);
                            totals.answered.fetch_add(1, Ordering::Relaxed);
                        }
                        None => measured.unmatched += 1,
                    }
                }
                Answer::Broadcast => {
                    if let Ok(ServerMessage::Broadcast(b)) = decode_server_message(&buf[..n]) {
                        totals.iteration.fetch_max(b.iteration, Ordering::Relaxed);
                    }
                }
                Answer::Other => {}
            }
        }
    };
    let mut turn = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let mut next = now + Duration::from_millis(100);
        if now < end && !shard.is_empty() {
            // A tool that fell behind must not catch up in one long burst while the answers
            // pile up unread in its sockets: at most SEND_BURST sends, then it reads.
            let mut burst = 0;
            while shard[turn].next_send <= now && burst < SEND_BURST {
                burst += 1;
                let a = &mut shard[turn];
                let slot = (a.sent % window as u64) as usize;
                out.clear();
                out.extend_from_slice(&a.head);
                out.extend_from_slice(subjects.keys[slot].as_bytes());
                out.extend_from_slice(&a.tail);
                if a.socket.send(&out).is_ok() {
                    a.in_flight[slot] = Some(Instant::now());
                    a.sent += 1;
                    totals.sent.fetch_add(1, Ordering::Relaxed);
                }
                a.next_send += period;
                turn = (turn + 1) % shard.len();
            }
            next = next.min(shard[turn].next_send);
            if burst == SEND_BURST {
                next = now;
            }
        }
        let wait = next.saturating_duration_since(Instant::now());
        poll.poll(&mut events, Some(wait))?;
        for event in events.iter() {
            if let Some(a) = shard.get_mut(event.token().0) {
                receive(a, &mut buf, &mut measured);
            }
        }
    }
    Ok(measured)
}

fn main() -> Result<()> {
    let args = Args::parse();
    if !(args.rate > 0.0 && args.rate.is_finite()) {
        bail!("--rate must be a positive number");
    }
    if !(args.seconds > 0.0 && args.seconds <= 3600.0) {
        bail!("--seconds must be in (0, 3600]");
    }
    if args.agents == 0 || args.agents > 20_000 {
        bail!("--agents must be in 1..=20000");
    }
    let (addr, server) = match args.server {
        Some(a) if a.ip().is_loopback() => (a, None),
        Some(a) => bail!("{a} is not a loopback address: this tool only loads local servers"),
        None => {
            let (a, p) = start_server(&args)?;
            (a, Some(p))
        }
    };
    let pid = args.pid.or(server.as_ref().map(|s| s.child.id()));

    let (agents, _registered) = register_storm(addr, args.agents)?;
    if agents.is_empty() {
        bail!("no agent was confirmed: is {addr} a SimRob server?");
    }
    // Requests are told apart by the agent they ask about: a window of K requests per agent.
    let window = agents.len().min(MAX_WINDOW);
    let pid_prefix = format!("load{}-", std::process::id());
    let mut subjects = Subjects {
        keys: agents[..window].iter().map(|a| a.key.clone()).collect(),
        slot_of: vec![None; args.agents],
        prefix: pid_prefix.into_bytes(),
    };
    for (slot, a) in agents[..window].iter().enumerate() {
        subjects.slot_of[a.index] = Some(slot);
    }
    let subjects = Arc::new(subjects);

    // Load.
    let totals = Arc::new(Totals::default());
    let stop = Arc::new(AtomicBool::new(false));
    let period = Duration::from_secs_f64(1.0 / args.rate);
    let begin = Instant::now();
    let end = begin + Duration::from_secs_f64(args.seconds);
    let threads = args.threads.clamp(1, 16);
    let mut shards: Vec<Vec<LoadAgent>> = (0..threads).map(|_| Vec::new()).collect();
    let senders = agents.len();
    for (i, mut a) in agents.into_iter().enumerate() {
        // Spread the sends over the period.
        a.next_send = begin + period.mul_f64(i as f64 / senders as f64);
        shards[i % threads].push(a);
    }
    let mut workers = Vec::new();
    for shard in shards {
        let totals = totals.clone();
        let stop = stop.clone();
        let subjects = subjects.clone();
        workers.push(std::thread::spawn(move || {
            sender(shard, &subjects, period, end, &totals, &stop)
        }));
    }
    let mut last_iteration = totals.iteration.load(Ordering::Relaxed);
    let mut first_rss = None;
    let mut last_rss = None;
    let mut iteration_rates = Vec::new();
    println!(
        "     t  sent/s  answered/s  lost(total)  dropped at server  iterations/s  server RSS (MiB)  server CPU  tool CPU"
    );
    let (mut last_sent, mut last_answered) = (0, 0);
    let server_pid = pid.map(|p| p.to_string());
    let server_cpu = || server_pid.as_deref().and_then(cpu_ticks);
    let (cpu_start, tool_start) = (server_cpu(), cpu_ticks("self"));
    // Other sockets on the server's port (an earlier run's) may have counted drops already.
    let drops_start = udp_drops(addr);
    let (mut last_cpu, mut last_tool) = (cpu_start, tool_start);
    let every = args.every.max(1);
    let drain = Duration::from_secs(1);
    let mut t = 0u64;
    let mut last_print = begin;
    while Instant::now() < end + drain {
        std::thread::sleep(Duration::from_secs(every));
        t += every;
        let now = Instant::now();
        let wall = now.duration_since(last_print).as_secs_f64();
        last_print = now;
        let sent = totals.sent.load(Ordering::Relaxed);
        let answered = totals.answered.load(Ordering::Relaxed);
        let it = totals.iteration.load(Ordering::Relaxed);
        let rss = pid.and_then(rss_kib);
        first_rss = first_rss.or(rss);
        last_rss = rss.or(last_rss);
        let (cpu, tool) = (server_cpu(), cpu_ticks("self"));
        let share = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.0}%", b.saturating_sub(a) as f64 / wall),
            _ => "-".into(),
        };
        let per_second = |n: u64| (n as f64 / wall).round() as u64;
        iteration_rates.push(per_second(it.saturating_sub(last_iteration)));
        println!(
            "{t:6}  {:6}  {:10}  {:11}  {:>17}  {:12}  {:>16}  {:>10}  {:>8}",
            per_second(sent - last_sent),
            per_second(answered - last_answered),
            sent.saturating_sub(answered),
            udp_drops(addr).map_or("-".into(), |(s, _)| {
                s.saturating_sub(drops_start.map_or(0, |d| d.0)).to_string()
            }),
            per_second(it.saturating_sub(last_iteration)),
            rss.map_or("-".into(), |k| format!("{:.1}", k as f64 / 1024.0)),
            share(last_cpu, cpu),
            share(last_tool, tool),
        );
        (last_sent, last_answered, last_iteration) = (sent, answered, it);
        (last_cpu, last_tool) = (cpu, tool);
    }
    stop.store(true, Ordering::Relaxed);
    let mut lat = Vec::new();
    let mut unmatched = 0;
    for w in workers {
        match w.join() {
            Ok(Ok(m)) => {
                lat.extend(m.latencies);
                unmatched += m.unmatched;
            }
            Ok(Err(e)) => return Err(e.context("a sending thread failed")),
            Err(_) => bail!("a sending thread panicked"),
        }
    }
    let sent = totals.sent.load(Ordering::Relaxed);
    let answered = totals.answered.load(Ordering::Relaxed);
    lat.sort_unstable();
    let pct = |p: f64| -> f64 {
        if lat.is_empty() {
            return f64::NAN;
        }
        let i = ((lat.len() - 1) as f64 * p).round() as usize;
        f64::from(lat[i]) / 1000.0
    };
    let lost = sent.saturating_sub(answered);
    println!(
        "{} agents × {} requests/s for {} s: sent {sent}, answered {answered}, lost {lost} ({:.3}%)",
        args.agents,
        args.rate,
        args.seconds,
        if sent > 0 {
            100.0 * lost as f64 / sent as f64
        } else {
            0.0
        }
    );
    println!(
        "response latency: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} answers, each matched to its request; {unmatched} came after {window} later requests of their agent and count as lost)",
        pct(0.5),
        pct(0.99),
        pct(1.0),
        lat.len(),
    );
    let steady: Vec<u64> = iteration_rates.iter().copied().filter(|&r| r > 0).collect();
    println!(
        "iterations/s: mean {:.1} over {} s with broadcasts",
        steady.iter().sum::<u64>() as f64 / steady.len().max(1) as f64,
        steady.len()
    );
    if let (Some(start), Some(end)) = (drops_start, udp_drops(addr)) {
        println!(
            "dropped by the kernel, receive buffer full: {} at the server's socket, {} at this tool's sockets",
            end.0.saturating_sub(start.0),
            end.1.saturating_sub(start.1)
        );
    }
    if let (Some(a), Some(b)) = (first_rss, last_rss) {
        println!(
            "server memory: {:.1} MiB at the start, {:.1} MiB at the end",
            a as f64 / 1024.0,
            b as f64 / 1024.0
        );
    }
    if let (Some(a), Some(b)) = (cpu_start, last_cpu) {
        let seconds = b.saturating_sub(a) as f64 / 100.0;
        println!(
            "server processor time: {seconds:.2} s for {answered} answers ({:.1} µs each, all of its work included)",
            seconds * 1e6 / answered.max(1) as f64
        );
    }
    if let (Some(a), Some(b)) = (tool_start, last_tool) {
        let seconds = b.saturating_sub(a) as f64 / 100.0;
        println!(
            "tool processor time: {seconds:.2} s for {sent} requests sent and their answers ({:.1} µs each)",
            seconds * 1e6 / sent.max(1) as f64
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_protocol::{encode_response, encode_server_message, Broadcast};

    #[test]
    fn answers_are_told_apart_by_the_agent_they_name() {
        let prefix = b"load42-";
        let answer = |key: &str| {
            encode_response(&Response::AgentInformation {
                key: key.into(),
                port: 5000,
                ip: "127.0.0.1".into(),
            })
        };
        assert!(matches!(
            classify(answer("load42-17").as_bytes(), prefix),
            Answer::About(17)
        ));
        // Another run's agent, a text answer, a broadcast.
        assert!(matches!(
            classify(answer("load43-17").as_bytes(), prefix),
            Answer::Other
        ));
        let text = encode_response(&Response::Text("<Key>load42-1</Key>".into()));
        assert!(matches!(classify(text.as_bytes(), prefix), Answer::Other));
        let b = encode_server_message(&ServerMessage::Broadcast(Broadcast::default()));
        assert!(matches!(classify(b.as_bytes(), prefix), Answer::Broadcast));
    }
}
