//! Spatial indexes: a uniform grid of the small and moving colliders, rebuilt every frame
//! by a counting sort (the HMR Sim "sectors"), and an index of large static colliders
//! (walls), rebuilt only when they change.
//!
//! The grid is struct-of-arrays: for each cell a contiguous run of entity ids, positions and
//! shapes, so a neighbour query reads a few cache lines. Within a cell, entities are in id
//! order, so every query visits candidates in a deterministic order.

use crate::ecs::{EntityId, World};
use crate::geom::Shape;

/// A uniform grid over the map of every small or moving collider.
#[derive(Debug, Default, Clone)]
pub struct SpatialGrid {
    cell: f64,
    inv: f64,
    cols: usize,
    rows: usize,
    start: Vec<u32>,
    /// Entity ids, grouped by cell.
    pub ids: Vec<u32>,
    /// Positions, same order as `ids`.
    pub xs: Vec<f64>,
    pub ys: Vec<f64>,
    /// Shapes, same order as `ids`.
    pub shapes: Vec<Shape>,
    /// Bounding radii, same order as `ids`.
    pub radii: Vec<f64>,
    /// The largest half extent of any entity in the grid.
    pub max_extent: f64,
    scratch: Vec<u32>,
}

impl SpatialGrid {
    /// Cell side length.
    pub fn cell_size(&self) -> f64 {
        self.cell
    }

    /// Number of cells along x and y.
    pub fn dims(&self) -> (usize, usize) {
        (self.cols, self.rows)
    }

    /// The cell holding `(x, y)` (clamped to the grid).
    #[inline]
    pub fn cell_of(&self, x: f64, y: f64) -> (usize, usize) {
        let cx = ((x * self.inv).max(0.0) as usize).min(self.cols.saturating_sub(1));
        let cy = ((y * self.inv).max(0.0) as usize).min(self.rows.saturating_sub(1));
        (cx, cy)
    }

    /// Range of cells `(cx0..=cx1, cy0..=cy1)` covering a disc of `radius` around `(x, y)`.
    #[inline]
    pub fn cells_around(&self, x: f64, y: f64, radius: f64) -> (usize, usize, usize, usize) {
        let (cx0, cy0) = self.cell_of(x - radius, y - radius);
        let (cx1, cy1) = self.cell_of(x + radius, y + radius);
        (cx0, cx1, cy0, cy1)
    }

    /// The index range (into `ids`, `xs`, …) of cell `(cx, cy)`.
    #[inline]
    pub fn cell_range(&self, cx: usize, cy: usize) -> std::ops::Range<usize> {
        let c = cy * self.cols + cx;
        self.start[c] as usize..self.start[c + 1] as usize
    }

    /// The index range of the cells `cx0..=cx1` in row `cy` (contiguous in memory).
    #[inline]
    pub fn row_range(&self, cx0: usize, cx1: usize, cy: usize) -> std::ops::Range<usize> {
        let c0 = cy * self.cols + cx0;
        let c1 = cy * self.cols + cx1;
        self.start[c0] as usize..self.start[c1 + 1] as usize
    }

    /// Where each cell's entries start in `ids` (one more entry than cells).
    pub fn starts(&self) -> &[u32] {
        &self.start
    }

