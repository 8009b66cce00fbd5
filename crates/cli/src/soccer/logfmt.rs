//! The FutRob log file: brain events from `tracing` written as FutRob log lines.

use std::fmt;
use std::fs::File;
use std::sync::Mutex;

use anyhow::{Context, Result};
use simrob_futrob::log::{civil_from_unix_micros, format_line};
use simrob_futrob::IniConfig;
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
