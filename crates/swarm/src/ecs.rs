//! Entities and components: a struct-of-arrays store.
//!
//! An entity is an index ([`EntityId`]); entity 0 is the world entity that carries the
//! world-level components (the map, the navigation graph). Every component type has a
//! [`Column`]: a dense `Vec` indexed by entity plus a presence flag, so a system's hot loop
//! walks contiguous memory in entity order, and adding or removing a component at run time
//! (a failing sensor, a path handed to a robot) is a flag flip — no archetype moves, no
//! allocation, and iteration order is always entity order, which keeps runs deterministic.
//! Ids are never reused within a run.
//!
//! The built-in components are fields of [`SwarmWorld`] so systems borrow disjoint columns at
//! once (`world.pose` mutably while reading `world.vel`); every other component — the
//! drone swarm's [`crate::drones::Drone`] as much as one defined in another crate — lives
//! in a typed column reached through [`SwarmWorld::custom`] / [`SwarmWorld::custom_mut`], or
//! [`SwarmWorld::with_custom`] to use it beside the built-in columns.

use std::any::{Any, TypeId};
use std::collections::HashMap;

use serde::Serialize;

use crate::geom::Shape;

/// An entity: an index into every component column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
pub struct EntityId(pub u32);

impl EntityId {
    /// The world entity, holder of the world-level components.
    pub const WORLD: EntityId = EntityId(0);

    /// The index of this entity in the columns.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for EntityId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// A name another entity already has (entity names are unique: scripts and routes find
/// entities by them).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the name {name:?} is already used by entity {other}")]
pub struct NameTaken {
    /// The name asked for.
    pub name: String,
    /// The entity that has it.
    pub other: EntityId,
}

/// The range `(x0, x1, y0, y1)` in which the movement system keeps the centre of a shape of
/// half extents `(hw, hh)` on a map of size `(width, height)` (the middle, on a map smaller
/// than the shape).
pub(crate) fn centre_range((width, height): (f64, f64), hw: f64, hh: f64) -> (f64, f64, f64, f64) {
    (
        hw.min(width * 0.5),
        (width - hw).max(width * 0.5),
        hh.min(height * 0.5),
        (height - hh).max(height * 0.5),
    )
}

/// One component type for every entity: dense values plus presence flags.
#[derive(Clone, Debug, Default)]
pub struct Column<T> {
    data: Vec<T>,
    present: Vec<bool>,
    count: usize,
}

impl<T: Default> Column<T> {
    fn ensure(&mut self, i: usize) {
        if i >= self.data.len() {
            self.data.resize_with(i + 1, T::default);
            self.present.resize(i + 1, false);
        }
    }

    /// Adds (or replaces) the component of `e`; returns the one it replaced.
    pub fn insert(&mut self, e: EntityId, value: T) -> Option<T> {
        let i = e.index();
        self.ensure(i);
        let old = std::mem::replace(&mut self.data[i], value);
        if self.present[i] {
            Some(old)
        } else {
            self.present[i] = true;
            self.count += 1;
            None
        }
    }

    /// Removes the component of `e`.
    pub fn remove(&mut self, e: EntityId) -> Option<T> {
        let i = e.index();
        if self.has(e) {
            self.present[i] = false;
            self.count -= 1;
            Some(std::mem::take(&mut self.data[i]))
        } else {
            None
        }
    }
}

impl<T> Column<T> {
    /// Whether `e` has this component.
    #[inline]
    pub fn has(&self, e: EntityId) -> bool {
        self.present.get(e.index()).copied().unwrap_or(false)
    }

    /// The component of `e`.
    #[inline]
    pub fn get(&self, e: EntityId) -> Option<&T> {
        let i = e.index();
        if self.has(e) {
            self.data.get(i)
        } else {
            None
        }
    }

    /// The component of `e`, mutably.
    #[inline]
    pub fn get_mut(&mut self, e: EntityId) -> Option<&mut T> {
        let i = e.index();
        if self.has(e) {
            self.data.get_mut(i)
        } else {
            None
        }
    }