    /// Rebuilds the grid from the world: every entity with a pose and a collider, except
    /// large static ones (those are in the [`StaticIndex`]).
    pub fn rebuild(&mut self, world: &World, cell: f64) {
        let cell = if cell.is_finite() && cell > 0.0 {
            cell
        } else {
            20.0
        };
        self.cell = cell;
        self.inv = 1.0 / cell;
        self.cols = ((world.res.width / cell).ceil() as usize).max(1);
        self.rows = ((world.res.height / cell).ceil() as usize).max(1);
        let ncells = self.cols * self.rows;
        self.start.clear();
        self.start.resize(ncells + 1, 0);
        self.scratch.clear();
        self.ids.clear();
        self.max_extent = 0.0;
        let (poses, pp) = world.pose.raw();
        let (shapes, sp) = world.collider.raw();
        let (_, vp) = world.vel.raw();
        let n = poses.len().min(shapes.len());
        // Pass 1: count per cell.
        for i in 0..n {
            if !(pp[i] && sp[i]) {
                continue;
            }
            let moving = vp.get(i).copied().unwrap_or(false);
            let (hw, hh) = shapes[i].half_extents();
            if !moving && hw.max(hh) > cell * 0.5 {
                continue;
            }
            self.max_extent = self.max_extent.max(hw.max(hh));
            let (cx, cy) = self.cell_of(poses[i].x, poses[i].y);
            let c = (cy * self.cols + cx) as u32;
            self.scratch.push(c);
            self.ids.push(i as u32);
            self.start[c as usize + 1] += 1;
        }
        for c in 0..ncells {
            self.start[c + 1] += self.start[c];
        }
        // Pass 2: scatter (stable: id order within a cell).
        let m = self.ids.len();
        let mut fill: Vec<u32> = self.start[..ncells].to_vec();
        let mut ids = vec![0u32; m];
        self.xs.clear();
        self.xs.resize(m, 0.0);
        self.ys.clear();
        self.ys.resize(m, 0.0);
        self.shapes.clear();
        self.shapes.resize(m, Shape::default());
        self.radii.clear();
        self.radii.resize(m, 0.0);
        for k in 0..m {
            let c = self.scratch[k] as usize;
            let slot = fill[c] as usize;
            fill[c] += 1;
            let i = self.ids[k] as usize;
            ids[slot] = i as u32;
            self.xs[slot] = poses[i].x;
            self.ys[slot] = poses[i].y;
            self.shapes[slot] = shapes[i];
            self.radii[slot] = shapes[i].bounding_radius();
        }
        self.ids = ids;
    }

    /// Calls `f(slot)` for every grid entry whose cell touches the square of half side
    /// `radius` around `(x, y)`.
    #[inline]
    pub fn for_each_near(&self, x: f64, y: f64, radius: f64, mut f: impl FnMut(usize)) {
        if self.start.is_empty() {
            return;
        }
        let (cx0, cx1, cy0, cy1) = self.cells_around(x, y, radius);
        for cy in cy0..=cy1 {
            for k in self.row_range(cx0, cx1, cy) {
                f(k);
            }
        }
    }
}

/// Large static colliders (walls), indexed by the cells they cover.
#[derive(Debug, Default, Clone)]
pub struct StaticIndex {
    cell: f64,
    cols: usize,
    rows: usize,
    cells: Vec<Vec<u32>>,
    /// `(entity, x, y, shape)` of every indexed collider.
    pub items: Vec<(EntityId, f64, f64, Shape)>,
}

impl StaticIndex {
    /// Rebuilds the index: entities with a pose and a collider, no velocity, and a half
    /// extent larger than half a grid cell.
    pub fn rebuild(&mut self, world: &World, cell: f64) {
        self.cell = if cell > 0.0 { cell } else { 20.0 };
        self.cols = ((world.res.width / self.cell).ceil() as usize).max(1);
        self.rows = ((world.res.height / self.cell).ceil() as usize).max(1);
        self.cells = vec![Vec::new(); self.cols * self.rows];
        self.items.clear();
        for (e, shape) in world.collider.iter() {
            if world.vel.has(e) {
                continue;
            }
            let Some(p) = world.pose.get(e) else { continue };
            let (hw, hh) = shape.half_extents();
            if hw.max(hh) <= self.cell * 0.5 {
                continue;
            }
            let k = self.items.len() as u32;
            self.items.push((e, p.x, p.y, *shape));
            let (cx0, cy0) = self.cell_of(p.x - hw, p.y - hh);
            let (cx1, cy1) = self.cell_of(p.x + hw, p.y + hh);
            for cy in cy0..=cy1 {
                for cx in cx0..=cx1 {
                    self.cells[cy * self.cols + cx].push(k);
                }
            }
        }
    }

    fn cell_of(&self, x: f64, y: f64) -> (usize, usize) {
        let cx = ((x / self.cell).max(0.0) as usize).min(self.cols.saturating_sub(1));
        let cy = ((y / self.cell).max(0.0) as usize).min(self.rows.saturating_sub(1));
        (cx, cy)
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Indexes (into `items`) of the colliders whose cells touch the box around `(x, y)` of
    /// half side `radius`, sorted and without duplicates, appended to `out` (cleared first).
    pub fn near(&self, x: f64, y: f64, radius: f64, out: &mut Vec<u32>) {
        out.clear();
        if self.items.is_empty() {
            return;
        }
        let (cx0, cy0) = self.cell_of(x - radius, y - radius);
        let (cx1, cy1) = self.cell_of(x + radius, y + radius);
        for cy in cy0..=cy1 {
            for cx in cx0..=cx1 {
                out.extend_from_slice(&self.cells[cy * self.cols + cx]);
            }
        }
        out.sort_unstable();
        out.dedup();
    }
}
