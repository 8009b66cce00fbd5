//! Box–box contacts on the face of a much larger box (a floor, a wall) found as contacts with
//! that face's plane.
//!
//! A box resting on a floor box is the most common pair of a robot scene, and the general
//! box–box test (separating axes, then clipping the two touching features) is a fifth of a
//! fast-mode step. When the small box's bounding sphere, grown by the contact prediction
//! distance, crosses exactly one face plane of the large box and no other of its planes, the
//! large box and the half-space behind that face are the same set inside the sphere, so their
//! contacts with the small box are the same: the plane's are the vertices of the small box's
//! face, edge or corner facing the plane, each with its distance (all of them, as the box–box
//! test keeps them: the far ones are speculative contacts that hold a tipping box).
//!
//! A ball and a box (a wheel or the soccer ball on the floor, the next most common pair) get
//! rapier's own ball–convex contact, called on the two shapes' types rather than through the
//! shape-pair dispatch: the same manifold, 0.3 k fewer instructions a pair a step; when the
//! ball is over one face of the box (a wheel on the floor), its steps are done here, to the
//! same bits, with the contact written where it stays (0.1 k fewer again). Every other
//! pair (boxes of similar size, a box near an edge or a corner of the other, a box swallowed by
//! the other, any other shapes) goes to rapier's own contact generation.

use rapier3d::geometry::{ContactData, ContactManifoldData};
use rapier3d::parry::query::details::contact_manifold_convex_ball;
use rapier3d::parry::query::details::NormalConstraints;
use rapier3d::parry::query::{
    ClosestPoints, Contact, ContactManifold, ContactManifoldsWorkspace, NonlinearRigidMotion,
    PersistentQueryDispatcher, QueryDispatcher, ShapeCastHit, ShapeCastOptions, TrackedContact,
    Unsupported,
};
use rapier3d::parry::shape::{Ball, Cuboid, PackedFeatureId, Shape};
use rapier3d::prelude::{Pose, Real, Vector};

type Manifold = ContactManifold<ContactManifoldData, ContactData>;

/// A contact whose fields are then written one by one, where it stays.
#[inline]
fn blank_contact() -> TrackedContact<ContactData> {
    TrackedContact::new(
        Vector::ZERO,
        Vector::ZERO,
        PackedFeatureId::UNKNOWN,
        PackedFeatureId::UNKNOWN,
        0.0,
    )
}

/// The dispatcher that finds box-on-a-face contacts and leaves every other query to the next
/// one of its chain (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FaceContacts;

/// The face of `big` that `small` (posed by `pos12` in `big`'s frame) touches alone, as its
/// outward normal and its centre in `big`'s frame.
fn touched_face(
    pos12: &Pose,
    big: &Cuboid,
    small: &Cuboid,
    prediction: Real,
) -> Option<(Vector, Vector)> {
    let h = big.half_extents;
    let p = pos12.translation;
    let r = small.half_extents.length() + prediction;
    let i = (0..3).max_by(|&a, &b| (p[a].abs() - h[a]).total_cmp(&(p[b].abs() - h[b])))?;
    let s = if p[i] < 0.0 { -1.0 } else { 1.0 };
    let inside_other_slabs = (0..3).filter(|&j| j != i).all(|j| p[j].abs() + r <= h[j]);
    let crosses_face = s * p[i] + r >= h[i];
    let short_of_far_face = s * p[i] - r >= -h[i];
    if !(inside_other_slabs && crosses_face && short_of_far_face) {
        return None;
    }
    let mut normal = Vector::ZERO;
    normal[i] = s;
    Some((normal, normal * h[i]))
}

