//! `simrob soccer send-msg`: the FutRob message sender.

use std::io::{BufRead, Write};

use anyhow::{bail, Context, Result};
use clap::Args;
use simrob_futrob::config::DEFAULT_COMM_PORT;
use simrob_futrob::{Message, Param};

use super::net;

#[derive(Args)]
pub struct SendMsgArgs {
    /// Sender id.
    #[arg(long, value_name = "ID")]
    src: Option<i32>,
    /// Destination id (255 = every robot).
    #[arg(long, value_name = "ID", default_value_t = 255)]
    dest: i32,
    /// Param: a code (20) or a name (ACTION_TAKEN, COMM_PARAM_ACTION_TAKEN).
    #[arg(long)]
    param: Option<String>,
    /// Value.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    value: i32,
    /// Where to send: 127.255.255.255 reaches every robot on this machine,
    /// 255.255.255.255 every robot on the LAN.
    #[arg(long, value_name = "IP", default_value = "127.255.255.255")]
    to: String,
    /// The team messages' UDP port (the robots' `commPort`), 1 to 65535.
    #[arg(long, value_name = "PORT", default_value_t = DEFAULT_COMM_PORT,
          value_parser = crate::flags::count(1u16, u16::MAX))]
    team_port: u16,
    /// Old spelling of `--team-port`.
    #[arg(long = "port", value_name = "PORT", hide = true,
          value_parser = crate::flags::renamed("port", "team-port", ""))]
    old_port: Option<String>,
    /// The interactive prompt: `msg` asks for the four fields, `q` quits.
    #[arg(long, short)]
    interactive: bool,
}

fn param(s: &str) -> Result<Param> {
    Param::parse(s).with_context(|| {
        let names: Vec<String> = Param::ALL
            .iter()
            .map(|p| format!("{} {}", p.code(), p.name()))
            .collect();
        format!("unknown param {s:?}; the params are: {}", names.join(", "))
    })
}

pub fn run(args: SendMsgArgs) -> Result<()> {
    let dest = net::destination(&args.to, args.team_port)?;
    let sock = std::net::UdpSocket::bind("0.0.0.0:0").context("cannot open a UDP socket")?;
    sock.set_broadcast(true)?;
    let send = |m: Message| -> Result<()> {
        sock.send_to(&m.encode(), dest)
            .with_context(|| format!("cannot send to {dest}"))?;
        println!("MSG SENT [bytes = 16] [destIP = {}] {m}", dest.ip());
        Ok(())
    };
    if !args.interactive {
        let (Some(src), Some(p)) = (args.src, args.param.as_deref()) else {
            bail!("give --src and --param (and --dest, --value), or --interactive");
        };
        return send(Message::new(src, args.dest, param(p)?, args.value));
    }
    println!("CommSender!");
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut ask = |prompt: &str| -> Result<Option<String>> {
        print!("{prompt}");
        std::io::stdout().flush()?;
        Ok(lines.next().transpose()?.map(|l| l.trim().to_string()))
    };
    loop {
        let Some(action) = ask("action (msg|q) > ")? else {
            break;
        };
        match action.as_str() {
            "q" => break,
            "msg" => {}
            "" => continue,
            other => {
                println!("unknown action {other:?}: msg or q");
                continue;
            }
        }
        let mut fields = Vec::new();
        for prompt in [
            "action > int msg src > ",
            "action > int msg dest > ",
            "action > int msg param > ",
            "action > int param value > ",
        ] {
            let Some(v) = ask(prompt)? else {
                println!("Program is unloading....");
                return Ok(());
            };
            fields.push(v);
        }
        // Each bad field is named, with what it takes.
        let int = |name: &str, s: &str| {
            s.parse::<i32>().map_err(|_| {
                anyhow::anyhow!(
                    "{name} must be a whole number ({} to {}), not {s:?}",
                    i32::MIN,
                    i32::MAX
                )
            })
        };
        let message = int("src", &fields[0]).and_then(|src| {
            let dest = int("dest", &fields[1])?;
            let p = param(&fields[2])?;
            let value = int("value", &fields[3])?;
            Ok(Message::new(src, dest, p, value))
        });
        match message {
            Ok(m) => send(m)?,
            Err(e) => println!("not sent: {e}"),
        }
        println!();
    }
    println!("Program is unloading....");
    Ok(())
}
