//! From ODE's parameters (ERP, CFM, slip) to spring coefficients, restitution and friction.
//!
//! ODE's soft constraint at step `h` with error-reduction `ERP` and constraint-force mixing
//! `CFM` behaves as a spring of stiffness `k = ERP/(h·CFM)` and damping `c = (1−ERP)/CFM` per
//! unit of effective mass (ODE user guide, "How to use ERP and CFM"). With `ω = √k` and
//! `ζ = c/(2ω)`, the error reduction of an implicit spring solver `hω/(hω + 2ζ)` is exactly
//! `ERP`, so the pair (ω, ζ) reproduces ODE's behaviour in rapier's soft-constraint solver.

/// Contact CFM (Hardness) is multiplied by this before the spring is built (see SPEC S8:
/// the SimRob manual's values taken literally let the ball sink through the floor).
pub const CONTACT_CFM_SCALE: f64 = 0.01;
/// Slip values are multiplied by this (SPEC S8) before [`slip_friction`].
pub const SLIP_SCALE: f64 = 0.1;

/// Smallest CFM used, to keep the spring finite.
const MIN_CFM: f64 = 1e-12;

/// A spring as natural angular frequency ω (rad/s) and damping ratio ζ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spring {
    /// Natural angular frequency ω, rad/s.
    pub omega: f64,
    /// Damping ratio ζ (1 = critically damped).
    pub zeta: f64,
}

impl Spring {
    /// Natural frequency in Hz (what rapier's `SpringCoefficients` take).
    pub fn frequency_hz(&self) -> f64 {
        self.omega / std::f64::consts::TAU
    }

    /// ODE's ERP of this spring at step `h`.
    pub fn erp(&self, h: f64) -> f64 {
        h * self.omega / (h * self.omega + 2.0 * self.zeta)
    }

    /// The coefficient of restitution of a mass on this spring–damper (0 when overdamped).
    pub fn restitution(&self) -> f64 {
        if self.zeta >= 1.0 {
            0.0
        } else {
            (-std::f64::consts::PI * self.zeta / (1.0 - self.zeta * self.zeta).sqrt()).exp()
        }
    }
}

/// The spring of an ODE soft constraint with `erp` (0..1) and `cfm` (> 0) at step `h`, per unit
/// effective mass. `erp` is clamped to [0.001, 0.999] and `cfm` to ≥ 1e-12.
pub fn ode_spring(erp: f64, cfm: f64, h: f64) -> Spring {
    let erp = erp.clamp(0.001, 0.999);
    let cfm = cfm.max(MIN_CFM);
    let k = erp / (h * cfm);
    let c = (1.0 - erp) / cfm;
    let omega = k.sqrt();
    Spring {
        omega,
        zeta: c / (2.0 * omega),
    }
}

/// The contact spring of an interaction (Hardness = CFM scaled by [`CONTACT_CFM_SCALE`],
/// Bounciness = ERP).
pub fn contact_spring(hardness: f64, bounciness: f64, h: f64) -> Spring {
    ode_spring(bounciness, hardness * CONTACT_CFM_SCALE, h)
}

/// The speed (m/s) at which ODE's soft contact sends two bodies apart when they meet.
///
/// ODE finds a contact only once the bodies overlap, and its contact joint then asks for the
/// normal velocity `ERP·depth/h` that corrects a share `ERP` of the overlap in one step, softened
/// by `CFM`: solved exactly for one contact row of effective inverse mass `inv_mass` (kg⁻¹),
/// the bodies leave at `κ·ERP·depth/h − (1 − κ)·approach` with `κ = h·inv_mass / (h·inv_mass +
/// CFM)`. Nothing takes that velocity back: this is how an ODE ball bounces (with no
/// `dContactBounce`, as the SimRob simulator creates its contacts), and why how high it bounces
/// depends on how deep it was when first found, between 0 and a whole step's travel.
///
/// `distance` is the contact's separation now (negative: overlapping) and `approach` the speed
/// (m/s, > 0) at which the bodies close. A contact still apart is met as ODE would meet it: one
/// step later, `approach·h − distance` deep. The result is ≥ 0 (0: the bodies stay together).
pub fn ode_rebound(erp: f64, cfm: f64, h: f64, inv_mass: f64, distance: f64, approach: f64) -> f64 {
    if approach <= 0.0 || h.is_nan() || h <= 0.0 {
        return 0.0;
    }
    let depth = if distance <= 0.0 {
        -distance
    } else {
        approach * h - distance
    };
    if depth <= 0.0 {
        return 0.0;
    }
    let erp = erp.clamp(0.0, 1.0);
    let hm = h * inv_mass.max(0.0);
    let kappa = if hm > 0.0 {
        hm / (hm + cfm.max(0.0))
    } else {
        0.0
    };
    (kappa * erp * depth / h - (1.0 - kappa) * approach).max(0.0)
}

