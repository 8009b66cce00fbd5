//! Iterations in slices, and the divergence guard.
//!
//! An iteration is `steps_per_iteration` physics steps. [`World::advance_slice`] runs at most
//! a given number of them and returns, so that a shell can answer its clients between slices
//! of a long iteration; the iteration counts (and is snapshotted) only once all its steps
//! ran. [`World::advance`] runs a whole iteration.
//!
//! **Divergence guard.** Before an iteration's first step the world notes every body's pose
//! (when finite); after its last step it asks the engine which bodies' states are no longer
//! finite ([`PhysicsBackend::non_finite_bodies`], a scan that builds no state). An entity with
//! a body whose position, orientation or velocity is no longer finite (the engine diverged) is
//! put back at its last finite pose, at rest, and listed in [`World::take_diverged`]: no
//! non-finite value ever leaves the world. Poses are noted by engine body index, so a body
//! moved or created by a request between iterations is put back where the request left it.

use simrob_physics::{BodyState, PhysicsBackend};
use simrob_protocol::EntityId;

use crate::World;

/// What [`World::advance_slice`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advance {
    /// Nothing: the simulation cannot advance now (not initialized, or in step mode with no
    /// step granted).
    Idle,
    /// Some steps of an iteration ran; more remain (see [`World::iteration_in_progress`]).
    Partial,
    /// An iteration completed.
    Completed,
}

/// An entity the physics diverged on, put back at rest where it was (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Diverged {
    /// The entity the physics gave a non-finite position or velocity.
    pub entity: EntityId,
    /// The iteration whose steps diverged; the entity is where it was before it.
    pub iteration: u64,
}

impl<P: PhysicsBackend + Default> World<P> {
    /// Whether an iteration has started and not yet completed (a slice ran, steps remain).
    /// Requests that change the world should wait until it completes.
    pub fn iteration_in_progress(&self) -> bool {
        self.slice_steps > 0
    }

    /// Runs at most `max_steps` (≥ 1) physics steps of the current iteration, starting one if
    /// none is under way and [`World::can_advance`].
    pub fn advance_slice(&mut self, max_steps: u32) -> Advance {
        if self.slice_steps == 0 {
            if !self.can_advance() {
                return Advance::Idle;
            }
            if self.modes.step_mode {
                self.pending_steps -= 1;
            }
            self.note_finite_states();
        }
        let dt = self.physics.params().timestep;
        let mut budget = max_steps.max(1);
        while self.slice_steps < self.modes.steps_per_iteration && budget > 0 {
            self.soccer
                .before_step(&mut self.physics, &self.entities, dt);
            self.physics.step();
            self.soccer
                .after_step(&mut self.physics, &self.entities, dt);
            self.sim_time += dt;
            self.slice_steps += 1;
            budget -= 1;
        }
        if self.slice_steps < self.modes.steps_per_iteration {
            return Advance::Partial;
        }
        self.slice_steps = 0;
        self.restore_diverged();
        self.iteration += 1;
        self.record_humanoid_poses();
        Advance::Completed
    }

    /// Entities put back since the last call (see the module docs), oldest first.
    pub fn take_diverged(&mut self) -> Vec<Diverged> {
        std::mem::take(&mut self.diverged)
    }

    /// Notes the pose of every body whose pose is finite now (a body whose pose is not keeps
    /// the last finite one noted).
    pub(crate) fn note_finite_states(&mut self) {
        self.physics.note_finite_poses();
    }

    fn restore_diverged(&mut self) {
        let mut bad = std::mem::take(&mut self.non_finite);
        bad.clear();
        self.physics.non_finite_bodies(&mut bad);
        if !bad.is_empty() {
            let entities: Vec<EntityId> = self
                .entities
                .iter()
                .filter(|(_, e)| e.bodies.iter().any(|b| bad.contains(&b.handle)))
                .map(|(id, _)| *id)
                .collect();
            for id in entities {
                self.put_back(id);
            }
        }
        self.non_finite = bad;
    }

