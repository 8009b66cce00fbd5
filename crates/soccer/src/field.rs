//! The RoboCup Humanoid **KidSize** field: dimensions, landmarks, goals, and the SimRob
//! entities that build it.
//!
//! World frame: the centre spot at the origin, **X along the field's length** (the cyan team
//! defends the goal at −X and attacks +X; magenta the opposite), **Y across** (left when
//! looking towards +X), Z up. The carpet's surface is z = 0. Metres.
//!
//! | item | value | source |
//! |---|---|---|
//! | field length × width | 9 × 6 m | FutRob's table of KidSize dimensions (RoboCup 2014 rules) |
//! | goal depth, inner width | 0.50 m, 1.80 m | same table |
//! | goal area length × width | 0.60 × 3.45 m | same table |
//! | penalty mark from the goal line | 1.80 m | same table |
//! | centre circle diameter | 1.50 m | same table |
//! | border strip (run-off) | 0.70 m | same table (its row "I") |
//! | line width | 0.05 m | RoboCup Humanoid rules (not in FutRob) |
//! | goal posts, crossbar | Ø 0.10 m, crossbar's lower edge 0.90 m | RoboCup KidSize rules (not in FutRob) |
//! | landmark poles | Ø 0.20 m, 0.45 m tall, on the halfway line 0.40 m outside each touch line | RoboCup Humanoid rules of FutRob's time (FutRob names them, gives no place) |
//! | ball | Ø 0.10 m, 0.10 kg | derived from FutRob's vision facts (150 px minimum blob, ≈ 200 cm ball range, 280 px focal length); FutRob gives no size |
//!
//! The lines are flat boxes whose top lies [`PAINT_DEPTH`] (1 cm) below the carpet's surface:
//! the ball and the robots never touch them (a box at the surface, or within the engine's contact prediction distance of it, would catch a rolling ball on its edges),
//! and the viewer draws them on the carpet.

use simrob_protocol::{
    BodySpec, Contact, ControlRequest, EntityId, EntitySpec, Interaction, Material, MaterialId,
    Shape,
};

/// Material ids of the KidSize scene.
pub mod material {
    use simrob_protocol::MaterialId;

    /// The green carpet.
    pub const CARPET: MaterialId = MaterialId(10);
    /// White line paint (just under the carpet's surface, drawn on it).
    pub const LINE: MaterialId = MaterialId(11);
    /// Goal posts, crossbars, nets and landmark poles.
    pub const POST: MaterialId = MaterialId(12);
    /// The ball.
    pub const BALL: MaterialId = MaterialId(13);
    /// The cyan team's humanoids' bodies (the team's colour is a material: the viewer draws
    /// it).
    pub const HUMANOID_CYAN: MaterialId = MaterialId(14);
    /// The magenta team's humanoids' bodies.
    pub const HUMANOID_MAGENTA: MaterialId = MaterialId(15);
}

/// The field's entity id in the KidSize scene.
pub const FIELD_ENTITY: EntityId = EntityId(1);
/// The ball's entity id in the KidSize scene.
pub const BALL_ENTITY: EntityId = EntityId(2);

/// Team colour (RoboCup team markers). Cyan defends the goal at −X, magenta the goal at +X.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Team {
    /// Cyan markers: defends the goal at −X, attacks +X.
    Cyan,
    /// Magenta markers: defends the goal at +X, attacks −X.
    Magenta,
}

impl Team {
    /// `cyan` or `magenta`.
    pub fn as_str(self) -> &'static str {
        match self {
            Team::Cyan => "cyan",
            Team::Magenta => "magenta",
        }
    }
    /// Parses `cyan`/`magenta` (any letter case).
    pub fn parse(s: &str) -> Option<Team> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cyan" => Some(Team::Cyan),
            "magenta" => Some(Team::Magenta),
            _ => None,
        }
    }
    /// The other team.
    pub fn other(self) -> Team {
        match self {
            Team::Cyan => Team::Magenta,
            Team::Magenta => Team::Cyan,
        }
    }
    /// The material of this team's humanoids in the KidSize scene.
    pub fn material(self) -> MaterialId {
        match self {
            Team::Cyan => material::HUMANOID_CYAN,
            Team::Magenta => material::HUMANOID_MAGENTA,
        }
    }
    /// −1 for cyan (own goal at −X), +1 for magenta.
    pub fn own_side(self) -> f64 {
        match self {
            Team::Cyan => -1.0,
            Team::Magenta => 1.0,
        }
    }
}

