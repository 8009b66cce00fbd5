//! CSV export of a recording: each robot's and ball's pose over time.

use std::io::Write;

use crate::Frame;

pub(super) const CSV_HEADER: &str = "time,iteration,entity,kind,x,y,z,rot_x,rot_y,rot_z";

/// Shortest text that reads back as `v`: a value stored as a 32-bit float prints as one.
fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into(); // also -0
    }
    let short = v as f32;
    if f64::from(short) == v {
        format!("{short}")
    } else {
        format!("{v}")
    }
}

pub(super) fn csv_rows(frame: &Frame, out: &mut impl Write) -> std::io::Result<()> {
    for e in &frame.entities {
        let (Some(p), Some(r)) = (e.p, e.r) else {
            continue;
        };
        if e.kind == "Field" {
            continue;
        }
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            frame.time,
            frame.iteration,
            e.id,
            e.kind,
            num(p[0]),
            num(p[1]),
            num(p[2]),
            num(r[0]),
            num(r[1]),
            num(r[2])
        )?;
    }
    Ok(())
}
