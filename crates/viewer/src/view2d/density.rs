//! What one page is sent of a frame: the bodies in its view rectangle when they are few
//! enough ([`Guard::max_view_bodies`](crate::Guard::max_view_bodies)), else a density
//! picture of that rectangle — a grid of counts, at most
//! [`Guard::max_view_cells`](crate::Guard::max_view_cells) cells, each a few of the page's
//! pixels — so a page showing a million drones never receives more than it can draw.
//!
//! The page says what it shows with `{"cmd":"view","x0":…,"y0":…,"x1":…,"y1":…,"w":…,"h":…}`
//! (the map rectangle, map units, and the canvas size, pixels); [`PageView::parse`] checks
//! it. A page that has not said is sent the bodies when they are few enough, else the
//! density of their bounding box at 256 × 256 pixels.
//!
//! The density frame (binary):
//!
//! ```text
//! "S2G1"                         4 bytes, the format
//! u32 header length L            then L bytes of JSON: the frame's header (as S2D1's,
//!                                without names, routes, carried, sensors) with "grid":
//!                                {"x0","y0","x1","y1" (map units), "cols","rows",
//!                                "bodies" (in the rectangle), "max" (the largest count)},
//!                                zero-padded to a multiple of 4
//! u32 cols, u32 rows
//! u16 × cols·rows                bodies per cell, row-major, row 0 at y0, column 0 at x0,
//!                                65,535 meaning that many or more
//! ```

use std::collections::HashSet;

use super::{Frame2d, MAGIC};
use crate::{CommandError, Guard};

/// The magic of a density frame.
pub const GRID_MAGIC: &[u8; 4] = b"S2G1";
/// Largest canvas side a page may announce, pixels.
pub const MAX_CANVAS: u32 = 16_384;
/// Largest map coordinate a view rectangle may have, map units.
const MAX_COORD: f64 = 1e9;

/// The map rectangle a page shows and its canvas size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageView {
    /// Left edge, map units.
    pub x0: f64,
    /// Top edge, map units (y down).
    pub y0: f64,
    /// Right edge, map units.
    pub x1: f64,
    /// Bottom edge, map units.
    pub y1: f64,
    /// Canvas width, pixels.
    pub w: u32,
    /// Canvas height, pixels.
    pub h: u32,
}

impl PageView {
    /// Reads a `view` command: finite edges within ±10⁹ map units, `x1 > x0`, `y1 > y0`, a
    /// canvas of 1 to 16,384 pixels a side. Anything else is an error (and changes nothing).
    pub fn parse(cmd: &serde_json::Value) -> Result<PageView, CommandError> {
        let num = |k: &'static str| {
            cmd.get(k)
                .and_then(|v| v.as_f64())
                .filter(|v| v.is_finite() && v.abs() <= MAX_COORD)
                .ok_or(CommandError::Usage(
                    "view: x0, y0, x1, y1 must be finite numbers within ±1e9 map units",
                ))
        };
        let px = |k: &'static str| {
            cmd.get(k)
                .and_then(|v| v.as_u64())
                .filter(|&v| (1..=u64::from(MAX_CANVAS)).contains(&v))
                .map(|v| v as u32)
                .ok_or(CommandError::Usage(
                    "view: w and h must be whole numbers of pixels from 1 to 16384",
                ))
        };
        let v = PageView {
            x0: num("x0")?,
            y0: num("y0")?,
            x1: num("x1")?,
            y1: num("y1")?,
            w: px("w")?,
            h: px("h")?,
        };
        if !(v.x1 > v.x0 && v.y1 > v.y0) {
            return Err(CommandError::Usage(
                "view: x1 must exceed x0 and y1 exceed y0",
            ));
        }
        Ok(v)
    }

    fn contains(&self, x: f64, y: f64, margin: f64) -> bool {
        x >= self.x0 - margin
            && x <= self.x1 + margin
            && y >= self.y0 - margin
            && y <= self.y1 + margin
    }
}

