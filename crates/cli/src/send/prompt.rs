//! `simrob send --interactive`: the commander's prompt, with Initialize / Play / Pause /
//! Step and a live log of the server's responses.
//!
//! One command per line, in the same words as `simrob send` (`init`, `play`, `pause`,
//! `step`, `timestep 0.02`, `motors --entity 3 0=3 1=-5`, …), plus `poses`, `state`,
//! `raw FILE`, `help` and `quit`. Words are split on whitespace; quote a word holding spaces
//! with `'` or `"`. Empty lines and lines starting with `#` are skipped, so a script can be
//! piped in.
//!
//! On a terminal the line is edited with rustyline: arrows, Home/End, Ctrl-R to search the
//! history (kept in `~/.simrob_history`), Ctrl-L to clear the screen, Ctrl-C to drop the
//! line, Ctrl-D to leave. Messages that arrive while a line is being typed are printed
//! above it without disturbing it.
//!
//! The commander registers as a GUI agent receiving a broadcast every 0.1 simulated
//! seconds: it shows the confirmation of every agent's command, keeps the last poses for
//! `poses` and `state`, and does not print the broadcasts. Each command waits for its own
//! answer; between commands, whatever arrives (other agents' commands) is shown as it
//! comes. Standard input is read by a thread, the socket by the main loop.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Result;
use clap::{Parser, Subcommand};
use rustyline::error::ReadlineError;
use rustyline::ExternalPrinter;
use simrob_protocol::{
    AgentRequest, AgentType, Broadcast, EntityId, EntityInfo, Request, ServerMessage,
};

use super::command::{Commander, SendCommand};
use super::session::{describe, Session};
use super::{perform, raw, show, EXIT_REFUSED};

/// Simulated seconds between the broadcasts the prompt asks for (for `poses`, `state`).
const BROADCAST_PERIOD: f64 = 0.1;
/// The history file, in the home directory.
const HISTORY_FILE: &str = ".simrob_history";

/// How often the log is polled while waiting for input.
const POLL: Duration = Duration::from_millis(50);

// One line of the prompt.
#[derive(Parser)]
#[command(
    multicall = true,
    about = "The commander's prompt: one command per line, in the words of `simrob send`"
)]
struct Line {
    #[command(subcommand)]
    command: PromptCommand,
}

