//! Pictures of a 2D world: map in black on white, robots in blue with a heading mark, sonar
//! rays in green (to what they hit, or to the end of their range), closed bumpers in red.

use image::{ImageFormat, Rgb, RgbImage};
use simrob_flat::{FlatWorld, Robot, RobotId, Vec2};

/// The largest picture side in pixels; the scale is lowered to fit.
pub const MAX_SIDE: u32 = 4096;

const WHITE: Rgb<u8> = Rgb([255, 255, 255]);
const BLACK: Rgb<u8> = Rgb([0, 0, 0]);
const BODY: Rgb<u8> = Rgb([120, 160, 230]);
const RIM: Rgb<u8> = Rgb([20, 50, 140]);
const RAY: Rgb<u8> = Rgb([40, 170, 60]);
const BUMP: Rgb<u8> = Rgb([230, 30, 30]);

/// Draws the world at `scale` pixels per inch (lowered so no side exceeds [`MAX_SIDE`]; a
/// map more than [`MAX_SIDE`] inches a side is drawn at less than one pixel per inch).
pub fn draw(world: &FlatWorld, scale: u32) -> RgbImage {
    draw_within(world, scale, MAX_SIDE)
}

/// As [`draw`], with no side over `max_side` pixels (1 to [`MAX_SIDE`]).
pub fn draw_within(world: &FlatWorld, scale: u32, max_side: u32) -> RgbImage {
    let most = max_side.clamp(1, MAX_SIDE);
    let map = world.map();
    let side = map.width().max(map.height()).ceil().max(1.0);
    let s = match most / side as u32 {
        0 => f64::from(most) / side,
        fit => f64::from(scale.clamp(1, fit)),
    };
    let px = |inches: f64| (inches * s).ceil().min(f64::from(most)) as u32;
    let (w, h) = (px(map.width()), px(map.height()));
    let mut img = RgbImage::from_pixel(w.max(1), h.max(1), WHITE);
    if let Some(b) = map.bitmap() {
        for y in 0..b.height() {
            for x in 0..b.width() {
                if b.get(x, y) {
                    let (x, y) = (f64::from(x) * s, f64::from(y) * s);
                    if s >= 1.0 {
                        fill_rect(&mut img, x, y, x + s, y + s, BLACK);
                    } else {
                        // Below one pixel per inch: the pixel it falls in.
                        put(&mut img, x.floor() as i64, y.floor() as i64, BLACK);
                    }
                }
            }
        }
    }
    for r in map.rects() {
        // A 1 in wall stays visible: at least one pixel wide.
        fill_rect(
            &mut img,
            r.x1 * s,
            r.y1 * s,
            (r.x2 * s).max(r.x1 * s + 1.0),
            (r.y2 * s).max(r.y1 * s + 1.0),
            BLACK,
        );
    }
    for (id, robot) in world.robots() {
        let m = robot.model;
        let c = robot.pose.position();
        for (a, b) in sonar_rays(world, id, robot) {
            line(&mut img, a, b, s, RAY);
        }
        disc(&mut img, c, m.radius, s, BODY);
        circle(&mut img, c, m.radius, s, RIM);
        line(
            &mut img,
            c,
            c + Vec2::from_heading_deg(robot.pose.heading_deg) * m.radius,
            s,
            RIM,
        );
        for b in 0..m.bumper_count {
            if robot.bumpers >> b & 1 == 1 {
                let a = robot.pose.heading_deg + b as f64 * m.bumper_spacing_deg();
                disc(
                    &mut img,
                    c + Vec2::from_heading_deg(a) * (m.radius - 1.5),
                    1.8,
                    s,
                    BUMP,
                );
            }
        }
    }
    img
}

/// Each sonar's ray of robot `id` as drawn: from the robot's rim along the sonar's heading
/// to what it hits, or to its range when it sees nothing.
pub fn sonar_rays<'a>(
    world: &'a FlatWorld,
    id: RobotId,
    robot: &'a Robot,
) -> impl Iterator<Item = (Vec2, Vec2)> + 'a {
    let m = robot.model;
    let c = robot.pose.position();
    (0..m.sonar_count).map(move |i| {
        let heading = m.sonar_heading(robot.pose.heading_deg, i);
        let reach = world
            .cast_from(id, heading, m.radius + m.sonar_max)
            .unwrap_or(m.radius + m.sonar_max);
        let dir = Vec2::from_heading_deg(heading);
        (c + dir * m.radius, c + dir * reach)
    })
}

/// The picture as PNG bytes.
pub fn png(world: &FlatWorld, scale: u32) -> Result<Vec<u8>, image::ImageError> {
    png_within(world, scale, MAX_SIDE)
}

