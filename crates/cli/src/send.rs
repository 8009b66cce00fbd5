//! `simrob send`: the commander (like the SimRob simulator's "SimRob Commander").
//!
//! Every command of the SimRob manual from the command line, with typed arguments
//! ([`command::SendCommand`]); `--raw FILE` sends XML as it is; `--interactive` is a prompt
//! with Initialize / Play / Pause / Step and a live log of the server's responses
//! ([`prompt`]). How answers are matched to requests is in [`session`].

mod command;
mod prompt;
mod session;

use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use simrob_protocol::{decode_datagram, CommandKeys, Request, ServerMessage};
use simrob_session::ServerConfig;

pub use command::SendCommand;
use session::{describe, Answer, Session};

/// Where the commander sends when nothing else says.
pub const DEFAULT_SERVER: &str = "127.0.0.1:5005";
/// The environment variable with the server address.
pub const SERVER_ENV: &str = "SIMROB_SERVER";
/// The key `--interactive` registers under without `--register`.
pub const DEFAULT_KEY: &str = "commander";
/// Exit code when the server refused a request (its error is on stderr).
pub const EXIT_REFUSED: i32 = 1;
/// Exit code when no answer came within the timeout (2 is every command's "the command line
/// does not parse").
pub const EXIT_SILENT: i32 = 3;
/// The largest UDP payload.
const MAX_DATAGRAM: usize = 65_507;

const AFTER_HELP: &str = "\
Examples (a server started with `simrob serve`):
  simrob send register-materials scenarios/materials.xml
  simrob send create-entity scenarios/sumbot.xml
  simrob send set-timestep 0.02
  simrob send initialize
  simrob send motors --entity 3 0=3 1=-5
  simrob send pause && simrob send step --count 10 && simrob send play
  simrob send save run1.xml && simrob send load run1.xml
  simrob send scenario scenarios/soccer.xml
  simrob send --raw request.xml
  simrob send --interactive

Each command is sent with <Response>true</Response>; the confirmation is printed on stdout.
Exit status: 0 confirmed; 1 refused by the server (its error on stderr) or a local error (a
file that cannot be read or is not a request, an address that does not resolve); 2 the
command line does not parse (an unknown command, a bad value such as `motors --entity 3
0=abc`: a message saying what is wrong, then the usage, as for every simrob command); 3 no
answer within --timeout (is the server running?).";

/// Arguments of `simrob send`.
#[derive(clap::Args)]
#[command(arg_required_else_help = true, args_override_self = true, after_help = AFTER_HELP)]
pub struct SendArgs {
    /// Server address, IP:PORT or HOST:PORT. Default: the address in --config, else
    /// $SIMROB_SERVER, else 127.0.0.1:5005.
    #[arg(long, value_name = "IP:PORT", global = true)]
    pub server: Option<String>,
    /// Seconds (or 50ms, 2s, 1min) to wait for each answer (or, with --raw, for all
    /// responses), above 0 and at most 3600.
    #[arg(long, value_name = "S", default_value = "2", value_parser = parse_timeout,
          global = true)]
    pub timeout: Duration,
    /// Register with the server first, under KEY, as an agent that watches (a GUI agent that
    /// is sent no positions). Not needed to get confirmations and errors; needed by `info`,
    /// and it makes the commander receive every agent's confirmations. With --interactive
    /// the default key is `commander`.
    #[arg(long, value_name = "KEY", global = true)]
    pub register: Option<String>,
    /// The server's configuration file (legacy `Configuration.data` or TOML): its command
    /// keys are used (for servers that rename commands) and its address is the default.
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    /// Largest file read (a scenario, a file of requests, --raw FILE), bytes, at least 1
    /// (default: the --config file's `maxscenariobytes`, else 67108864); a larger file is
    /// refused before anything is sent.
    #[arg(long, value_name = "BYTES", global = true,
          value_parser = crate::flags::count(1u64, u64::MAX))]
    pub max_scenario_bytes: Option<u64>,
    /// Send FILE's bytes as one datagram, as they are (`-` = stdin), and print every
    /// response that comes back within --timeout (errors on stderr; exit 1 if any error).
    /// A request without <Response>true</Response> gets no confirmation: then no error
    /// within --timeout is success; otherwise exit 3 if nothing came back.
    #[arg(long, value_name = "FILE", conflicts_with = "interactive")]
    pub raw: Option<PathBuf>,
    /// A prompt: one command per line (`init`, `play`, `pause`, `step`, `timestep 0.02`,
    /// `motors --entity 3 0=3 1=3`, any command below, `raw FILE`, `help`, `quit`), with a
    /// live log of every response. Registers as a GUI agent (default key `commander`) so it
    /// also shows the confirmations of other agents' commands. Reads standard input, so a
    /// script can be piped in; the exit status is then the worst of its commands.
    #[arg(long, short = 'i')]
    pub interactive: bool,
    #[command(subcommand)]
    pub command: Option<SendCommand>,
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    match crate::flags::seconds(s)? {
        v if v > 0.0 && v <= 3600.0 => Ok(Duration::from_secs_f64(v)),
        _ => Err(format!(
            "expected a time above 0 and at most 3600 seconds {}, got '{s}'",
            crate::flags::TIME_FORMS
        )),
    }
}