#[derive(Subcommand)]
enum PromptCommand {
    #[command(flatten)]
    Send(SendCommand),
    /// Send a file's bytes as one datagram, as they are, and show what comes back.
    Raw {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Show the last known pose of every robot and ball (or of one entity).
    Poses {
        /// Only this entity.
        #[arg(long, value_name = "ID")]
        entity: Option<EntityId>,
    },
    /// Show the simulation's state as of the last broadcast: iteration and entities.
    State,
    /// Leave the commander.
    #[command(visible_aliases = ["exit", "q"])]
    Quit,
}

/// Splits a line into words: whitespace separates, `'…'` and `"…"` group, `\` escapes the
/// next character outside quotes.
fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None => match c {
                '"' | '\'' => {
                    quote = Some(c);
                    in_word = true;
                }
                '\\' => {
                    if let Some(next) = chars.next() {
                        word.push(next);
                    }
                    in_word = true;
                }
                c if c.is_whitespace() => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                c => {
                    word.push(c);
                    in_word = true;
                }
            },
        }
    }
    if let Some(q) = quote {
        return Err(format!("unclosed quote {q}"));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

enum Flow {
    /// Go on; the exit status of the line (0, 1 or 3).
    Continue(i32),
    Quit,
}

const BANNER: &str = "Commands: init, play, pause, step [--count N], timestep S, motors --entity ID J=V..., \
set-position --entity ID X Y Z, poses, state, save FILE, load FILE, scenario FILE, raw FILE, help [COMMAND], quit. \
Up/Down: history; Ctrl-R: search it; Ctrl-D: quit.";

/// What the prompt keeps of the broadcasts: the last pose of each robot and ball.
#[derive(Default)]
struct Watch {
    iteration: Option<u64>,
    entities: BTreeMap<EntityId, EntityInfo>,
}

impl Watch {
    fn take(&mut self, b: &Broadcast) {
        self.iteration = Some(self.iteration.map_or(b.iteration, |i| i.max(b.iteration)));
        for e in &b.entities {
            self.entities.insert(e.entity_id, e.clone());
        }
    }

    fn none_yet(&self) -> bool {
        if self.iteration.is_none() {
            eprintln!(
                "no broadcast yet: the server sends one every {BROADCAST_PERIOD} simulated s \
                 once the simulation is initialized and running (`init`, `play`)"
            );
            return true;
        }
        false
    }

    fn poses(&self, only: Option<EntityId>) -> i32 {
        if self.none_yet() {
            return EXIT_REFUSED;
        }
        let mut shown = 0;
        for (id, e) in &self.entities {
            if only.is_some_and(|o| o != *id) {
                continue;
            }
            let (p, r) = (e.position, e.rotation);
            println!(
                "{:?} {id}: position ({:.4}, {:.4}, {:.4}) m, rotation ({:.4}, {:.4}, {:.4}) rad",
                e.kind, p[0], p[1], p[2], r[0], r[1], r[2]
            );
            shown += 1;
        }
        if shown == 0 {
            eprintln!(
                "no robot or ball {} in the broadcasts",
                only.map_or(String::new(), |o| format!("with id {o}"))
            );
            return EXIT_REFUSED;
        }
        0
    }

    fn state(&self) -> i32 {
        if self.none_yet() {
            return EXIT_REFUSED;
        }
        let count = |kind: &str, one: &str, many: &str| {
            let n = self
                .entities
                .values()
                .filter(|e| format!("{:?}", e.kind) == kind)
                .count();
            format!("{n} {}", if n == 1 { one } else { many })
        };
        println!(
            "iteration {}: {}, {} (ids {})",
            self.iteration.unwrap_or(0),
            count("Robot", "robot", "robots"),
            count("Ball", "ball", "balls"),
            self.entities
                .keys()
                .map(EntityId::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        0
    }
}

/// Where the server's messages go: broadcasts into the [`Watch`], the rest on screen —
/// through the line editor's printer between commands, so a line being typed stays intact.
#[derive(Default)]
struct Log {
    watch: Watch,
    printer: Option<Box<dyn ExternalPrinter + Send>>,
}

impl Log {
    /// While a command runs: print as usual.
    fn direct(&mut self, m: &ServerMessage) {
        match m {
            ServerMessage::Broadcast(b) => self.watch.take(b),
            other => show(other),
        }
    }

    /// Between commands, while a line may be being typed.
    fn background(&mut self, m: &ServerMessage) {
        match (m, &mut self.printer) {
            (ServerMessage::Broadcast(b), _) => self.watch.take(b),
            (other, Some(p)) => {
                if p.print(describe(other).0).is_err() {
                    show(other);
                }
            }
            (other, None) => show(other),
        }
    }
}

/// A line read, or the end of the input.
type Input = std::io::Result<String>;

fn history_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(HISTORY_FILE))
}

/// Reads lines with the line editor; after each line waits for `ack` (the command's output
/// is printed meanwhile). Returns `false` when no editor could be set up.
fn edit_lines(
    tx: &mpsc::Sender<Input>,
    ack: &mpsc::Receiver<()>,
    printer: &mpsc::Sender<Box<dyn ExternalPrinter + Send>>,
) -> bool {
    let Ok(mut rl) = rustyline::DefaultEditor::new() else {
        return false;
    };
    let history = history_path();
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    if let Ok(p) = rl.create_external_printer() {
        let _ = printer.send(Box::new(p));
    }
    loop {
        match rl.readline("> ") {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = rl.add_history_entry(line.as_str());
                    // Saved as each line is entered: `quit` ends the process while this
                    // thread still waits for the next line.
                    if let Some(h) = &history {
                        let _ = rl.save_history(h);
                    }
                }
                if tx.send(Ok(line)).is_err() || ack.recv().is_err() {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                let _ = tx.send(Err(std::io::Error::other(e)));
                break;
            }
        }
    }
    true
}

