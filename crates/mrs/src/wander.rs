//! A wandering controller for the Nomad-200: obstacle avoidance on the 16 sonars. It drives
//! ahead, steers away from the nearer side, slows down when something is close in front and
//! turns on the spot towards the more open side when it is very close. The side it picks
//! when something comes close is kept until the way ahead is clear again: a controller that
//! re-decides every cycle can dither between left and right in front of a corner and stand
//! still for ever. It never needs the bumpers — they are its alarm.

use crate::SONARS;

/// The wandering controller: its tuning and the side it is turning to.
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
    /// The side chosen when an obstacle came close (+1 right, −1 left, 0 none yet).
    side: f64,
}

impl Default for Wander {
    fn default() -> Self {
        Wander {
            cruise: 20.0,
            stop_distance: 14.0,
            slow_distance: 45.0,
            max_turn: 60.0,
            side: 0.0,
        }
    }
}

impl Wander {
    /// The velocities (forward in/s, turn deg/s, positive = right) for these sonar readings
    /// (sonar 0 ahead, then clockwise every 22.5°). Call it once per control cycle: it
    /// remembers which way it is turning around an obstacle.
    pub fn command(&mut self, sonars: &[u32; SONARS]) -> (f64, f64) {
        let s = |i: usize| f64::from(sonars[i % SONARS]);
        // Ahead: 15, 0, 1 (±22.5°). Sides: right 1–4, left 12–15.
        let front = s(15).min(s(0)).min(s(1));
        let front_wide = front.min(s(14)).min(s(2));
        let right: f64 = (1..=4).map(s).sum::<f64>() / 4.0;
        let left: f64 = (12..=15).map(s).sum::<f64>() / 4.0;
        if front >= self.slow_distance && front_wide >= self.stop_distance {
            self.side = 0.0; // clear ahead: decide afresh next time
        } else if self.side == 0.0 {
            self.side = if right >= left { 1.0 } else { -1.0 };
        }
        let turn_to_open = if self.side != 0.0 {
            self.side
        } else if right >= left {
            1.0
        } else {
            -1.0
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_turning_the_same_way_in_front_of_a_corner() {
        // Two readings taken alternately in front of a wall's end in the example map: a
        // controller that re-decides every cycle turned right on one and left on the other,
        // and the robot stood still from t = 40 s on.
        let a = [
            109, 110, 43, 34, 33, 40, 62, 110, 72, 85, 110, 110, 83, 17, 7, 110,
        ];
        let b = [
            110, 61, 40, 33, 34, 44, 74, 110, 74, 92, 110, 110, 45, 13, 8, 109,
        ];
        let mut w = Wander::default();
        let (v1, t1) = w.command(&a);
        let (v2, t2) = w.command(&b);
        assert_eq!((v1, v2), (0.0, 0.0), "both are too close to drive");
        assert!(t1 != 0.0 && t1 == t2, "turns {t1} then {t2}");
        // Once the way is clear it forgets the side.
        let clear = [110; SONARS];
        assert_eq!(w.command(&clear), (20.0, 0.0));
        assert_eq!(w.side, 0.0);
    }
}
