//! `simrob-load`: load and soak test of a SimRob server over loopback.
//!
//! Starts `simrob serve` (the binary next to this one) on 127.0.0.1 with a scenario, or uses
//! a server given with `--server` (loopback addresses only). Then N agents register at once
//! (a registration storm: how many are confirmed), and each sends `Info_Request`s at M per
//! second for the duration. Every second it prints what was sent and answered, the server's
//! iterations per second and its resident memory; at the end: requests sent and answered,
//! datagrams lost, response latency p50/p99/max, iterations/s, memory first and last.
//!
//! ```sh
//! cargo build --release -p simrob
//! target/release/simrob-load --agents 1000 --rate 100 --seconds 600
//! ```

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

struct LoadAgent {
    socket: UdpSocket,
    key: String,
    request: Vec<u8>,
    in_flight: VecDeque<Instant>,
    next_send: Instant,
}

#[derive(Default)]
struct Totals {
    sent: AtomicU64,
    answered: AtomicU64,
    iteration: AtomicU64,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if !(args.rate > 0.0 && args.rate.is_finite()) {
        bail!("--rate must be a positive number");
    }
    if !(args.seconds > 0.0 && args.seconds <= 3600.0) {
        bail!("--seconds must be in (0, 3600]");
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
    let keys = CommandKeys::default();

    // Registration storm: every agent at once.
    let started = Instant::now();
    let mut agents = Vec::with_capacity(args.agents);
    for i in 0..args.agents {
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.connect(addr)?;
        let local = socket.local_addr()?;
        let key = format!("load{i}");
        let register = Request::Agent(AgentRequest::RegisterAgent {
            agent_type: AgentType::RobotController,
            port: local.port(),
            ip: local.ip().to_string(),
            sync: false,
            broadcast: if i == 0 { 0.0 } else { -1.0 },
            key: key.clone(),
        });
        socket.send(encode_request(&register, &keys).as_bytes())?;
        let request = encode_request(
            &Request::Agent(AgentRequest::InfoRequest {
                requester: key.clone(),
                requested: key.clone(),
            }),
            &keys,
        )
        .into_bytes();
        agents.push(LoadAgent {
            socket,
            key,
            request,
            in_flight: VecDeque::new(),
            next_send: started,
        });
    }
    let mut registered = 0usize;
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut buf = vec![0u8; 65536];
    let mut confirmed = vec![false; agents.len()];
    while registered < agents.len() && Instant::now() < deadline {
        for (a, done) in agents.iter().zip(confirmed.iter_mut()) {
            if *done {
                continue;
            }
            a.socket.set_read_timeout(Some(Duration::from_millis(1)))?;
            while let Ok(n) = a.socket.recv(&mut buf) {
                if let Ok(ServerMessage::Response(Response::Text(t))) =
                    decode_server_message(&buf[..n])
                {
                    if t.contains(&format!("key {},", a.key)) {
                        *done = true;
                        registered += 1;
                        break;
                    }
                }
            }
        }
    }
    println!(
        "registration storm: {registered} of {} agents confirmed in {:.2} s",
        agents.len(),
        started.elapsed().as_secs_f64()
    );
    for a in &agents {
        a.socket.set_nonblocking(true)?;
    }

    // Load.
    let totals = Arc::new(Totals::default());
    let stop = Arc::new(AtomicBool::new(false));
    let latencies = Arc::new(Mutex::new(Vec::<u32>::new()));
    let period = Duration::from_secs_f64(1.0 / args.rate);
    let begin = Instant::now();
    let end = begin + Duration::from_secs_f64(args.seconds);
    let threads = args.threads.clamp(1, 16);
    let mut shards: Vec<Vec<LoadAgent>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, mut a) in agents.into_iter().enumerate() {
        // Spread the sends over the period.
        a.next_send = begin + period.mul_f64(i as f64 / args.agents.max(1) as f64);
        shards[i % threads].push(a);
    }
    let mut workers = Vec::new();
    for mut shard in shards {
        let totals = totals.clone();
        let stop = stop.clone();
        let latencies = latencies.clone();
        workers.push(std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            let mut mine = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let now = Instant::now();
                let mut busy = false;
                for a in &mut shard {
                    if now < end {
                        while a.next_send <= now {
                            if a.socket.send(&a.request).is_ok() {
                                a.in_flight.push_back(Instant::now());
                                totals.sent.fetch_add(1, Ordering::Relaxed);
                            }
                            a.next_send += period;
                            busy = true;
                        }
                    }
                    while let Ok(n) = a.socket.recv(&mut buf) {
                        busy = true;
                        match decode_server_message(&buf[..n]) {
                            Ok(ServerMessage::Response(Response::AgentInformation { .. })) => {
                                if let Some(t) = a.in_flight.pop_front() {
                                    mine.push(t.elapsed().as_micros().min(u32::MAX as u128) as u32);
                                    totals.answered.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                            Ok(ServerMessage::Broadcast(b)) => {
                                totals.iteration.fetch_max(b.iteration, Ordering::Relaxed);
                            }
                            _ => {}
                        }
                    }
                }
                if !busy {
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
            if let Ok(mut l) = latencies.lock() {
                l.extend(mine);
            }
        }));
    }
    let mut last_iteration = totals.iteration.load(Ordering::Relaxed);
    let mut first_rss = None;
    let mut last_rss = None;
    let mut iteration_rates = Vec::new();
    println!("   t  sent/s  answered/s  lost(total)  iterations/s  server RSS (MiB)");
    let (mut last_sent, mut last_answered) = (0, 0);
    let drain = Duration::from_secs(1);
    let mut t = 0u64;
    while Instant::now() < end + drain {
        std::thread::sleep(Duration::from_secs(1));
        t += 1;
        let sent = totals.sent.load(Ordering::Relaxed);
        let answered = totals.answered.load(Ordering::Relaxed);
        let it = totals.iteration.load(Ordering::Relaxed);
        let rss = pid.and_then(rss_kib);
        first_rss = first_rss.or(rss);
        last_rss = rss.or(last_rss);
        iteration_rates.push(it.saturating_sub(last_iteration));
        println!(
            "{t:4}  {:6}  {:10}  {:11}  {:12}  {}",
            sent - last_sent,
            answered - last_answered,
            sent.saturating_sub(answered),
            it.saturating_sub(last_iteration),
            rss.map_or("-".into(), |k| format!("{:.1}", k as f64 / 1024.0)),
        );
        (last_sent, last_answered, last_iteration) = (sent, answered, it);
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        let _ = w.join();
    }
    let sent = totals.sent.load(Ordering::Relaxed);
    let answered = totals.answered.load(Ordering::Relaxed);
    let mut lat = latencies.lock().map(|l| l.clone()).unwrap_or_default();
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
        "response latency: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    let steady: Vec<u64> = iteration_rates.iter().copied().filter(|&r| r > 0).collect();
    println!(
        "iterations/s: mean {:.1} over {} s with broadcasts",
        steady.iter().sum::<u64>() as f64 / steady.len().max(1) as f64,
        steady.len()
    );
    if let (Some(a), Some(b)) = (first_rss, last_rss) {
        println!(
            "server memory: {:.1} MiB at the start, {:.1} MiB at the end",
            a as f64 / 1024.0,
            b as f64 / 1024.0
        );
    }
    Ok(())
}
