//! Every number simrob prints reads back to the value it printed, in the shortest text.

use proptest::prelude::*;
use simrob_protocol::real;

/// The definition the fast writer must match to the byte: Rust's shortest round-tripping
/// text of the value (as an `f32` when it is one), plain unless exponent notation is shorter
/// and plain has more than 8 characters.
fn reference(v: f64) -> String {
    let single = v.is_finite() && (v as f32) as f64 == v;
    let plain = if single {
        format!("{}", v as f32)
    } else {
        format!("{v}")
    };
    if plain.len() > 8 {
        let exp = if single {
            format!("{:e}", v as f32)
        } else {
            format!("{v:e}")
        };
        if exp.len() < plain.len() {
            return exp;
        }
    }
    plain
}

fn same_as_reference(v: f64) -> Result<(), TestCaseError> {
    let mut pushed = String::from("<");
    real(v).push_to(&mut pushed);
    prop_assert_eq!(&pushed[1..], reference(v), "{:e}", v);
    prop_assert_eq!(real(v).to_string(), reference(v), "{:e}", v);
    Ok(())
}

proptest! {
    #[test]
    fn engine_values_read_back_as_the_same_f32(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        prop_assume!(x.is_finite());
        let text = real(x as f64).to_string();
        prop_assert_eq!(text.parse::<f32>().unwrap().to_bits(), x.to_bits(), "{}", text);
        // Never longer than the shortest f32 text in either notation.
        let shortest = format!("{}", x).len().min(format!("{:e}", x).len());
        prop_assert!(text.len() <= shortest, "{}", text);
        same_as_reference(x as f64)?;
    }

    #[test]
    fn other_values_read_back_as_the_same_f64(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assume!(x.is_finite() && (x as f32) as f64 != x);
        let text = real(x).to_string();
        prop_assert_eq!(text.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{}", text);
        let shortest = format!("{}", x).len().min(format!("{:e}", x).len());
        prop_assert!(text.len() <= shortest, "{}", text);
        same_as_reference(x)?;
    }

    #[test]
    fn values_of_a_simulation_print_as_defined(
        mantissa in -99_999_999i64..99_999_999,
        exponent in -40i32..40,
    ) {
        let v = mantissa as f64 * 10f64.powi(exponent);
        same_as_reference(v)?;
        same_as_reference((v as f32) as f64)?;
    }
}

#[test]
fn edge_values_print_as_defined() {
    let mut values = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        10.0,
        1e7,
        1e8,
        1e9,
        123456789.0,
        0.5,
        1e-5,
        1e-7,
        1.5e-3,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        5e-324,
        f64::from(f32::MAX),
        f64::from(f32::MIN_POSITIVE),
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for e in -30..30 {
        values.push(10f64.powi(e));
        values.push(-1.25 * 10f64.powi(e));
        values.push(f64::from(0.1f32) * 10f64.powi(e));
    }
    for v in values {
        same_as_reference(v).unwrap();
    }
}

#[test]
fn no_float_noise() {
    assert_eq!(real(-0.1f32 as f64).to_string(), "-0.1");
    assert_eq!(real(0.0922f32 as f64).to_string(), "0.0922");
    assert_eq!(real(4.229_089e-20_f32 as f64).to_string(), "4.229089e-20");
    assert_eq!(real(0.01).to_string(), "0.01");
    assert_eq!(real(-1.0).to_string(), "-1");
    assert_eq!(real(1e300).to_string(), "1e300");
    assert_eq!(real(0.0).to_string(), "0");
}