/// The view of a page that has not said: the bodies' bounding box at 256 × 256 pixels.
fn whole(frame: &Frame2d) -> PageView {
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for b in &frame.bodies {
        x0 = x0.min(b.x);
        y0 = y0.min(b.y);
        x1 = x1.max(b.x);
        y1 = y1.max(b.y);
    }
    if x0 > x1 {
        (x0, y0, x1, y1) = (0.0, 0.0, 1.0, 1.0);
    }
    PageView {
        x0,
        y0,
        x1: x1.max(x0 + 1.0),
        y1: y1.max(y0 + 1.0),
        w: 256,
        h: 256,
    }
}

/// The grid of a view: columns and rows, each cell `c × c` pixels with the smallest `c`
/// that keeps `cols × rows` within `max_cells`.
pub fn grid_size(view: &PageView, max_cells: usize) -> (u32, u32) {
    let max = max_cells.max(1) as u64;
    let (w, h) = (u64::from(view.w), u64::from(view.h));
    let mut c = ((w * h) as f64 / max as f64).sqrt().ceil().max(1.0) as u64;
    loop {
        let (cols, rows) = (w.div_ceil(c), h.div_ceil(c));
        if cols * rows <= max {
            return (cols as u32, rows as u32);
        }
        c += 1;
    }
}

/// Bytes a body takes in an `S2D1` frame: position, heading and half sizes as five `f32`,
/// its id (`u32`), its kind, state and whether it is a disc (a byte each).
pub const BODY_BYTES: usize = 5 * 4 + 4 + 3;

/// Most bytes [`encode_for`] sends a page for a frame whose JSON header is `header` bytes
/// long: the bodies' or the grid's, whichever is larger.
pub fn max_bytes(guard: &Guard, header: usize) -> usize {
    let bodies = 12 + header + 3 + guard.max_view_bodies * BODY_BYTES;
    let grid = 16 + header + 128 + 3 + guard.max_view_cells * 2;
    bodies.max(grid)
}

/// What a page showing `view` (none: it has not said) is sent of `frame`: the bodies in
/// the view (with their names, routes and carriers) when at most
/// [`Guard::max_view_bodies`] are, else the density picture.
pub fn encode_for(frame: &Frame2d, view: Option<&PageView>, guard: &Guard) -> Vec<u8> {
    let Some(view) = view else {
        if frame.bodies.len() <= guard.max_view_bodies {
            return frame.encode();
        }
        return grid(frame, &whole(frame), guard);
    };
    let margin = |b: &super::Body2d| b.half[0].max(b.half[1]).min(1e6);
    let inside = frame
        .bodies
        .iter()
        .filter(|b| view.contains(b.x, b.y, margin(b)))
        .take(guard.max_view_bodies + 1)
        .count();
    if inside > guard.max_view_bodies {
        return grid(frame, view, guard);
    }
    let mut f = Frame2d {
        bodies: frame
            .bodies
            .iter()
            .filter(|b| view.contains(b.x, b.y, margin(b)))
            .copied()
            .collect(),
        ..Frame2d::default()
    };
    let ids: HashSet<u32> = f.bodies.iter().map(|b| b.id).collect();
    f.scene = frame.scene;
    f.frame = frame.frame;
    f.time = frame.time;
    f.status = frame.status.clone();
    f.figures = frame.figures.clone();
    f.replay = frame.replay;
    f.tasks = frame.tasks.clone();
    f.names = frame
        .names
        .iter()
        .filter(|(id, _)| ids.contains(id))
        .cloned()
        .collect();
    f.sensors = frame
        .sensors
        .iter()
        .filter(|s| ids.contains(&s.id))
        .cloned()
        .collect();
    f.carried = frame
        .carried
        .iter()
        .filter(|[item, by]| ids.contains(item) || ids.contains(by))
        .copied()
        .collect();
    f.routes = frame
        .routes
        .iter()
        .filter(|r| ids.contains(&r.id))
        .cloned()
        .collect();
    let bytes = f.encode();
    debug_assert_eq!(&bytes[..4], MAGIC);
    bytes
}

