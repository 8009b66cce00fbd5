//! A value out of a flag's range is a command-line mistake like any other: refused when the
//! command line is read, with exit status 2 and a message naming the range, before anything
//! starts (no `Error: …` from the command's own code, exit status 1).

use crate::support::{repo, simrob};

/// Runs `simrob ARGS` (stdin empty), expecting exit status 2 and `range` in its message.
fn refused(args: &[&str], range: &str) -> Option<String> {
    let out = simrob()
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("simrob runs");
    let err = String::from_utf8_lossy(&out.stderr);
    let flag = args.iter().rev().nth(1).copied().unwrap_or_default();
    if out.status.code() == Some(2) && err.contains(range) && err.contains(flag) {
        None
    } else {
        Some(format!(
            "simrob {}: exit {:?}, expected 2 and {range:?}: {}",
            args.join(" "),
            out.status.code(),
            err.lines().next().unwrap_or_default()
        ))
    }
}

#[test]
fn out_of_range_values_are_usage_errors_naming_the_range() {
    let udp = ["netbed", "udp", "--to", "127.0.0.1:9"];
    let cases: Vec<(Vec<&str>, &str, &str, &str)> = vec![
        (vec!["mrs"], "--scale", "0", "from 1 to 100"),
        (vec!["mrs"], "--scale", "101", "from 1 to 100"),
        (vec!["mrs"], "--max-clients", "0", "1 or more"),
        (vec!["mrs"], "--timestep", "2", "from 0.00001 to 1 seconds"),
        (vec!["mrs"], "--max-snapshot-side", "15", "from 16 to 4096"),
        (vec!["mrs"], "--max-step", "0", "from 1 to 10000000"),
        (
            vec!["mrs"],
            "--max-message-log-bytes",
            "4097",
            "from 0 to 4096",
        ),
        (
            vec!["mrs"],
            "--max-message-log-rate",
            "100001",
            "from 0 to 100000",
        ),
        (vec!["mrs"], "--max-line-bytes", "15", "from 16 to 4096"),
        (
            vec!["mrs"],
            "--max-output-bytes",
            "0",
            "from 65536 to 1073741824",
        ),
        (vec!["mrs"], "--max-rects", "0", "from 1 to 20000"),
        (
            vec!["mrs"],
            "--idle-timeout",
            "1e10",
            "from 0 to 1000000000 seconds",
        ),
        (
            vec!["mrs"],
            "--make-room-after",
            "1e10",
            "from 0 to 1000000000 seconds",
        ),
        (
            vec!["mrs", "--snapshot", "x.png"],
            "--snapshot-every",
            "0.05",
            "from 0.1 to 1000000000 seconds",
        ),
        (vec!["demo"], "--wheel-speed", "0", "greater than 0"),
        (vec!["demo"], "--wheel-speed", "-1", "greater than 0"),
        (
            vec!["demo"],
            "--every-seconds",
            "3601",
            "from 0 to 3600 seconds",
        ),
        (
            udp.to_vec(),
            "--flow-idle",
            "0",
            "above 0 and at most 3600 seconds",
        ),
        (
            udp.to_vec(),
            "--flow-idle",
            "3601",
            "above 0 and at most 3600 seconds",
        ),
        (vec!["soccer", "spy"], "--id", "0", "from 1 to 255"),
        (vec!["soccer", "spy"], "--role", "3", "from 1 to 2"),
        (vec!["run"], "--max-scenario-bytes", "0", "1 or more"),
        (vec!["serve"], "--max-scenario-bytes", "0", "1 or more"),
        (vec!["send"], "--max-scenario-bytes", "0", "1 or more"),
    ];
    let mut wrong = Vec::new();
    for (mut args, flag, value, range) in cases {
        args.extend([flag, value]);
        wrong.extend(refused(&args, range));
    }
    // The Control Center's flags, on `coord serve` and `coord cc`.
    for cmd in ["serve", "cc"] {
        for (flag, value, range) in [
            ("--clock-period", "0", "from 0.01 to 60 seconds"),
            ("--bid-window", "3601", "from 0.01 to 3600 seconds"),
            ("--accept-window", "0", "from 0.01 to 3600 seconds"),
            ("--reannounce-period", "0", "from 0.1 to 3600 seconds"),
            ("--round-period", "3601", "from 0 to 3600 seconds"),
            (
                "--silence-timeout",
                "1e12",
                "0 (never) or a time from 0.1 to 86400",
            ),
            (
                "--hello-timeout",
                "0.05",
                "0 (never) or a time from 0.1 to 86400",
            ),
            ("--max-coordinate", "0", "from 1 to 1000000000000 metres"),
            ("--max-message-bytes", "0", "from 1024 to 1048576"),
            ("--max-queued-lines", "0", "from 1 to 65536"),
            ("--max-output-bytes", "0", "from 65536 to 1073741824"),
            ("--max-name-bytes", "0", "from 1 to 4096"),
            ("--max-path-points", "0", "from 1 to 4096"),
            ("--max-connections", "0", "1 or more"),
            ("--max-robots", "0", "1 or more"),
            ("--max-tasks", "0", "1 or more"),
            ("--max-open-auctions", "0", "1 or more"),
        ] {
            wrong.extend(refused(&["coord", cmd, flag, value], range));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Each `--viewer-…` flag, on every command that serves a viewer, refuses a value just out of
/// the range docs/security.md's table gives it.
#[test]
fn viewer_flags_are_refused_out_of_the_range_the_docs_give() {
    let doc = std::fs::read_to_string(repo("docs/security.md")).expect("docs/security.md");
    let rows: Vec<(String, f64, f64)> = doc
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let flag = cells
                .get(1)?
                .strip_prefix("`--viewer-")?
                .strip_suffix('`')?;
            let (lo, hi) = cells.get(3)?.split_once(" to ")?;
            Some((
                format!("--viewer-{flag}"),
                lo.parse().ok()?,
                hi.parse().ok()?,
            ))
        })
        .collect();
    assert_eq!(rows.len(), 11, "the viewer table of docs/security.md");
    let mut wrong = Vec::new();
    for cmd in [
        &["serve"][..],
        &["demo"],
        &["replay"],
        &["mrs"],
        &["swarm", "run"],
        &["soccer", "match"],
        &["coord", "cc"],
    ] {
        for (flag, lo, hi) in &rows {
            let below = if *lo == 0.0 {
                "-1".to_string()
            } else if lo.fract() != 0.0 || *lo < 1.0 {
                format!("{}", lo / 2.0)
            } else {
                format!("{}", lo - 1.0)
            };
            let range = format!("from {lo} to {hi}");
            for value in [below, format!("{}", hi + 1.0)] {
                let mut args = cmd.to_vec();
                args.extend([flag.as_str(), value.as_str()]);
                wrong.extend(refused(&args, &range));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
