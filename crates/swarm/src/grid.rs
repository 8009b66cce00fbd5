//! Spatial indexes: a uniform grid of the small and moving colliders, rebuilt every frame
//! (the HMR Sim "sectors"), and an index of large static colliders (walls), rebuilt only when
//! they change.
//!
//! The grid is struct-of-arrays: its entries sorted by (cell, entity id), so the entries of
//! one cell, and of consecutive cells of one row, are a contiguous run of entity ids,
//! positions and shapes, and a neighbour query reads a few cache lines in a deterministic
//! order (cell-major, id order within a cell).
//!
//! What a frame costs follows the robots, not the map's area. The grid looks only at the
//! window of cells between its entries (the smallest rectangle of cells holding them all).
//! When that window has few cells for its entries (at most [`DENSE_CELLS_PER_ENTRY`] per
//! entry plus [`DENSE_CELLS_MIN`]) the grid is a counting sort with a start index per cell of
//! the window; otherwise (a few robots far apart on a large map) the entries are sorted by
//! (cell, id) — a counting sort by row, then a sort of each row's entries, keeping a start
//! index per row of the window — and a row's run of cells is found by binary search among
//! that row's entries. (A window with more rows than the dense layout may have cells gets one
//! sort of all the entries and no row index; its rows are found by galloping search.) Both
//! layouts give the same entries in the same order, so a run does not depend on which one a
//! frame used.

use crate::ecs::{EntityId, Resource, SwarmWorld};
use crate::geom::Shape;

/// The dense layout (a start index per cell of the window between the entries) is used while
/// that window has at most this many cells per grid entry, plus [`DENSE_CELLS_MIN`]; beyond,
/// the sparse one. (Measured with the `grid_bench` example: for 1,000 and 10,000 entries
/// spread evenly, a rebuild and a query around each entry cost the same in both layouts at
/// about 30 to 60 cells per entry; below, dense is faster, up to 3 times.)
pub const DENSE_CELLS_PER_ENTRY: u64 = 32;
/// Cells the dense layout's window may always have, however few the entries.
pub const DENSE_CELLS_MIN: u64 = 4096;
/// Most cells along either side of a grid: a larger map is covered by this many, the last
/// ones holding everything beyond (queries stay exact; cell keys fit in 64 bits).
pub const MAX_GRID_SIDE: usize = 1 << 31;

/// How the grid stores its cells.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum GridLayout {
    /// Dense when the window between the entries has few cells for them, else sparse (the
    /// default).
    #[default]
    Auto,
    /// A start index for every cell of the window between the entries:
    /// O(window cells + entries) a frame, two reads a row a query.
    Dense,
    /// Only the entries, sorted by (cell, id), with a start index per row of the window
    /// unless it has too many rows: O(entries · log entries) a frame, a binary search a row
    /// a query.
    Sparse,
}

/// Cells along one side of a map `len` long in cells of `cell`.
fn side(len: f64, cell: f64) -> usize {
    ((len / cell).ceil() as usize).clamp(1, MAX_GRID_SIDE)
}

/// A uniform grid over the map of every small or moving collider.
#[derive(Debug, Default, Clone)]
pub struct SpatialGrid {
    /// Which layout [`SpatialGrid::rebuild`] builds (a run's results do not depend on it).
    pub layout: GridLayout,
    cell: f64,
    inv: f64,
    /// The last column and row, as floats (a cell is found by clamping in floating point,
    /// then one conversion).
    last: (f64, f64),
    cols: usize,
    rows: usize,
    /// The window of cells between the entries: first column and row, columns and rows.
    win: (usize, usize, usize, usize),
    /// Dense layout: where each cell of the window (row by row) starts in the entries, one
    /// more than the window's cells; empty in the sparse layout.
    start: Vec<u32>,
    /// Sparse layout, unless the window has too many rows for its entries: where each row of
    /// the window starts in the entries, one more than its rows; else empty.
    row_start: Vec<u32>,
    /// The cell key (`cy · cols + cx`) of each entry, same order as `ids` (non-decreasing).
    keys: Vec<u64>,
    /// Entity ids, grouped by cell.
    pub ids: Vec<u32>,
    /// x positions, map units, same order as `ids`.
    pub xs: Vec<f64>,
    /// y positions, map units, same order as `ids`.
    pub ys: Vec<f64>,
    /// Shapes, same order as `ids`.
    pub shapes: Vec<Shape>,
    /// Bounding radii, same order as `ids`.
    pub radii: Vec<f64>,
    /// The largest half extent of any entity in the grid.
    pub max_extent: f64,
    /// Per entry in id order: its cell key and entity id.
    scratch: Vec<(u64, u32)>,
    /// The cell `(cx, cy)` of each entry of `scratch`.
    cells: Vec<(u32, u32)>,
    /// Which entry of `scratch` goes to each slot.
    order: Vec<u32>,
    /// The counting sort's inverse of `order`: each entry's slot.
    pos: Vec<u32>,
    /// Each entity's slot (`u32::MAX`: not in the grid).
    slot_of: Vec<u32>,
    /// Per part of a parallel rebuild: its entries before they are joined.
    parts: Vec<FillPart>,
    /// Threads a rebuild may use (0 or 1: the caller's only); the grid does not depend on it.
    pub threads: usize,
    /// Slots whose entity id is far from the previous slot's ([`SpatialGrid::mixing`]).
    jumps: usize,
    /// Whether a rebuild keeps each entity's slot ([`SpatialGrid::slots`]; off by default,
    /// as most frames do not need it).
    pub track_slots: bool,
}

/// One part (a range of entity ids) of a rebuild's entries: (cell key, id) and cell in id
/// order, the window `(x0, y0, x1, y1)` of cells between them and their largest extent.
#[derive(Debug, Default, Clone)]
struct FillPart {
    entries: Vec<(u64, u32)>,
    cells: Vec<(u32, u32)>,
    bounds: (usize, usize, usize, usize),
    max_extent: f64,
}

/// Consecutive slots whose entity ids differ by more than this count as a jump in
/// [`SpatialGrid::mixing`] (a few kilobytes of a per-entity column apart).
pub const MIX_JUMP: u32 = 64;

