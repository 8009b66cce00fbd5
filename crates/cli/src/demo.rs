//! `simrob demo`: the demonstration agent (as in the SimRob manual). It starts a server (or
//! connects to one), creates the SumBot, the soccer field and the ball, and drives the robot
//! from the keyboard or from a timed script of wheel speeds, printing its pose.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use simrob_client::agent::{Agent, AgentOptions, ClientError};
use simrob_protocol::{
    encode_request, Broadcast, CommandKeys, ControlRequest, EntityId, EntityInfoKind,
    EntityRequest, Request, ServerMessage,
};
use simrob_server::files::DirStore;
use simrob_server::udp::UdpServer;
use simrob_session::{ServerConfig, Session};

/// The built-in scenario: the SimRob manual's materials, field, SumBot and ball.
const SCENARIO: [(&str, &str); 4] = [
    (
        "materials",
        include_str!("../../../scenarios/materials.xml"),
    ),
    ("field", include_str!("../../../scenarios/field.xml")),
    ("SumBot", include_str!("../../../scenarios/sumbot.xml")),
    ("ball", include_str!("../../../scenarios/ball.xml")),
];
const ROBOT: EntityId = EntityId(3);
const BALL: EntityId = EntityId(8);

/// The script used when there is no keyboard and no `--script`: forward, spin, back, stop.
const BUILT_IN_SCRIPT: &str = "# at(s)  left(rad/s)  right(rad/s)\n\
                               0    5   5\n\
                               2    4  -4\n\
                               3.5 -5  -5\n\
                               4.5  0   0\n\
                               5    0   0\n";

/// Arguments of `simrob demo`.
#[derive(clap::Args)]
#[command(mut_arg(
    "gui",
    crate::flags::gui_help(
        "Where the web viewer of the built-in server is (it is on unless --no-gui)"
    )
))]
pub struct DemoArgs {
    /// Connect to this running server instead of starting one (e.g. 127.0.0.1:5005). The
    /// demo turns its auto-adjust mode on (simulated time at wall-clock pace) and leaves it
    /// on: the protocol cannot ask what it was before.
    #[arg(long, value_name = "IP:PORT")]
    pub server: Option<SocketAddr>,
    /// Drive from a script instead of the keyboard: lines `AT LEFT RIGHT`: from AT seconds
    /// after the start (absolute times, increasing line by line), drive the wheels at LEFT
    /// and RIGHT rad/s; `#` starts a comment. The last line ends the demo at its time, so
    /// it must stop the wheels (`AT 0 0`). Example: `0 5 5` / `2 4 -4` / `3 0 0`. Speeds
    /// are at most the server's `maxvelocity` (10000 by default): checked before the demo's
    /// own server starts; what a `--server` refuses is printed as the drive goes.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Largest --script file read, bytes, at least 1 (default 67108864); a larger one is
    /// refused before anything starts.
    #[arg(long, value_name = "BYTES", value_parser = crate::flags::count(1u64, u64::MAX))]
    pub max_script_bytes: Option<u64>,
    /// Wheel speed for the arrow keys, rad/s, greater than 0 and (with the demo's own server)
    /// at most its `maxvelocity`, 10000.
    #[arg(long, value_name = "RAD_S", default_value_t = 6.0,
          value_parser = crate::flags::number_above_0("a number of rad/s"))]
    pub wheel_speed: f64,
    /// `--speed`, the pace of other commands: the demo runs at real time, so it is refused
    /// with a hint to write `--wheel-speed` (which it once meant here).
    #[arg(long = "speed", value_name = "F", hide = true, value_parser = refused_speed)]
    pub refused_speed: Option<f64>,
    /// Seconds (or 50ms, 2s, 1min) between printed poses, 0 (every pose received) to 3600.
    #[arg(long, value_name = "S", default_value_t = 0.5,
          value_parser = crate::flags::seconds_from(0.0, MAX_EVERY))]
    pub every_seconds: f64,
    /// Old spelling of `--every-seconds` (`run --every` counts iterations).
    #[arg(long = "every", value_name = "S", hide = true,
          value_parser = crate::flags::renamed("every", "every-seconds", ""))]
    pub old_every: Option<String>,
    /// The web viewer of the built-in server, on by default: `--gui=ADDR` to place it.
    #[command(flatten)]
    pub gui: crate::flags::Gui,
    /// Do not start the web viewer.
    #[arg(long)]
    pub no_gui: bool,
}

