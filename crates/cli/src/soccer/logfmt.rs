//! The FutRob log file: brain events from `tracing` written as FutRob log lines.

use std::fmt;
use std::fs::File;
use std::sync::Mutex;

use anyhow::{Context, Result};
use simrob_futrob::log::{civil_from_unix_micros, format_line};
use simrob_futrob::{IniConfig, Message};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

struct FutRobFormat;

#[derive(Default)]
struct Fields {
    message: String,
    params: Vec<(String, String)>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            self.params
                .push((field.name().to_string(), format!("{value:?}")));
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_string();
        } else {
            self.params
                .push((field.name().to_string(), value.to_string()));
        }
    }
}

impl<S, N> FormatEvent<S, N> for FutRobFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let mut f = Fields::default();
        event.record(&mut f);
        let us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        let file = meta
            .file()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .unwrap_or("?");
        let params: Vec<(&str, &str)> = f
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        writeln!(
            w,
            "{}",
            format_line(
                civil_from_unix_micros(us),
                file,
                meta.target(),
                meta.line().unwrap_or(0),
                &f.message,
                &params
            )
        )
    }
}

/// Logs a team message put on the air (the `logComm` module), as FutRob's log has it:
/// `MSG SENT [bytes = 16] [destIP = 127.255.255.255] [msgSrc = 1] [msgDest = 255]
/// [msgParam = COMM_PARAM_BALL_DISTANCE] [msgValue = 162]`, `bytes` being what the socket
/// took.
pub fn msg_sent(bytes: usize, dest: std::net::SocketAddr, m: &Message) {
    tracing::debug!(target: "futrob::comm", bytes, destIP = %dest.ip(), msgSrc = m.source, msgDest = m.destination, msgParam = m.param.name(), msgValue = m.value, "MSG SENT");
}

/// The log writer the config asks for, if any: one file per robot, the modules its switches
/// enable (for [`crate::shell::init_logging_with`]).
pub fn writer(cfg: &IniConfig, path: &std::path::Path) -> Result<Option<crate::shell::ExtraLog>> {
    use tracing_subscriber::Layer;
    if !cfg.log_enabled {
        return Ok(None);
    }
    let file = File::create(path)
        .with_context(|| format!("cannot create the log file {}", path.display()))?;
    let mut directives = vec!["off".to_string()];
    for (on, target) in [
        (cfg.log_rules, "futrob::rules"),
        (cfg.log_action, "futrob::action"),
        (cfg.log_motors, "futrob::motors"),
        (cfg.log_vision, "futrob::vision"),
        (cfg.log_comm, "futrob::comm"),
    ] {
        if on {
            directives.push(format!("{target}=trace"));
        }
    }
    let filter = tracing_subscriber::EnvFilter::new(directives.join(","));
    Ok(Some(
        tracing_subscriber::fmt::layer()
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .event_format(FutRobFormat)
            .with_filter(filter)
            .boxed(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_futrob::{Param, BROADCAST};
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn a_sent_message_is_logged_as_futrobs_msg_sent_line() {
        let dir = std::env::temp_dir().join(format!("simrob-logfmt-{}", std::process::id()));
        let path = dir.join("robot.log");
        let dest: std::net::SocketAddr = "127.255.255.255:10020".parse().unwrap();
        // What a robot with this logComm writes to its log as it sends one message.
        let logged = |log_comm: &str| {
            std::fs::create_dir_all(&dir).unwrap();
            let cfg = IniConfig::parse(
                &format!("id=1\nrules=r.xml\nlogEnabled=1\nlogComm={log_comm}\n"),
                "ini.config",
            )
            .unwrap();
            let layer = writer(&cfg, &path).unwrap().unwrap();
            tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
                msg_sent(
                    16,
                    dest,
                    &Message::new(1, BROADCAST, Param::BallDistance, 162),
                );
            });
            let log = std::fs::read_to_string(&path).unwrap();
            std::fs::remove_dir_all(&dir).unwrap();
            log
        };
        let log = logged("1");
        let line = log.lines().next().unwrap_or_default();
        assert!(line.len() > 28, "no MSG SENT line: {log:?}");
        // [MM-DD-YYYY HH:MM:SS.ffffff][file|module|line]: message [name = value] …
        let (stamp, rest) = line.split_at(28);
        assert!(stamp.starts_with('[') && stamp.ends_with(']'), "{line}");
        assert!(rest.starts_with("[logfmt.rs|futrob::comm|"), "{line}");
        assert!(
            rest.ends_with("]: MSG SENT [bytes = 16] [destIP = 127.255.255.255] [msgSrc = 1] [msgDest = 255] [msgParam = COMM_PARAM_BALL_DISTANCE] [msgValue = 162]"),
            "{line}"
        );
        // Without logComm, nothing.
        let log = logged("0");
        assert_eq!(log, "");
    }
}