/// Runs the prompt until `quit` or the end of standard input; returns the worst exit status
/// of the commands run (0, [`EXIT_REFUSED`] or [`super::EXIT_SILENT`]).
pub fn run(session: &mut Session, key: &str, max_file_bytes: u64) -> Result<i32> {
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let register = Request::Agent(AgentRequest::RegisterAgent {
        agent_type: AgentType::Gui,
        port: session.local().port(),
        ip: session.local().ip().to_string(),
        sync: false,
        broadcast: BROADCAST_PERIOD,
        key: key.to_string(),
    });
    let mut log = Log::default();
    let code = perform(session, &[register], &mut |m| log.direct(m))?;
    if code != 0 {
        return Ok(code);
    }
    if terminal {
        eprintln!(
            "simrob commander on udp://{} as {key:?}. {BANNER}",
            session.server()
        );
    }
    let (tx, rx) = mpsc::channel::<Input>();
    let (ack_tx, ack_rx) = mpsc::channel::<()>();
    let (printer_tx, printer_rx) = mpsc::channel();
    let (editing_tx, editing_rx) = mpsc::channel::<bool>();
    std::thread::spawn(move || {
        if terminal && edit_lines(&tx, &ack_rx, &printer_tx) {
            return;
        }
        let _ = editing_tx.send(false);
        for line in std::io::stdin().lock().lines() {
            let failed = line.is_err();
            if tx.send(line).is_err() || failed {
                return;
            }
        }
    });
    // Without the editor (a pipe, or no terminal after all), a plain "> " prompt.
    let mut plain = !terminal;
    let prompt = |plain: bool| {
        if plain && terminal {
            print!("> ");
            let _ = std::io::stdout().flush();
        }
    };
    let mut worst = 0;
    // Ctrl-C outside the line editor (input from a pipe) ends the prompt like `quit`: the
    // commander then unregisters. In the editor, Ctrl-C drops the line.
    let interrupt = crate::shell::ctrl_c_flag()?;
    loop {
        if interrupt.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(worst);
        }
        if let Ok(false) = editing_rx.try_recv() {
            plain = true;
            prompt(plain);
        }
        if log.printer.is_none() {
            if let Ok(p) = printer_rx.try_recv() {
                log.printer = Some(p);
            }
        }
        loop {
            match rx.try_recv() {
                Ok(Ok(line)) => {
                    let flow = handle(session, &line, &mut log, max_file_bytes)?;
                    let _ = ack_tx.send(());
                    match flow {
                        Flow::Quit => return Ok(worst),
                        Flow::Continue(code) => worst = worst.max(code),
                    }
                    prompt(plain);
                }
                Ok(Err(e)) => return Err(anyhow::Error::new(e).context("reading standard input")),
                Err(mpsc::TryRecvError::Disconnected) => return Ok(worst),
                Err(mpsc::TryRecvError::Empty) => break,
            }
        }
        if let Some(message) = session.recv(POLL)? {
            let broadcast = matches!(message, ServerMessage::Broadcast(_));
            if plain && terminal && !broadcast {
                print!("\r");
            }
            log.background(&message);
            if !broadcast {
                prompt(plain);
            }
        }
    }
}

/// Runs one line.
fn handle(session: &mut Session, line: &str, log: &mut Log, max_file_bytes: u64) -> Result<Flow> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(Flow::Continue(0));
    }
    let words = match split_words(line) {
        Ok(words) => words,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(Flow::Continue(EXIT_REFUSED));
        }
    };
    let parsed = match Line::try_parse_from(&words) {
        Ok(parsed) => parsed,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_REFUSED } else { 0 };
            let _ = e.print();
            return Ok(Flow::Continue(code));
        }
    };
    let code = match parsed.command {
        PromptCommand::Quit => return Ok(Flow::Quit),
        PromptCommand::Poses { entity } => log.watch.poses(entity),
        PromptCommand::State => log.watch.state(),
        PromptCommand::Raw { file } => match super::command::read_input(&file, max_file_bytes) {
            Ok(bytes) => local(raw(session, &bytes))?,
            Err(e) => local(Err(e))?,
        },
        PromptCommand::Send(cmd) => {
            let keys = session.keys().clone();
            let registered = session.registered().map(str::to_string);
            let cx = Commander {
                keys: &keys,
                local: session.local(),
                registered: registered.as_deref(),
                max_file_bytes,
            };
            match cmd.requests(&cx) {
                Ok(requests) => perform(session, &requests, &mut |m| log.direct(m))?,
                Err(e) => local(Err(e))?,
            }
        }
    };
    Ok(Flow::Continue(code))
}

/// A local mistake (a bad file, a bad value) is reported and the prompt goes on.
fn local(result: Result<i32>) -> Result<i32> {
    match result {
        Ok(code) => Ok(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            Ok(EXIT_REFUSED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_with_quotes() {
        assert_eq!(
            split_words(r#"  save "my run.xml"  "#).unwrap(),
            vec!["save", "my run.xml"]
        );
        assert_eq!(
            split_words(r"motors --entity 3 0=3 1=-5").unwrap(),
            vec!["motors", "--entity", "3", "0=3", "1=-5"]
        );
        assert_eq!(
            split_words(r"load a\ b ''").unwrap(),
            vec!["load", "a b", ""]
        );
        assert!(split_words("save 'x").is_err());
    }

    #[test]
    fn prompt_lines_parse() {
        for line in [
            "init",
            "initialize",
            "play",
            "pause",
            "step",
            "step --count 3",
            "timestep 0.02",
            "set-timestep 0.02",
            "gravity -9.8",
            "set-position --entity 3 0 -0.5 0.4",
            "motors --entity 3 0=3 1=-5",
            "raw x.xml",
            "poses",
            "poses --entity 3",
            "state",
            "q",
            "exit",
            "quit",
        ] {
            let words = split_words(line).unwrap();
            assert!(Line::try_parse_from(&words).is_ok(), "{line}");
        }
        for bad in [
            "timestep NaN",
            "motors --entity 3 0=abc",
            "stepp",
            "step --count 0",
        ] {
            let words = split_words(bad).unwrap();
            assert!(Line::try_parse_from(&words).is_err(), "{bad}");
        }
    }
}