/// As [`png`], with no side over `max_side` pixels (1 to [`MAX_SIDE`]).
pub fn png_within(
    world: &FlatWorld,
    scale: u32,
    max_side: u32,
) -> Result<Vec<u8>, image::ImageError> {
    let img = draw_within(world, scale, max_side);
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, ImageFormat::Png)?;
    Ok(out.into_inner())
}

fn put(img: &mut RgbImage, x: i64, y: i64, c: Rgb<u8>) {
    if x >= 0 && y >= 0 && (x as u32) < img.width() && (y as u32) < img.height() {
        img.put_pixel(x as u32, y as u32, c);
    }
}

fn fill_rect(img: &mut RgbImage, x1: f64, y1: f64, x2: f64, y2: f64, c: Rgb<u8>) {
    let (w, h) = (f64::from(img.width()), f64::from(img.height()));
    let (x1, x2) = (x1.max(0.0).round() as u32, x2.min(w).round() as u32);
    let (y1, y2) = (y1.max(0.0).round() as u32, y2.min(h).round() as u32);
    for y in y1..y2 {
        for x in x1..x2 {
            img.put_pixel(x, y, c);
        }
    }
}

fn line(img: &mut RgbImage, a: Vec2, b: Vec2, s: f64, c: Rgb<u8>) {
    let (a, b) = (a * s, b * s);
    let n = (b - a).length().ceil().max(1.0) as usize;
    for k in 0..=n {
        let p = a + (b - a) * (k as f64 / n as f64);
        put(img, p.x.floor() as i64, p.y.floor() as i64, c);
    }
}

fn disc(img: &mut RgbImage, centre: Vec2, r: f64, s: f64, c: Rgb<u8>) {
    let (cx, cy, rr) = (centre.x * s, centre.y * s, r * s);
    for y in (cy - rr).floor() as i64..=(cy + rr).ceil() as i64 {
        for x in (cx - rr).floor() as i64..=(cx + rr).ceil() as i64 {
            let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
            if dx * dx + dy * dy <= rr * rr {
                put(img, x, y, c);
            }
        }
    }
}

fn circle(img: &mut RgbImage, centre: Vec2, r: f64, s: f64, c: Rgb<u8>) {
    let n = ((2.0 * std::f64::consts::PI * r * s).ceil() as usize).max(16);
    for k in 0..n {
        let p = (centre + Vec2::from_heading_deg(k as f64 * 360.0 / n as f64) * r) * s;
        put(img, p.x.floor() as i64, p.y.floor() as i64, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_flat::{Map, Rect};

    #[test]
    fn a_map_larger_than_the_picture_is_drawn_smaller() {
        // A map larger than MAX_SIDE inches was drawn at one pixel per inch: this one (the
        // largest side allowed) asked the allocator for 15 GB at each #SNAPSHOT.
        let map =
            Map::from_rects(100_000.0, 50_000.0, vec![Rect::new(0.0, 0.0, 10.0, 10.0)]).unwrap();
        let img = draw(&FlatWorld::new(map), 2);
        assert_eq!(img.width(), MAX_SIDE);
        assert!((MAX_SIDE / 2..=MAX_SIDE / 2 + 1).contains(&img.height()));
        assert_eq!(img.get_pixel(0, 0), &BLACK, "a small wall stays visible");
        assert_eq!(img.get_pixel(MAX_SIDE - 1, 100), &WHITE);
    }

    #[test]
    fn a_map_that_fits_keeps_whole_pixels_per_inch() {
        let map = Map::from_rects(1500.0, 100.0, Vec::new()).unwrap();
        assert_eq!(
            draw(&FlatWorld::new(map.clone()), 2).dimensions(),
            (3000, 200)
        );
        assert_eq!(draw(&FlatWorld::new(map), 5).dimensions(), (3000, 200));
        let small = Map::from_rects(300.0, 200.0, Vec::new()).unwrap();
        assert_eq!(draw(&FlatWorld::new(small), 2).dimensions(), (600, 400));
    }

    #[test]
    fn a_large_bitmap_keeps_its_obstacles() {
        let mut b = simrob_flat::Bitmap::new(9000, 10);
        b.set(8999, 5, true);
        let img = draw(&FlatWorld::new(Map::from_bitmap(b).unwrap()), 1);
        assert_eq!(img.width(), MAX_SIDE);
        assert!(img.pixels().any(|p| *p == BLACK));
    }

    #[test]
    fn a_picture_that_cannot_be_encoded_says_so_once() {
        use image::error::{LimitError, LimitErrorKind};
        let e = crate::CoreError::Picture(image::ImageError::Limits(LimitError::from_kind(
            LimitErrorKind::DimensionError,
        )));
        let text = e.to_string();
        assert_eq!(text.matches("cannot encode").count(), 1, "{text}");
        assert!(text.starts_with("cannot encode the picture: "), "{text}");
    }
}