    /// Puts every body of entity `id` back at its last finite pose, at rest, and reports it.
    fn put_back(&mut self, id: EntityId) {
        let Some(e) = self.entities.get(&id) else {
            return;
        };
        for b in &e.bodies {
            // Never seen finite (made non-finite before its first iteration): the origin.
            let (position, orientation) = self
                .physics
                .last_finite_pose(b.handle)
                .unwrap_or(([0.0; 3], [0.0, 0.0, 0.0, 1.0]));
            let at_rest = BodyState {
                position,
                orientation,
                linear_velocity: [0.0; 3],
                angular_velocity: [0.0; 3],
            };
            let _ = self.physics.set_body_state(b.handle, &at_rest);
        }
        self.diverged.push(Diverged {
            entity: id,
            iteration: self.iteration + 1,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{World, WorldConfig};
    use simrob_physics::BodyId;
    use simrob_protocol::{
        decode_datagram, CommandKeys, ControlRequest, EntityRequest, EntitySpec, MotorCommand,
    };

    /// The SumBot scene with the manual's ball (entity 8, 0.6 kg), initialized.
    fn soccer() -> World {
        let mut w = World::new(WorldConfig::default());
        let scene = include_str!("../../../scenarios/soccer.xml");
        for r in decode_datagram(scene.as_bytes(), &CommandKeys::default()) {
            w.apply(&r.expect("the scene decodes"))
                .expect("the scene applies");
        }
        w.apply_control(&ControlRequest::InitializeSimulation)
            .expect("initialize");
        w
    }

    /// Makes one coordinate (`axis`) of the position of an entity's body non-finite in the
    /// engine's state: the engine's f32 of it, found by its bytes, becomes NaN.
    fn poison(w: &mut World, entity: EntityId, body: u32, axis: usize) {
        let x = w.body_state(entity, body).expect("body").position[axis] as f32;
        let mut state = w.physics.export_state();
        let mut hits = 0;
        for i in 0..state.len().saturating_sub(3) {
            if state[i..i + 4] == x.to_le_bytes() {
                state[i..i + 4].copy_from_slice(&f32::NAN.to_le_bytes());
                hits += 1;
            }
        }
        assert!(hits > 0, "the coordinate is not in the engine state");
        w.physics.import_state(&state).expect("import");
        assert!(w.body_state(entity, body).unwrap().position[axis].is_nan());
    }

    /// Makes the engine's state of the falling ball non-finite: its height becomes NaN.
    fn poison_ball(w: &mut World) {
        poison(w, EntityId(8), 0, 2);
    }

    #[test]
    fn a_diverged_entity_is_put_back_at_rest_where_it_was_last_finite() {
        let mut w = soccer();
        // The ball falls (awake) for the first iterations.
        for _ in 0..9 {
            assert!(w.advance());
        }
        let ball_before = w.entity_pose(EntityId(8)).unwrap();
        assert!(w.advance());
        assert!(w.take_diverged().is_empty());
        let robot_before = w.entity_pose(EntityId(3)).unwrap();
        poison_ball(&mut w);
        assert!(w.advance());
        assert_eq!(
            w.take_diverged(),
            vec![Diverged {
                entity: EntityId(8),
                iteration: 11
            }]
        );
        // Back where it was last seen finite (when iteration 10 started), at rest.
        let ball = w.body_state(EntityId(8), 0).unwrap();
        assert!(ball.is_finite(), "{ball:?}");
        assert_eq!(ball.linear_velocity, [0.0; 3]);
        assert_eq!(ball.angular_velocity, [0.0; 3]);
        assert_eq!(w.entity_pose(EntityId(8)).unwrap(), ball_before);
        // Nobody else is put back; nothing non-finite reaches a snapshot.
        assert_ne!(w.entity_pose(EntityId(3)).unwrap(), robot_before);
        let snapshot = w.snapshot();
        assert!(snapshot.bodies.iter().all(|b| b
            .position
            .iter()
            .chain(&b.rotation)
            .chain(&b.linear_velocity)
            .chain(&b.angular_velocity)
            .all(|x| x.is_finite())));
        // What else the engine keeps of the fault is the engine's; the world stays finite.
        for _ in 0..5 {
            assert!(w.advance());
            assert!(w.body_state(EntityId(8), 0).unwrap().is_finite());
        }
    }

    #[test]
    fn a_body_moved_or_created_by_a_request_is_put_back_where_the_request_left_it() {
        let mut w = soccer();
        w.apply_control(&ControlRequest::SetStepsPerIteration(2))
            .unwrap();
        for _ in 0..5 {
            assert!(w.advance());
        }
        w.apply_entity(&EntityRequest::SetEntityPosition {
            entity_id: EntityId(8),
            position: [0.3, 0.2, 0.5],
        })
        .unwrap();
        w.apply_control(&ControlRequest::CreateEntity(EntitySpec::Ball {
            entity_id: EntityId(9),
            material: None,
            mass: Some(0.6),
            position: [-0.3, 0.1, 0.6],
            rotation: [0.0; 3],
            radius: 0.03,
        }))
        .unwrap();
        let (moved, created) = (
            w.entity_pose(EntityId(8)).unwrap(),
            w.entity_pose(EntityId(9)).unwrap(),
        );
        // Both diverge in the middle of the next iteration, after they fell for a step.
        assert_eq!(w.advance_slice(1), Advance::Partial);
        assert_ne!(w.entity_pose(EntityId(8)).unwrap(), moved);
        poison(&mut w, EntityId(8), 0, 2);
        poison(&mut w, EntityId(9), 0, 2);
        assert_eq!(w.advance_slice(1), Advance::Completed);
        let diverged: Vec<EntityId> = w.take_diverged().iter().map(|d| d.entity).collect();
        assert_eq!(diverged, [EntityId(8), EntityId(9)]);
        assert_eq!(w.entity_pose(EntityId(8)).unwrap(), moved);
        assert_eq!(w.entity_pose(EntityId(9)).unwrap(), created);
    }

    #[test]
    fn in_fast_mode_a_diverged_robot_is_put_back_with_its_driven_wheels() {
        let mut w = soccer();
        w.apply_control(&ControlRequest::SetFastMode(true)).unwrap();
        w.apply_entity(&EntityRequest::RobotMotorControl {
            entity_id: EntityId(3),
            motors: [(0, 3.0), (1, 5.0)]
                .map(|(wheel_joint_id, value)| MotorCommand {
                    wheel_joint_id,
                    value,
                })
                .to_vec(),
        })
        .unwrap();
        for _ in 0..50 {
            assert!(w.advance());
        }
        // The engine's pose query and its finiteness scan agree with its full states.
        let bodies: Vec<BodyId> = (0..w.physics.body_count())
            .map(|i| BodyId(i as u32))
            .collect();
        for &b in &bodies {
            let s = w.physics.body_state(b).unwrap();
            assert_eq!(w.physics.body_pose(b).unwrap(), (s.position, s.orientation));
        }
        let before: Vec<BodyState> = (0..3)
            .map(|b| w.body_state(EntityId(3), b).unwrap())
            .collect();
        // The chassis diverges in the middle of the next iteration.
        w.apply_control(&ControlRequest::SetStepsPerIteration(2))
            .unwrap();
        assert_eq!(w.advance_slice(1), Advance::Partial);
        poison(&mut w, EntityId(3), 0, 1);
        let mut found = Vec::new();
        w.physics.non_finite_bodies(&mut found);
        let expected: Vec<BodyId> = bodies
            .into_iter()
            .filter(|b| !w.physics.body_state(*b).unwrap().is_finite())
            .collect();
        assert_eq!(found, expected);
        // The chassis and both its wheels (driven surfaces of it in fast mode).
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(w.advance_slice(1), Advance::Completed);
        assert_eq!(
            w.take_diverged(),
            vec![Diverged {
                entity: EntityId(3),
                iteration: 51
            }]
        );
        for (b, was) in before.iter().enumerate() {
            let now = w.body_state(EntityId(3), b as u32).unwrap();
            assert!(now.is_finite(), "{now:?}");
            assert_eq!(now.linear_velocity, [0.0; 3]);
            // Set back through the engine, which normalises the chassis' quaternion (the last
            // f32 bit of it and of the wheels' poses that follow it).
            let pose = |s: &BodyState| s.position.into_iter().chain(s.orientation);
            let close = pose(&now).zip(pose(was)).all(|(a, b)| (a - b).abs() < 1e-6);
            assert!(close, "body {b}: {now:?} vs {was:?}");
        }
        assert_eq!(
            w.body_state(EntityId(3), 0).unwrap().position,
            before[0].position
        );
        let mut none = Vec::new();
        w.physics.non_finite_bodies(&mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn an_iteration_in_slices_is_the_same_iteration() {
        let mut whole = soccer();
        let mut sliced = soccer();
        for w in [&mut whole, &mut sliced] {
            w.apply_control(&ControlRequest::SetStepsPerIteration(25))
                .unwrap();
        }
        for _ in 0..8 {
            assert!(whole.advance());
            let mut slices = 0;
            loop {
                slices += 1;
                match sliced.advance_slice(10) {
                    Advance::Partial => {
                        assert!(sliced.iteration_in_progress());
                        assert!(sliced.can_advance());
                    }
                    Advance::Completed => break,
                    Advance::Idle => panic!("idle mid-iteration"),
                }
            }
            assert_eq!(slices, 3);
            assert!(!sliced.iteration_in_progress());
        }
        assert_eq!(whole.iteration(), sliced.iteration());
        assert_eq!(whole.sim_time(), sliced.sim_time());
        assert_eq!(whole.snapshot(), sliced.snapshot());
    }

    #[test]
    fn step_mode_grants_one_iteration_however_it_is_sliced() {
        let mut w = soccer();
        w.apply_control(&ControlRequest::SetStepMode(true)).unwrap();
        w.apply_control(&ControlRequest::SetStepsPerIteration(4))
            .unwrap();
        assert_eq!(w.advance_slice(3), Advance::Idle);
        w.apply_control(&ControlRequest::MakeStep).unwrap();
        assert_eq!(w.advance_slice(3), Advance::Partial);
        assert_eq!(w.advance_slice(3), Advance::Completed);
        assert_eq!(w.iteration(), 1);
        assert_eq!(w.advance_slice(3), Advance::Idle);
    }
}
