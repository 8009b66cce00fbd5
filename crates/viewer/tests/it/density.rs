//! The 2D view of a large swarm in headless Chromium: zoomed out the page is sent a density
//! picture (more drones in view than `Guard::max_view_bodies`), zoomed in the drones in its
//! view one by one; no frame sent is larger than the limits allow.

use crate::view2d::open_still;

use simrob_swarm::scenario::{Overrides, Scenario};
use simrob_viewer::view2d::density::max_bytes;
use simrob_viewer::Guard;

#[test]
fn zoomed_out_a_density_picture_zoomed_in_the_drones_in_view() {
    const N: usize = 30_000;
    let text = format!(
        "name = \"many\"\nfps = 24\nduration = 1\nseed = 2\n[generator]\nkind = \"drone-swarm\"\nrobots = {N}\n"
    );
    let sim = Scenario::from_toml_str(&text, std::path::Path::new("."))
        .expect("scenario")
        .build(&Overrides::default())
        .expect("build");
    let guard = Guard::default();
    assert!(N > guard.max_view_bodies);
    let (mut page, view, f, dir) = open_still(&sim, None, "density");
    let drones = f.bodies.iter().filter(|b| b.kind == 1).count();
    assert_eq!(drones, N);
    // Zoomed out (the whole map): a grid counting every body, drawn.
    page.wait_for(
        &format!(
            "(() => {{ const f = __simrob2d.frame; return !!(f && f.grid && f.grid.bodies === {}); }})()",
            f.bodies.len()
        ),
        "JSON.stringify(__simrob2d.frame && __simrob2d.frame.grid && [__simrob2d.frame.grid.bodies, __simrob2d.frame.grid.cols, __simrob2d.frame.grid.rows])",
    );
    page.wait_for(
        "__simrob2d.drawnFrame === __simrob2d.frame.frame && __simrob2d.draws > 1",
        "__simrob2d.draws",
    );
    let grid = page.eval("JSON.stringify([__simrob2d.frame.grid.cols, __simrob2d.frame.grid.rows, __simrob2d.frame.bodies.n])");
    let grid: Vec<u64> = serde_json::from_str(grid.as_str().expect("json")).expect("grid");
    assert!(grid[0] * grid[1] <= guard.max_view_cells as u64, "{grid:?}");
    assert_eq!(grid[2], 0, "no body sent one by one");
    // The picture's key: the shades from one body a cell to the most in one, a cell's size.
    let key = page.eval(
        "JSON.stringify(__simrob2d.densityKey && [__simrob2d.densityKey.text, __simrob2d.densityKey.max, __simrob2d.frame.grid.max, __simrob2d.densityKey.cellW, (__simrob2d.frame.grid.x1 - __simrob2d.frame.grid.x0) / __simrob2d.frame.grid.cols])",
    );
    let key: serde_json::Value =
        serde_json::from_str(key.as_str().expect("json")).expect("density key");
    let text = key[0].as_str().expect("the key's text");
    assert_eq!(key[1], key[2], "the key's most in a cell: {key}");
    assert!(key[1].as_u64().is_some_and(|m| m >= 1), "{key}");
    assert_eq!(key[3], key[4], "the key's cell size: {key}");
    assert!(
        text.starts_with("bodies in a cell ") && text.ends_with(&format!("1 to {}", key[1])),
        "{text}"
    );
    // Where a drone is, the picture is shaded blue.
    let d = f.bodies.iter().find(|b| b.kind == 1).expect("a drone");
    let at = page.eval(&format!(
        "JSON.stringify(__simrob2d.toScreen({}, {}))",
        d.x, d.y
    ));
    let at: Vec<f64> = serde_json::from_str(at.as_str().expect("json")).expect("screen");
    let shaded = (|| {
        for dy in -2..=2 {
            for dx in -2..=2 {
                let p = page.eval(&format!(
                    "__simrob2d.pixel({}, {})",
                    at[0] + f64::from(dx),
                    at[1] + f64::from(dy)
                ));
                let p: Vec<i64> = p
                    .as_array()
                    .map(|a| a.iter().map(|c| c.as_i64().unwrap_or(0)).collect())
                    .unwrap_or_default();
                if p.len() == 4 && p[2] > p[0] + 40 {
                    return true;
                }
            }
        }
        false
    })();
    assert!(shaded, "no density shade where drone {} is", d.id);
    // Zoomed in on that drone: the bodies in view one by one, that drone among them.
    page.eval(&format!("__simrob2d.focus({}, {}, 40); 1", d.x, d.y));
    page.wait_for(
        &format!(
            "(() => {{ const f = __simrob2d.frame; return !!(f && !f.grid && Array.from(f.bodies.ids).includes({}) && __simrob2d.drawn.some(b => b.id === {})); }})()",
            d.id, d.id
        ),
        "JSON.stringify(__simrob2d.frame && [!!__simrob2d.frame.grid, __simrob2d.frame.bodies.n])",
    );
    let n = page.eval("__simrob2d.frame.bodies.n").as_u64().expect("n");
    assert!(n > 0 && (n as usize) < N / 10, "{n} bodies sent zoomed in");
    // Every body sent lies in (or within its size of) the view.
    let outside = page.eval(
        "(() => { const f = __simrob2d.frame, p = f.bodies.pose, c = document.getElementById('map');
           let out = 0;
           for (let i = 0; i < f.bodies.n; i++) {
             const [sx, sy] = __simrob2d.toScreen(p[5 * i], p[5 * i + 1]);
             const r = Math.max(p[5 * i + 3], p[5 * i + 4]) * __simrob2d.camera.scale + 2;
             if (sx < -r || sy < -r || sx > c.width + r || sy > c.height + r) out++;
           }
           return out; })()",
    );
    assert_eq!(
        outside.as_u64(),
        Some(0),
        "bodies sent from outside the view"
    );
    // Never more than the limits: every frame sent to the page.
    let sent = view.sent();
    assert!(sent.frames() >= 2 && sent.grids() >= 1, "{sent:?}");
    let limit = max_bytes(&guard, 4096) as u64;
    assert!(sent.largest() <= limit, "{} > {limit}", sent.largest());
    assert!(sent.largest() < (N * 23) as u64 / 2, "{}", sent.largest());
    drop(page);
    let _ = std::fs::remove_dir_all(&dir);
}