/// Below this many entries a rebuild runs on one thread.
const PARALLEL_MIN: usize = 1 << 13;

/// Mutable slices of the grid's columns, for one part of a rebuild's gather.
struct Gather<'a> {
    keys: &'a mut [u64],
    ids: &'a mut [u32],
    xs: &'a mut [f64],
    ys: &'a mut [f64],
    shapes: &'a mut [Shape],
    radii: &'a mut [f64],
}

impl<'a> Gather<'a> {
    fn split_at(self, k: usize) -> (Gather<'a>, Gather<'a>) {
        let (k0, k1) = self.keys.split_at_mut(k);
        let (i0, i1) = self.ids.split_at_mut(k);
        let (x0, x1) = self.xs.split_at_mut(k);
        let (y0, y1) = self.ys.split_at_mut(k);
        let (s0, s1) = self.shapes.split_at_mut(k);
        let (r0, r1) = self.radii.split_at_mut(k);
        (
            Gather {
                keys: k0,
                ids: i0,
                xs: x0,
                ys: y0,
                shapes: s0,
                radii: r0,
            },
            Gather {
                keys: k1,
                ids: i1,
                xs: x1,
                ys: y1,
                shapes: s1,
                radii: r1,
            },
        )
    }
}

impl Resource for SpatialGrid {
    fn initial() -> &'static Self {
        static INITIAL: std::sync::LazyLock<SpatialGrid> =
            std::sync::LazyLock::new(SpatialGrid::default);
        &INITIAL
    }
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

    /// Whether the last rebuild used the dense layout.
    pub fn is_dense(&self) -> bool {
        !self.start.is_empty()
    }

    /// The cell holding `(x, y)` (clamped to the grid).
    #[inline]
    pub fn cell_of(&self, x: f64, y: f64) -> (usize, usize) {
        // Clamped before the conversion (a NaN gives 0, as `max` does): the same cells as
        // converting first and clamping after, for a fraction of the instructions (this is
        // the hottest line of a query).
        let cx = (x * self.inv).max(0.0).min(self.last.0) as u32 as usize;
        let cy = (y * self.inv).max(0.0).min(self.last.1) as u32 as usize;
        (cx, cy)
    }

    /// The key of cell `(cx, cy)`: `cy · cols + cx` (entries are sorted by it).
    #[inline]
    pub fn cell_key(&self, cx: usize, cy: usize) -> u64 {
        cy as u64 * self.cols as u64 + cx as u64
    }

    /// Each entity's slot (its index in `ids`, `xs`, …), indexed by entity id; `u32::MAX`
    /// for an entity that is not in the grid (the slice may be shorter than the entities,
    /// and is empty unless [`SpatialGrid::track_slots`] was set for the last rebuild).
    pub fn slots(&self) -> &[u32] {
        &self.slot_of
    }

    /// The cell key of every entry, same order as `ids` (non-decreasing).
    pub fn cell_keys(&self) -> &[u64] {
        &self.keys
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
        self.row_range(cx, cx, cy)
    }

    /// The index range of the cells `cx0..=cx1` in row `cy` (contiguous in memory; when
    /// empty, it starts where those cells' entries would be).
    #[inline]
    pub fn row_range(&self, cx0: usize, cx1: usize, cy: usize) -> std::ops::Range<usize> {
        if self.start.is_empty() {
            let (c0, c1) = (self.cell_key(cx0, cy), self.cell_key(cx1, cy));
            let lo = self.keys.partition_point(|&k| k < c0);
            return lo..gallop(&self.keys, lo, c1 + 1);
        }
        let (wx, wy, ww, wh) = self.win;
        if cy < wy {
            return 0..0;
        }
        if cy >= wy + wh {
            return self.ids.len()..self.ids.len();
        }
        let row = (cy - wy) * ww;
        let a = row + cx0.clamp(wx, wx + ww) - wx;
        let b = row + (cx1 + 1).clamp(wx, wx + ww) - wx;
        let lo = self.start[a] as usize;
        lo..(self.start[b.max(a)] as usize)
    }

    /// Rebuilds the grid from the world: every entity with a pose and a collider, except
    /// large static ones (those are in the [`StaticIndex`]).
    pub fn rebuild(&mut self, world: &SwarmWorld, cell: f64) {
        let cell = if cell.is_finite() && cell > 0.0 {
            cell
        } else {
            20.0
        };
        self.cell = cell;
        self.inv = 1.0 / cell;
        self.cols = side(world.res.width, cell);
        self.rows = side(world.res.height, cell);
        self.last = ((self.cols - 1) as f64, (self.rows - 1) as f64);
        self.max_extent = 0.0;
        let (poses, pp) = world.pose.raw();
        let (shapes, sp) = world.collider.raw();
        let (_, vp) = world.vel.raw();
        let n = poses.len().min(shapes.len());
        // The entries, in id order, with their cells, and the window of cells between them:
        // for a large world in parts on several threads, joined in id order.
        let mut parts = std::mem::take(&mut self.parts);
        let threads = self.threads.max(1);
        let count = if threads <= 1 || n < PARALLEL_MIN {
            1
        } else {
            threads
        };
        parts.resize_with(count, FillPart::default);
        let chunk = n.div_ceil(count).max(1);
        {
            let this = &*self;
            let fill = |first: usize, part: &mut FillPart| {
                // The part's buffers as locals while filling (their lengths stay in
                // registers).
                let (mut entries, mut cells) = (
                    std::mem::take(&mut part.entries),
                    std::mem::take(&mut part.cells),
                );
                entries.clear();
                cells.clear();
                let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
                // (A comparison for `f64::max`: the same largest extent, a NaN one skipped
                // either way.)
                let mut max_extent = 0.0f64;
                let last = (first + chunk).min(n);
                let ids = first..last;
                let rows = pp[ids.clone()]
                    .iter()
                    .zip(&sp[ids.clone()])
                    .zip(&poses[ids.clone()])
                    .zip(&shapes[ids.clone()]);
                for (i, (((&has_pose, &has_shape), p), s)) in ids.zip(rows) {
                    if !(has_pose && has_shape) {
                        continue;
                    }
                    let moving = vp.get(i).copied().unwrap_or(false);
                    let (hw, hh) = s.half_extents();
                    let extent = hw.max(hh);
                    if !moving && extent > cell * 0.5 {
                        continue;
                    }
                    if extent > max_extent {
                        max_extent = extent;
                    }
                    let (cx, cy) = this.cell_of(p.x, p.y);
                    (x0, y0, x1, y1) = (x0.min(cx), y0.min(cy), x1.max(cx), y1.max(cy));
                    entries.push((this.cell_key(cx, cy), i as u32));
                    cells.push((cx as u32, cy as u32));
                }
                part.entries = entries;
                part.cells = cells;
                part.max_extent = max_extent;
                part.bounds = (x0, y0, x1, y1);
            };
            if count == 1 {
                fill(0, &mut parts[0]);
            } else {
                let items = parts.iter_mut().enumerate().collect();
                crate::par::each(count, items, |(c, part)| fill(c * chunk, part));
            }
        }
        let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
        if count == 1 {
            // One part: its buffers become the entries (the old ones its next buffers).
            std::mem::swap(&mut self.scratch, &mut parts[0].entries);
            std::mem::swap(&mut self.cells, &mut parts[0].cells);
        } else {
            // The parts joined in id order, each copied on a thread of its own.
            let total: usize = parts.iter().map(|p| p.entries.len()).sum();
            self.scratch.resize(total, (0, 0));
            self.cells.resize(total, (0, 0));
            let (mut entries, mut cells) = (&mut self.scratch[..], &mut self.cells[..]);
            let mut copies = Vec::with_capacity(parts.len());
            for part in &parts {
                let (e, e_rest) = entries.split_at_mut(part.entries.len());
                let (c, c_rest) = cells.split_at_mut(part.cells.len());
                (entries, cells) = (e_rest, c_rest);
                copies.push((part, e, c));
            }
            crate::par::each(count, copies, |(part, e, c)| {
                e.copy_from_slice(&part.entries);
                c.copy_from_slice(&part.cells);
            });
        }
        for part in &parts {
            self.max_extent = self.max_extent.max(part.max_extent);
            let (a0, b0, a1, b1) = part.bounds;
            (x0, y0, x1, y1) = (x0.min(a0), y0.min(b0), x1.max(a1), y1.max(b1));
        }
        self.parts = parts;
        let m = self.scratch.len();
        self.win = if m == 0 {
            (0, 0, 0, 0)
        } else {
            (x0, y0, x1 - x0 + 1, y1 - y0 + 1)
        };
        let (wx, wy, ww, wh) = self.win;
        let wcells = ww as u64 * wh as u64;
        let dense = m > 0
            && match self.layout {
                GridLayout::Dense => true,
                GridLayout::Sparse => false,
                GridLayout::Auto => wcells <= DENSE_CELLS_PER_ENTRY * m as u64 + DENSE_CELLS_MIN,
            };
        self.start.clear();
        self.row_start.clear();
        self.order.clear();
        let cells = &self.cells;
        // Whether `pos` holds each entry's slot (else the slots come from `order`).
        let mut by_pos = false;
        if dense {
            // By cell of the window (stable: id order within a cell).
            // A closure of values (the cells as a slice, the window's numbers copied), so a
            // sort's loop keeps them in registers instead of reading them again after every
            // count it writes.
            let cells = &cells[..];
            let win = move |k: usize| {
                let (cx, cy) = cells[k];
                (cy as usize - wy) * ww + cx as usize - wx
            };
            if count > 1 {
                counting_sort_parallel(
                    m,
                    wcells as usize,
                    win,
                    count,
                    &mut self.start,
                    &mut self.order,
                );
            } else {
                counting_sort(
                    m,
                    wcells as usize,
                    win,
                    &mut self.start,
                    &mut self.order,
                    &mut self.pos,
                );
                by_pos = true;
            }
        } else if wh as u64 <= DENSE_CELLS_PER_ENTRY * m as u64 + DENSE_CELLS_MIN {
            // By row of the window (stable: id order within a row), then each row's run by
            // cell.
            let row = |k: usize| cells[k].1 as usize - wy;
            counting_sort(
                m,
                wh,
                row,
                &mut self.row_start,
                &mut self.order,
                &mut self.pos,
            );
            let scratch = &self.scratch;
            for r in 0..wh {
                let run = self.row_start[r] as usize..self.row_start[r + 1] as usize;
                if run.len() > 1 {
                    // Stable: id order within a cell.
                    self.order[run].sort_by_key(|&k| scratch[k as usize].0);
                }
            }
        } else {
            // (cell, id) pairs are distinct: an unstable sort gives the one order.
            self.scratch.sort_unstable();
            self.order.extend(0..m as u32);
        }
        // Each entity's slot: in id order from the counting sort's places when the order is
        // that sort's alone, else from the order.
        self.slot_of.clear();
        if self.track_slots {
            self.slot_of.resize(n, u32::MAX);
        }
        if self.track_slots && by_pos {
            for (&(_, i), &p) in self.scratch.iter().zip(&self.pos) {
                self.slot_of[i as usize] = p;
            }
        } else if self.track_slots {
            for (slot, &k) in self.order.iter().enumerate() {
                self.slot_of[self.scratch[k as usize].1 as usize] = slot as u32;
            }
        }
        self.keys.resize(m, 0);
        self.ids.resize(m, 0);
        self.xs.resize(m, 0.0);
        self.ys.resize(m, 0.0);
        self.shapes.resize(m, Shape::Circle { r: 0.0 });
        self.radii.resize(m, 0.0);
        // The entries' columns, gathered in slices (on several threads for a large grid: each
        // slot's value depends on that slot alone, so the grid is the same either way).
        // Each part also counts the slots whose entity id is far from the previous slot's
        // (see [`SpatialGrid::mixing`]; the first slot of a part compares with the slot
        // before it, so the count does not depend on the parts).
        let gather = |from: usize, out: Gather<'_>| -> usize {
            let order = &self.order[from..from + out.keys.len()];
            let mut prev = match from.checked_sub(1) {
                Some(b) => self.scratch[self.order[b] as usize].1,
                None => order.first().map_or(0, |&k| self.scratch[k as usize].1),
            };
            let mut jumps = 0;
            let slots = order
                .iter()
                .zip(out.keys.iter_mut())
                .zip(out.ids.iter_mut())
                .zip(out.xs.iter_mut())
                .zip(out.ys.iter_mut())
                .zip(out.shapes.iter_mut())
                .zip(out.radii.iter_mut());
            for ((((((&k, key), id), x), y), shape), radius) in slots {
                let (c, i) = self.scratch[k as usize];
                let (p, s) = (&poses[i as usize], &shapes[i as usize]);
                *key = c;
                *id = i;
                jumps += usize::from(i.abs_diff(prev) > MIX_JUMP);
                prev = i;
                *x = p.x;
                *y = p.y;
                *shape = *s;
                *radius = s.bounding_radius();
            }
            jumps
        };
        let out = Gather {
            keys: &mut self.keys,
            ids: &mut self.ids,
            xs: &mut self.xs,
            ys: &mut self.ys,
            shapes: &mut self.shapes,
            radii: &mut self.radii,
        };
        let threads = self.threads.max(1);
        self.jumps = if threads <= 1 || m < PARALLEL_MIN {
            gather(0, out)
        } else {
            let chunk = m.div_ceil(threads);
            let mut rest = out;
            let mut from = 0;
            let mut parts = Vec::with_capacity(threads);
            while from < m {
                let take = chunk.min(m - from);
                let (head, tail) = rest.split_at(take);
                rest = tail;
                parts.push((from, head));
                from += take;
            }
            crate::par::each(threads, parts, |(at, head)| gather(at, head))
                .into_iter()
                .sum()
        };
    }

    /// How mixed the entities are in the grid's slot order, from the last rebuild: the
    /// share (0 to 1) of slots whose entity id is more than [`MIX_JUMP`] away from the
    /// previous slot's. Near 0 when entity order walks the grid cell by cell (entities
    /// numbered along the map's rows, as the drones start); near 1 once they have mixed, so
    /// that going through them in entity order reads the grid at random. A caller may pick
    /// the order in which it goes through the entities from it (the grid, and what is read
    /// from it, is the same either way).
    pub fn mixing(&self) -> f64 {
        self.jumps as f64 / self.ids.len().max(1) as f64
    }

    /// Calls `f(slot)` for every grid entry whose cell touches the square of half side
    /// `radius` around `(x, y)`: row by row, cell-major, id order within a cell.
    #[inline]
    pub fn for_each_near(&self, x: f64, y: f64, radius: f64, mut f: impl FnMut(usize)) {
        self.for_each_run_near(x, y, radius, |run| {
            for k in run {
                f(k);
            }
        });
    }

    /// Calls `f(run)` for each row's run of grid slots (contiguous; possibly empty) whose
    /// cells touch the square of half side `radius` around `(x, y)`: the same slots, in the
    /// same order, as [`SpatialGrid::for_each_near`], for a caller that reads the columns
    /// (`ids`, `xs`, …) as slices.
    #[inline]
    pub fn for_each_run_near(
        &self,
        x: f64,
        y: f64,
        radius: f64,
        mut f: impl FnMut(std::ops::Range<usize>),
    ) {
        if self.ids.is_empty() {
            return;
        }
        let (cx0, cx1, cy0, cy1) = self.cells_around(x, y, radius);
        // Only the part of the query inside the window between the entries holds any.
        let (wx, wy, ww, wh) = self.win;
        let (cx0, cx1) = (cx0.max(wx), cx1.min(wx + ww - 1));
        let (cy0, cy1) = (cy0.max(wy), cy1.min(wy + wh - 1));
        if cx0 > cx1 || cy0 > cy1 {
            return;
        }
        // One call site of `f` (the row's run found per layout, a branch that always goes
        // the same way), so the caller's closure is inlined into the loop.
        let keys = &self.keys;
        // Sparse without a row index: one binary search for the first cell; the rows come in
        // key order, so each row's run is searched for from the end of the last one,
        // galloping (the next run is usually a few entries on).
        let mut from = if self.start.is_empty() && self.row_start.is_empty() {
            keys.partition_point(|&k| k < self.cell_key(cx0, cy0))
        } else {
            0
        };
        // (A half-open range: cheaper to step than `cy0..=cy1`; `cy1 + 1` is at most the rows.)
        for cy in cy0..cy1 + 1 {
            let run = if !self.start.is_empty() {
                let row = (cy - wy) * ww;
                let (c0, c1) = (row + cx0 - wx, row + cx1 - wx);
                self.start[c0] as usize..self.start[c1 + 1] as usize
            } else if !self.row_start.is_empty() {
                // Sparse with a row index: the row's cells searched for among its entries.
                let r = cy - wy;
                let (a, b) = (self.row_start[r] as usize, self.row_start[r + 1] as usize);
                let run = &keys[a..b];
                let (c0, c1) = (self.cell_key(cx0, cy), self.cell_key(cx1, cy));
                let lo = run.partition_point(|&k| k < c0);
                let hi = lo + run[lo..].partition_point(|&k| k <= c1);
                a + lo..a + hi
            } else {
                let lo = gallop(keys, from, self.cell_key(cx0, cy));
                let hi = gallop(keys, lo, self.cell_key(cx1, cy) + 1);
                from = hi;
                lo..hi
            };
            f(run);
        }
    }
}

