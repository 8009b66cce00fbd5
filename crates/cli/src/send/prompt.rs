//! `simrob send --interactive`: the commander's prompt, with Initialize / Play / Pause /
//! Step and a live log of the server's responses.
//!
//! One command per line, in the same words as `simrob send` (`init`, `play`, `pause`,
//! `step`, `timestep 0.02`, `motors --entity 3 0=3 1=-5`, …), plus `raw FILE`, `clear`,
//! `help` and `quit`. Words are split on whitespace; quote a word holding spaces with `'` or
//! `"`. Empty lines and lines starting with `#` are skipped, so a script can be piped in.
//!
//! The commander registers as a GUI agent with Broadcast -1: it receives the confirmation of
//! every agent's command but no world broadcasts. Each command waits for its own answer;
//! between commands, whatever arrives (other agents' commands) is shown as it comes.
//! Standard input is read by a thread, the socket by the main loop.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Result;
use clap::{Parser, Subcommand};

use super::command::{self, Commander, SendCommand};
use super::session::Session;
use super::{perform, raw, show, EXIT_REFUSED};

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
    /// Clear the screen (the responses shown so far).
    Clear,
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
    /// Go on; the exit status of the line (0, 1 or 2).
    Continue(i32),
    Quit,
}

const BANNER: &str = "Commands: init, play, pause, step [--count N], timestep S, motors --entity ID J=V..., \
set-position --entity ID X Y Z, save FILE, load FILE, scenario FILE, raw FILE, clear, help [COMMAND], quit.";

/// Runs the prompt until `quit` or the end of standard input; returns the worst exit status
/// of the commands run (0, [`EXIT_REFUSED`] or [`super::EXIT_SILENT`]).
pub fn run(session: &mut Session, key: &str) -> Result<i32> {
    let terminal = std::io::stdin().is_terminal();
    let register = command::register_self(key, session.local());
    let code = perform(session, &[register], &mut show)?;
    if code != 0 {
        return Ok(code);
    }
    if terminal {
        eprintln!(
            "simrob commander on udp://{} as {key:?}. {BANNER}",
            session.server()
        );
    }
    let (tx, rx) = mpsc::channel::<std::io::Result<String>>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let failed = line.is_err();
            if tx.send(line).is_err() || failed {
                return;
            }
        }
    });
    let prompt = || {
        if terminal {
            print!("> ");
            let _ = std::io::stdout().flush();
        }
    };
    let mut worst = 0;
    prompt();
    loop {
        loop {
            match rx.try_recv() {
                Ok(Ok(line)) => {
                    match handle(session, &line)? {
                        Flow::Quit => return Ok(worst),
                        Flow::Continue(code) => worst = worst.max(code),
                    }
                    prompt();
                }
                Ok(Err(e)) => return Err(anyhow::Error::new(e).context("reading standard input")),
                Err(mpsc::TryRecvError::Disconnected) => return Ok(worst),
                Err(mpsc::TryRecvError::Empty) => break,
            }
        }
        if let Some(message) = session.recv(POLL)? {
            if terminal {
                print!("\r");
            }
            show(&message);
            prompt();
        }
    }
}

/// Runs one line.
fn handle(session: &mut Session, line: &str) -> Result<Flow> {
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
        PromptCommand::Clear => {
            if std::io::stdout().is_terminal() {
                print!("\x1b[2J\x1b[H");
                let _ = std::io::stdout().flush();
            }
            0
        }
        PromptCommand::Raw { file } => match command::read_input(&file) {
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
            };
            match cmd.requests(&cx) {
                Ok(requests) => perform(session, &requests, &mut show)?,
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
