//! `simrob-load`: load and soak test of a SimRob server over loopback.
//!
//! Starts `simrob serve` (the binary next to this one) on 127.0.0.1 with a scenario, or uses
//! a server given with `--server` (loopback addresses only). Then N agents register at once
//! (a registration storm: how many are confirmed), and each sends `Info_Request`s at M per
//! second for the duration. Every second it prints what was sent and answered, the server's
//! iterations per second and its resident memory; at the end: requests sent and answered,
//! datagrams lost, response latency p50/p99/max, iterations/s, memory first and last.
//!
//! Every agent has its own address, as a thousand agent programs would: its own IP in
//! `127.77.0.0/16`, all of a sending thread's agents sharing one socket bound to the
//! wildcard address (`IP_PKTINFO` names the source of each request and tells which agent an
//! answer is for). So the tool reads and sends 64 datagrams per system call
//! (`simrob_server::datagrams`) and leaves the machine to the server it measures; the server
//! sees a thousand addresses.
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
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
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
use simrob_server::datagrams::{send_all, want_destinations, Outgoing, Received, MAX_BATCH};

/// Load and soak test of a SimRob server over loopback: N agents × M requests/s for a
/// bounded time, reporting datagrams lost, response latency, iterations/s and the server's
/// memory over time.
#[derive(Parser)]
#[command(name = "simrob-load")]
struct Args {
    /// Number of agents (each its own address: an IP in 127.77.0.0/16).
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
    /// Scenario for the server this tool starts [default: the built-in soccer scenario, as
    /// scenarios/soccer.xml].
    #[arg(long, value_name = "FILE")]
    scenario: Option<String>,
    /// The pace of the server this tool starts: simulated seconds per wall second (0 = as
    /// fast as possible; `--real-time-factor` is its old spelling).
    #[arg(
        long,
        value_name = "F",
        default_value_t = 1.0,
        alias = "real-time-factor"
    )]
    speed: f64,
    /// Sending threads (the agents of a thread share one socket).
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

/// The scenario of the server this tool starts when given none: scenarios/soccer.xml, built
/// in so that the tool runs from any directory.
const BUILT_IN_SCENARIO: &str = include_str!("../../../../scenarios/soccer.xml");

/// The built-in scenario written to a file of the temporary directory for `simrob serve` to
/// read, removed when dropped (once the server listens, it has read it).
struct TempScenario(std::path::PathBuf);

impl TempScenario {
    fn write() -> Result<Self> {
        let path =
            std::env::temp_dir().join(format!("simrob-load-soccer-{}.xml", std::process::id()));
        std::fs::write(&path, BUILT_IN_SCENARIO)
            .with_context(|| format!("cannot write the built-in scenario to {}", path.display()))?;
        Ok(TempScenario(path))
    }
}