/// A line segment of paint on the carpet (x1, y1) → (x2, y2), metres.
pub type Segment = [f64; 4];

/// The KidSize field's dimensions (metres). `Default` is the table above.
#[derive(Debug, Clone, PartialEq)]
pub struct KidSizeField {
    /// Length between the goal lines, along X (m); default 9.
    pub length: f64,
    /// Width between the touch lines, along Y (m); default 6.
    pub width: f64,
    /// Depth of the goal behind the goal line, to the back of the net (m); default 0.50.
    pub goal_depth: f64,
    /// Inner width between the posts (m); default 1.80.
    pub goal_width: f64,
    /// Height of the crossbar's lower edge (m); default 0.90.
    pub goal_height: f64,
    /// Diameter of the goal posts and crossbar (m); default 0.10.
    pub post_diameter: f64,
    /// Goal area's extent from the goal line into the field, along X (m); default 0.60.
    pub goal_area_length: f64,
    /// Goal area's width across the field, along Y (m); default 3.45.
    pub goal_area_width: f64,
    /// From the goal line to the penalty mark (m); default 1.80.
    pub penalty_mark: f64,
    /// Diameter of the centre circle (m); default 1.50.
    pub centre_circle_diameter: f64,
    /// Run-off carpet beyond the lines on every side (m); default 0.70.
    pub border_strip: f64,
    /// Width of the painted lines (m); default 0.05.
    pub line_width: f64,
    /// Diameter of the landmark poles (m); default 0.20.
    pub landmark_diameter: f64,
    /// Height of the landmark poles (m); default 0.45.
    pub landmark_height: f64,
    /// From the touch line to the landmark pole's centre (m); default 0.40.
    pub landmark_outside: f64,
    /// Radius of the ball (m); default 0.05.
    pub ball_radius: f64,
    /// Mass of the ball (kg); default 0.10.
    pub ball_mass: f64,
}

impl Default for KidSizeField {
    fn default() -> Self {
        KidSizeField {
            length: 9.0,
            width: 6.0,
            goal_depth: 0.5,
            goal_width: 1.8,
            goal_height: 0.9,
            post_diameter: 0.1,
            goal_area_length: 0.6,
            goal_area_width: 3.45,
            penalty_mark: 1.8,
            centre_circle_diameter: 1.5,
            border_strip: 0.7,
            line_width: 0.05,
            landmark_diameter: 0.2,
            landmark_height: 0.45,
            landmark_outside: 0.4,
            ball_radius: 0.05,
            ball_mass: 0.1,
        }
    }
}

/// How far below the carpet's surface the painted lines' top lies (m).
pub const PAINT_DEPTH: f64 = 0.01;

/// Rolling-resistance coefficient of the KidSize ball on the carpet (deceleration = C·g).
/// With the kick speed of [`crate::humanoid::kick_speed`] the ball rolls the motion table's
/// `kick_distance_cm` (105 cm, FutRob's "about 110 cm at most") and stops.
pub const CARPET_ROLLING_RESISTANCE: f64 = 0.06;

impl KidSizeField {
    /// x of the goal line of `team`'s own goal.
    pub fn own_goal_x(&self, team: Team) -> f64 {
        team.own_side() * self.length / 2.0
    }

    /// Centres (x, y) of the two posts of the goal on side `sign` (−1 or +1), the post at −Y
    /// first. Posts stand on the goal line, outside the inner width.
    pub fn posts(&self, sign: f64) -> [[f64; 2]; 2] {
        let x = sign * self.length / 2.0;
        let y = self.goal_width / 2.0 + self.post_diameter / 2.0;
        [[x, -y], [x, y]]
    }

    /// Centres (x, y) of the landmark poles, the one at −Y first.
    pub fn landmarks(&self) -> [[f64; 2]; 2] {
        let y = self.width / 2.0 + self.landmark_outside;
        [[0.0, -y], [0.0, y]]
    }

    /// The penalty mark in front of the goal on side `sign`.
    pub fn penalty_mark_at(&self, sign: f64) -> [f64; 2] {
        [sign * (self.length / 2.0 - self.penalty_mark), 0.0]
    }

