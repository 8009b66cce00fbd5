//! `simrob coord serve` and `simrob coord cc`: the networked Control Center and Time Server.
//!
//! One thread owns the Control Center and never waits for a peer; a thread per connection
//! reads GRI lines (at most `--max-queued-lines` of them waiting to be handled) and another
//! writes what it is sent (at most `--max-output-bytes` waiting, else the connection is
//! cut), one accepts connections, and (for `cc`) one reads the operator's menu. The Time Server publishes
//! the seconds since the Control Center started.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufWriter, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use simrob_coord::cc::{
    CcConfig, ControlCenter, LogKind, LogLine, DEFAULT_MAX_COORDINATE, DEFAULT_MAX_DEPARTED_ROBOTS,
    DEFAULT_MAX_FINAL_TASKS, DEFAULT_MAX_NAME_BYTES,
};
use simrob_coord::cnp::CnpConfig;
use simrob_coord::model::RobotId;
use simrob_coord::time::TimeServer;
use simrob_coord::wire::{
    encode, Envelope, Msg, Policy, DEFAULT_MAX_MESSAGE_BYTES, MAX_PATH_POINTS,
};

use super::map::LiveMap;
use super::menu::{self, MenuAction, MENU_HELP};
use super::net::{spawn_bounded_reader, spawn_writer, write_env, Incoming, Inflow, Outflow};

/// Operators are addressed as this (2^30, one past the largest robot id) plus their
/// connection number.
pub const OPERATOR_BASE: RobotId = simrob_coord::model::MAX_ROBOT_ID + 1;
/// The Time Server's id on the wire.
pub const TIME_SERVER: RobotId = u32::MAX;

/// `--clock-period` (clock_period), seconds: faster would send every connection thousands of
/// clock messages a second.
const CLOCK_PERIOD: (f64, f64) = (0.01, 60.0);
/// `--bid-window` and `--accept-window` (bid_window, accept_window), seconds.
const WINDOW: (f64, f64) = (0.01, 3600.0);
/// `--reannounce-period` (reannounce_period), seconds: each announcement again is logged.
const REANNOUNCE_PERIOD: (f64, f64) = (0.1, 3600.0);
/// `--round-period` (round_period), seconds.
const ROUND_PERIOD: (f64, f64) = (0.0, 3600.0);
/// Most events taken from the queue in one turn of the loop before the rounds that are due:
/// whatever arrived together is handled together, and the clock and the connections' checks
/// still come at least this often.
const EVENTS_PER_TURN: usize = 1024;
/// `--silence-timeout` (silence_timeout) when not 0, seconds.
const SILENCE_TIMEOUT: (f64, f64) = (0.1, 86_400.0);
/// `--hello-timeout` (hello_timeout) when not 0, seconds.
const HELLO_TIMEOUT: (f64, f64) = (0.1, 86_400.0);
/// `--max-message-bytes` (max_message_bytes): a `hello` fits in the least; a reader buffers
/// at most the most for each connection.
const MAX_MESSAGE_BYTES: (usize, usize) = (1024, 1 << 20);
/// `--max-queued-lines` (max_queued_lines): lines of one connection read and not yet handled.
const MAX_QUEUED_LINES: (usize, usize) = (1, 65_536);
/// `--max-output-bytes` (max_output_bytes): bytes waiting to be sent to one connection.
const MAX_OUTPUT_BYTES: (usize, usize) = (65_536, 1 << 30);
/// The longest `--max-name-bytes` (max_name_bytes).
const MAX_NAME_BYTES: usize = 4096;
/// `--max-coordinate` (max_coordinate), metres: every coordinate within it is short in a log.
const MAX_COORDINATE: (f64, f64) = (1.0, 1e12);

