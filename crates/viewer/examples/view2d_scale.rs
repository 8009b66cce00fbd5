//! What the 2D view sends a page per frame, and what making it costs the server, for a
//! swarm of N bodies spread over a square map: every body (what every page was sent before
//! the view said its rectangle), the density picture of the whole map at 1920 × 1080, and
//! the bodies in a zoomed-in view.
//!
//! ```sh
//! cargo run --release -p simrob-viewer --example view2d_scale -- [SIZES] [REPEATS]
//! cargo run --release -p simrob-viewer --example view2d_scale -- 100000,1000000 10
//! ```
//!
//! Bodies are placed by the swarm's generator (`simrob_math`'s xoshiro256++, seed 1),
//! uniform over a map of 10 map units per body on a side's square root, as drones spread
//! over the drone swarm's map. Processor
//! seconds are this process's (user + system; the encoding runs on one thread).

use simrob_math::rng::Xoshiro256PlusPlus;
use simrob_viewer::view2d::density::{encode_for, PageView};
use simrob_viewer::view2d::{Body2d, Frame2d};
use simrob_viewer::Guard;

fn frame(n: usize, side: f64) -> Frame2d {
    let mut rng = Xoshiro256PlusPlus::new(1);
    let mut next = move || rng.next_f64();
    Frame2d {
        frame: 1,
        bodies: (0..n)
            .map(|k| Body2d {
                id: k as u32 + 1,
                x: next() * side,
                y: next() * side,
                theta: next() * std::f64::consts::TAU,
                half: [0.5, 0.5],
                kind: 1,
                state: 1,
                disc: true,
            })
            .collect(),
        ..Frame2d::default()
    }
}

fn measure(repeats: usize, mut f: impl FnMut() -> Vec<u8>) -> (usize, f64, f64) {
    let c0 = simrob_benchkit::process_cpu().unwrap_or(f64::NAN);
    let w0 = std::time::Instant::now();
    let mut bytes = 0;
    for _ in 0..repeats {
        bytes = std::hint::black_box(f()).len();
    }
    let cpu = (simrob_benchkit::process_cpu().unwrap_or(f64::NAN) - c0) / repeats as f64;
    let wall = w0.elapsed().as_secs_f64() / repeats as f64;
    (bytes, cpu * 1e3, wall * 1e3)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> =
        simrob_benchkit::size_list(args.get(1).map_or("100000,1000000", String::as_str))?;
    let repeats: usize = args.get(2).map_or(Ok(10), |s| s.parse())?;
    let guard = Guard::default();
    println!(
        "2D view, per frame per page (limits: {} bodies, {} cells); processor ms = user + system",
        guard.max_view_bodies, guard.max_view_cells
    );
    println!(
        "{:>9}  {:<34}  {:>12}  {:>8}  {:>8}",
        "bodies", "what is sent", "bytes", "cpu ms", "wall ms"
    );
    for &n in &sizes {
        let side = (n as f64).sqrt() * 10.0;
        let f = frame(n, side);
        let whole = PageView {
            x0: 0.0,
            y0: 0.0,
            x1: side,
            y1: side * 1080.0 / 1920.0,
            w: 1920,
            h: 1080,
        };
        let (cx, cy) = (side / 2.0, side / 2.0);
        let near = PageView {
            x0: cx - 192.0,
            y0: cy - 108.0,
            x1: cx + 192.0,
            y1: cy + 108.0,
            w: 1920,
            h: 1080,
        };
        let in_near = f
            .bodies
            .iter()
            .filter(|b| b.x >= near.x0 && b.x <= near.x1 && b.y >= near.y0 && b.y <= near.y1)
            .count();
        for (what, view) in [
            ("every body (as before: no view)".to_string(), None),
            ("density, zoomed out, 1920×1080".to_string(), Some(whole)),
            (
                format!("{in_near} bodies, zoomed in, 1920×1080"),
                Some(near),
            ),
        ] {
            let (bytes, cpu, wall) = match view {
                None => measure(repeats, || f.encode()),
                Some(v) => measure(repeats, || encode_for(&f, Some(&v), &guard)),
            };
            println!("{n:>9}  {what:<34}  {bytes:>12}  {cpu:>8.1}  {wall:>8.1}");
        }
    }
    Ok(())
}