/// A counting sort of `entries` entries (by index) into `buckets` buckets (`bucket_of` an
/// entry's index):
/// `order` gets the entries' indexes, bucket by bucket and in their order within a bucket
/// (`pos` the inverse: each entry's place in `order`),
/// and `start` where each bucket begins in `order` (one more than buckets). Counts go two
/// places on, so that after the prefix sum `start[b + 1]` is where bucket `b` begins, and
/// after the scatter (which moves it to where `b` ends) `start[b]` is.
fn counting_sort(
    entries: usize,
    buckets: usize,
    bucket_of: impl Fn(usize) -> usize,
    start: &mut Vec<u32>,
    order: &mut Vec<u32>,
    pos: &mut Vec<u32>,
) {
    start.clear();
    start.resize(buckets + 2, 0);
    for k in 0..entries {
        start[bucket_of(k) + 2] += 1;
    }
    for b in 2..buckets + 2 {
        start[b] += start[b - 1];
    }
    order.clear();
    order.resize(entries, 0);
    pos.clear();
    pos.resize(entries, 0);
    for (k, p) in pos.iter_mut().enumerate() {
        let at = &mut start[bucket_of(k) + 1];
        order[*at as usize] = k as u32;
        *p = *at;
        *at += 1;
    }
    start.truncate(buckets + 1);
}