/// Refuses `demo --speed F`, saying to write `--wheel-speed F` for the arrow keys' speed.
fn refused_speed(s: &str) -> Result<f64, String> {
    Err(format!(
        "the demo runs at real time (`--speed` is the pace of other commands): for the arrow \
         keys' wheel speed write --wheel-speed {s}"
    ))
}

/// The longest `--every-seconds`, seconds.
const MAX_EVERY: f64 = 3600.0;

/// Checks `--wheel-speed` against the server's `maxvelocity` (`max_speed`) when the demo
/// starts its own server (each flag's own range is checked when the command line is read).
fn check_flags(args: &DemoArgs, max_speed: Option<f64>) -> Result<()> {
    let s = args.wheel_speed;
    if let Some(max) = max_speed.filter(|max| s > *max) {
        bail!(
            "--wheel-speed {}: is more than the server's limit of {max} rad/s (configuration \
             key maxvelocity)",
            crate::flags::shown(s)
        );
    }
    Ok(())
}

fn motors(left: f64, right: f64) -> EntityRequest {
    EntityRequest::two_wheels(ROBOT, left, right)
}

/// Parses a script: `(at seconds, left, right)`, times increasing, the last line stopping;
/// with `max_speed` (the local server's `maxvelocity`), no wheel faster than that.
fn parse_script(text: &str, max_speed: Option<f64>) -> Result<Vec<(f64, f64, f64)>> {
    let mut steps = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let values: Vec<f64> = line
            .split_whitespace()
            .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
            .collect::<Option<_>>()
            .with_context(|| format!("script line {}: {line:?} is not three numbers", n + 1))?;
        let [t, l, r] = values[..] else {
            bail!(
                "script line {}: expected `AT LEFT RIGHT` (seconds since the start, rad/s, \
                 rad/s), found {line:?}",
                n + 1
            );
        };
        if t < 0.0 {
            bail!("script line {}: time must not be negative", n + 1);
        }
        if let Some(max) = max_speed {
            if let Some(v) = [l, r].into_iter().find(|v| v.abs() > max) {
                bail!(
                    "script line {}: a wheel speed of {} rad/s is more than the server's \
                     limit of {max} (configuration key maxvelocity)",
                    n + 1,
                    crate::flags::shown(v)
                );
            }
        }
        if let Some(&(prev, _, _)) = steps.last() {
            if t <= prev {
                bail!(
                    "script line {}: {t} s is not after the previous line's {prev} s: times \
                     are seconds since the start (not durations), increasing line by line",
                    n + 1
                );
            }
        }
        steps.push((t, l, r));
    }
    let Some(&(end, l, r)) = steps.last() else {
        bail!("the script has no steps");
    };
    if l != 0.0 || r != 0.0 {
        bail!(
            "script: the last line ends the demo at {end} s, so its speeds ({l}, {r}) would \
             never be driven: end with a line `AT 0 0`"
        );
    }
    Ok(steps)
}

fn pose_line(b: &Broadcast, t: f64) -> String {
    let find = |kind, id| {
        b.entities
            .iter()
            .find(|e| e.kind == kind && e.entity_id == id)
    };
    let mut s = format!("t {t:6.2} s  iteration {:>6}", b.iteration);
    if let Some(r) = find(EntityInfoKind::Robot, ROBOT) {
        s.push_str(&format!(
            "  robot ({:7.3}, {:7.3}, {:6.3}) yaw {:7.1}°",
            r.position[0],
            r.position[1],
            r.position[2],
            r.rotation[2].to_degrees()
        ));
    }
    if let Some(ball) = find(EntityInfoKind::Ball, BALL) {
        s.push_str(&format!(
            "  ball ({:7.3}, {:7.3}, {:6.3})",
            ball.position[0], ball.position[1], ball.position[2]
        ));
    }
    s
}

