//! The bundled systems. Each is a plain struct implementing [`crate::System`]; a scenario
//! picks the ones it needs, in order.

mod battery;
mod claw;
mod clock;
mod collision;
mod movement;
mod proximity;

pub use battery::BatterySystem;
pub use claw::ClawSystem;
pub use clock::ClockSystem;
pub use collision::{CollisionSystem, StopOnCollision};
pub use movement::MovementSystem;
pub use proximity::ProximitySystem;