/// [`counting_sort`] on `threads` threads (without `pos`): the same `start` and `order`.
/// Each thread takes a run of buckets: it counts the entries of its buckets (reading every
/// entry's bucket, in order), then places them into its own run of `order`, so no two
/// threads write the same memory and no entry is moved by more than one thread.
fn counting_sort_parallel(
    entries: usize,
    buckets: usize,
    bucket_of: impl Fn(usize) -> usize + Send + Sync + Copy,
    threads: usize,
    start: &mut Vec<u32>,
    order: &mut Vec<u32>,
) {
    start.clear();
    start.resize(buckets + 2, 0);
    order.clear();
    order.resize(entries, 0);
    let per = buckets.div_ceil(threads.max(1)).max(1);
    // `start[1 + b]`: first each of the thread's buckets' begin within the thread's run
    // of `order`, then (after placing) its end, which becomes where bucket `b + 1` begins
    // once the run's own begin is added.
    let runs = start[1..=buckets].chunks_mut(per).enumerate().collect();
    let totals: Vec<u32> = crate::par::each(threads, runs, |(t, run)| {
        let lo = t * per;
        for k in 0..entries {
            let b = bucket_of(k).wrapping_sub(lo);
            if b < run.len() {
                run[b] += 1;
            }
        }
        let mut sum = 0;
        for c in run.iter_mut() {
            (*c, sum) = (sum, sum + *c);
        }
        sum
    });
    let mut rest = &mut order[..];
    let mut base = 0;
    let mut runs = Vec::with_capacity(totals.len());
    for (t, run) in start[1..=buckets].chunks_mut(per).enumerate() {
        let (mine, tail) = rest.split_at_mut(totals[t] as usize);
        rest = tail;
        runs.push((t, run, mine, base));
        base += totals[t];
    }
    crate::par::each(threads, runs, |(t, run, mine, at)| {
        let lo = t * per;
        for k in 0..entries {
            let b = bucket_of(k).wrapping_sub(lo);
            if b < run.len() {
                mine[run[b] as usize] = k as u32;
                run[b] += 1;
            }
        }
        for c in run.iter_mut() {
            *c += at;
        }
    });
    start.truncate(buckets + 1);
}