type Running = (
    SocketAddr,
    Arc<AtomicBool>,
    std::thread::JoinHandle<()>,
    Option<simrob_viewer::Viewer>,
);

/// Starts a server in this process on a free loopback port, pacing at real time, with the
/// web viewer unless `--no-gui`.
fn start_server(args: &DemoArgs) -> Result<Running> {
    let dir = std::env::temp_dir().join(format!("simrob-demo-{}", std::process::id()));
    let config = ServerConfig {
        receiver_port: 0,
        real_time_factor: 1.0,
        save_directory: dir.clone(),
        ..ServerConfig::default()
    };
    let store = DirStore::new(&dir)?;
    let mut server = UdpServer::bind(Session::new(config), Box::new(store))?;
    let addr = server.local_addr()?;
    let viewer = if args.no_gui {
        None
    } else {
        let gui = args.gui.addr().unwrap_or_default();
        Some(crate::serve::start_viewer_on(
            &mut server,
            gui,
            args.gui.guard()?,
        )?)
    };
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        if let Err(e) = server.run(&flag) {
            eprintln!("server stopped: {e}");
        }
    });
    Ok((addr, stop, handle, viewer))
}

/// How long the demo tries to have each request of the scene and of its set-up answered, and
/// how often it sends it again meanwhile (a lost request or answer on a lossy link).
const SCENE_WAIT: Duration = Duration::from_secs(5);
const SCENE_RESEND: Duration = Duration::from_millis(500);

/// The commands of the scene's and the set-up's requests: the drive sends none of them, so an
/// answer to one that comes while driving is a late or duplicated answer to one of those, not
/// a refusal.
const SCENE_COMMANDS: [&str; 5] = [
    "Register_Materials_Interactions",
    "Create_Entity",
    "Set_AutoAdjust_Mode",
    "Set_Step_Mode",
    "Initialize_Simulation",
];

/// What tells the answer to a request from the others.
enum Answer {
    /// A creation's (or the materials'): its command, then the entity it creates (type, id),
    /// which the answer names.
    Names(Option<(String, u32)>),
    /// A setting's: exactly this confirmation (`Set_Step_Mode: Step mode set to false`), or
    /// an error of its command.
    Exactly(String),
}

/// One request of the scene or of the set-up, confirmed and sent again until its answer
/// comes, with what tells its answer from others.
struct DemoRequest {
    /// The request as an error message names it: `Create_Entity Robot 3 (the SumBot)`.
    label: String,
    /// The request, asking for a confirmation.
    xml: String,
    /// Its command, which starts its answer.
    command: &'static str,
    /// What its answer says.
    answer: Answer,
}

impl DemoRequest {
    /// A request of the scene: the scenario's `name` (`SumBot`) and XML.
    fn scene(name: &'static str, xml: &str) -> DemoRequest {
        // Ask for a confirmation so that errors and successes both come back.
        let xml = xml.replace("<Data>", "<Response>true</Response><Data>");
        let materials = "<Control_Request Command=\"Register_Materials_Interactions\">";
        if xml.contains(materials) {
            let command = SCENE_COMMANDS[0];
            return DemoRequest {
                label: format!("{command} (the {name})"),
                xml: xml.replace(materials, &format!("{materials}<Response>true</Response>")),
                command,
                answer: Answer::Names(None),
            };
        }
        let between = |open: &str, close: &str| {
            let start = xml.find(open)? + open.len();
            let len = xml[start..].find(close)?;
            Some(xml[start..start + len].trim().to_string())
        };
        let entity = between("Command=\"Create_Entity\" Type=\"", "\"")
            .zip(between("<Entity_id>", "</Entity_id>").and_then(|id| id.parse().ok()));
        let command = SCENE_COMMANDS[1];
        DemoRequest {
            label: match &entity {
                Some((kind, id)) => format!("{command} {kind} {id} (the {name})"),
                None => format!("{command} (the {name})"),
            },
            xml,
            command,
            answer: Answer::Names(entity),
        }
    }