impl Drop for TempScenario {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn start_server(args: &Args) -> Result<(SocketAddr, ServerProcess)> {
    // The built-in scenario's file lives until the server listens (it has read it then).
    let (scenario, _built_in) = match &args.scenario {
        Some(s) => (s.clone(), None),
        None => {
            let t = TempScenario::write()?;
            (t.0.display().to_string(), Some(t))
        }
    };
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
            &scenario,
            "--speed",
            &args.speed.to_string(),
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

/// Most requests a sending thread sends before it reads the answers waiting (one system
/// call).
const SEND_BURST: usize = MAX_BATCH;

/// Receive buffer asked for each sending thread's socket, bytes (the OS may give less: Linux
/// caps it at `net.core.rmem_max`).
const TOOL_RECEIVE_BUFFER: usize = 16 << 20;

/// The IP of agent `i`: its own loopback address.
fn agent_ip(i: usize) -> Ipv4Addr {
    let n = i + 1;
    Ipv4Addr::new(127, 77, (n >> 8) as u8, (n & 0xff) as u8)
}

/// The agent an address of `agent_ip` belongs to.
fn agent_of(ip: IpAddr) -> Option<usize> {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            let n = (usize::from(c) << 8) | usize::from(d);
            (a == 127 && b == 77 && n > 0).then(|| n - 1)
        }
        IpAddr::V6(_) => None,
    }
}

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
/// server's socket (bound to `server`), and at this tool's sockets (bound to `tool` ports).
fn udp_drops(server: SocketAddr, tool: &[u16]) -> Option<(u64, u64)> {
    let table = std::fs::read_to_string("/proc/net/udp").ok()?;
    let port = format!(":{:04X}", server.port());
    let tool: Vec<String> = tool.iter().map(|p| format!(":{p:04X}")).collect();
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
        } else if tool.iter().any(|t| local.ends_with(t.as_str())) {
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
    /// Index in the run (its key is `load<pid>-<index>`, its IP `agent_ip(index)`).
    index: usize,
    ip: Ipv4Addr,
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
    confirmed: bool,
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

/// A sending thread's agents and the one socket they share (bound to the wildcard address:
/// each agent sends from its own loopback IP).
struct Shard {
    socket: mio::net::UdpSocket,
    agents: Vec<LoadAgent>,
    /// Agent index in the run → place in `agents`.
    place: std::collections::HashMap<usize, usize>,
}

impl Shard {
    /// Reads every datagram waiting on the socket (edge-triggered epoll: until a call finds
    /// it empty) and hands each one from `server` to `f` with the agent it was sent to.
    fn receive(
        &mut self,
        received: &mut Received,
        server: SocketAddr,
        mut f: impl FnMut(&mut LoadAgent, &[u8]),
    ) {
        while let Ok(count) = received.recv(&self.socket) {
            for d in (0..received.len()).filter_map(|i| received.get(i)) {
                let agent = agent_of_datagram(d.from == server, d.to, &self.place);
                if let Some(a) = agent.and_then(|i| self.agents.get_mut(i)) {
                    f(a, d.payload);
                }
            }
            if count < MAX_BATCH {
                break;
            }
        }
    }
}

/// The place in its shard of the agent a datagram was sent to, if it came from the server.
fn agent_of_datagram(
    from_server: bool,
    to: Option<IpAddr>,
    place: &std::collections::HashMap<usize, usize>,
) -> Option<usize> {
    if !from_server {
        return None;
    }
    place.get(&agent_of(to?)?).copied()
}

/// Makes `n` agents over `threads` shared sockets, sends every registration at once and
/// waits (at most 5 s) for the confirmations. Returns the shards, with confirmed agents
/// only, and how many were confirmed.
fn register_storm(addr: SocketAddr, n: usize, threads: usize) -> Result<(Vec<Shard>, usize)> {
    let keys = CommandKeys::default();
    let started = Instant::now();
    let mut poll = mio::Poll::new()?;
    let mut shards = Vec::with_capacity(threads);
    for t in 0..threads {
        let std_socket = UdpSocket::bind("0.0.0.0:0")?;
        std_socket.set_nonblocking(true)?;
        want_destinations(&std_socket)?;
        // Room for a burst of answers while this tool waits for a processor: its own drops
        // would be counted against the server. (The OS may give less; drops are reported.)
        let _ = simrob_server::udp::set_receive_buffer(&std_socket, TOOL_RECEIVE_BUFFER);
        let mut socket = mio::net::UdpSocket::from_std(std_socket);
        poll.registry()
            .register(&mut socket, mio::Token(t), mio::Interest::READABLE)?;
        shards.push(Shard {
            socket,
            agents: Vec::new(),
            place: Default::default(),
        });
    }
    let mut registrations = Vec::with_capacity(n);
    for i in 0..n {
        let t = i % threads;
        let ip = agent_ip(i);
        let port = shards[t].socket.local_addr()?.port();
        // Keys unique to this run: a server keeps a key bound to the address that registered it.
        let key = format!("load{}-{i}", std::process::id());
        let register = Request::Agent(AgentRequest::RegisterAgent {
            agent_type: AgentType::RobotController,
            port,
            ip: ip.to_string(),
            sync: false,
            // One agent receives every iteration's broadcast: the server's iterations/s.
            broadcast: if i == 0 { 0.0 } else { -1.0 },
            key: key.clone(),
        });
        registrations.push((t, ip, encode_request(&register, &keys).into_bytes()));
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
        let shard = &mut shards[t];
        shard.place.insert(i, shard.agents.len());
        shard.agents.push(LoadAgent {
            index: i,
            ip,
            key,
            head: template.as_bytes()[..at].to_vec(),
            tail: template.as_bytes()[at + MARK.len()..].to_vec(),
            sent: 0,
            in_flight: Vec::new(),
            next_send: started,
            confirmed: false,
        });
    }
    for (t, shard) in shards.iter().enumerate() {
        let out: Vec<Outgoing> = registrations
            .iter()
            .filter(|r| r.0 == t)
            .map(|(_, ip, payload)| Outgoing {
                to: addr,
                from: Some(*ip),
                payload,
            })
            .collect();
        let sent = send_all(&shard.socket, &out);
        if let Some(e) = sent.error {
            bail!("{} registrations could not be sent: {e}", sent.failed);
        }
    }
    let mut registered = 0usize;
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut received = Received::new(MAX_BATCH, 65536);
    let mut events = mio::Events::with_capacity(64);
    while registered < n {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        poll.poll(&mut events, Some(deadline - now))?;
        for event in events.iter() {
            let Some(shard) = shards.get_mut(event.token().0) else {
                continue;
            };
            shard.receive(&mut received, addr, |a, payload| {
                if a.confirmed {
                    return;
                }
                if let Ok(ServerMessage::Response(Response::Text(t))) =
                    decode_server_message(payload)
                {
                    if t.contains(&format!("key {},", a.key)) {
                        a.confirmed = true;
                        registered += 1;
                    }
                }
            });
        }
    }
    for shard in &mut shards {
        poll.registry().deregister(&mut shard.socket)?;
        // Only confirmed agents send, and only about confirmed agents.
        shard.agents.retain(|a| a.confirmed);
        shard.place = shard
            .agents
            .iter()
            .enumerate()
            .map(|(p, a)| (a.index, p))
            .collect();
    }
    println!(
        "registration storm: {registered} of {n} agents confirmed in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    Ok((shards, registered))
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
/// are spread evenly over the period, so they come due in turn), up to [`SEND_BURST`] in one
/// system call, and waits on its socket (epoll) for the answers in between.
fn sender(
    mut shard: Shard,
    subjects: &Subjects,
    server: SocketAddr,
    period: Duration,
    end: Instant,
    totals: &Totals,
    stop: &AtomicBool,
) -> Result<Measured> {
    let mut poll = mio::Poll::new()?;
    let window = subjects.keys.len().max(1);
    poll.registry()
        .register(&mut shard.socket, mio::Token(0), mio::Interest::READABLE)?;
    for a in &mut shard.agents {
        a.in_flight = vec![None; window];
    }
    let mut events = mio::Events::with_capacity(16);
    let mut received = Received::new(MAX_BATCH, 65536);
    let mut requests: Vec<Vec<u8>> = (0..SEND_BURST).map(|_| Vec::with_capacity(512)).collect();
    let mut measured = Measured::default();
    let mut turn = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let mut next = now + Duration::from_millis(100);
        let agents = shard.agents.len();
        if now < end && agents > 0 {
            // A tool that fell behind must not catch up in one long burst while the answers
            // pile up unread in its socket: at most SEND_BURST sends, then it reads.
            let mut due = Vec::with_capacity(SEND_BURST);
            while shard.agents[turn].next_send <= now && due.len() < SEND_BURST {
                let a = &mut shard.agents[turn];
                let slot = (a.sent % window as u64) as usize;
                let out = &mut requests[due.len()];
                out.clear();
                out.extend_from_slice(&a.head);
                out.extend_from_slice(subjects.keys[slot].as_bytes());
                out.extend_from_slice(&a.tail);
                due.push(turn);
                a.next_send += period;
                turn = (turn + 1) % agents;
            }
            if !due.is_empty() {
                let out: Vec<Outgoing> = due
                    .iter()
                    .zip(&requests)
                    .map(|(&i, payload)| Outgoing {
                        to: server,
                        from: Some(shard.agents[i].ip),
                        payload,
                    })
                    .collect();
                let sent = send_all(&shard.socket, &out);
                // The send time of each request: the call's (64 sends take microseconds).
                let at = Instant::now();
                if sent.failed == 0 {
                    for &i in &due {
                        let a = &mut shard.agents[i];
                        let slot = (a.sent % window as u64) as usize;
                        a.in_flight[slot] = Some(at);
                        a.sent += 1;
                    }
                    totals.sent.fetch_add(due.len() as u64, Ordering::Relaxed);
                }
            }
            next = next.min(shard.agents[turn].next_send);
            if due.len() == SEND_BURST {
                next = now;
            }
        }
        let wait = next.saturating_duration_since(Instant::now());
        poll.poll(&mut events, Some(wait))?;
        shard.receive(&mut received, server, |a, payload| {
            match classify(payload, &subjects.prefix) {
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
                    if let Ok(ServerMessage::Broadcast(b)) = decode_server_message(payload) {
                        totals.iteration.fetch_max(b.iteration, Ordering::Relaxed);
                    }
                }
                Answer::Other => {}
            }
        });
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

    let threads = args.threads.clamp(1, 16);
    let (mut shards, registered) = register_storm(addr, args.agents, threads)?;
    if registered == 0 {
        bail!("no agent was confirmed: is {addr} a SimRob server?");
    }
    let tool_ports: Vec<u16> = shards
        .iter()
        .filter_map(|s| s.socket.local_addr().ok().map(|a| a.port()))
        .collect();
    // Requests are told apart by the agent they ask about: a window of K requests per agent.
    let mut confirmed: Vec<(usize, String)> = shards
        .iter()
        .flat_map(|s| s.agents.iter().map(|a| (a.index, a.key.clone())))
        .collect();
    confirmed.sort_unstable();
    let window = confirmed.len().min(MAX_WINDOW);
    let pid_prefix = format!("load{}-", std::process::id());
    let mut subjects = Subjects {
        keys: confirmed[..window].iter().map(|a| a.1.clone()).collect(),
        slot_of: vec![None; args.agents],
        prefix: pid_prefix.into_bytes(),
    };
    for (slot, a) in confirmed[..window].iter().enumerate() {
        subjects.slot_of[a.0] = Some(slot);
    }
    let rank: std::collections::HashMap<usize, usize> = confirmed
        .iter()
        .enumerate()
        .map(|(r, a)| (a.0, r))
        .collect();
    let subjects = Arc::new(subjects);

    // Load.
    let totals = Arc::new(Totals::default());
    let stop = Arc::new(AtomicBool::new(false));
    let period = Duration::from_secs_f64(1.0 / args.rate);
    let begin = Instant::now();
    let end = begin + Duration::from_secs_f64(args.seconds);
    for shard in &mut shards {
        for a in &mut shard.agents {
            // Spread the sends over the period, in agent order across the threads.
            a.next_send = begin + period.mul_f64(rank[&a.index] as f64 / registered as f64);
        }
    }
    let mut workers = Vec::new();
    for shard in shards {
        let totals = totals.clone();
        let stop = stop.clone();
        let subjects = subjects.clone();
        workers.push(std::thread::spawn(move || {
            sender(shard, &subjects, addr, period, end, &totals, &stop)
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
    let drops_start = udp_drops(addr, &tool_ports);
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
            udp_drops(addr, &tool_ports).map_or("-".into(), |(s, _)| {
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
    if let (Some(start), Some(end)) = (drops_start, udp_drops(addr, &tool_ports)) {
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
    fn each_agent_has_its_own_loopback_address() {
        for i in [0, 1, 254, 255, 256, 999, 19_999] {
            let ip = agent_ip(i);
            assert!(ip.is_loopback(), "{ip}");
            assert_eq!(agent_of(IpAddr::V4(ip)), Some(i));
        }
        assert_ne!(agent_ip(255), agent_ip(256));
        assert_eq!(agent_of("127.0.0.1".parse().unwrap()), None);
        assert_eq!(agent_of("127.77.0.0".parse().unwrap()), None);
    }

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
