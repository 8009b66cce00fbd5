//! CSV export of a recording: each robot's and ball's pose over time.

use std::io::Write;

use crate::Frame;

pub(super) const CSV_HEADER: &str = "time,iteration,entity,kind,x,y,z,roll,pitch,yaw";

/// Shortest text that reads back as `v`: a value stored as a 32-bit float prints as one.
/// Values far from 1 (below 1e-4 or from 1e9 in size: a rotation of 1e-19 rad, say) are
/// written in exponent form (`1.1866257e-19`), which spreadsheets and CSV readers parse,
/// instead of a run of zeros.
fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into(); // also -0
    }
    let exponent = !(1e-4..1e9).contains(&v.abs());
    let short = v as f32;
    match (f64::from(short) == v, exponent) {
        (true, false) => format!("{short}"),
        (true, true) => format!("{short:e}"),
        (false, false) => format!("{v}"),
        (false, true) => format!("{v:e}"),
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

#[cfg(test)]
mod tests {
    use super::num;

    #[test]
    fn numbers_read_back_exactly_and_never_as_a_run_of_zeros() {
        for v in [
            1.1866257e-19_f64,
            f64::from(1.1866257e-19_f32),
            -3.0e-7,
            0.25,
            -1.5,
            0.0001,
            12345.678,
            f64::from(0.1_f32),
            0.1,
            2.5e12,
            -0.0,
        ] {
            let text = num(v);
            assert!(!text.contains("0.0000"), "{v}: {text}");
            let back: f64 = text.parse().expect("a number");
            let exact = back == v || f64::from(back as f32) == v && back as f32 == v as f32;
            assert!(exact, "{v} written as {text}");
        }
        assert_eq!(num(f64::from(1.1866257e-19_f32)), "1.1866257e-19");
        assert_eq!(num(f64::from(0.1_f32)), "0.1");
        assert_eq!(num(0.5), "0.5");
    }
}