    /// The session's set-up, in order: auto-adjust on (simulated time tracks wall time,
    /// whatever server this is), step mode off, the physics started. Each only sets a state,
    /// so a second copy (sent again, or duplicated on the way) changes nothing:
    /// `Initialize_Simulation` starts physics already started.
    fn set_up() -> [DemoRequest; 3] {
        let setting = |command: &'static str, request: ControlRequest, what: &str, done: &str| {
            let request = Request::Control {
                request,
                response: Some(true),
            };
            DemoRequest {
                label: format!("{command} ({what})"),
                xml: encode_request(&request, &CommandKeys::default()),
                command,
                answer: Answer::Exactly(format!("{command}: {done}")),
            }
        };
        [
            setting(
                SCENE_COMMANDS[2],
                ControlRequest::SetAutoAdjustMode(true),
                "auto-adjust on",
                "Auto-adjust mode set to true",
            ),
            setting(
                SCENE_COMMANDS[3],
                ControlRequest::SetStepMode(false),
                "step mode off",
                "Step mode set to false",
            ),
            setting(
                SCENE_COMMANDS[4],
                ControlRequest::InitializeSimulation,
                "start the physics",
                "Simulation initialized",
            ),
        ]
    }

    /// Whether `text`, a text response, answers this request: it starts with the request's
    /// command and names its entity (`Create_Entity: Created Robot entity 3`,
    /// `Error: Create_Entity: entity 3 already exists…`, `Error: Create_Entity Robot 3: …`),
    /// or is the setting's own confirmation (`Set_Step_Mode: Step mode set to false`, not
    /// `… set to true`) or an error of its command.
    fn answered_by(&self, text: &str) -> bool {
        let error = text.strip_prefix("Error: ");
        let Some(rest) = error.unwrap_or(text).strip_prefix(self.command) else {
            return false;
        };
        match &self.answer {
            Answer::Names(None) => rest.starts_with(':'),
            Answer::Names(Some((kind, id))) => {
                rest.starts_with(&format!(" {kind} {id}:")) || names(rest, &format!("entity {id}"))
            }
            Answer::Exactly(confirmation) => match error {
                Some(_) => rest.starts_with(':'),
                None => text == confirmation,
            },
        }
    }
}

