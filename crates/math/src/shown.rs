//! Numbers as an error message shows them.

use std::fmt;

/// A number as an error message shows it: as Rust prints it, but in exponent form when that
/// would be long (`1e300`, not three hundred digits; `1e-300`, not three hundred zeros).
///
/// ```
/// use simrob_math::Shown;
/// assert_eq!(Shown(2.5).to_string(), "2.5");
/// assert_eq!(Shown(1e300).to_string(), "1e300");
/// assert_eq!(Shown(-1e-300).to_string(), "-1e-300");
/// assert_eq!(Shown(f64::NAN).to_string(), "NaN");
/// // A precision applies to a number shown in full.
/// assert_eq!(format!("{:.1}", Shown(2.25)), "2.2");
/// assert_eq!(format!("{:.1}", Shown(1e300)), "1e300");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shown(pub f64);

impl Shown {
    /// The number behind a reference (for error attributes that see fields by reference).
    pub fn of(v: &f64) -> Shown {
        Shown(*v)
    }
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        let a = v.abs();
        if a != 0.0 && a.is_finite() && !(1e-6..1e15).contains(&a) {
            write!(f, "{v:e}")
        } else if let Some(p) = f.precision() {
            write!(f, "{v:.p$}")
        } else {
            write!(f, "{v}")
        }
    }
}
