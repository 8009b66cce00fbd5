//! FutRob's log line:
//! `[MM-DD-YYYY HH:MM:SS.ffffff][file|function|line]: message [name = value] …`.
//!
//! The brain logs through `tracing` with the targets `futrob::rules`, `futrob::action`,
//! `futrob::motors`, `futrob::vision` and `futrob::comm` (the `ini.config` switches
//! `logRules`, `logAction`, `logMotors`, `logVision`, `logComm`), each event carrying the
//! robot id as a field. A shell that wants FutRob's format formats events with
//! [`format_line`]; the time is handed in.

use std::fmt::Write as _;

/// A civil UTC time split into its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CivilTime {
    /// Year.
    pub year: i64,
    /// 1–12.
    pub month: u32,
    /// 1–31.
    pub day: u32,
    /// 0–23.
    pub hour: u32,
    /// 0–59.
    pub minute: u32,
    /// 0–59.
    pub second: u32,
    /// 0–999 999.
    pub micros: u32,
}

/// Microseconds since the Unix epoch as a UTC civil time (proleptic Gregorian calendar).
pub fn civil_from_unix_micros(us: i64) -> CivilTime {
    let secs = us.div_euclid(1_000_000);
    let micros = us.rem_euclid(1_000_000) as u32;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Days to civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    CivilTime {
        year,
        month,
        day,
        hour: (sod / 3600) as u32,
        minute: (sod / 60 % 60) as u32,
        second: (sod % 60) as u32,
        micros,
    }
}

/// One log line in FutRob's format (microseconds zero-padded).
///
/// ```
/// use simrob_futrob::log::{civil_from_unix_micros, format_line};
/// let t = civil_from_unix_micros(1_477_153_097_894_918);
/// let line = format_line(t, "CommModule.cpp", "SendMessage", 191, "MSG SENT",
///     &[("bytes", "16"), ("msgParam", "COMM_PARAM_BALL_DISTANCE")]);
/// assert_eq!(line, "[10-22-2016 16:18:17.894918][CommModule.cpp|SendMessage|191]: MSG SENT [bytes = 16] [msgParam = COMM_PARAM_BALL_DISTANCE]");
/// ```
pub fn format_line(
    t: CivilTime,
    file: &str,
    function: &str,
    line: u32,
    message: &str,
    params: &[(&str, &str)],
) -> String {
    let mut s = format!(
        "[{:02}-{:02}-{:04} {:02}:{:02}:{:02}.{:06}][{}|{}|{}]: {}",
        t.month, t.day, t.year, t.hour, t.minute, t.second, t.micros, file, function, line, message
    );
    for (k, v) in params {
        let _ = write!(s, " [{k} = {v}]");
    }
    s
}