/// Arguments of `simrob coord serve` (and `cc`).
#[derive(clap::Args, Clone)]
#[command(mut_arg("gui", crate::flags::gui_help(
    "Show the map live in the browser (the 2D view: every robot by its condition, every task at its goal by its state, a line from the robot holding it); on 127.0.0.1"
)))]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    bind: std::net::IpAddr,
    /// TCP port (0: any free port; the address is printed).
    #[arg(long, value_name = "PORT", default_value_t = 7030)]
    port: u16,
    /// Allocation policy at start: cnp, hungarian or greedy (the operator may switch).
    #[arg(long, default_value = "cnp")]
    policy: Policy,
    /// Write the three logs (tasks.log, status.log, states.log) in this folder.
    #[arg(long, value_name = "DIR")]
    log_dir: Option<PathBuf>,
    /// Seconds (or 50ms, 2s, 1min) between Time Server publications (clock_period), from
    /// 0.01 to 60.
    #[arg(long, value_name = "S", default_value_t = 0.1,
          value_parser = crate::flags::noting(
              crate::flags::seconds_from(CLOCK_PERIOD.0, CLOCK_PERIOD.1),
              "clock_period"
          ))]
    clock_period: f64,
    /// Seconds (or 50ms, 2s, 1min) robots have to bid (bid_window), from 0.01 to 3600.
    #[arg(long, value_name = "S", default_value_t = 0.5,
          value_parser = crate::flags::noting(
              crate::flags::seconds_from(WINDOW.0, WINDOW.1),
              "bid_window"
          ))]
    bid_window: f64,
    /// Seconds (or 50ms, 2s, 1min) a winner has to accept (accept_window), from 0.01 to 3600.
    #[arg(long, value_name = "S", default_value_t = 0.5,
          value_parser = crate::flags::noting(
              crate::flags::seconds_from(WINDOW.0, WINDOW.1),
              "accept_window"
          ))]
    accept_window: f64,
    /// Seconds (or 50ms, 2s, 1min) between announcements again of tasks nobody took
    /// (reannounce_period), from 0.1 to 3600: one such task a period, in turn (more at once
    /// when tasks finished meanwhile).
    #[arg(long, value_name = "S", default_value_t = 1.0,
          value_parser = crate::flags::noting(
              crate::flags::seconds_from(REANNOUNCE_PERIOD.0, REANNOUNCE_PERIOD.1),
              "reannounce_period"
          ))]
    reannounce_period: f64,
    /// Seconds (or 50ms, 2s, 1min) a centralised round (hungarian, greedy) waits after the
    /// first change it could use — a task submitted, a robot joined, idle or gone
    /// (round_period), from 0 to 3600. What arrives meanwhile is assigned together, so the
    /// optimal assignment sees the whole problem, not one message at a time.
    #[arg(long, default_value_t = 0.5, value_name = "S",
          value_parser = crate::flags::noting(
              crate::flags::seconds_from(ROUND_PERIOD.0, ROUND_PERIOD.1),
              "round_period"
          ))]
    round_period: f64,
    /// Most connections at once (max_connections), at least 1. When full, a newcomer takes
    /// the place of the oldest connection that has not yet said hello nor sent an operator's
    /// request; with none such it is refused.
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = crate::flags::noting(
              crate::flags::count(1usize, usize::MAX),
              "max_connections"
          ))]
    max_connections: usize,
    /// Seconds (or 50ms, 2s, 1min) a new connection has to say hello or send an operator's
    /// request before it is closed (hello_timeout; 0 = never, else from 0.1 to 86400), so
    /// connections that say nothing do not hold every place.
    #[arg(long, default_value_t = 10.0, value_name = "S",
          value_parser = crate::flags::noting(
              crate::flags::seconds_or_never_from(HELLO_TIMEOUT.0, HELLO_TIMEOUT.1),
              "hello_timeout"
          ))]
    hello_timeout: f64,
    /// Longest message a robot or an operator may send, in bytes (max_message_bytes), from
    /// 1024 to 1048576; a longer one is refused without being read whole.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES,
          value_parser = crate::flags::noting(
              crate::flags::count(MAX_MESSAGE_BYTES.0, MAX_MESSAGE_BYTES.1),
              "max_message_bytes"
          ))]
    max_message_bytes: usize,
    /// Most lines of one connection read and not yet handled (max_queued_lines), from 1 to
    /// 65536. A connection with this many waiting is not read until one is handled, so one
    /// that sends faster than it is served is slowed (TCP holds the rest) and the others are
    /// served in turn.
    #[arg(long, default_value_t = 64, value_name = "LINES",
          value_parser = crate::flags::noting(
              crate::flags::count(MAX_QUEUED_LINES.0, MAX_QUEUED_LINES.1),
              "max_queued_lines"
          ))]
    max_queued_lines: usize,
    /// Most bytes waiting to be sent to one connection (max_output_bytes), from 65536 to
    /// 1073741824. A connection that does not read what it is sent (or asked for) is cut
    /// when more would wait, with a line saying so; the others are never kept waiting for it.
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES",
          value_parser = crate::flags::noting(
              crate::flags::count(MAX_OUTPUT_BYTES.0, MAX_OUTPUT_BYTES.1),
              "max_output_bytes"
          ))]
    max_output_bytes: usize,
    /// Most robots in the table, present or gone (max_robots), at least 1; a new robot beyond
    /// it takes the place of the one that left longest ago, or is refused.
    #[arg(long, value_name = "N", default_value_t = 100_000,
          value_parser = crate::flags::noting(
              crate::flags::count(1usize, usize::MAX),
              "max_robots"
          ))]
    max_robots: usize,
    /// Most robots that have left kept in the table (max_departed_robots; 0 = none); beyond
    /// it the one that left longest ago is forgotten.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_DEPARTED_ROBOTS)]
    max_departed_robots: usize,
    /// Longest robot name, kind or world, and task world, in bytes (max_name_bytes), from 1 to
    /// 4096; a hello or a task with a longer one is refused.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_NAME_BYTES,
          value_parser = crate::flags::noting(
              crate::flags::count(1usize, MAX_NAME_BYTES),
              "max_name_bytes"
          ))]
    max_name_bytes: usize,
    /// Most tasks tracked (max_tasks), finished ones kept for the reports included, at least
    /// 1.
    #[arg(long, value_name = "N", default_value_t = 1_000_000,
          value_parser = crate::flags::noting(
              crate::flags::count(1usize, usize::MAX),
              "max_tasks"
          ))]
    max_tasks: usize,
    /// Most finished tasks (ended, failed, aborted) kept for the `tasks` report
    /// (max_final_tasks; 0 = none); beyond it the one that finished longest ago is cleared, as
    /// `clear` would, and its robot told to forget it. As many ended auctions are remembered,
    /// to answer a late accept with cancel.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_FINAL_TASKS)]
    max_final_tasks: usize,
    /// Most points of a path task (max_path_points), from 1 to 4096.
    #[arg(long, value_name = "N", default_value_t = MAX_PATH_POINTS,
          value_parser = crate::flags::noting(
              crate::flags::count(1usize, MAX_PATH_POINTS),
              "max_path_points"
          ))]
    max_path_points: usize,
    /// Largest |x| or |y| of a task's point in metres (max_coordinate), from 1 to 1e12; a task
    /// beyond it is refused.
    #[arg(long, default_value_t = DEFAULT_MAX_COORDINATE, value_name = "METRES",
          value_parser = crate::flags::noting(
              crate::flags::number_from(MAX_COORDINATE.0, MAX_COORDINATE.1, " metres"),
              "max_coordinate"
          ))]
    max_coordinate: f64,
    /// Most auctions open at once (max_open_auctions), at least 1.
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = crate::flags::noting(
              crate::flags::count(1usize, usize::MAX),
              "max_open_auctions"
          ))]
    max_open_auctions: usize,
    /// Seconds (or 50ms, 2s, 1min) a robot's connection may send nothing before it is let go
    /// (silence_timeout;
    /// 0 = never, else from 0.1 to 86400). Robot agents report their status every half second
    /// and swarm robots every simulated second, so a connection silent this long is a stalled
    /// link or a hung process: its robots leave and their unfinished tasks go back to
    /// allocation (keep it longer than the robots' status period). Operators' connections are
    /// never let go for silence.
    #[arg(long, default_value_t = 5.0, value_name = "S",
          value_parser = crate::flags::noting(
              crate::flags::seconds_or_never_from(SILENCE_TIMEOUT.0, SILENCE_TIMEOUT.1),
              "silence_timeout"
          ))]
    silence_timeout: f64,
    /// Show the map live in the browser (the 2D view: every robot by its condition, every
    /// task at its goal by its state, a line from the robot holding it). On 127.0.0.1:8080
    /// unless `--gui=ADDR` (`HOST:PORT`, or a port; 0 = any free port).
    #[command(flatten)]
    gui: crate::flags::Gui,
}