    /// The painted lines as segments (centre lines of the paint): boundary, halfway line, goal
    /// areas, penalty marks (a short cross), the centre mark, and the centre circle as 24 chords.
    pub fn lines(&self) -> Vec<Segment> {
        let (hx, hy) = (self.length / 2.0, self.width / 2.0);
        let mut out = vec![
            [-hx, -hy, hx, -hy],
            [-hx, hy, hx, hy],
            [-hx, -hy, -hx, hy],
            [hx, -hy, hx, hy],
            [0.0, -hy, 0.0, hy],
        ];
        for sign in [-1.0, 1.0] {
            let gx = sign * hx;
            let ax = sign * (hx - self.goal_area_length);
            let ay = self.goal_area_width / 2.0;
            out.push([ax, -ay, ax, ay]);
            out.push([gx, -ay, ax, -ay]);
            out.push([gx, ay, ax, ay]);
            let [px, py] = self.penalty_mark_at(sign);
            out.push([px - 0.05, py, px + 0.05, py]);
            out.push([px, py - 0.05, px, py + 0.05]);
        }
        out.push([-0.05, 0.0, 0.05, 0.0]);
        let r = self.centre_circle_diameter / 2.0;
        let n = 24;
        for i in 0..n {
            let a0 = std::f64::consts::TAU * i as f64 / n as f64;
            let a1 = std::f64::consts::TAU * (i + 1) as f64 / n as f64;
            out.push([r * a0.cos(), r * a0.sin(), r * a1.cos(), r * a1.sin()]);
        }
        out
    }

    /// The materials and their interactions (SimRob `Register_Materials_Interactions`).
    pub fn materials_request(&self) -> ControlRequest {
        use material::*;
        let m = |id, name: &str| Material {
            id,
            name: name.to_string(),
        };
        let i = |a, b, hardness, bounciness, friction| Interaction {
            material_1: a,
            material_2: b,
            contact: Contact {
                hardness,
                bounciness,
                slip1: 0.0,
                slip2: 0.0,
                friction,
            },
        };
        ControlRequest::RegisterMaterialsInteractions {
            materials: vec![
                m(CARPET, "KidSize carpet"),
                m(LINE, "Line paint"),
                m(POST, "Goal post"),
                m(BALL, "KidSize ball"),
                m(HUMANOID_CYAN, "Humanoid, cyan team"),
                m(HUMANOID_MAGENTA, "Humanoid, magenta team"),
            ],
            interactions: vec![
                // The ball on carpet and paint: no bounce, enough grip to roll.
                i(BALL, CARPET, 0.05, 0.9, 0.8),
                i(BALL, LINE, 0.05, 0.9, 0.8),
                // Posts and robots: a stiff, somewhat lively knock.
                i(BALL, POST, 0.02, 0.4, 0.3),
                i(BALL, HUMANOID_CYAN, 0.02, 0.5, 0.5),
                i(BALL, HUMANOID_MAGENTA, 0.02, 0.5, 0.5),
            ],
        }
    }