/// The contacts of `small` (posed by `pos` in `big`'s frame) with the face of `big` it alone
/// touches, if there is one; `flipped` when `big` is the pair's second shape. Every vertex of
/// the feature facing the plane is kept with its distance, as the box–box test keeps them.
fn plane_contacts(
    pos: &Pose,
    big: &Cuboid,
    small: &Cuboid,
    prediction: Real,
    m: &mut Manifold,
    flipped: bool,
) -> bool {
    let Some((normal, centre)) = touched_face(pos, big, small, prediction) else {
        return false;
    };
    let in_face = Pose::from_translation(-centre) * *pos;
    // What rapier's half-space contact (`contact_manifold_halfspace_pfm`) finds here, without
    // its new point buffer a call: each vertex of the face of `small` facing the plane within
    // `keep` of it (every one, as the box–box test keeps them) is a contact, and a vertex seen
    // at the previous call keeps its impulses.
    let keep = small.half_extents.length() * 2.0 + prediction;
    let normal_in_small = in_face.rotation.inverse() * normal;
    let face = small.support_face(-normal_in_small);
    let plane_face = PackedFeatureId::face(0);
    // The vertices kept, and the impulses each had at the previous call (found by features).
    let mut kept = [0; 4];
    let mut seen_data = [ContactData::default(); 4];
    let mut count = 0;
    for k in 0..face.num_vertices.min(kept.len()) {
        if (in_face * face.vertices[k]).dot(normal) > keep {
            continue;
        }
        let (fid1, fid2) = if flipped {
            (face.vids[k], plane_face)
        } else {
            (plane_face, face.vids[k])
        };
        if let Some(seen) = m.points.iter().find(|p| p.fid1 == fid1 && p.fid2 == fid2) {
            seen_data[count] = seen.data;
        }
        kept[count] = k;
        count += 1;
    }
    // The contacts are written field by field where they stay: built aside and copied in, each
    // was read back whole right after its parts were stored (a third of this function's time).
    m.points.truncate(count);
    while m.points.len() < count {
        m.points.push(blank_contact());
    }
    for (i, p) in m.points.iter_mut().enumerate() {
        let k = kept[i];
        let vertex = face.vertices[k];
        let in_big = in_face * vertex;
        let dist = in_big.dot(normal);
        let on_plane = in_big - normal * dist + centre;
        if flipped {
            (p.local_p1, p.local_p2) = (vertex, on_plane);
            (p.fid1, p.fid2) = (face.vids[k], plane_face);
        } else {
            (p.local_p1, p.local_p2) = (on_plane, vertex);
            (p.fid1, p.fid2) = (plane_face, face.vids[k]);
        }
        p.dist = dist;
        p.data = seen_data[i];
    }
    if flipped {
        m.local_n1 = -normal_in_small;
        m.local_n2 = normal;
    } else {
        m.local_n1 = normal;
        m.local_n2 = -normal_in_small;
    }
    true
}

/// The manifold of `ball` (its centre posed by `pos` in `cuboid`'s frame) and `cuboid` when the
/// centre is out of the box across exactly one pair of its face planes (a wheel or the ball over
/// the floor), `flipped` when the cuboid is the pair's second shape: rapier's ball–convex contact
/// (`contact_manifold_convex_ball`), the same operations in the same order, so the same bits,
/// but the contact written field by field where it stays rather than built aside and copied in
/// (a copy read back whole right after its parts were stored). `false`, and nothing written,
/// in every other case.
fn ball_over_face(
    pos: &Pose,
    cuboid: &Cuboid,
    ball: &Ball,
    prediction: Real,
    m: &mut Manifold,
    flipped: bool,
) -> bool {
    let centre = pos.translation;
    if !centre.is_finite() {
        return false;
    }
    // The centre's projection on the box (parry's `Aabb::do_project_local_point`).
    let (mins, maxs) = (-cuboid.half_extents, cuboid.half_extents);
    let shift = (mins - centre).max(Vector::ZERO) - (centre - maxs).max(Vector::ZERO);
    let i = match [shift.x != 0.0, shift.y != 0.0, shift.z != 0.0] {
        [true, false, false] => 0,
        [false, true, false] => 1,
        [false, false, true] => 2,
        _ => return false,
    };
    let on_box = centre + shift;
    let dpos = centre - on_box;
    let dist = dpos.length();
    if dist == 0.0 {
        return false;
    }
    // Out of reach (or a radius that is not a number): no contact, as rapier's.
    let in_reach = dist <= ball.radius + prediction;
    if !in_reach {
        m.clear();
        return true;
    }
    let n1 = dpos / dist;
    let n2 = pos.rotation.inverse() * -n1;
    let on_ball = n2 * ball.radius;
    let face = if on_box[i] < mins.midpoint(maxs)[i] {
        i + 3
    } else {
        i
    };
    let (box_face, ball_face) = (PackedFeatureId::face(face as u32), PackedFeatureId::face(0));
    if m.points.len() != 1 {
        m.points.clear();
        m.points.push(blank_contact());
    }
    let p = &mut m.points[0];
    if flipped {
        (p.local_p1, p.local_p2) = (on_ball, on_box);
        (p.fid1, p.fid2) = (ball_face, box_face);
        (m.local_n1, m.local_n2) = (n2, n1);
    } else {
        (p.local_p1, p.local_p2) = (on_box, on_ball);
        (p.fid1, p.fid2) = (box_face, ball_face);
        (m.local_n1, m.local_n2) = (n1, n2);
    }
    p.dist = dist - ball.radius;
    true
}