impl ServeArgs {
    /// `cc` writes its logs to `coord-logs/` unless told otherwise.
    pub fn with_default_logs(mut self) -> Self {
        if self.log_dir.is_none() {
            self.log_dir = Some(PathBuf::from("coord-logs"));
        }
        self
    }

    fn config(&self) -> Result<CcConfig> {
        // Every flag's range is checked when the command line is read (exit status 2).
        Ok(CcConfig {
            policy: self.policy,
            cnp: CnpConfig {
                bid_window: self.bid_window,
                accept_window: self.accept_window,
            },
            reannounce_period: self.reannounce_period,
            max_open_auctions: self.max_open_auctions,
            max_tasks: self.max_tasks,
            max_final_tasks: self.max_final_tasks,
            max_robots: self.max_robots,
            max_departed_robots: self.max_departed_robots,
            max_name_bytes: self.max_name_bytes,
            max_path_points: self.max_path_points,
            max_coordinate: self.max_coordinate,
            round_period: self.round_period,
        })
    }
}

struct Conn {
    stream: TcpStream,
    /// Lines read and not yet handled.
    inflow: Arc<Inflow>,
    /// Bytes queued and not yet sent.
    outflow: Arc<Outflow>,
    robots: Vec<RobotId>,
    /// Local time of the last message that came on it.
    heard: f64,
    /// Let go for silence (closed by us; its reader reports the close).
    let_go: bool,
    /// Local time it was accepted.
    opened: f64,
    /// It has said hello (a robot's accepted) or sent an operator's request.
    introduced: bool,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.inflow.close();
        self.outflow.finish();
    }
}