    /// How many entities have this component.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no entity has this component.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// `(entity, component)` in entity order.
    pub fn iter(&self) -> impl Iterator<Item = (EntityId, &T)> + '_ {
        self.data
            .iter()
            .zip(&self.present)
            .enumerate()
            .filter(|(_, (_, p))| **p)
            .map(|(i, (v, _))| (EntityId(i as u32), v))
    }

    /// `(entity, component)` in entity order, mutably.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (EntityId, &mut T)> + '_ {
        self.data
            .iter_mut()
            .zip(&self.present)
            .enumerate()
            .filter(|(_, (_, p))| **p)
            .map(|(i, (v, _))| (EntityId(i as u32), v))
    }

    /// The entities that have this component, in order.
    pub fn ids(&self) -> Vec<EntityId> {
        self.iter().map(|(e, _)| e).collect()
    }

    /// The raw columns for hot loops: values and presence flags (same length; may be shorter
    /// than the number of entities).
    #[inline]
    pub fn raw(&self) -> (&[T], &[bool]) {
        (&self.data, &self.present)
    }

    /// The raw columns, values mutable.
    #[inline]
    pub fn raw_mut(&mut self) -> (&mut [T], &[bool]) {
        (&mut self.data, &self.present)
    }
}

/// A column of any component type, as the world keeps the ones that are not built in.
trait AnyColumn: Any + Send + Sync {
    fn remove_entity(&mut self, e: EntityId);
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Default + Send + Sync + 'static> AnyColumn for Column<T> {
    fn remove_entity(&mut self, e: EntityId) {
        self.remove(e);
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Position and heading (radians) of an entity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SwarmPose {
    /// x, map units (right).
    pub x: f64,
    /// y, map units (down).
    pub y: f64,
    /// Heading, radians.
    pub theta: f64,
}

/// Velocity in map units per second and angular velocity in rad/s. Systems other than
/// movement set this; only the movement system writes [`SwarmPose`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Velocity {
    /// x velocity, map units per second.
    pub x: f64,
    /// y velocity, map units per second.
    pub y: f64,
    /// Angular velocity, radians per second.
    pub w: f64,
}

impl Velocity {
    /// Whether the entity is moving.
    #[inline]
    pub fn is_moving(&self) -> bool {
        self.x != 0.0 || self.y != 0.0 || self.w != 0.0
    }
}

/// A proximity (sonar-like) sensor: `beams` rays spread evenly around the robot starting at
/// its heading, each reading the distance from the robot's centre to the first collider
/// hit, or `range` when nothing is within range.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Proximity {
    /// Number of beams.
    pub beams: u16,
    /// Range of each beam, map units.
    pub range: f64,
    /// Read every `period` frames (1 = every frame).
    pub period: u32,
    /// The latest distance read by each beam, map units (`range` when nothing was hit).
    pub readings: Vec<f64>,
    /// How many times the readings were refreshed.
    pub updates: u64,
    /// What the readings were computed for: frame, pose and range (the proximity system
    /// reuses them when nothing within range changed).
    pub(crate) valid: Option<(u64, SwarmPose, f64)>,
}

impl Proximity {
    /// A sensor with `beams` beams of `range`, read every frame.
    pub fn new(beams: u16, range: f64) -> Self {
        Proximity {
            beams,
            range,
            period: 1,
            readings: vec![range; beams as usize],
            updates: 0,
            valid: None,
        }
    }
}

/// A claw that grabs items within `range` (at most `capacity` at a time).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Claw {
    /// How far from the robot's centre an item can be grabbed, map units.
    pub range: f64,
    /// How many items it holds at most.
    pub capacity: u32,
    /// Seconds a grab or a drop takes.
    pub duration: f64,
    /// The items held, in the order they were grabbed.
    pub held: Vec<EntityId>,
}