fn first_manifold(manifolds: &mut Vec<Manifold>) -> &mut Manifold {
    if manifolds.is_empty() {
        manifolds.push(ContactManifold::new());
    }
    &mut manifolds[0]
}

impl PersistentQueryDispatcher<ContactManifoldData, ContactData> for FaceContacts {
    fn contact_manifolds(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        prediction: Real,
        manifolds: &mut Vec<Manifold>,
        _workspace: &mut Option<ContactManifoldsWorkspace>,
    ) -> Result<(), Unsupported> {
        // A ball and a box: rapier's own ball–convex contact, called on the shapes' types
        // rather than through the shape-pair dispatch (the same manifold).
        let (box1, box2) = (g1.as_cuboid(), g2.as_cuboid());
        match (box1, box2) {
            (Some(c1), None) => {
                if let Some(b2) = g2.as_ball() {
                    let m = first_manifold(manifolds);
                    if !ball_over_face(pos12, c1, b2, prediction, m, false) {
                        contact_manifold_convex_ball(
                            pos12, c1, b2, None, None, prediction, m, false,
                        );
                    }
                    return Ok(());
                }
            }
            (None, Some(c2)) => {
                if let Some(b1) = g1.as_ball() {
                    let m = first_manifold(manifolds);
                    let pos21 = pos12.inverse();
                    if !ball_over_face(&pos21, c2, b1, prediction, m, true) {
                        contact_manifold_convex_ball(
                            &pos21, c2, b1, None, None, prediction, m, true,
                        );
                    }
                    return Ok(());
                }
            }
            _ => {}
        }
        let (Some(c1), Some(c2)) = (box1, box2) else {
            return Err(Unsupported);
        };
        if plane_contacts(pos12, c1, c2, prediction, first_manifold(manifolds), false)
            || plane_contacts(
                &pos12.inverse(),
                c2,
                c1,
                prediction,
                first_manifold(manifolds),
                true,
            )
        {
            return Ok(());
        }
        Err(Unsupported)
    }

    fn contact_manifold_convex_convex(
        &self,
        _pos12: &Pose,
        _g1: &dyn Shape,
        _g2: &dyn Shape,
        _normal_constraints1: Option<&dyn NormalConstraints>,
        _normal_constraints2: Option<&dyn NormalConstraints>,
        _prediction: Real,
        _manifold: &mut Manifold,
    ) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
}

/// Only contact manifolds are this dispatcher's; every other query is the next one's.
impl QueryDispatcher for FaceContacts {
    fn intersection_test(
        &self,
        _pos12: &Pose,
        _g1: &dyn Shape,
        _g2: &dyn Shape,
    ) -> Result<rapier3d::parry::query::ShapeIntersection, Unsupported> {
        Err(Unsupported)
    }

    fn distance(
        &self,
        _pos12: &Pose,
        _g1: &dyn Shape,
        _g2: &dyn Shape,
    ) -> Result<rapier3d::parry::query::ShapeDistance, Unsupported> {
        Err(Unsupported)
    }

    fn contact(
        &self,
        _pos12: &Pose,
        _g1: &dyn Shape,
        _g2: &dyn Shape,
        _prediction: Real,
    ) -> Result<Option<Contact>, Unsupported> {
        Err(Unsupported)
    }

    fn closest_points(
        &self,
        _pos12: &Pose,
        _g1: &dyn Shape,
        _g2: &dyn Shape,
        _max_dist: Real,
    ) -> Result<ClosestPoints, Unsupported> {
        Err(Unsupported)
    }

    fn cast_shapes(
        &self,
        _pos12: &Pose,
        _local_vel12: Vector,
        _g1: &dyn Shape,
        _g2: &dyn Shape,
        _options: ShapeCastOptions,
    ) -> Result<Option<ShapeCastHit>, Unsupported> {
        Err(Unsupported)
    }