impl Conn {
    /// Seconds since the start when something last came on it.
    fn heard(&self) -> f64 {
        self.heard.max(self.inflow.heard())
    }

    /// Stops reading and writing at once: its reader reports the close.
    fn cut(&mut self) {
        self.let_go = true;
        self.inflow.close();
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// The limits of the connections themselves.
#[derive(Clone, Copy)]
struct ConnLimits {
    max_output_bytes: usize,
}

struct Logs {
    files: HashMap<LogKind, BufWriter<File>>,
}

impl Logs {
    fn open(dir: Option<&PathBuf>) -> Result<Logs> {
        let mut files = HashMap::new();
        if let Some(dir) = dir {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for (kind, header) in [
                (LogKind::Tasks, "# time\tevent\tdetails (tasks sent, announced, awarded, unallocated, aborted, cleared)"),
                (LogKind::Status, "# time\trobot\tx\ty\theading\tspeed\tbattery\tmovement\tperception\tpan_tilt\tqueued\tstatus"),
                (LogKind::States, "# time\trobot\ttask\told→new state"),
            ] {
                let path = dir.join(kind.file_name());
                let mut f = BufWriter::new(File::create(&path).with_context(|| format!("creating {}", path.display()))?);
                writeln!(f, "{header}")?;
                f.flush()?;
                files.insert(kind, f);
            }
        }
        Ok(Logs { files })
    }

    fn write(&mut self, line: &LogLine, echo: bool) {
        if let Some(f) = self.files.get_mut(&line.kind) {
            if let Err(e) = writeln!(f, "{line}") {
                tracing::warn!("cannot write {}: {e}", line.kind.file_name());
            }
        }
        if echo && line.kind != LogKind::Status {
            println!("{}\t{line}", line.kind.file_name().trim_end_matches(".log"));
        }
    }

    fn flush(&mut self) {
        for f in self.files.values_mut() {
            let _ = f.flush();
        }
    }
}

/// Runs the Control Center until Ctrl-C (or `quit` in the menu).
pub fn run(args: ServeArgs, menu: bool) -> Result<()> {
    let config = args.config()?;
    // The port first: a Control Center that cannot listen creates no log files.
    let listener = TcpListener::bind(SocketAddr::new(args.bind, args.port)).map_err(|e| {
        crate::shell::cannot_listen(
            e,
            &format!("tcp://{}", SocketAddr::new(args.bind, args.port)),
            "Control Center",
        )
    })?;
    let mut logs = Logs::open(args.log_dir.as_ref())?;
    let addr = listener.local_addr()?;
    println!("listening on tcp://{addr}");
    if let Some(d) = &args.log_dir {
        println!("logs in {}", d.display());
    }
    let mut live = match args
        .gui
        .addr()
        .map(|g| g.resolve(crate::flags::LOCALHOST))
        .transpose()?
    {
        Some(bind) => {
            let hello = format!("simrob coord: the Control Center on tcp://{addr}");
            let m = LiveMap::start(bind, &hello, args.gui.guard()?)
                .with_context(|| format!("cannot serve the map on {bind}"))?;
            println!("map on http://{}", m.addr());
            Some(m)
        }
        None => None,
    };
    if menu {
        println!("{}", MENU_HELP);
    }
    std::io::stdout().flush()?;
    let (tx, rx) = mpsc::channel::<Incoming>();
    let accept_tx = tx.clone();
    std::thread::Builder::new()
        .name("gri-accept".into())
        .spawn(move || {
            for s in listener.incoming().flatten() {
                if accept_tx.send(Incoming::Accepted(s)).is_err() {
                    break;
                }
            }
        })?;
    if menu {
        let line_tx = tx.clone();
        std::thread::Builder::new()
            .name("menu".into())
            .spawn(move || {
                let stdin = std::io::stdin();
                for line in stdin.lock().lines() {
                    let Ok(line) = line else { break };
                    if line_tx.send(Incoming::Line(line)).is_err() {
                        return;
                    }
                }
                let _ = line_tx.send(Incoming::EndOfInput);
            })?;
    }
    let stop = crate::shell::ctrl_c_flag()?;
    let start = Instant::now();
    let mut cc = ControlCenter::new(config);
    let mut ts = TimeServer::new(args.clock_period);
    let mut conns: HashMap<usize, Conn> = HashMap::new();
    let mut robot_conn: HashMap<RobotId, usize> = HashMap::new();
    let mut next_conn = 1usize;
    let local = |start: Instant| start.elapsed().as_secs_f64();
    let limits = ConnLimits {
        max_output_bytes: args.max_output_bytes,
    };
    // The Control Center hears the Time Server beside it before anything else, so that none
    // of its own lines (an operator's first menu line included) is stamped unsynced.
    if let Some(Msg::Clock { seq, time }) = ts.tick(0.0) {
        cc.hear_clock(seq, time, 0.0);
    }
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        let now = local(start);
        let mut due = ts.next_due();
        if let Some(t) = cc.poll_timeout() {
            due = due.min(t); // the CC hears the Time Server at once: its time is local time
        }
        let wait = (due - now).clamp(0.0, 0.05);
        let event = match rx.recv_timeout(Duration::from_secs_f64(wait)) {
            Ok(e) => Some(e),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let now = local(start);
        let mut quit = false;
        // Everything that arrived together is handled before the rounds that are due (a
        // centralised round then sees all of it).
        let mut event = event;
        for turn in 1..=EVENTS_PER_TURN {
            match event {
                None => {}
                Some(Incoming::Accepted(stream)) => {
                    if conns.len() >= args.max_connections {
                        make_room(&mut conns, now);
                    }
                    if conns.len() >= args.max_connections {
                        let mut s = stream;
                        // A line to a new connection is sent as far as it goes at once.
                        let _ = s.set_nonblocking(true);
                        let _ = write_env(
                            &mut s,
                            &refused(format!(
                                "too many connections (max_connections {})",
                                args.max_connections
                            )),
                        );
                    } else {
                        let id = next_conn;
                        next_conn += 1;
                        let _ = stream.set_nodelay(true);
                        let inflow = Inflow::new(args.max_queued_lines, start);
                        let started = stream
                            .try_clone()
                            .and_then(|w| spawn_writer(id, w))
                            .and_then(|outflow| {
                                let r = stream.try_clone()?;
                                spawn_bounded_reader(
                                    id,
                                    r,
                                    args.max_message_bytes,
                                    inflow.clone(),
                                    tx.clone(),
                                )
                                .inspect_err(|_| outflow.finish())?;
                                Ok(outflow)
                            });
                        match started {
                            Ok(outflow) => {
                                conns.insert(
                                    id,
                                    Conn {
                                        stream,
                                        inflow,
                                        outflow,
                                        robots: Vec::new(),
                                        heard: now,
                                        let_go: false,
                                        opened: now,
                                        introduced: false,
                                    },
                                );
                            }
                            Err(e) => tracing::warn!("connection refused: {e}"),
                        }
                    }
                }
                Some(Incoming::Message(c, env)) => {
                    if let Some(conn) = conns.get_mut(&c) {
                        conn.heard = now;
                        conn.inflow.taken();
                        if !conn.let_go {
                            handle(&mut cc, &mut conns, &mut robot_conn, c, env, now, limits)
                        }
                    }
                }
                Some(Incoming::Bad(c, e)) => {
                    if let Some(conn) = conns.get_mut(&c) {
                        conn.inflow.taken();
                    }
                    send_to(&mut conns, c, &refused(e.to_string()), limits);
                }
                Some(Incoming::Closed(c)) => {
                    if let Some(conn) = conns.remove(&c) {
                        for &r in &conn.robots {
                            robot_conn.remove(&r);
                            cc.leave(r);
                        }
                        cc.unfollow(OPERATOR_BASE + c as RobotId);
                    }
                }
                Some(Incoming::Line(line)) => match menu::parse_line(&line) {
                    Ok(None) => {}
                    Ok(Some(MenuAction::Quit)) => quit = true,
                    Ok(Some(MenuAction::Help)) => println!("{MENU_HELP}"),
                    Ok(Some(MenuAction::Command(cmd))) => {
                        let env = Envelope {
                            from: OPERATOR_BASE,
                            to: None,
                            msg: Msg::Operator {
                                command: Box::new(cmd),
                            },
                        };
                        if let Err(e) = cc.handle(env, now) {
                            println!("error: {e}");
                        }
                    }
                    Err(e) => println!("error: {e} (help: h)"),
                },
                Some(Incoming::EndOfInput) => quit = true,
            }
            // Each event's answers go out before the next event is handled: a robot hears
            // them in the order it spoke.
            send_out(&mut cc, &mut conns, &robot_conn, menu, limits);
            // The next event waits for the next turn once this one has had its share (taken
            // now, it would be lost).
            if quit || turn == EVENTS_PER_TURN {
                break;
            }
            match rx.try_recv() {
                Ok(e) => event = Some(e),
                Err(_) => break,
            }
        }
        if args.silence_timeout > 0.0 {
            let_go_of_silent(&mut conns, now, args.silence_timeout);
        }
        if args.hello_timeout > 0.0 {
            close_unintroduced(&mut conns, now, args.hello_timeout);
        }
        // The Time Server, then whatever is due.
        if let Some(msg) = ts.tick(now) {
            if let Msg::Clock { seq, time } = msg {
                cc.hear_clock(seq, time, now);
            }
            broadcast(
                &mut conns,
                &Envelope {
                    from: TIME_SERVER,
                    to: None,
                    msg,
                },
                limits,
            );
        }
        cc.handle_timeout(now);
        send_out(&mut cc, &mut conns, &robot_conn, menu, limits);
        while let Some(line) = cc.poll_log() {
            logs.write(&line, true);
        }
        if let Some(m) = live.as_mut() {
            m.show(|| cc.map());
        }
        logs.flush();
        std::io::stdout().flush()?;
        if quit {
            break;
        }
    }
    logs.flush();
    Ok(())
}

/// Sends what the Control Center has to send: to every connection, to one robot's, to an
/// operator's, or (the menu's operator) to standard output.
fn send_out(
    cc: &mut ControlCenter,
    conns: &mut HashMap<usize, Conn>,
    robot_conn: &HashMap<RobotId, usize>,
    menu: bool,
    limits: ConnLimits,
) {
    while let Some(env) = cc.poll_transmit() {
        match env.to {
            None => broadcast(conns, &env, limits),
            Some(OPERATOR_BASE) if menu => {
                if let Msg::Report { text } = &env.msg {
                    println!("{text}");
                }
            }
            Some(id) if id >= OPERATOR_BASE => {
                let c = (id - OPERATOR_BASE) as usize;
                send_to(conns, c, &env, limits);
            }
            Some(id) => {
                if let Some(&c) = robot_conn.get(&id) {
                    send_to(conns, c, &env, limits);
                }
            }
        }
    }
}

/// Closes robot connections silent for `timeout` seconds (a stalled link, a hung process):
/// their readers report the close, and their robots leave.
fn let_go_of_silent(conns: &mut HashMap<usize, Conn>, now: f64, timeout: f64) {
    for (c, conn) in conns.iter_mut() {
        let heard = conn.heard();
        if conn.let_go || conn.robots.is_empty() || now - heard < timeout {
            continue;
        }
        let robots: Vec<String> = conn.robots.iter().map(|r| r.to_string()).collect();
        println!(
            "connection {c} (robot {}): nothing heard for {:.1} s (--silence-timeout), let go",
            robots.join(", "),
            now - heard
        );
        conn.cut();
    }
}

/// Closes connections that have been open `timeout` seconds without a hello or an
/// operator's request, telling them why; their readers report the close.
fn close_unintroduced(conns: &mut HashMap<usize, Conn>, now: f64, timeout: f64) {
    for (c, conn) in conns.iter_mut() {
        if conn.let_go || conn.introduced || now - conn.opened < timeout {
            continue;
        }
        conn.let_go = true;
        println!("connection {c}: no hello within {timeout} s (--hello-timeout), closed");
        farewell(
            conn,
            &refused(format!(
                "no hello within {timeout} s (hello_timeout): connection closed"
            )),
        );
    }
}

/// When every place is taken: closes the oldest connection that has not said hello nor
/// sent an operator's request, and forgets it at once so a newcomer takes its place.
fn make_room(conns: &mut HashMap<usize, Conn>, now: f64) {
    let oldest = conns
        .iter()
        .filter(|(_, conn)| !conn.introduced)
        .min_by(|a, b| a.1.opened.total_cmp(&b.1.opened).then(a.0.cmp(b.0)))
        .map(|(&c, _)| c);
    if let Some(c) = oldest {
        if let Some(mut conn) = conns.remove(&c) {
            println!(
                "connection {c}: no hello in {:.1} s, closed to make room (--max-connections)",
                now - conn.opened
            );
            farewell(
                &mut conn,
                &refused(
                    "no hello yet and the server is full (max_connections): closed to make room"
                        .into(),
                ),
            );
        }
    }
}

fn refused(reason: String) -> Envelope {
    Envelope {
        from: 0,
        to: None,
        msg: Msg::Refused { reason },
    }
}

/// Sends `env` as far as the peer takes it at once, then closes the connection (its reader
/// reports the close); the main loop never waits for it.
fn farewell(conn: &mut Conn, env: &Envelope) {
    conn.inflow.close();
    let _ = conn.outflow.send(encode(env).as_bytes(), usize::MAX);
    conn.outflow.finish();
}

fn send_to(conns: &mut HashMap<usize, Conn>, c: usize, env: &Envelope, limits: ConnLimits) {
    if let Some(conn) = conns.get_mut(&c) {
        queue(c, conn, encode(env).as_bytes(), limits);
    }
}

/// Queues `line` for connection `c`; one that has more than `--max-output-bytes` waiting is
/// cut (its reader reports the close).
fn queue(c: usize, conn: &mut Conn, line: &[u8], limits: ConnLimits) {
    if conn.let_go {
        return;
    }
    if let Err(over) = conn.outflow.send(line, limits.max_output_bytes) {
        println!(
            "connection {c}: {} bytes would wait to be sent, more than --max-output-bytes {} (max_output_bytes): it does not read what it is sent, cut",
            over.0, limits.max_output_bytes
        );
        conn.cut();
    }
}

fn broadcast(conns: &mut HashMap<usize, Conn>, env: &Envelope, limits: ConnLimits) {
    let line = encode(env);
    for (&c, conn) in conns.iter_mut() {
        if !conn.robots.is_empty() {
            queue(c, conn, line.as_bytes(), limits);
        }
    }
}

fn handle(
    cc: &mut ControlCenter,
    conns: &mut HashMap<usize, Conn>,
    robot_conn: &mut HashMap<RobotId, usize>,
    c: usize,
    mut env: Envelope,
    now: f64,
    limits: ConnLimits,
) {
    let refuse = |conns: &mut HashMap<usize, Conn>, reason: String| {
        send_to(conns, c, &refused(reason), limits)
    };
    match &env.msg {
        Msg::Hello { info } => {
            if info.robot >= OPERATOR_BASE || info.robot != env.from {
                return refuse(
                    conns,
                    format!(
                        "hello from {}: a robot says hello with its own id (here {}) as `from`, from 1 to {}",
                        env.from,
                        info.robot,
                        OPERATOR_BASE - 1
                    ),
                );
            }
            let id = info.robot;
            match cc.handle(env, now) {
                Ok(()) => {
                    robot_conn.insert(id, c);
                    if let Some(conn) = conns.get_mut(&c) {
                        conn.robots.push(id);
                        conn.introduced = true;
                    }
                }
                Err(e) => refuse(conns, format!("hello from robot {id}: {e}")),
            }
        }
        Msg::Operator { .. } => {
            if let Some(conn) = conns.get_mut(&c) {
                conn.introduced = true;
            }
            env.from = OPERATOR_BASE + c as RobotId;
            if let Err(e) = cc.handle(env, now) {
                refuse(conns, e.to_string());
            }
        }
        // The time is this server's own Time Server's: a robot's `clock` would move every
        // robot's deadlines.
        Msg::Clock { .. } => refuse(
            conns,
            "clock: only this server's Time Server publishes the time".into(),
        ),
        other => {
            let name = other.name();
            let allowed = conns
                .get(&c)
                .is_some_and(|conn| conn.robots.contains(&env.from));
            if !allowed {
                return refuse(
                    conns,
                    format!(
                        "{name}: robot {} has not said hello on this connection",
                        env.from
                    ),
                );
            }
            let from = env.from;
            if let Err(e) = cc.handle(env, now) {
                refuse(conns, format!("{name} from robot {from}: {e}"));
            }
        }
    }
}