/// Something a claw can carry. While carried, movement keeps it on its carrier.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Item {
    /// The claw holding it, if any.
    pub carried_by: Option<EntityId>,
}

/// A battery: drains at `idle_drain` per second plus `move_drain` per map unit travelled.
/// At zero the robot stops for good and a `BatteryEmpty` error is raised.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Battery {
    /// Full charge.
    pub capacity: f64,
    /// Charge left (0 to `capacity`).
    pub charge: f64,
    /// Charge drained per second, moving or not.
    pub idle_drain: f64,
    /// Charge drained per map unit travelled.
    pub move_drain: f64,
    /// Set once the charge reached zero: the robot has stopped for good.
    pub empty: bool,
}

/// A route being followed: waypoints, the next one, the cruise speed (units/s).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Path {
    /// The waypoints `(x, y)`, map units.
    pub points: Vec<(f64, f64)>,
    /// Index in `points` of the waypoint headed for.
    pub next: usize,
    /// Cruise speed, map units per second.
    pub speed: f64,
}

/// What makes a robot navigate: its cruise speed in map units per second and, when
/// `keep_clear` is positive, the gap it keeps to robots ahead in its lane that face its way (it slows down from `keep_clear + 10` and stops at `keep_clear`) — meant
/// for one-way lanes; on two-way paths two robots face to face would wait for each other.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Navigator {
    /// Cruise speed, map units per second.
    pub speed: f64,
    /// Gap kept to the robot ahead in the lane, map units (0: none).
    pub keep_clear: f64,
}

/// World-level data (on entity 0): the map's size, its obstacle map, and one value of each
/// [`Resource`] type (the navigation graph, the spatial indexes, who holds each crossing…),
/// each type defined by the module that uses it, so this store imports none of them.
#[derive(Default)]
pub struct Resources {
    /// Map width and height; positions are clamped to `[0, width] × [0, height]`.
    pub width: f64,
    /// Map height (see `width`).
    pub height: f64,
    /// Set when a static collider was added or removed.
    pub statics_dirty: bool,
    /// A static obstacle map from the 2D engine (`simrob-flat`: vector text or BMP): robots
    /// collide with it (as their inscribed disc) and proximity beams stop at it. Contacts
    /// with it name the world entity (0).
    pub obstacles: Option<std::sync::Arc<simrob_flat::Map>>,
    typed: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

/// A world-level value kept in [`Resources`], one per type (as `bevy_ecs`'s resources).
pub trait Resource: Any + Default + Send + Sync {
    /// What the world holds before this resource is first written: its `Default`, one
    /// shared value (a `static` of the implementing module).
    fn initial() -> &'static Self;
}

impl Resources {
    /// The resource of type `R` ([`Resource::initial`] until it is first written).
    pub fn get<R: Resource>(&self) -> &R {
        match self.typed.get(&TypeId::of::<R>()) {
            Some(b) => b.downcast_ref::<R>().unwrap_or_else(|| R::initial()),
            None => R::initial(),
        }
    }

    /// The resource of type `R`, to change; created as its `Default` on first use.
    pub fn get_mut<R: Resource>(&mut self) -> &mut R {
        let entry = self
            .typed
            .entry(TypeId::of::<R>())
            .or_insert_with(|| Box::new(R::default()));
        match entry.downcast_mut::<R>() {
            Some(r) => r,
            None => unreachable!("resources are keyed by their own type id"),
        }
    }
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("statics_dirty", &self.statics_dirty)
            .field("obstacles", &self.obstacles.is_some())
            .field("typed", &self.typed.len())
            .finish()
    }
}