/// Friction coefficient after the slip approximation: `μ / (1 + 10·SLIP_SCALE·(s1+s2)/2)`.
pub fn slip_friction(friction: f64, slip1: f64, slip2: f64) -> f64 {
    let s = 10.0 * SLIP_SCALE * 0.5 * (slip1.max(0.0) + slip2.max(0.0));
    friction.max(0.0) / (1.0 + s)
}

/// A contact on the step it is met (it carried no load before), as [`ode_impact_friction`]
/// needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Impact {
    /// The speed (m/s) the surfaces slide past each other.
    pub sliding: f64,
    /// The bodies' inverse effective mass (1/kg) along the slide.
    pub inv_mass_along: f64,
    /// The speed (m/s) at which the bodies close along the normal.
    pub closing: f64,
    /// The bodies' inverse effective mass (1/kg) along the normal.
    pub inv_mass_normal: f64,
    /// The restitution the contact bounces with.
    pub restitution: f64,
}

/// The friction coefficient ODE's force-dependent slip gives a contact on the step it is met.
/// ODE solves the slip with the impact: the step ends with the surfaces still sliding at
/// `slip` (m/s per N) times the friction, so the friction impulse is
/// `sliding / (1/m_t + slip/h)`, and the normal impulse `(1 + e)·closing / (1/m_n)`. Their
/// ratio is the coefficient; `friction` (the pair's own) bounds it. A contact not closing,
/// not sliding, or without a mass to push keeps `friction`.
pub fn ode_impact_friction(friction: f64, slip: f64, h: f64, i: &Impact) -> f64 {
    let ok = |x: f64| x > 0.0 && x.is_finite();
    if !(ok(i.sliding) && ok(i.closing) && ok(i.inv_mass_along) && ok(i.inv_mass_normal) && ok(h)) {
        return friction;
    }
    let impulse = i.sliding / (i.inv_mass_along + slip.max(0.0) / h);
    let pressure = (1.0 + i.restitution.max(0.0)) * i.closing / i.inv_mass_normal;
    friction.min(impulse / pressure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impact_friction_leaves_the_slide_the_slip_allows() {
        // A solid ball (0.6 kg) at a wall: 1/m_t = 3.5/m along the slide, 1/m_n = 1/m.
        let (m, h, slip, v) = (0.6, 0.01, 0.01, 1.5);
        let ball = |sliding: f64, closing: f64, restitution: f64| Impact {
            sliding,
            inv_mass_along: 3.5 / m,
            closing,
            inv_mass_normal: 1.0 / m,
            restitution,
        };
        let mu = ode_impact_friction(1.0, slip, h, &ball(v, v, 0.0));
        // The friction impulse over the step leaves the surfaces sliding at slip × force.
        let impulse = mu * m * v;
        let left = v - impulse * 3.5 / m;
        assert!((left - slip * impulse / h).abs() < 1e-12, "{mu} {left}");
        // Without slip it stops the slide; the pair's coefficient bounds it; a bounce shares
        // the same friction out over a larger normal impulse.
        let stop = ode_impact_friction(1.0, 0.0, h, &ball(v, v, 0.0));
        assert!((stop - 1.0 / 3.5).abs() < 1e-12);
        assert_eq!(ode_impact_friction(0.1, 0.0, h, &ball(v, v, 0.0)), 0.1);
        let bounced = ode_impact_friction(1.0, slip, h, &ball(v, v, 0.5));
        assert!((bounced * 1.5 - mu).abs() < 1e-12);
        // Not closing, not sliding: the pair's coefficient.
        assert_eq!(ode_impact_friction(0.9, slip, h, &ball(v, -1.0, 0.0)), 0.9);
        assert_eq!(ode_impact_friction(0.9, slip, h, &ball(0.0, v, 0.0)), 0.9);
    }

    #[test]
    fn spring_reproduces_ode_erp() {
        for (erp, cfm, h) in [(0.2, 1e-5, 0.01), (0.6, 0.0015, 0.01), (0.9, 0.001, 0.02)] {
            let s = ode_spring(erp, cfm, h);
            assert!((s.erp(h) - erp).abs() < 1e-12, "{erp} {cfm} {h}");
        }
    }

    #[test]
    fn seed_interaction_is_a_stiff_bouncy_contact() {
        // Wood–wood of the SimRob manual: Hardness 0.15, Bounciness 0.6 at dt 0.01.
        let s = contact_spring(0.15, 0.6, 0.01);
        assert!((s.omega - 200.0).abs() < 1e-9);
        assert!((s.zeta - 2.0 / 3.0).abs() < 1e-9);
        let e = s.restitution();
        assert!(e > 0.03 && e < 0.1, "{e}");
    }

    #[test]
    fn smaller_hardness_is_stiffer() {
        let soft = contact_spring(0.5, 0.6, 0.01);
        let hard = contact_spring(0.05, 0.6, 0.01);
        assert!(hard.omega > soft.omega);
    }

    #[test]
    fn ode_rebound_is_erp_of_the_depth_a_step() {
        // A rigid contact (no CFM) met a whole step deep gives back ERP of the speed.
        let r = ode_rebound(0.7, 0.0, 0.01, 1.0 / 0.6, -0.015, 1.5);
        assert!((r - 0.7 * 1.5).abs() < 1e-12, "{r}");
        // Met half a step deep: half of that.
        let r = ode_rebound(0.7, 0.0, 0.01, 1.0 / 0.6, -0.0075, 1.5);
        assert!((r - 0.35 * 1.5).abs() < 1e-12, "{r}");
        // Still 5 mm apart: met next step 10 mm deep.
        let a = ode_rebound(0.7, 0.001, 0.01, 1.0 / 0.6, 0.005, 1.5);
        let b = ode_rebound(0.7, 0.001, 0.01, 1.0 / 0.6, -0.01, 1.5);
        assert!((a - b).abs() < 1e-12 && a > 0.0);
    }

    #[test]
    fn ode_rebound_softened_by_cfm() {
        // The SimRob manual's metal ball (0.6 kg) on wood (CFM 0.1 × 0.01, ERP 0.7).
        let rigid = ode_rebound(0.7, 0.0, 0.01, 1.0 / 0.6, -0.015, 1.5);
        let soft = ode_rebound(0.7, 0.001, 0.01, 1.0 / 0.6, -0.015, 1.5);
        let kappa = (0.01 / 0.6) / (0.01 / 0.6 + 0.001);
        assert!((soft - (kappa * 0.7 * 1.5 - (1.0 - kappa) * 1.5)).abs() < 1e-12);
        assert!(soft < rigid);
        // Out of reach this step, receding, or against nothing that moves: no rebound.
        assert_eq!(ode_rebound(0.7, 0.001, 0.01, 1.0 / 0.6, 0.02, 1.5), 0.0);
        assert_eq!(ode_rebound(0.7, 0.001, 0.01, 1.0 / 0.6, -0.01, -1.0), 0.0);
        assert_eq!(ode_rebound(0.7, 0.001, 0.01, 0.0, -0.01, 1.0), 0.0);
    }

    #[test]
    fn slip_lowers_friction_monotonically() {
        assert_eq!(slip_friction(1.0, 0.0, 0.0), 1.0);
        assert!(slip_friction(1.0, 0.1, 0.1) < 1.0);
        assert!(slip_friction(1.0, 0.5, 0.5) < slip_friction(1.0, 0.1, 0.1));
    }
}