/// The first index at or after `from` whose key is at least `target` (`keys.len()` if
/// none; `keys[from..]` is sorted): an exponential search, then a binary one, so the cost
/// grows with the log of the distance from `from`, not of the slice.
#[inline]
fn gallop(keys: &[u64], from: usize, target: u64) -> usize {
    let n = keys.len();
    if from >= n || keys[from] >= target {
        return from.min(n);
    }
    // keys[lo] < target throughout.
    let (mut lo, mut step) = (from, 1);
    loop {
        let probe = lo + step;
        if probe >= n || keys[probe] >= target {
            let end = probe.min(n);
            return lo + 1 + keys[lo + 1..end].partition_point(|&k| k < target);
        }
        lo = probe;
        step *= 2;
    }
}

/// Large static colliders (walls), indexed by the cells they cover: (cell key, collider)
/// pairs sorted by cell, so the index holds what the walls cover, not the map's area.
#[derive(Debug, Default, Clone)]
pub struct StaticIndex {
    cell: f64,
    cols: usize,
    rows: usize,
    /// `(cy · cols + cx, index into items)` for every cell a collider covers, sorted.
    cells: Vec<(u64, u32)>,
    /// Where each row's entries start in `cells` (`rows + 1` offsets), so a query searches
    /// only its own rows: on a large map one search over every entry cost a chain of cache
    /// misses per row, per robot, per frame.
    row_start: Vec<usize>,
    /// `(entity, x, y, shape)` of every indexed collider.
    pub items: Vec<(EntityId, f64, f64, Shape)>,
}

impl Resource for StaticIndex {
    fn initial() -> &'static Self {
        static INITIAL: std::sync::LazyLock<StaticIndex> =
            std::sync::LazyLock::new(StaticIndex::default);
        &INITIAL
    }
}