/// All entities and their components.
#[derive(Default)]
pub struct SwarmWorld {
    alive: Vec<bool>,
    kind_names: Vec<String>,
    names: HashMap<String, EntityId>,
    /// Entity type (index into [`SwarmWorld::kind_name`]).
    pub kind: Column<u16>,
    /// Entity name (POIs, items, named robots).
    pub name: Column<String>,
    /// Position and heading.
    pub pose: Column<SwarmPose>,
    /// Velocity (a mover has one).
    pub vel: Column<Velocity>,
    /// Collision shape (box or disc).
    pub collider: Column<Shape>,
    /// Proximity sensor.
    pub proximity: Column<Proximity>,
    /// Claw.
    pub claw: Column<Claw>,
    /// Marks something a claw can carry.
    pub item: Column<Item>,
    /// Battery.
    pub battery: Column<Battery>,
    /// The route being followed.
    pub path: Column<Path>,
    /// What makes the entity navigate (cruise speed, gap kept).
    pub navigator: Column<Navigator>,
    /// Marks a point of interest.
    pub poi: Column<()>,
    /// Entities that stop when they collide.
    pub stop_on_collision: Column<()>,
    custom: HashMap<TypeId, Box<dyn AnyColumn>>,
    /// World-level components.
    pub res: Resources,
}

impl std::fmt::Debug for SwarmWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwarmWorld")
            .field("entities", &self.len())
            .finish_non_exhaustive()
    }
}

impl SwarmWorld {
    /// A world of `width × height` map units holding only the world entity.
    pub fn new(width: f64, height: f64) -> Self {
        let mut w = SwarmWorld::default();
        w.res.width = width;
        w.res.height = height;
        w.spawn("world");
        w
    }

    /// Creates an entity of type `kind`.
    pub fn spawn(&mut self, kind: &str) -> EntityId {
        let e = EntityId(self.alive.len() as u32);
        self.alive.push(true);
        let k = self.intern_kind(kind);
        self.kind.insert(e, k);
        e
    }

    /// The index of a type name, added if new.
    pub fn intern_kind(&mut self, kind: &str) -> u16 {
        match self.kind_names.iter().position(|k| k == kind) {
            Some(i) => i as u16,
            None => {
                self.kind_names.push(kind.to_string());
                (self.kind_names.len() - 1) as u16
            }
        }
    }

    /// Type names, indexed by the values of [`SwarmWorld::kind`].
    pub fn kind_names(&self) -> &[String] {
        &self.kind_names
    }

    /// The type name of `e`.
    pub fn kind_name(&self, e: EntityId) -> &str {
        self.kind
            .get(e)
            .and_then(|k| self.kind_names.get(*k as usize))
            .map(String::as_str)
            .unwrap_or("")
    }

    /// Number of entity ids handed out (dead ones included).
    pub fn len(&self) -> usize {
        self.alive.len()
    }

    /// Whether the world has no entity at all (not even the world entity).
    pub fn is_empty(&self) -> bool {
        self.alive.is_empty()
    }

    /// Whether `e` exists.
    pub fn is_alive(&self, e: EntityId) -> bool {
        self.alive.get(e.index()).copied().unwrap_or(false)
    }