/// Whether `text` has `words` not followed by a digit (`entity 3`, not `entity 30`).
fn names(text: &str, words: &str) -> bool {
    text.match_indices(words).any(|(i, _)| {
        !text[i + words.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

/// Sends `request` every [`SCENE_RESEND`] until its own answer comes (an answer to another
/// request, a late or duplicated one, is not taken for it), for at most [`SCENE_WAIT`]: its
/// confirmation, or `Err` with the server's error text; past the wait the error names the
/// request left unanswered.
fn confirmed(
    agent: &mut Agent,
    server: SocketAddr,
    request: &DemoRequest,
) -> Result<std::result::Result<String, String>> {
    let deadline = Instant::now() + SCENE_WAIT;
    let mut sent = 0u32;
    loop {
        if Instant::now() >= deadline {
            bail!(
                "no answer to {} from {server} within {} s (sent {sent} times): the \
                 requests or their answers were lost, or the server stopped",
                request.label,
                SCENE_WAIT.as_secs()
            );
        }
        agent.send_raw(request.xml.as_bytes())?;
        sent += 1;
        let resend = (Instant::now() + SCENE_RESEND).min(deadline);
        if let Some(answer) = wait_answer(agent, request, resend)? {
            return Ok(answer);
        }
    }
}

/// Creates the scene, each request [`confirmed`]; entities that already exist (a server
/// started with the scenario) are fine.
fn create_scene(agent: &mut Agent, server: SocketAddr) -> Result<()> {
    for (name, xml) in SCENARIO {
        match confirmed(agent, server, &DemoRequest::scene(name, xml))? {
            Ok(_) => {}
            // There before, or made by an earlier copy of this request (sent again, or
            // duplicated on the way) whose answer was lost: it is there either way.
            Err(e) if e.contains("already exists") => {
                println!("{name}: in the world (the server says: {e})");
            }
            Err(e) => bail!("creating the {name}: {e}"),
        }
    }
    Ok(())
}

/// Sets the session up ([`DemoRequest::set_up`]), each request [`confirmed`], so that the
/// server runs at wall-clock pace before the drive starts.
fn set_up(agent: &mut Agent, server: SocketAddr) -> Result<()> {
    for request in DemoRequest::set_up() {
        if let Err(e) = confirmed(agent, server, &request)? {
            bail!("the server refused {}: {e}", request.label);
        }
    }
    Ok(())
}

/// The answer to `request` that comes before `until`: `Ok(confirmation)` or `Err(error
/// text)`; other responses (stale or duplicated answers to other requests) are passed over.
fn wait_answer(
    agent: &mut Agent,
    request: &DemoRequest,
    until: Instant,
) -> Result<Option<std::result::Result<String, String>>> {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        if let Some(ServerMessage::Response(simrob_protocol::Response::Text(t))) =
            agent.recv(left.min(Duration::from_millis(200)))?
        {
            if request.answered_by(&t) {
                return Ok(Some(match t.strip_prefix("Error: ") {
                    Some(e) => Err(e.to_string()),
                    None => Ok(t),
                }));
            }
        }
    }
}

pub fn run(args: DemoArgs) -> Result<()> {
    // The server started here has the default limits; one given with --server says itself
    // what it refuses (printed as the drive goes).
    let max_speed = args
        .server
        .is_none()
        .then(|| ServerConfig::default().limits.max_velocity);
    // The flags and the script are checked first: bad ones start no server and change
    // nothing on one given with --server.
    check_flags(&args, max_speed)?;
    let script = if args.script.is_none() && std::io::stdin().is_terminal() {
        None
    } else {
        let text = match &args.script {
            Some(path) => crate::shell::read_text_within(
                path,
                "script",
                args.max_script_bytes.unwrap_or(crate::shell::MAX_TEXT_FILE),
                "--max-script-bytes BYTES",
            )?,
            None => BUILT_IN_SCRIPT.to_string(),
        };
        Some(parse_script(&text, max_speed)?)
    };
    let (server, local) = match args.server {
        Some(addr) => (addr, None),
        None => {
            let (addr, stop, handle, viewer) = start_server(&args)?;
            println!("listening on udp://{addr}");
            if let Some(v) = &viewer {
                println!("viewer on http://{}", v.addr());
            }
            (addr, Some((stop, handle, viewer)))
        }
    };
    // Ctrl-C stops the drive: the agent then unregisters (and a local server stops).
    crate::shell::ctrl_c_flag()?;
    let result = drive(server, &args, script.as_deref());
    if let Some((stop, handle, _viewer)) = local {
        stop.store(true, Ordering::Relaxed);
        let _ = handle.join();
    }
    result
}

/// Drives the demo SumBot on `server`: from `script` (checked), else from the keyboard. The
/// agent unregisters when it stops (dropped), so that a server that keeps running sends it
/// nothing more and the next `simrob demo --server` takes key "demo" at once.
fn drive(server: SocketAddr, args: &DemoArgs, script: Option<&[(f64, f64, f64)]>) -> Result<()> {
    let mut agent = Agent::connect(server)?;
    agent
        .register(
            "demo",
            AgentOptions {
                broadcast: 0.05,
                ..AgentOptions::default()
            },
        )
        .map_err(|e| match e {
            ClientError::Timeout(t) => anyhow::anyhow!(
                "no answer to Register_Agent (key demo) from {server} within {} s: no SimRob \
                 server there, or the requests or their answers were lost",
                crate::flags::shown(t.as_secs_f64())
            ),
            e => e.into(),
        })?;
    create_scene(&mut agent, server)?;
    set_up(&mut agent, server)?;
    match script {
        Some(script) => scripted(&mut agent, script, args.every_seconds),
        None => keyboard(&mut agent, args),
    }
}

fn scripted(agent: &mut Agent, script: &[(f64, f64, f64)], every: f64) -> Result<()> {
    let start = Instant::now();
    let end = script.last().map(|s| s.0).unwrap_or(0.0);
    let mut next_step = 0;
    let mut next_print = 0.0;
    loop {
        let t = start.elapsed().as_secs_f64();
        while next_step < script.len() && script[next_step].0 <= t {
            let (_, l, r) = script[next_step];
            agent.entity(motors(l, r), false)?;
            println!("t {t:6.2} s  wheels {l:+.1} {r:+.1} rad/s");
            next_step += 1;
        }
        if let Some(b) = agent.next_broadcast(Duration::from_millis(100))? {
            if t >= next_print {
                println!("{}", pose_line(&b, t));
                next_print = t + every;
            }
        }
        for e in refusals(agent)? {
            println!("t {t:6.2} s  the server refused it: {e}");
        }
        if t >= end || crate::shell::interrupted() {
            break;
        }
    }
    agent.entity(motors(0.0, 0.0), false)?;
    Ok(())
}

/// What the server refused since the last call (its `Error:` texts, such as wheel speeds
/// past its `maxvelocity`); the other messages that waited are dropped, and so are late or
/// duplicated answers to the scene's and the set-up's requests (the drive sends none).
fn refusals(agent: &mut Agent) -> Result<Vec<String>> {
    let mut out = Vec::new();
    while let Some(m) = agent.recv(Duration::ZERO)? {
        if let ServerMessage::Response(simrob_protocol::Response::Text(t)) = m {
            if let Some(e) = t.strip_prefix("Error: ") {
                if !SCENE_COMMANDS.iter().any(|c| e.starts_with(c)) {
                    out.push(e.to_string());
                }
            }
        }
    }
    Ok(out)
}

/// Leaves raw mode when dropped, whatever happens.
struct RawMode;

impl RawMode {
    fn on() -> Result<RawMode> {
        crossterm::terminal::enable_raw_mode().context("cannot read the keyboard")?;
        Ok(RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

fn keyboard(agent: &mut Agent, args: &DemoArgs) -> Result<()> {
    use crossterm::event::{poll, read, Event, KeyCode, KeyEventKind, KeyModifiers};
    println!("Arrow keys drive the SumBot (↑ forward, ↓ back, ← → turn), space stops, q quits.");
    let _raw = RawMode::on()?;
    let start = Instant::now();
    let mut next_print = 0.0;
    let s = args.wheel_speed;
    loop {
        // SIGTERM or SIGHUP (Ctrl-C is a key here, below): stop as `q` does.
        if crate::shell::interrupted() {
            agent.entity(motors(0.0, 0.0), false)?;
            print!("\r\n");
            return Ok(());
        }
        while poll(Duration::ZERO)? {
            if let Event::Key(k) = read()? {
                if k.kind == KeyEventKind::Release {
                    continue;
                }
                let wheels = match k.code {
                    KeyCode::Up => Some((s, s)),
                    KeyCode::Down => Some((-s, -s)),
                    KeyCode::Left => Some((-s * 0.5, s * 0.5)),
                    KeyCode::Right => Some((s * 0.5, -s * 0.5)),
                    KeyCode::Char(' ') => Some((0.0, 0.0)),
                    KeyCode::Char('q') | KeyCode::Esc => {
                        agent.entity(motors(0.0, 0.0), false)?;
                        print!("\r\n");
                        return Ok(());
                    }
                    KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                        agent.entity(motors(0.0, 0.0), false)?;
                        print!("\r\n");
                        return Ok(());
                    }
                    _ => None,
                };
                if let Some((l, r)) = wheels {
                    agent.entity(motors(l, r), false)?;
                    print!("wheels {l:+.1} {r:+.1} rad/s\r\n");
                }
            }
        }
        let t = start.elapsed().as_secs_f64();
        if let Some(b) = agent.next_broadcast(Duration::from_millis(30))? {
            if t >= next_print {
                print!("{}\r\n", pose_line(&b, t));
                let _ = std::io::stdout().flush();
                next_print = t + args.every_seconds;
            }
        }
        for e in refusals(agent)? {
            print!("the server refused it: {e}\r\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_matched_to_its_own_request() {
        let reqs: Vec<DemoRequest> = SCENARIO
            .iter()
            .map(|(name, xml)| DemoRequest::scene(name, xml))
            .collect();
        let labels: Vec<&str> = reqs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Register_Materials_Interactions (the materials)",
                "Create_Entity Field 7 (the field)",
                "Create_Entity Robot 3 (the SumBot)",
                "Create_Entity Ball 8 (the ball)"
            ]
        );
        let robot = &reqs[2];
        for yes in [
            "Create_Entity: Created Robot entity 3",
            "Error: Create_Entity: entity 3 already exists; entity ids must be unique",
            "Error: Create_Entity Robot 3: Body 1: material 1 is not registered",
        ] {
            assert!(robot.answered_by(yes), "{yes}");
        }
        for no in [
            "Create_Entity: Created Field entity 7",
            "Error: Create_Entity: entity 8 already exists; entity ids must be unique",
            "Create_Entity: Created Robot entity 30",
            "Register_Materials_Interactions: Registered 2 materials and 3 interactions",
            "Sucessfully added agent with key demo, port 1 and ip 127.0.0.1",
            "Error: Robot_Motor_Control: entity 3 does not exist",
        ] {
            assert!(!robot.answered_by(no), "{no}");
        }
        assert!(reqs[0].answered_by("Register_Materials_Interactions: Registered 2 materials"));
        assert!(!reqs[0].answered_by("Create_Entity: Created Field entity 7"));
        assert!(reqs[0].xml.contains("<Response>true</Response>"));
    }

    #[test]
    fn the_set_up_asks_for_confirmations_and_takes_only_its_own() {
        let [auto, step, init] = DemoRequest::set_up();
        for (r, command) in [
            (&auto, "Set_AutoAdjust_Mode"),
            (&step, "Set_Step_Mode"),
            (&init, "Initialize_Simulation"),
        ] {
            assert!(
                r.xml.contains(&format!("Command=\"{command}\""))
                    && r.xml.contains("<Response>true</Response>"),
                "{}",
                r.xml
            );
        }
        assert!(auto.answered_by("Set_AutoAdjust_Mode: Auto-adjust mode set to true"));
        assert!(auto.answered_by("Error: Set_AutoAdjust_Mode: not now"));
        assert!(!auto.answered_by("Set_AutoAdjust_Mode: Auto-adjust mode set to false"));
        assert!(!auto.answered_by("Set_Step_Mode: Step mode set to false"));
        assert!(step.answered_by("Set_Step_Mode: Step mode set to false"));
        assert!(!step.answered_by("Set_Step_Mode: Step mode set to true"));
        assert!(!step.answered_by("Error: Set_Sync_Mode: no"));
        assert!(init.answered_by("Initialize_Simulation: Simulation initialized"));
        assert!(!init.answered_by("Create_Entity: Created Robot entity 3"));
        assert_eq!(init.label, "Initialize_Simulation (start the physics)");
    }

    #[test]
    fn scripts_parse_and_errors_say_the_line() {
        let s = parse_script(BUILT_IN_SCRIPT, None).unwrap();
        assert_eq!(s[0], (0.0, 5.0, 5.0));
        assert_eq!(s.len(), 5);
        assert!(parse_script("1 2", None)
            .unwrap_err()
            .to_string()
            .contains("line 1"));
        assert!(parse_script("0 1 1\n1 x 2", None)
            .unwrap_err()
            .to_string()
            .contains("line 2"));
        assert!(parse_script("# nothing", None).is_err());
        // Durations instead of times, or lines out of order: refused, naming the line.
        let m = parse_script("2 5 5\n1 4 -4\n3 0 0", None)
            .unwrap_err()
            .to_string();
        assert!(m.contains("line 2") && m.contains("since the start"), "{m}");
        // A last line that would drive: its speeds would never be used.
        let m = parse_script("0 5 5\n4 3 3", None).unwrap_err().to_string();
        assert!(m.contains("AT 0 0"), "{m}");
        // Faster than the local server's limit: refused before anything starts.
        let m = parse_script("0 5 5\n1 1e308 -1e308\n2 0 0", Some(10000.0))
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("line 2") && m.contains("1e308 rad/s") && m.contains("maxvelocity"),
            "{m}"
        );
        assert!(parse_script("0 10000 -10000\n2 0 0", Some(10000.0)).is_ok());
    }
}