impl StaticIndex {
    /// Rebuilds the index: entities with a pose and a collider, no velocity, and a half
    /// extent larger than half a grid cell.
    pub fn rebuild(&mut self, world: &SwarmWorld, cell: f64) {
        self.cell = if cell > 0.0 { cell } else { 20.0 };
        self.cols = side(world.res.width, self.cell);
        self.rows = side(world.res.height, self.cell);
        self.cells.clear();
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
                    self.cells.push((self.key(cx, cy), k));
                }
            }
        }
        self.cells.sort_unstable();
        self.row_start.clear();
        let mut i = 0;
        for cy in 0..=self.rows {
            let end = self.key(0, cy);
            i += self.cells[i..].partition_point(|&(c, _)| c < end);
            self.row_start.push(i);
        }
    }

    fn key(&self, cx: usize, cy: usize) -> u64 {
        cy as u64 * self.cols as u64 + cx as u64
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
            let (c0, c1) = (self.key(cx0, cy), self.key(cx1, cy));
            let row = &self.cells[self.row_start[cy]..self.row_start[cy + 1]];
            let lo = row.partition_point(|&(c, _)| c < c0);
            let run = &row[lo..];
            let hi = run.partition_point(|&(c, _)| c <= c1);
            out.extend(run[..hi].iter().map(|&(_, k)| k));
        }
        out.sort_unstable();
        out.dedup();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecs::{SwarmPose, Velocity};
    use simrob_math::Xoshiro256PlusPlus;

    /// A random world: its size, cell size and entities (some off the map, some static,
    /// some too large for the grid, some without a collider).
    fn random_world(rng: &mut Xoshiro256PlusPlus) -> (SwarmWorld, f64) {
        let cell = [1.0, 5.0, 20.0, 37.5][rng.below(4) as usize];
        let (w, h) = if rng.below(3) == 0 {
            // A large map: the window between entries decides the layout.
            (
                cell * (1 + rng.below(1000)) as f64,
                cell * (1 + rng.below(1000)) as f64,
            )
        } else {
            (
                cell * (0.5 + rng.below(40) as f64),
                cell * (0.5 + rng.below(40) as f64),
            )
        };
        let mut world = SwarmWorld::new(w, h);
        let n = rng.below(300);
        // Entities in a cluster somewhere, or spread over the whole map (and beyond).
        let spread = rng.below(2) == 0;
        let (ox, oy) = (rng.next_f64() * w, rng.next_f64() * h);
        for _ in 0..n {
            let e = world.spawn("thing");
            let (x, y) = if spread {
                (
                    rng.next_f64() * w * 1.2 - 0.1 * w,
                    rng.next_f64() * h * 1.2 - 0.1 * h,
                )
            } else {
                (
                    ox + rng.next_f64() * cell * 8.0,
                    oy + rng.next_f64() * cell * 8.0,
                )
            };
            world.pose.insert(e, SwarmPose { x, y, theta: 0.0 });
            if rng.below(2) == 0 {
                world.vel.insert(e, Velocity::default());
            }
            let size = cell * [0.1, 0.3, 0.5, 0.8][rng.below(4) as usize];
            if rng.below(8) != 0 {
                let shape = if rng.below(2) == 0 {
                    Shape::Circle { r: size }
                } else {
                    Shape::Box {
                        hw: size,
                        hh: size * 0.5,
                    }
                };
                world.set_collider(e, shape);
            }
        }
        (world, cell)
    }

    /// The entries a query must visit, by definition: those whose (clamped) cell lies in the
    /// query's cells, in (row, column, id) order.
    fn expected(g: &SpatialGrid, world: &SwarmWorld, x: f64, y: f64, r: f64) -> Vec<u32> {
        let (cx0, cx1, cy0, cy1) = g.cells_around(x, y, r);
        let mut out: Vec<(usize, usize, u32)> = Vec::new();
        for (e, p) in world.pose.iter() {
            let Some(s) = world.collider.get(e) else {
                continue;
            };
            let (hw, hh) = s.half_extents();
            if !world.vel.has(e) && hw.max(hh) > g.cell_size() * 0.5 {
                continue;
            }
            let (cx, cy) = g.cell_of(p.x, p.y);
            if (cx0..=cx1).contains(&cx) && (cy0..=cy1).contains(&cy) {
                out.push((cy, cx, e.0));
            }
        }
        out.sort_unstable();
        out.into_iter().map(|(_, _, id)| id).collect()
    }

    #[test]
    fn a_rebuild_on_several_threads_gives_the_same_grid() {
        // More entries than a rebuild takes on one thread, some far off the rest (the
        // sparse layout), in each layout.
        let mut rng = Xoshiro256PlusPlus::new(5);
        let mut world = SwarmWorld::new(5000.0, 3000.0);
        for k in 0..(PARALLEL_MIN * 2) {
            let e = world.spawn("thing");
            let (x, y) = if k % 1000 == 7 {
                (rng.next_f64() * 5000.0, rng.next_f64() * 3000.0)
            } else {
                (rng.next_f64() * 900.0, rng.next_f64() * 700.0)
            };
            world.pose.insert(e, SwarmPose { x, y, theta: 0.0 });
            if k % 3 != 0 {
                world.vel.insert(e, Velocity::default());
            }
            if k % 11 != 0 {
                world.set_collider(
                    e,
                    Shape::Circle {
                        r: 0.5 + 0.4 * (k % 5) as f64,
                    },
                );
            }
        }
        for layout in [GridLayout::Auto, GridLayout::Dense, GridLayout::Sparse] {
            let grids: Vec<SpatialGrid> = [1, 2, 3]
                .into_iter()
                .map(|threads| {
                    let mut g = SpatialGrid {
                        layout,
                        threads,
                        track_slots: true,
                        ..SpatialGrid::default()
                    };
                    g.rebuild(&world, 5.0);
                    g
                })
                .collect();
            for g in &grids[1..] {
                assert_eq!(g.ids, grids[0].ids, "{layout:?}");
                assert_eq!(g.cell_keys(), grids[0].cell_keys());
                assert_eq!(g.xs, grids[0].xs);
                assert_eq!(g.ys, grids[0].ys);
                assert_eq!(g.radii, grids[0].radii);
                assert_eq!(g.slots(), grids[0].slots());
                assert_eq!(g.mixing(), grids[0].mixing());
                assert_eq!(g.max_extent, grids[0].max_extent);
                assert_eq!(g.start, grids[0].start);
                assert_eq!(g.row_start, grids[0].row_start);
            }
            assert!(grids[0].ids.len() > PARALLEL_MIN);
            for (m, &i) in grids[0].ids.iter().enumerate() {
                assert_eq!(grids[0].slots()[i as usize], m as u32);
            }
        }
    }

    #[test]
    fn mixing_counts_the_slots_far_in_id_from_the_last() {
        // Entities numbered along the map's rows, one a cell (as the drones start): entity
        // order is slot order, a jump only at each row's end. Then the same entities
        // scattered at random: most slots jump. Either way, one thread or two.
        let (cols, rows) = (512usize, 256usize);
        let mut world = SwarmWorld::new(cols as f64 * 10.0, rows as f64 * 10.0);
        for k in 0..cols * rows {
            let e = world.spawn("drone");
            let (x, y) = (
                (k % cols) as f64 * 10.0 + 5.0,
                (k / cols) as f64 * 10.0 + 5.0,
            );
            world.pose.insert(e, SwarmPose { x, y, theta: 0.0 });
            world.vel.insert(e, Velocity::default());
            world.set_collider(e, Shape::Circle { r: 1.0 });
        }
        let jumps = |g: &SpatialGrid| {
            let far = g.ids.windows(2).filter(|w| w[0].abs_diff(w[1]) > MIX_JUMP);
            far.count() as f64 / g.ids.len() as f64
        };
        let mut grids = [1, 2].map(|threads| SpatialGrid {
            threads,
            ..SpatialGrid::default()
        });
        for g in &mut grids {
            g.rebuild(&world, 10.0);
            assert!(g.ids.len() > PARALLEL_MIN);
            assert_eq!(g.mixing(), jumps(g));
            assert!(g.mixing() < 0.01, "{}", g.mixing());
        }
        let mut rng = Xoshiro256PlusPlus::new(3);
        let ids: Vec<_> = world.pose.iter().map(|(e, _)| e).collect();
        for e in ids {
            let (x, y) = (
                rng.next_f64() * cols as f64 * 10.0,
                rng.next_f64() * rows as f64 * 10.0,
            );
            world.pose.insert(e, SwarmPose { x, y, theta: 0.0 });
        }
        for g in &mut grids {
            g.rebuild(&world, 10.0);
            assert_eq!(g.mixing(), jumps(g));
            assert!(g.mixing() > 0.9, "{}", g.mixing());
        }
        assert_eq!(grids[0].mixing(), grids[1].mixing());
        assert_eq!(SpatialGrid::default().mixing(), 0.0);
    }

    #[test]
    fn the_counting_sort_on_several_threads_is_the_counting_sort() {
        // Buckets many, few or one; crowded or mostly empty; more threads than buckets.
        let mut rng = Xoshiro256PlusPlus::new(11);
        for round in 0..60 {
            let entries = rng.below(3000) as usize;
            let buckets = [1, 2, 3, 7, 100, 5000][round % 6];
            let keys: Vec<usize> = (0..entries)
                .map(|_| rng.below(buckets as u64) as usize)
                .collect();
            let (mut start, mut order, mut pos) = (Vec::new(), Vec::new(), Vec::new());
            counting_sort(
                entries,
                buckets,
                |k| keys[k],
                &mut start,
                &mut order,
                &mut pos,
            );
            for threads in [1, 2, 3, 8] {
                let (mut s2, mut o2) = (vec![9; 3], vec![9; 5]);
                counting_sort_parallel(entries, buckets, |k| keys[k], threads, &mut s2, &mut o2);
                assert_eq!(s2, start, "round {round}, {threads} threads");
                assert_eq!(o2, order, "round {round}, {threads} threads");
            }
        }
    }

    #[test]
    fn dense_and_sparse_layouts_give_the_same_entries_in_the_same_order() {
        let mut rng = Xoshiro256PlusPlus::new(11);
        let (mut dense_frames, mut sparse_frames) = (0, 0);
        for _ in 0..150 {
            let (world, cell) = random_world(&mut rng);
            let grids: Vec<SpatialGrid> = [GridLayout::Dense, GridLayout::Sparse, GridLayout::Auto]
                .into_iter()
                .map(|layout| {
                    let mut g = SpatialGrid {
                        layout,
                        track_slots: true,
                        ..SpatialGrid::default()
                    };
                    g.rebuild(&world, cell);
                    g
                })
                .collect();
            let (d, s) = (&grids[0], &grids[1]);
            assert_eq!(d.is_dense(), !d.ids.is_empty());
            assert!(!s.is_dense());
            if grids[2].is_dense() {
                dense_frames += 1;
            } else if !grids[2].ids.is_empty() {
                sparse_frames += 1;
            }
            for g in &grids {
                // Each entity's slot is where it is.
                let slots = g.slots();
                assert_eq!(
                    slots.iter().filter(|&&m| m != u32::MAX).count(),
                    g.ids.len()
                );
                for (m, &i) in g.ids.iter().enumerate() {
                    assert_eq!(slots[i as usize], m as u32);
                }
            }
            for g in &grids[1..] {
                assert_eq!(g.ids, d.ids);
                assert_eq!(g.cell_keys(), d.cell_keys());
                assert_eq!(g.xs, d.xs);
                assert_eq!(g.ys, d.ys);
                assert_eq!(g.shapes, d.shapes);
                assert_eq!(g.radii, d.radii);
                assert_eq!(g.max_extent, d.max_extent);
            }
            assert!(d.cell_keys().windows(2).all(|k| k[0] <= k[1]));
            let (cols, rows) = d.dims();
            let (w, h) = (world.res.width, world.res.height);
            for q in 0..60 {
                // Points on and off the map, its corners and edges; radii from none to more
                // than the map.
                let (x, y) = match q % 4 {
                    0 => (rng.next_f64() * w, rng.next_f64() * h),
                    1 => (rng.next_f64() * 3.0 * w - w, rng.next_f64() * 3.0 * h - h),
                    2 => (
                        [0.0, w, -1.0, w + 1.0][rng.below(4) as usize],
                        rng.next_f64() * h,
                    ),
                    _ => (
                        rng.next_f64() * w,
                        [0.0, h, -1.0, h + 1.0][rng.below(4) as usize],
                    ),
                };
                let r = [0.0, cell * 0.5, cell * 2.0, cell * 7.3, w.max(h)][rng.below(5) as usize];
                let want = expected(d, &world, x, y, r);
                for g in &grids {
                    let mut got = Vec::new();
                    g.for_each_near(x, y, r, |k| got.push(g.ids[k]));
                    assert_eq!(got, want, "{:?} query ({x}, {y}) r {r}", g.layout);
                }
                // Row and cell ranges, inside and at the edges of the map.
                let cy = rng.below(rows as u64) as usize;
                let cx0 = rng.below(cols as u64) as usize;
                let cx1 = (cx0 + rng.below(4) as usize).min(cols - 1);
                let row = d.row_range(cx0, cx1, cy);
                let cell_r = d.cell_range(cx0, cy);
                for g in &grids[1..] {
                    assert_eq!(g.row_range(cx0, cx1, cy), row);
                    assert_eq!(g.cell_range(cx0, cy), cell_r);
                    assert_eq!(
                        g.row_range(0, cols - 1, rows - 1),
                        d.row_range(0, cols - 1, rows - 1)
                    );
                    assert_eq!(g.row_range(0, 0, 0), d.row_range(0, 0, 0));
                }
                assert!(row.clone().all(
                    |k| (d.cell_key(cx0, cy)..=d.cell_key(cx1, cy)).contains(&d.cell_keys()[k])
                ));
            }
        }
        // Both layouts were chosen by the automatic rule along the way.
        assert!(
            dense_frames > 10 && sparse_frames > 10,
            "{dense_frames} {sparse_frames}"
        );
    }

    #[test]
    fn a_few_robots_on_a_huge_map_use_the_sparse_layout_and_a_crowd_the_dense_one() {
        let mut world = SwarmWorld::new(40_960.0, 40_960.0);
        let mut robots = Vec::new();
        for (x, y) in [(10.0, 10.0), (40_000.0, 40_000.0), (20_000.0, 5.0)] {
            let e = world.spawn("robot");
            robots.push(e);
            world.pose.insert(e, SwarmPose { x, y, theta: 0.0 });
            world.vel.insert(e, Velocity::default());
            world.set_collider(e, Shape::Circle { r: 3.0 });
        }
        let mut g = SpatialGrid::default();
        g.rebuild(&world, 20.0);
        assert_eq!(g.dims(), (2048, 2048));
        assert!(!g.is_dense());
        let mut seen = Vec::new();
        g.for_each_near(39_990.0, 39_990.0, 30.0, |k| seen.push(g.ids[k]));
        assert_eq!(seen, [robots[1].0]);
        // Three robots close together on the same map: a small window, dense.
        for (e, x) in robots.iter().zip([30_000.0, 30_050.0, 30_100.0]) {
            world.pose.insert(
                *e,
                SwarmPose {
                    x,
                    y: x,
                    theta: 0.0,
                },
            );
        }
        g.rebuild(&world, 20.0);
        assert!(g.is_dense());
        let mut seen = Vec::new();
        g.for_each_near(30_060.0, 30_060.0, 50.0, |k| seen.push(EntityId(g.ids[k])));
        assert_eq!(seen, robots);
    }

    #[test]
    fn a_window_of_many_rows_for_few_entries_is_searched_without_a_row_index() {
        // A tall map (200,000 rows of 1) with a few robots far apart: too many rows to index
        // for so few entries; queries still visit exactly what they must, in order.
        let mut rng = Xoshiro256PlusPlus::new(3);
        let mut world = SwarmWorld::new(8.0, 200_000.0);
        for _ in 0..40 {
            let e = world.spawn("robot");
            let (x, y) = (rng.next_f64() * 8.0, rng.next_f64() * 200_000.0);
            world.pose.insert(e, SwarmPose { x, y, theta: 0.0 });
            world.vel.insert(e, Velocity::default());
            world.set_collider(e, Shape::Circle { r: 0.3 });
        }
        // Two in one cell and one beside it, so cells and rows hold several.
        for (x, y) in [(2.5, 100.5), (2.7, 100.2), (3.5, 100.5)] {
            let e = world.spawn("robot");
            world.pose.insert(e, SwarmPose { x, y, theta: 0.0 });
            world.vel.insert(e, Velocity::default());
            world.set_collider(e, Shape::Circle { r: 0.3 });
        }
        let mut g = SpatialGrid::default();
        g.rebuild(&world, 1.0);
        assert!(!g.is_dense() && g.row_start.is_empty());
        let ys = g.ys.clone();
        for (k, &y) in ys.iter().enumerate() {
            for r in [0.0, 0.6, 3.0, 5_000.0] {
                let mut got = Vec::new();
                g.for_each_near(g.xs[k], y, r, |m| got.push(g.ids[m]));
                assert_eq!(got, expected(&g, &world, g.xs[k], y, r), "entry {k} r {r}");
            }
        }
    }

    #[test]
    fn the_wall_index_finds_the_walls_whose_cells_a_box_touches() {
        let mut rng = Xoshiro256PlusPlus::new(5);
        for _ in 0..40 {
            let (w, h) = (
                100.0 + rng.next_f64() * 30_000.0,
                100.0 + rng.next_f64() * 3_000.0,
            );
            let mut world = SwarmWorld::new(w, h);
            let mut walls = Vec::new();
            for _ in 0..rng.below(30) {
                let e = world.spawn("wall");
                let (x, y) = (rng.next_f64() * w, rng.next_f64() * h);
                let (hw, hh) = (11.0 + rng.next_f64() * 200.0, 11.0 + rng.next_f64() * 50.0);
                world.pose.insert(e, SwarmPose { x, y, theta: 0.0 });
                world.set_collider(e, Shape::Box { hw, hh });
                walls.push((x - hw, y - hh, x + hw, y + hh));
            }
            let mut index = StaticIndex::default();
            index.rebuild(&world, 20.0);
            assert_eq!(index.items.len(), walls.len());
            let mut out = Vec::new();
            for _ in 0..50 {
                let (x, y) = (
                    rng.next_f64() * 1.4 * w - 0.2 * w,
                    rng.next_f64() * 1.4 * h - 0.2 * h,
                );
                let r = rng.next_f64() * 100.0;
                index.near(x, y, r, &mut out);
                // By definition: the walls whose covered cells meet the query's cells.
                let (qx0, qy0) = index.cell_of(x - r, y - r);
                let (qx1, qy1) = index.cell_of(x + r, y + r);
                let want: Vec<u32> = (0..walls.len() as u32)
                    .filter(|&k| {
                        let (x0, y0, x1, y1) = walls[k as usize];
                        let (ax, ay) = index.cell_of(x0, y0);
                        let (bx, by) = index.cell_of(x1, y1);
                        ax <= qx1 && qx0 <= bx && ay <= qy1 && qy0 <= by
                    })
                    .collect();
                assert_eq!(out, want);
            }
        }
    }
}
