//! Every number simrob prints reads back to the value it printed, in the shortest text.

use proptest::prelude::*;
use simrob_protocol::real;

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
    }

    #[test]
    fn other_values_read_back_as_the_same_f64(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assume!(x.is_finite() && (x as f32) as f64 != x);
        let text = real(x).to_string();
        prop_assert_eq!(text.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{}", text);
        let shortest = format!("{}", x).len().min(format!("{:e}", x).len());
        prop_assert!(text.len() <= shortest, "{}", text);
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