    /// The field entity: carpet, line paint, goals (posts, crossbar, net frame) and landmark
    /// poles, all static.
    pub fn field_entity(&self, entity_id: EntityId) -> EntitySpec {
        use material::*;
        let mut bodies = Vec::new();
        let mut add =
            |shape: Shape, material: MaterialId, position: [f64; 3], rotation: [f64; 3]| {
                let id = bodies.len() as u32;
                bodies.push(BodySpec {
                    id,
                    shape,
                    material: Some(material),
                    mass: Some(-1.0),
                    position,
                    rotation,
                });
            };
        let carpet_t = 0.1;
        add(
            Shape::Box {
                size: [
                    self.length + 2.0 * self.border_strip,
                    self.width + 2.0 * self.border_strip,
                    carpet_t,
                ],
            },
            CARPET,
            [0.0, 0.0, -carpet_t / 2.0],
            [0.0; 3],
        );
        let paint_t = 0.002;
        for [x1, y1, x2, y2] in self.lines() {
            let (dx, dy) = (x2 - x1, y2 - y1);
            let len = (dx * dx + dy * dy).sqrt();
            add(
                Shape::Box {
                    size: [len + self.line_width, self.line_width, paint_t],
                },
                LINE,
                [
                    (x1 + x2) / 2.0,
                    (y1 + y2) / 2.0,
                    -paint_t / 2.0 - PAINT_DEPTH,
                ],
                [0.0, 0.0, dy.atan2(dx)],
            );
        }
        let r = self.post_diameter / 2.0;
        let post_len = self.goal_height + self.post_diameter;
        for sign in [-1.0, 1.0] {
            for [x, y] in self.posts(sign) {
                add(
                    Shape::Cylinder {
                        radius: r,
                        length: post_len,
                    },
                    POST,
                    [x, y, post_len / 2.0],
                    [0.0; 3],
                );
            }
            let x = sign * self.length / 2.0;
            let span = self.goal_width + 2.0 * self.post_diameter;
            // Crossbar along Y (a cylinder's axis is its local Z; Rx(π/2) lays it along Y).
            add(
                Shape::Cylinder {
                    radius: r,
                    length: span,
                },
                POST,
                [x, 0.0, self.goal_height + r],
                [std::f64::consts::FRAC_PI_2, 0.0, 0.0],
            );
            // Net frame: back and two sides, thin boxes up to the crossbar.
            let back_x = sign * (self.length / 2.0 + self.goal_depth);
            let net_t = 0.02;
            let net_h = self.goal_height;
            add(
                Shape::Box {
                    size: [net_t, span, net_h],
                },
                POST,
                [back_x, 0.0, net_h / 2.0],
                [0.0; 3],
            );
            for side in [-1.0, 1.0] {
                add(
                    Shape::Box {
                        size: [self.goal_depth, net_t, net_h],
                    },
                    POST,
                    [
                        sign * (self.length / 2.0 + self.goal_depth / 2.0),
                        side * (self.goal_width / 2.0 + self.post_diameter / 2.0),
                        net_h / 2.0,
                    ],
                    [0.0; 3],
                );
            }
        }
        for [x, y] in self.landmarks() {
            add(
                Shape::Cylinder {
                    radius: self.landmark_diameter / 2.0,
                    length: self.landmark_height,
                },
                POST,
                [x, y, self.landmark_height / 2.0],
                [0.0; 3],
            );
        }
        EntitySpec::Field {
            entity_id,
            bodies,
            joints: Vec::new(),
        }
    }

    /// The ball resting at (x, y) on the carpet.
    pub fn ball_entity(&self, entity_id: EntityId, x: f64, y: f64) -> EntitySpec {
        EntitySpec::Ball {
            entity_id,
            material: Some(material::BALL),
            mass: Some(self.ball_mass),
            position: [x, y, self.ball_radius],
            rotation: [0.0; 3],
            radius: self.ball_radius,
        }
    }

    /// The requests of the bundled scenario `scenarios/soccer/kidsize.xml`: materials, the
    /// ball's rolling resistance on carpet and paint, the field (entity [`FIELD_ENTITY`]) and
    /// the ball on the centre spot (entity [`BALL_ENTITY`]).
    pub fn scene_requests(&self) -> Vec<ControlRequest> {
        let rolling = |surface| ControlRequest::SetRollingResistance {
            material_1: material::BALL,
            material_2: surface,
            coefficient: CARPET_ROLLING_RESISTANCE,
        };
        vec![
            self.materials_request(),
            rolling(material::CARPET),
            rolling(material::LINE),
            ControlRequest::CreateEntity(self.field_entity(FIELD_ENTITY)),
            ControlRequest::CreateEntity(self.ball_entity(BALL_ENTITY, 0.0, 0.0)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posts_and_marks_are_where_the_rules_put_them() {
        let f = KidSizeField::default();
        let [a, b] = f.posts(1.0);
        assert_eq!(a[0], 4.5);
        // Inner faces 1.80 m apart.
        assert!(((b[1] - a[1]) - f.post_diameter - 1.8).abs() < 1e-12);
        assert_eq!(f.penalty_mark_at(-1.0), [-2.7, 0.0]);
        assert_eq!(f.own_goal_x(Team::Cyan), -4.5);
        assert_eq!(f.own_goal_x(Team::Magenta), 4.5);
    }

    #[test]
    fn field_is_static_bodies_only() {
        let f = KidSizeField::default();
        let EntitySpec::Field { bodies, joints, .. } = f.field_entity(EntityId(1)) else {
            panic!("not a field")
        };
        assert!(joints.is_empty());
        assert!(bodies.iter().all(|b| b.mass == Some(-1.0)));
        // carpet + lines + 2 × (2 posts + crossbar + 3 net boxes) + 2 poles
        assert_eq!(bodies.len(), 1 + f.lines().len() + 12 + 2);
    }
}
