//! A wandering controller for the Nomad-200: obstacle avoidance on the 16 sonars. It drives
//! ahead, steers away from the nearer side, slows down when something is close in front and
//! turns on the spot towards the more open side when it is very close. It never needs the
//! bumpers — they are its alarm.

use crate::SONARS;

/// Tuning of [`Wander`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wander {
    /// Cruising speed, in/s.
    pub cruise: f64,
    /// Below this front reading (inches from the surface) it turns on the spot.
    pub stop_distance: f64,
    /// Below this front reading it slows down.
    pub slow_distance: f64,
    /// Largest turn rate, deg/s.
    pub max_turn: f64,
}

impl Default for Wander {
    fn default() -> Self {
        Wander {
            cruise: 20.0,
            stop_distance: 14.0,
            slow_distance: 45.0,
            max_turn: 60.0,
        }
    }
}

impl Wander {
    /// The velocities (forward in/s, turn deg/s, positive = right) for these sonar readings
    /// (sonar 0 ahead, then clockwise every 22.5°).
    pub fn command(&self, sonars: &[u32; SONARS]) -> (f64, f64) {
        let s = |i: usize| f64::from(sonars[i % SONARS]);
        // Ahead: 15, 0, 1 (±22.5°). Sides: right 1–4, left 12–15.
        let front = s(15).min(s(0)).min(s(1));
        let front_wide = front.min(s(14)).min(s(2));
        let right: f64 = (1..=4).map(s).sum::<f64>() / 4.0;
        let left: f64 = (12..=15).map(s).sum::<f64>() / 4.0;
        let turn_to_open = if right >= left { 1.0 } else { -1.0 };
        if front < self.stop_distance || front_wide < self.stop_distance * 0.6 {
            return (0.0, turn_to_open * self.max_turn);
        }
        // Steer away from the nearer side, harder the closer it is.
        let near_right = s(2).min(s(3)).min(s(4));
        let near_left = s(12).min(s(13)).min(s(14));
        let push = |d: f64| (1.0 - (d - 5.0) / 40.0).clamp(0.0, 1.0);
        let mut turn = (push(near_right) - push(near_left)) * -self.max_turn;
        if front < self.slow_distance {
            turn += turn_to_open * self.max_turn * (1.0 - front / self.slow_distance);
        }
        let speed = if front < self.slow_distance {
            self.cruise
                * ((front - self.stop_distance) / (self.slow_distance - self.stop_distance))
                    .clamp(0.2, 1.0)
        } else {
            self.cruise
        };
        (speed, turn.clamp(-self.max_turn, self.max_turn))
    }
}