/// Resolves `IP:PORT` or `HOST:PORT`, preferring IPv4.
fn resolve(text: &str) -> Result<SocketAddr> {
    let text = text.trim();
    let addrs: Vec<SocketAddr> = text
        .to_socket_addrs()
        .with_context(|| format!("server address {text:?}: expected IP:PORT or HOST:PORT"))?
        .collect();
    let Some(addr) = addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
    else {
        bail!("server address {text:?} resolves to no address");
    };
    if addr.port() == 0 {
        bail!("server address {text:?}: port 0 is not a port");
    }
    Ok(addr)
}

fn server_address(args: &SendArgs, config: Option<&ServerConfig>) -> Result<SocketAddr> {
    if let Some(s) = &args.server {
        return resolve(s);
    }
    if let Some(c) = config {
        let ip = if c.receiver_ip.is_unspecified() {
            std::net::IpAddr::from([127, 0, 0, 1])
        } else {
            c.receiver_ip
        };
        return Ok(SocketAddr::new(ip, c.receiver_port));
    }
    match std::env::var(SERVER_ENV) {
        Ok(s) if !s.trim().is_empty() => resolve(&s).with_context(|| format!("from ${SERVER_ENV}")),
        _ => resolve(DEFAULT_SERVER),
    }
}

/// Prints a message of the log: errors on stderr, the rest on stdout.
fn show(message: &ServerMessage) {
    let (text, error) = describe(message);
    if error {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
}

/// Sends `requests` one by one, each waiting for its answer; prints confirmations on stdout
/// and stops at the first error (stderr, [`EXIT_REFUSED`]) or silence ([`EXIT_SILENT`]).
fn perform(
    session: &mut Session,
    requests: &[Request],
    log: &mut dyn FnMut(&ServerMessage),
) -> Result<i32> {
    for request in requests {
        match session.exchange(request, log)? {
            Answer::Confirmed(text) | Answer::Accepted(text) => println!("{text}"),
            Answer::Refused(text) => {
                eprintln!("{text}");
                return Ok(EXIT_REFUSED);
            }
            Answer::Silent(command) => {
                eprintln!(
                    "no answer to {command} from udp://{} within {} s (is `simrob serve` running there?)",
                    session.server(),
                    session.timeout().as_secs_f64()
                );
                return Ok(EXIT_SILENT);
            }
        }
    }
    Ok(0)
}

/// How many responses `datagram` will surely get, when that is known: one per request if
/// every request asks for a confirmation or is an error (each gets exactly one answer).
fn expected_answers(datagram: &[u8], keys: &CommandKeys) -> Option<usize> {
    let mut n = 0;
    for r in decode_datagram(datagram, keys) {
        match r {
            Err(_) => n += 1,
            Ok(req @ (Request::Control { .. } | Request::Entity { .. })) => {
                if req.response() != Some(true) {
                    return None;
                }
                n += 1;
            }
            Ok(Request::Agent(_)) => return None,
        }
    }
    (n > 0).then_some(n)
}

/// Whether the server will answer `datagram` even when all is well: some request asks for
/// a confirmation (`<Response>true</Response>`), is an agent message, or is malformed (an
/// error is always answered).
fn answer_requested(datagram: &[u8], keys: &CommandKeys) -> bool {
    decode_datagram(datagram, keys)
        .into_iter()
        .any(|r| match r {
            Err(_) | Ok(Request::Agent(_)) => true,
            Ok(req) => req.response() == Some(true),
        })
}

/// Sends `datagram` as it is and prints every response within the timeout (sooner when the
/// number of answers is known and all came). A datagram that asks for no confirmation
/// succeeds when no error comes back within the timeout.
fn raw(session: &mut Session, datagram: &[u8]) -> Result<i32> {
    if datagram.is_empty() {
        bail!("nothing to send: the raw input is empty");
    }
    if datagram.len() > MAX_DATAGRAM {
        bail!(
            "the raw input is {} bytes; a UDP datagram holds at most {MAX_DATAGRAM}",
            datagram.len()
        );
    }
    // A registered commander also receives other agents' confirmations: then count nothing.
    let expected = match session.registered() {
        Some(_) => None,
        None => expected_answers(datagram, session.keys()),
    };
    session.send_raw(datagram)?;
    let deadline = std::time::Instant::now() + session.timeout();
    let (mut received, mut errors) = (0usize, 0usize);
    while expected.is_none_or(|n| received < n) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let Some(message) = session.recv(left)? else {
            break;
        };
        if matches!(message, ServerMessage::Broadcast(_)) {
            continue; // the prompt's own broadcasts are not answers
        }
        received += 1;
        errors += usize::from(describe(&message).1);
        show(&message);
    }
    Ok(if errors > 0 {
        EXIT_REFUSED
    } else if received == 0 && !answer_requested(datagram, session.keys()) {
        println!(
            "sent to udp://{}; no error came back within {} s (the server confirms only \
             requests with <Response>true</Response>)",
            session.server(),
            session.timeout().as_secs_f64()
        );
        0
    } else if received == 0 {
        eprintln!(
            "no response from udp://{} within {} s",
            session.server(),
            session.timeout().as_secs_f64()
        );
        EXIT_SILENT
    } else {
        0
    })
}