    fn cast_shapes_nonlinear(
        &self,
        _motion1: &NonlinearRigidMotion,
        _g1: &dyn Shape,
        _motion2: &NonlinearRigidMotion,
        _g2: &dyn Shape,
        _start_time: Real,
        _end_time: Real,
        _stop_at_penetration: bool,
    ) -> Result<Option<ShapeCastHit>, Unsupported> {
        Err(Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rapier3d::parry::query::DefaultQueryDispatcher;
    use rapier3d::prelude::Rotation;

    fn manifold(
        d: &dyn PersistentQueryDispatcher<ContactManifoldData, ContactData>,
        pos12: &Pose,
        a: &Cuboid,
        b: &Cuboid,
    ) -> Result<Manifold, Unsupported> {
        let mut m = Vec::new();
        d.contact_manifolds(pos12, a, b, 0.002, &mut m, &mut None)?;
        m.pop().ok_or(Unsupported)
    }

    /// A box on a floor's face, tilted every way, either box first: the same contact points,
    /// distances and normals as rapier's box–box test.
    #[test]
    fn a_box_on_a_face_touches_as_in_the_box_box_test() {
        let floor = Cuboid::new(Vector::new(1.2, 0.9, 0.05));
        let chassis = Cuboid::new(Vector::new(0.0375, 0.0375, 0.0375));
        for (k, axis) in [
            [0.0, 0.0, 0.0],
            [0.13, 0.0, 0.0],
            [0.3, 0.13, 0.2],
            [-0.05, 0.2, 1.0],
        ]
        .into_iter()
        .enumerate()
        {
            let rot = Rotation::from_scaled_axis(Vector::from(axis));
            // Lowest corner 0.6 mm into the floor.
            let low = (0..8)
                .map(|c| {
                    let v = Vector::new(
                        if c & 1 == 0 { -0.0375 } else { 0.0375 },
                        if c & 2 == 0 { -0.0375 } else { 0.0375 },
                        if c & 4 == 0 { -0.0375 } else { 0.0375 },
                    );
                    (rot * v).z
                })
                .fold(f32::INFINITY, f32::min);
            let pos12 = Pose::from_parts(Vector::new(0.3, -0.2, 0.05 - low - 0.0006), rot);
            for flip in [false, true] {
                let (p, a, b) = if flip {
                    (pos12.inverse(), &chassis, &floor)
                } else {
                    (pos12, &floor, &chassis)
                };
                let ours = manifold(&FaceContacts, &p, a, b).unwrap();
                let theirs = manifold(&DefaultQueryDispatcher, &p, a, b).unwrap();
                let close = |x: Vector, y: Vector| (x - y).length() < 1e-5;
                assert!(
                    close(ours.local_n1, theirs.local_n1) && close(ours.local_n2, theirs.local_n2),
                    "{k} {flip}"
                );
                assert!(!ours.points.is_empty(), "{k} {flip}");
                for q in &ours.points {
                    assert!(
                        theirs.points.iter().any(|t| close(q.local_p1, t.local_p1)
                            && close(q.local_p2, t.local_p2)
                            && (q.dist - t.dist).abs() < 1e-5),
                        "{k} {flip}: {:?} not among {:?}",
                        (q.local_p1, q.local_p2, q.dist),
                        theirs
                            .points
                            .iter()
                            .map(|t| (t.local_p1, t.local_p2, t.dist))
                            .collect::<Vec<_>>()
                    );
                }
            }
        }
    }

    /// A ball on a box, either first, on a face, an edge, a corner, inside or out of reach:
    /// exactly rapier's own manifold.
    #[test]
    fn a_ball_and_a_box_touch_as_in_rapier() {
        let floor = Cuboid::new(Vector::new(1.2, 0.9, 0.05));
        let ball = rapier3d::parry::shape::Ball::new(0.023);
        let rot = Rotation::from_scaled_axis(Vector::new(0.3, -0.2, 0.7));
        for (x, z) in [
            (0.3, 0.0725),
            (0.3, 0.0735),
            (1.21, 0.06),
            (1.21, 0.04),
            (0.0, 0.0),
            (0.0, 0.2),
        ] {
            let pos12 = Pose::from_parts(Vector::new(x, -0.2, z), rot);
            for (p, a, b, flip) in in_both_orders(pos12, &floor, &ball) {
                let run = |d: &dyn PersistentQueryDispatcher<ContactManifoldData, ContactData>| {
                    let mut m = Vec::new();
                    d.contact_manifolds(&p, a, b, 0.002, &mut m, &mut None)
                        .unwrap();
                    m.into_iter()
                        .map(|m| {
                            let pts: Vec<_> = m
                                .points
                                .iter()
                                .map(|q| (q.local_p1, q.local_p2, q.dist, q.fid1, q.fid2))
                                .collect();
                            (m.local_n1, m.local_n2, pts)
                        })
                        .collect::<Vec<_>>()
                };
                let ours = run(&FaceContacts);
                assert_eq!(ours, run(&DefaultQueryDispatcher), "{x} {z} {flip}");
                let touching = ours.iter().any(|m| !m.2.is_empty());
                assert_eq!(
                    touching,
                    z < 0.0755 || x > 1.2 || z == 0.0,
                    "{x} {z} {flip}"
                );
            }
        }
    }

    /// The pair (floor, ball) at `pos12` in both orders: the pose of the second shape in the
    /// first's frame, the two shapes, and whether the ball comes first.
    fn in_both_orders<'a>(
        pos12: Pose,
        floor: &'a dyn Shape,
        ball: &'a dyn Shape,
    ) -> [(Pose, &'a dyn Shape, &'a dyn Shape, bool); 2] {
        [
            (pos12, floor, ball, false),
            (pos12.inverse(), ball, floor, true),
        ]
    }

    /// A ball over a box's face, past its edges and corners, touching, in reach or not, inside,
    /// either first, called again on the manifold it left (its impulses kept): every bit of
    /// rapier's own manifold, each time.
    #[test]
    fn a_ball_over_a_face_is_rapiers_manifold_to_the_bit() {
        let floor = Cuboid::new(Vector::new(1.2, 0.9, 0.05));
        let ball = rapier3d::parry::shape::Ball::new(0.023);
        let mut cases = 0;
        for k in 0..4000u32 {
            // A deterministic spread of centres around the floor's top face and its rims.
            let f = |n: u32, m: u32| ((k.wrapping_mul(n) % m) as f32) / (m as f32);
            let x = 1.3 * (2.0 * f(7919, 1009) - 1.0);
            let y = 1.0 * (2.0 * f(104_729, 997) - 1.0);
            let z = -0.1 + 0.2 * f(1_299_709, 991);
            let rot =
                Rotation::from_scaled_axis(Vector::new(f(31, 101), -f(37, 103), 3.0 * f(41, 107)));
            let pos12 = Pose::from_parts(Vector::new(x, y, z), rot);
            for (p, a, b, flip) in in_both_orders(pos12, &floor, &ball) {
                let run = |d: &dyn PersistentQueryDispatcher<ContactManifoldData, ContactData>| {
                    let mut m = Vec::new();
                    d.contact_manifolds(&p, a, b, 0.002, &mut m, &mut None)
                        .unwrap();
                    let first = format!("{m:?}");
                    for q in m.iter_mut().flat_map(|m| m.points.iter_mut()) {
                        q.data.impulse = 0.25;
                    }
                    let moved = Pose::from_parts(
                        p.translation + Vector::new(1e-4, -2e-4, 3e-4),
                        p.rotation,
                    );
                    d.contact_manifolds(&moved, a, b, 0.002, &mut m, &mut None)
                        .unwrap();
                    (first, format!("{m:?}"))
                };
                let ours = run(&FaceContacts);
                assert_eq!(ours, run(&DefaultQueryDispatcher), "{k} {flip}");
                cases += usize::from(ours.0.contains("TrackedContact"));
            }
        }
        // Enough of them touch for the test to say something.
        assert!(cases > 500, "{cases}");
    }

    /// Near an edge of the floor, or between boxes of a size, the box–box test decides.
    #[test]
    fn edges_and_boxes_of_a_size_are_left_to_the_box_box_test() {
        let floor = Cuboid::new(Vector::new(1.2, 0.9, 0.05));
        let chassis = Cuboid::new(Vector::new(0.0375, 0.0375, 0.0375));
        let at = |x: f32, z: f32| Pose::from_parts(Vector::new(x, 0.0, z), Rotation::IDENTITY);
        assert!(manifold(&FaceContacts, &at(0.0, 0.0875), &floor, &chassis).is_ok());
        assert!(manifold(&FaceContacts, &at(1.19, 0.0875), &floor, &chassis).is_err());
        assert!(manifold(&FaceContacts, &at(0.07, 0.0), &chassis, &chassis).is_err());
        // Swallowed by the floor: no face is the one it touches.
        let slab = Cuboid::new(Vector::new(1.2, 0.9, 0.5));
        assert!(manifold(&FaceContacts, &at(0.0, 0.0), &slab, &chassis).is_err());
    }
}