/// The density frame of `view`.
fn grid(frame: &Frame2d, view: &PageView, guard: &Guard) -> Vec<u8> {
    let (cols, rows) = grid_size(view, guard.max_view_cells);
    let mut counts = vec![0u16; cols as usize * rows as usize];
    let sx = f64::from(cols) / (view.x1 - view.x0);
    let sy = f64::from(rows) / (view.y1 - view.y0);
    let mut total = 0u64;
    // The rectangle is closed on every side (as a page's view takes its bodies): a body on
    // its right or bottom edge (the bodies' bounding box has some there) counts in the last
    // column or row.
    let (last_col, last_row) = (cols as usize - 1, rows as usize - 1);
    for b in &frame.bodies {
        if b.x >= view.x0 && b.x <= view.x1 && b.y >= view.y0 && b.y <= view.y1 {
            let cx = (((b.x - view.x0) * sx) as usize).min(last_col);
            let cy = (((b.y - view.y0) * sy) as usize).min(last_row);
            let k = cy * cols as usize + cx;
            counts[k] = counts[k].saturating_add(1);
            total += 1;
        }
    }
    let max = counts.iter().copied().max().unwrap_or(0);
    let head = Frame2d {
        scene: frame.scene,
        frame: frame.frame,
        time: frame.time,
        status: frame.status.clone(),
        figures: frame.figures.clone(),
        replay: frame.replay,
        ..Frame2d::default()
    };
    let mut json = serde_json::to_value(&head).unwrap_or_default();
    if let Some(o) = json.as_object_mut() {
        o.insert(
            "grid".into(),
            serde_json::json!({"x0": view.x0, "y0": view.y0, "x1": view.x1, "y1": view.y1,
                "cols": cols, "rows": rows, "bodies": total, "max": max}),
        );
    }
    let header = serde_json::to_vec(&json).unwrap_or_else(|_| b"{}".to_vec());
    let mut out = Vec::with_capacity(20 + header.len() + counts.len() * 2);
    out.extend_from_slice(GRID_MAGIC);
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&header);
    while out.len() % 4 != 0 {
        out.push(0);
    }
    out.extend_from_slice(&cols.to_le_bytes());
    out.extend_from_slice(&rows.to_le_bytes());
    for c in counts {
        out.extend_from_slice(&c.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::Body2d;
    use super::*;

    fn frame(n: u32) -> Frame2d {
        Frame2d {
            frame: 3,
            bodies: (0..n)
                .map(|k| Body2d {
                    id: k,
                    x: f64::from(k % 1000),
                    y: f64::from(k / 1000),
                    half: [0.5, 0.5],
                    ..Body2d::default()
                })
                .collect(),
            ..Frame2d::default()
        }
    }

    fn view(x0: f64, y0: f64, x1: f64, y1: f64) -> PageView {
        PageView {
            x0,
            y0,
            x1,
            y1,
            w: 1000,
            h: 800,
        }
    }

    #[test]
    fn few_bodies_in_view_are_sent_as_bodies_many_as_a_grid() {
        let f = frame(200_000);
        let g = Guard::default();
        let near = encode_for(&f, Some(&view(10.0, 10.0, 30.0, 20.0)), &g);
        assert_eq!(&near[..4], MAGIC);
        assert!(near.len() < BODY_BYTES * 21 * 11 + 2000, "{}", near.len());
        let far = encode_for(&f, Some(&view(0.0, 0.0, 1000.0, 200.0)), &g);
        assert_eq!(&far[..4], GRID_MAGIC);
        let len = u32::from_le_bytes(far[4..8].try_into().unwrap()) as usize;
        let head: serde_json::Value = serde_json::from_slice(&far[8..8 + len]).unwrap();
        assert_eq!(head["grid"]["bodies"], 200_000);
        assert_eq!(head["frame"], 3);
        let (cols, rows) = grid_size(&view(0.0, 0.0, 1.0, 1.0), g.max_view_cells);
        assert!((cols * rows) as usize <= g.max_view_cells);
        assert_eq!(
            far.len(),
            (8 + len).div_ceil(4) * 4 + 8 + 2 * (cols * rows) as usize
        );
        let counts: u64 = far[far.len() - 2 * (cols * rows) as usize..]
            .chunks(2)
            .map(|c| u64::from(u16::from_le_bytes([c[0], c[1]])))
            .sum();
        assert_eq!(counts, 200_000);
        assert!(far.len() <= max_bytes(&g, len));
        // No view said: the whole frame as a grid.
        assert_eq!(&encode_for(&f, None, &g)[..4], GRID_MAGIC);
        assert_eq!(&encode_for(&frame(10), None, &g)[..4], MAGIC);
    }

    /// The counts and the `bodies` figure of a density frame.
    fn grid_counts(bytes: &[u8]) -> (u64, u64) {
        assert_eq!(&bytes[..4], GRID_MAGIC);
        let len = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
        let head: serde_json::Value = serde_json::from_slice(&bytes[8..8 + len]).unwrap();
        let at = (8 + len).div_ceil(4) * 4 + 8;
        let counts = bytes[at..]
            .chunks(2)
            .map(|c| u64::from(u16::from_le_bytes([c[0], c[1]])))
            .sum();
        (counts, head["grid"]["bodies"].as_u64().unwrap())
    }

    #[test]
    fn bodies_on_the_edges_of_the_picture_are_counted() {
        // A 100 × 10 block of bodies: the bounding box's right and bottom edges have 110 of
        // them (they were left out of the picture of a page that said no view).
        let f = frame(10_000).bodies.into_iter().filter(|b| b.x < 100.0);
        let f = Frame2d {
            bodies: f.collect(),
            ..Frame2d::default()
        };
        assert_eq!(f.bodies.len(), 1000);
        let g = Guard {
            max_view_bodies: 10,
            max_view_cells: 1024,
            ..Guard::default()
        };
        assert_eq!(grid_counts(&encode_for(&f, None, &g)), (1000, 1000));
        // An S2D1 frame is its header and BODY_BYTES a body.
        let ten = Frame2d {
            bodies: f.bodies[..10].to_vec(),
            ..Frame2d::default()
        };
        let bytes = encode_for(&ten, None, &g);
        let len = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
        assert_eq!(bytes.len(), (8 + len).div_ceil(4) * 4 + 4 + 10 * BODY_BYTES);
        // A page's view whose edges pass through bodies takes them, as its bodies would.
        assert_eq!(
            grid_counts(&encode_for(&f, Some(&view(0.0, 0.0, 99.0, 9.0)), &g)),
            (1000, 1000)
        );
    }

    #[test]
    fn bad_views_are_refused() {
        let ok = serde_json::json!({"cmd":"view","x0":0,"y0":0,"x1":10,"y1":5,"w":800,"h":600});
        assert!(PageView::parse(&ok).is_ok());
        for (k, v) in [
            ("x1", serde_json::json!(-1)),
            ("x0", serde_json::json!("a")),
            ("y1", serde_json::json!(1e300)),
            ("w", serde_json::json!(0)),
            ("h", serde_json::json!(100_000)),
            ("w", serde_json::json!(3.5)),
        ] {
            let mut bad = ok.clone();
            bad[k] = v;
            let e = PageView::parse(&bad).unwrap_err().to_string();
            assert!(e.starts_with("view:"), "{k}: {e}");
        }
    }

    #[test]
    fn grids_stay_within_the_cell_limit_at_any_canvas() {
        for (w, h) in [(1, 1), (16_384, 16_384), (1920, 1080), (7, 16_000)] {
            for max in [1, 1000, 65_536] {
                let (c, r) = grid_size(
                    &PageView {
                        w,
                        h,
                        ..view(0.0, 0.0, 1.0, 1.0)
                    },
                    max,
                );
                assert!((c * r) as usize <= max && c >= 1 && r >= 1, "{w}×{h} {max}");
            }
        }
    }
}