pub fn run(args: SendArgs) -> Result<()> {
    // Local mistakes (a bad file, a bad address) are reported like the server's errors:
    // one line on stderr starting `Error: `, exit status 1.
    let code = execute(args).unwrap_or_else(|e| {
        eprintln!("Error: {e:#}");
        EXIT_REFUSED
    });
    if code != 0 {
        let _ = std::io::stdout().flush();
        std::process::exit(code);
    }
    Ok(())
}

/// Runs the commander; the exit status.
fn execute(args: SendArgs) -> Result<i32> {
    if args.command.is_some() && (args.raw.is_some() || args.interactive) {
        bail!("give either a command, --raw FILE or --interactive, not several");
    }
    let config = args
        .config
        .as_deref()
        .map(|p| crate::shell::read_config(Some(p)))
        .transpose()?;
    let keys = config
        .as_ref()
        .map(|c| c.keys.clone())
        .unwrap_or_else(CommandKeys::default);
    let server = server_address(&args, config.as_ref())?;
    // The largest file read: the flag's, else the configuration's `maxscenariobytes`.
    let mut limits = config.clone().unwrap_or_default();
    crate::flags::ScenarioBytes {
        max_scenario_bytes: args.max_scenario_bytes,
    }
    .apply(&mut limits)?;
    let max_file_bytes = limits.limits.max_scenario_bytes;
    let mut session = Session::connect(server, keys.clone(), args.timeout)?;
    let local = session.local();
    let code = if args.interactive {
        let key = args.register.as_deref().unwrap_or(DEFAULT_KEY);
        prompt::run(&mut session, key, max_file_bytes)?
    } else if let Some(file) = &args.raw {
        let datagram = command::read_input(file, max_file_bytes)?;
        let mut code = 0;
        if let Some(key) = &args.register {
            code = perform(
                &mut session,
                &[command::register_self(key, local)],
                &mut |_| {},
            )?;
        }
        if code == 0 {
            code = raw(&mut session, &datagram)?;
        }
        code
    } else if let Some(cmd) = &args.command {
        // Everything is read and checked before anything is sent.
        let cx = command::Commander {
            keys: &keys,
            local,
            registered: args.register.as_deref(),
            max_file_bytes,
        };
        let mut requests = cmd.requests(&cx)?;
        if let Some(key) = &args.register {
            requests.insert(0, command::register_self(key, local));
        }
        perform(&mut session, &requests, &mut |_| {})?
    } else {
        bail!("nothing to send: give a command (see `simrob send --help`), --raw FILE or --interactive");
    };
    Ok(code)
}