    /// Living entities in order.
    pub fn entities(&self) -> impl Iterator<Item = EntityId> + '_ {
        self.alive
            .iter()
            .enumerate()
            .filter(|(_, a)| **a)
            .map(|(i, _)| EntityId(i as u32))
    }

    /// Gives `e` a unique name; fails if another entity has it.
    pub fn set_name(&mut self, e: EntityId, name: &str) -> Result<(), NameTaken> {
        if let Some(other) = self.names.get(name) {
            if *other != e {
                return Err(NameTaken {
                    name: name.to_string(),
                    other: *other,
                });
            }
        }
        if let Some(old) = self.name.insert(e, name.to_string()) {
            self.names.remove(&old);
        }
        self.names.insert(name.to_string(), e);
        Ok(())
    }

    /// The entity called `name`.
    pub fn find(&self, name: &str) -> Option<EntityId> {
        self.names.get(name).copied()
    }

    /// A display name: the entity's name if it has one, else its id.
    pub fn label(&self, e: EntityId) -> String {
        match self.name.get(e) {
            Some(n) => n.clone(),
            None => e.to_string(),
        }
    }

    /// Adds a collider; static ones (entities without velocity) are indexed for the next frame.
    pub fn set_collider(&mut self, e: EntityId, shape: Shape) {
        self.collider.insert(e, shape);
        if !self.vel.has(e) {
            self.res.statics_dirty = true;
        }
    }

    /// Removes every component of `e` and retires its id.
    pub fn despawn(&mut self, e: EntityId) {
        if !self.is_alive(e) || e == EntityId::WORLD {
            return;
        }
        self.alive[e.index()] = false;
        if let Some(n) = self.name.remove(e) {
            self.names.remove(&n);
        }
        if self.collider.remove(e).is_some() && !self.vel.has(e) {
            self.res.statics_dirty = true;
        }
        self.kind.remove(e);
        self.pose.remove(e);
        self.vel.remove(e);
        self.proximity.remove(e);
        self.claw.remove(e);
        self.item.remove(e);
        self.battery.remove(e);
        self.path.remove(e);
        self.navigator.remove(e);
        self.poi.remove(e);
        self.stop_on_collision.remove(e);
        for column in self.custom.values_mut() {
            column.remove_entity(e);
        }
    }

    /// The column of a component type that is not built in (`None` until first used).
    pub fn custom<T: Default + Send + Sync + 'static>(&self) -> Option<&Column<T>> {
        self.custom
            .get(&TypeId::of::<T>())
            .and_then(|b| b.as_any().downcast_ref::<Column<T>>())
    }

    /// The column of a component type that is not built in, created on first use.
    pub fn custom_mut<T: Default + Send + Sync + 'static>(&mut self) -> &mut Column<T> {
        let entry = self
            .custom
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(Column::<T>::default()));
        match entry.as_any_mut().downcast_mut::<Column<T>>() {
            Some(c) => c,
            None => unreachable!("custom columns are keyed by their own type id"),
        }
    }

    /// Runs `f` with the column of `T` and the rest of the world borrowed at once (the
    /// column is out of the world meanwhile: `f` sees it only through its first argument).
    pub fn with_custom<T: Default + Send + Sync + 'static, R>(
        &mut self,
        f: impl FnOnce(&mut Column<T>, &mut SwarmWorld) -> R,
    ) -> R {
        let mut column = std::mem::take(self.custom_mut::<T>());
        let out = f(&mut column, self);
        *self.custom_mut::<T>() = column;
        out
    }

    /// Number of robots: entities that can move (have a velocity).
    pub fn robot_count(&self) -> usize {
        self.vel.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_come_and_go() {
        let mut w = SwarmWorld::new(100.0, 100.0);
        let a = w.spawn("robot");
        let b = w.spawn("robot");
        w.pose.insert(a, SwarmPose::default());
        w.proximity.insert(b, Proximity::new(4, 10.0));
        assert!(w.pose.has(a) && !w.pose.has(b));
        assert_eq!(w.proximity.ids(), vec![b]);
        assert!(w.proximity.remove(b).is_some());
        assert!(w.proximity.is_empty());
        w.set_name(a, "alpha").unwrap();
        assert!(w.set_name(b, "alpha").is_err());
        assert_eq!(w.find("alpha"), Some(a));
        #[derive(Default, Debug, PartialEq)]
        struct Temperature(f64);
        w.custom_mut::<Temperature>().insert(a, Temperature(21.0));
        assert_eq!(
            w.custom::<Temperature>().and_then(|c| c.get(a)),
            Some(&Temperature(21.0))
        );
        w.with_custom::<Temperature, _>(|t, w| {
            t.insert(b, Temperature(w.len() as f64));
        });
        assert_eq!(w.custom::<Temperature>().map(Column::len), Some(2));
        w.despawn(a);
        assert!(!w.is_alive(a) && w.find("alpha").is_none());
        assert!(!w.custom::<Temperature>().is_some_and(|c| c.has(a)));
        assert_eq!(w.entities().count(), 2);
    }
}
