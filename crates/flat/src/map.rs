//! Maps: the static obstacles of a 2D world, from the vector text format or a BMP bitmap, and
//! the uniform grid that makes ray casts and disc queries fast.

use crate::geom::{sweep_disc_rect, Ray, Rect, Vec2};

/// The largest width or height a map may have, in inches.
pub const MAX_MAP_SIDE: f64 = 100_000.0;

/// The most rectangles a vector map holds, from its file and merged onto it (`#MERGE`,
/// `#RECT`). Each addition rebuilds the map's index, so rectangles added one at a time cost
/// more the more there are: 60,000 `#RECT`s took a server 34 s, the last 10,000 seven times
/// what the first took, and a client adding them without end slowed it for everyone.
pub const MAX_RECTS: usize = 20_000;

/// Side of a grid cell in inches for bitmap maps (the grid then only indexes merged
/// rectangles; pixels have their own tiles). Larger maps get larger cells so that the grid
/// never holds more than [`MAX_GRID_CELLS`] cells.
pub const DEFAULT_CELL_SIZE: u32 = 8;

/// Side of a grid cell in inches for vector maps (measured fastest for typical indoor maps;
/// tune with [`Map::set_cell_size`]).
pub const VECTOR_CELL_SIZE: u32 = 16;

/// Clearance (in cells) from which a ray jumps over open space instead of stepping.
const JUMP_CLEARANCE: u8 = 3;

/// The most cells a map's grid may have.
pub const MAX_GRID_CELLS: usize = 1 << 22;

/// Why a map could not be read or changed. Messages say where and what to do.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum MapError {
    /// The vector text has a bad line.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The vector text has no `width height` line.
    #[error("empty map: the first line must be `width height` (e.g. `300 300`)")]
    Empty,
    /// More rectangles than [`MAX_RECTS`].
    #[error("{count} rectangles: a map holds at most {MAX_RECTS}")]
    TooManyRects {
        /// The rectangles the map would hold.
        count: usize,
    },
    /// The map is larger than [`MAX_MAP_SIDE`] or has no area.
    #[error(
        "map size {} x {}: each side must be more than 0 and at most {MAX_MAP_SIDE} inches",
        simrob_math::Shown::of(.width),
        simrob_math::Shown::of(.height)
    )]
    BadSize {
        /// Width in inches.
        width: f64,
        /// Height in inches.
        height: f64,
    },
    /// The bitmap could not be decoded.
    #[error("not a readable BMP image: {0}")]
    Bitmap(String),
    /// Only vector maps can be merged.
    #[error("only vector maps can be merged onto a map (this one is a bitmap)")]
    MergeBitmap,
    /// A merged map larger than the map it is merged onto (its rectangles could lie outside).
    #[error(
        "a {} × {} in map cannot be merged onto this {} × {} in map: a merged map may be no larger than the map (its rectangles keep their coordinates)",
        simrob_math::Shown::of(.width),
        simrob_math::Shown::of(.height),
        simrob_math::Shown::of(.onto_width),
        simrob_math::Shown::of(.onto_height)
    )]
    MergeLarger {
        /// The merged map's width, in inches.
        width: f64,
        /// The merged map's height, in inches.
        height: f64,
        /// The width of the map merged onto.
        onto_width: f64,
        /// The height of the map merged onto.
        onto_height: f64,
    },
}

/// A black-and-white bitmap, one pixel per square inch: pixel `(x, y)` covers the square
/// `[x, x+1] × [y, y+1]`. `true` = obstacle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bitmap {
    width: u32,
    height: u32,
    bits: Vec<u64>,
}

impl Bitmap {
    /// An all-free bitmap.
    pub fn new(width: u32, height: u32) -> Self {
        let n = width as usize * height as usize;
        Bitmap {
            width,
            height,
            bits: vec![0; n.div_ceil(64)],
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Whether pixel `(x, y)` is an obstacle (false outside the bitmap).
    #[inline]
    pub fn get(&self, x: u32, y: u32) -> bool {
        if x >= self.width || y >= self.height {
            return false;
        }
        let i = y as usize * self.width as usize + x as usize;
        self.bits[i >> 6] >> (i & 63) & 1 == 1
    }

    /// Marks pixel `(x, y)` as obstacle or free (ignored outside the bitmap).
    pub fn set(&mut self, x: u32, y: u32, obstacle: bool) {
        if x >= self.width || y >= self.height {
            return;
        }
        let i = y as usize * self.width as usize + x as usize;
        if obstacle {
            self.bits[i >> 6] |= 1 << (i & 63);
        } else {
            self.bits[i >> 6] &= !(1 << (i & 63));
        }
    }

    /// Number of obstacle pixels.
    pub fn count(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Decodes a BMP file: exactly black pixels (red = green = blue = 0) are obstacles, every
    /// other colour is free space.
    pub fn from_bmp(bytes: &[u8]) -> Result<Self, MapError> {
        let img = image::load_from_memory_with_format(bytes, image::ImageFormat::Bmp)
            .map_err(|e| MapError::Bitmap(e.to_string()))?
            .to_rgb8();
        let (w, h) = img.dimensions();
        if w == 0 || h == 0 || f64::from(w) > MAX_MAP_SIDE || f64::from(h) > MAX_MAP_SIDE {
            return Err(MapError::BadSize {
                width: f64::from(w),
                height: f64::from(h),
            });
        }
        let mut bitmap = Bitmap::new(w, h);
        for (x, y, p) in img.enumerate_pixels() {
            if p.0 == [0, 0, 0] {
                bitmap.set(x, y, true);
            }
        }
        Ok(bitmap)
    }
}

/// The static obstacles of a 2D world: a `width × height` inch area (y down) with rectangles
/// and, for bitmap maps, obstacle pixels. **The map's border is a wall**: nothing leaves the
/// area, and rays stop at its edge.
///
/// Every query goes through a uniform grid built with the map (and rebuilt by
/// [`Map::merge`]); queries are exact (no rasterisation of rectangles).
#[derive(Clone, Debug)]
pub struct Map {
    width: f64,
    height: f64,
    rects: Vec<Rect>,
    bitmap: Option<Bitmap>,
    cell_px: u32,
    grid: Grid,
}

/// The uniform grid: per cell, the rectangles that touch it, whether it holds obstacle pixels,
/// and its clearance (Chebyshev distance, in cells, to the nearest cell with rectangles) so
/// that rays jump across open space. Bitmaps get the same clearance per pixel.
#[derive(Clone, Debug, Default)]
struct Grid {
    cell: f64,
    inv_cell: f64,
    cell_px: u32,
    cols: usize,
    rows: usize,
    cells: Vec<Cell>,
    /// Rectangle indices; cell `i`'s are `items[start..start + len]`.
    items: Vec<u32>,
    /// Clearance maps of the bitmap, if any.
    pixels: Option<PixelIndex>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    start: u32,
    len: u32,
    /// 0 = has rectangles; k ≥ 1 = no cell within Chebyshev distance k - 1 has any.
    clear: u8,
    /// Holds obstacle pixels.
    pix: bool,
}

/// Side of a bitmap tile in pixels: a tile's 64 pixels are one `u64`.
const TILE: i64 = 1 << TILE_BITS;
const TILE_BITS: i64 = 3;

/// The bitmap rearranged for ray marching: one `u64` per 8 × 8 tile (bit `8 y + x`), and
/// per tile its clearance — the Chebyshev distance in tiles to the nearest tile holding an
/// obstacle pixel, capped at 255. A clearance of k means every tile within Chebyshev
/// distance k - 1 is free, so a ray crosses that whole block in one step. A 2000 × 2000
/// bitmap takes 560 kB, small enough to stay in a core's cache.
#[derive(Clone, Debug, Default)]
struct PixelIndex {
    width: i64,
    height: i64,
    tiles_x: i64,
    tile_bits: Vec<u64>,
    tile_clear: Vec<u8>,
}

impl PixelIndex {
    fn new(b: &Bitmap) -> Self {
        let t = TILE as u32;
        let (tiles_x, tiles_y) = (b.width.div_ceil(t), b.height.div_ceil(t));
        let mut tile_bits = vec![0u64; tiles_x as usize * tiles_y as usize];
        for y in 0..b.height {
            for x in 0..b.width {
                if b.get(x, y) {
                    tile_bits[((y / t) * tiles_x + x / t) as usize] |= 1 << ((y % t) * t + x % t);
                }
            }
        }
        let tile_clear =
            chebyshev_clearance(tiles_x as usize, tiles_y as usize, |i| tile_bits[i] != 0);
        PixelIndex {
            width: i64::from(b.width),
            height: i64::from(b.height),
            tiles_x: i64::from(tiles_x),
            tile_bits,
            tile_clear,
        }
    }
}

impl Map {
    /// An empty map (only its border is a wall).
    pub fn empty(width: f64, height: f64) -> Result<Self, MapError> {
        Self::from_rects(width, height, Vec::new())
    }

    /// A vector map from its size and rectangles.
    pub fn from_rects(width: f64, height: f64, rects: Vec<Rect>) -> Result<Self, MapError> {
        check_size(width, height)?;
        if rects.len() > MAX_RECTS {
            return Err(MapError::TooManyRects { count: rects.len() });
        }
        let mut map = Map {
            width,
            height,
            rects,
            bitmap: None,
            cell_px: VECTOR_CELL_SIZE,
            grid: Grid::default(),
        };
        map.rebuild();
        Ok(map)
    }

    /// A bitmap map: its size is the bitmap's, one inch per pixel.
    pub fn from_bitmap(bitmap: Bitmap) -> Result<Self, MapError> {
        let (w, h) = (f64::from(bitmap.width), f64::from(bitmap.height));
        check_size(w, h)?;
        let mut map = Map {
            width: w,
            height: h,
            rects: Vec::new(),
            bitmap: Some(bitmap),
            cell_px: DEFAULT_CELL_SIZE,
            grid: Grid::default(),
        };
        map.rebuild();
        Ok(map)
    }

    /// A bitmap map from the bytes of a BMP file (black = obstacle).
    pub fn from_bmp(bytes: &[u8]) -> Result<Self, MapError> {
        Self::from_bitmap(Bitmap::from_bmp(bytes)?)
    }

    /// Parses the vector text format: the first line is `width height`, every other line a
    /// rectangle `x1 y1 x2 y2` (left, top, right, bottom; y down; inches) inside the map
    /// (every corner from 0 to the width or height; a rectangle outside is refused with its
    /// line number). Numbers may have decimals; corners in the other order are accepted. Blank lines and lines starting
    /// with `#` are skipped.
    pub fn parse_vector(text: &str) -> Result<Self, MapError> {
        let mut size: Option<(f64, f64)> = None;
        let mut rects = Vec::new();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let nums = parse_numbers(line).map_err(|message| MapError::Syntax {
                line: n + 1,
                message,
            })?;
            match size {
                None => {
                    let [w, h] = nums[..] else {
                        return Err(MapError::Syntax {
                            line: n + 1,
                            message: format!(
                                "expected `width height` (2 numbers), found {} numbers",
                                nums.len()
                            ),
                        });
                    };
                    check_size(w, h)?;
                    size = Some((w, h));
                }
                Some((w, h)) => {
                    let [x1, y1, x2, y2] = nums[..] else {
                        return Err(MapError::Syntax {
                            line: n + 1,
                            message: format!(
                                "expected a rectangle `x1 y1 x2 y2` (4 numbers), found {} numbers",
                                nums.len()
                            ),
                        });
                    };
                    if ![x1, x2].iter().all(|x| (0.0..=w).contains(x))
                        || ![y1, y2].iter().all(|y| (0.0..=h).contains(y))
                    {
                        return Err(MapError::Syntax {
                            line: n + 1,
                            message: format!(
                                "rectangle {} {} {} {} is not inside the {} × {} in map (corners from 0 to the width and height)",
                                simrob_math::Shown(x1),
                                simrob_math::Shown(y1),
                                simrob_math::Shown(x2),
                                simrob_math::Shown(y2),
                                simrob_math::Shown(w),
                                simrob_math::Shown(h)
                            ),
                        });
                    }
                    if rects.len() == MAX_RECTS {
                        return Err(MapError::TooManyRects {
                            count: MAX_RECTS + 1,
                        });
                    }
                    rects.push(Rect::new(x1, y1, x2, y2));
                }
            }
        }
        let (w, h) = size.ok_or(MapError::Empty)?;
        Self::from_rects(w, h, rects)
    }

    /// Reads a map from a file's bytes: BMP when it starts with `BM`, the vector text format
    /// otherwise.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, MapError> {
        if bytes.starts_with(b"BM") {
            return Self::from_bmp(bytes);
        }
        let text = std::str::from_utf8(bytes).map_err(|e| MapError::Syntax {
            line: 1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count(),
            message: "not UTF-8 text (and not a BMP file)".into(),
        })?;
        Self::parse_vector(text)
    }

    /// Merges a vector map onto this one: its rectangles are added with their coordinates;
    /// this map keeps its size. The merged map may be no larger than this one in either side
    /// (so its rectangles, inside its own size, are inside this map). Bitmap maps cannot be
    /// merged.
    pub fn merge(&mut self, other: &Map) -> Result<(), MapError> {
        if other.bitmap.is_some() {
            return Err(MapError::MergeBitmap);
        }
        if other.width > self.width || other.height > self.height {
            return Err(MapError::MergeLarger {
                width: other.width,
                height: other.height,
                onto_width: self.width,
                onto_height: self.height,
            });
        }
        self.add_rects(other.rects.iter().copied())
    }

    /// Adds rectangles to the map; none when it would then hold more than [`MAX_RECTS`].
    pub fn add_rects(&mut self, rects: impl IntoIterator<Item = Rect>) -> Result<(), MapError> {
        let before = self.rects.len();
        self.rects.extend(rects);
        if self.rects.len() > MAX_RECTS {
            let count = self.rects.len();
            self.rects.truncate(before);
            return Err(MapError::TooManyRects { count });
        }
        self.rebuild();
        Ok(())
    }

    /// Width in inches.
    pub fn width(&self) -> f64 {
        self.width
    }

    /// Height in inches.
    pub fn height(&self) -> f64 {
        self.height
    }

    /// The rectangles (vector obstacles), in file and merge order.
    pub fn rects(&self) -> &[Rect] {
        &self.rects
    }

    /// The obstacle bitmap of a bitmap map.
    pub fn bitmap(&self) -> Option<&Bitmap> {
        self.bitmap.as_ref()
    }

    /// Side of a grid cell in inches.
    pub fn cell_size(&self) -> f64 {
        self.grid.cell
    }

    /// Whether `p` is inside the map's area (border included).
    pub fn contains(&self, p: Vec2) -> bool {
        p.x >= 0.0 && p.y >= 0.0 && p.x <= self.width && p.y <= self.height
    }

    /// Whether the point is an obstacle (or outside the map).
    pub fn is_obstacle(&self, p: Vec2) -> bool {
        if !self.contains(p) {
            return true;
        }
        if let Some(b) = &self.bitmap {
            if b.get(p.x as u32, p.y as u32) {
                return true;
            }
        }
        self.rects.iter().any(|r| r.contains(p))
    }

    /// Rebuilds the grid with cells of `cell_px` inches (at least 1; enlarged if the grid
    /// would exceed [`MAX_GRID_CELLS`]). Queries give the same answers whatever the size;
    /// only their speed changes.
    pub fn set_cell_size(&mut self, cell_px: u32) {
        self.cell_px = cell_px.max(1);
        self.rebuild();
    }

    fn rebuild(&mut self) {
        let mut cell_px = self.cell_px;
        let dims = |c: u32| {
            (
                ((self.width / f64::from(c)).ceil() as usize).max(1),
                ((self.height / f64::from(c)).ceil() as usize).max(1),
            )
        };
        let (mut cols, mut rows) = dims(cell_px);
        while cols * rows > MAX_GRID_CELLS {
            cell_px *= 2;
            (cols, rows) = dims(cell_px);
        }
        let cell = f64::from(cell_px);
        let n = cols * rows;
        // Count, then fill (CSR).
        let mut counts = vec![0u32; n + 1];
        let ranges: Vec<Option<(usize, usize, usize, usize)>> = self
            .rects
            .iter()
            .map(|r| cell_range(r, cell, cols, rows))
            .collect();
        for (c0, c1, r0, r1) in ranges.iter().flatten() {
            for row in *r0..=*r1 {
                for col in *c0..=*c1 {
                    counts[row * cols + col] += 1;
                }
            }
        }
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            start[i + 1] = start[i] + counts[i];
        }
        let mut fill = start.clone();
        let mut items = vec![0u32; start[n] as usize];
        for (k, range) in ranges.iter().enumerate() {
            if let Some((c0, c1, r0, r1)) = range {
                for row in *r0..=*r1 {
                    for col in *c0..=*c1 {
                        let i = row * cols + col;
                        items[fill[i] as usize] = k as u32;
                        fill[i] += 1;
                    }
                }
            }
        }
        let mut pix = vec![false; n];
        if let Some(b) = &self.bitmap {
            for y in 0..b.height {
                for x in 0..b.width {
                    if b.get(x, y) {
                        pix[(y / cell_px) as usize * cols + (x / cell_px) as usize] = true;
                    }
                }
            }
        }
        let mut cells: Vec<Cell> = (0..n)
            .map(|i| Cell {
                start: start[i],
                len: start[i + 1] - start[i],
                clear: 0,
                pix: pix[i],
            })
            .collect();
        let dist = chebyshev_clearance(cols, rows, |i| cells[i].len > 0);
        for (cell, d) in cells.iter_mut().zip(dist) {
            cell.clear = d;
        }
        let pixels = self.bitmap.as_ref().map(PixelIndex::new);
        self.grid = Grid {
            cell,
            inv_cell: 1.0 / cell,
            cell_px,
            cols,
            rows,
            cells,
            items,
            pixels,
        };
    }

    /// Distance along `ray` to the first obstacle or the map border, if it is at most
    /// `max_dist`. A ray that starts in an obstacle or outside the map returns 0.
    ///
    /// Exact: rectangles are intersected as rectangles and pixels as unit squares; the grid
    /// (DDA over its cells, then over the pixels of cells that hold any) only decides what
    /// to test.
    pub fn cast_ray(&self, ray: &Ray, max_dist: f64) -> Option<f64> {
        let o = ray.origin;
        let d = ray.dir;
        if !self.contains(o) || !o.is_finite() {
            return Some(0.0);
        }
        let inv = ray.inv();
        let border_t = |pos: f64, dv: f64, inv: f64, size: f64| {
            if dv > 0.0 {
                (size - pos) * inv
            } else if dv < 0.0 {
                -pos * inv
            } else {
                f64::INFINITY
            }
        };
        let t_border =
            border_t(o.x, d.x, inv.x, self.width).min(border_t(o.y, d.y, inv.y, self.height));
        let limit = max_dist.min(t_border);
        let mut best = if self.rects.is_empty() {
            f64::INFINITY
        } else {
            self.cast_rects(ray, limit)
        };
        if let Some(px) = &self.grid.pixels {
            if let Some(t) = cast_pixels(px, ray, best.min(limit)) {
                best = best.min(t);
            }
        }
        if best <= limit {
            Some(best)
        } else if t_border <= max_dist {
            Some(t_border)
        } else {
            None
        }
    }

    /// The rectangle pass of [`Map::cast_ray`]: DDA over the grid, jumping open space; the
    /// nearest rectangle hit (may be beyond `limit`), or infinity.
    fn cast_rects(&self, ray: &Ray, limit: f64) -> f64 {
        let o = ray.origin;
        let d = ray.dir;
        let inv = ray.inv();
        let g = &self.grid;
        let mut cx = ((o.x * g.inv_cell) as usize).min(g.cols - 1);
        let mut cy = ((o.y * g.inv_cell) as usize).min(g.rows - 1);
        let (step_x, mut t_max_x, t_delta_x) = dda_axis(o.x, d.x, inv.x, cx, g.cell);
        let (step_y, mut t_max_y, t_delta_y) = dda_axis(o.y, d.y, inv.y, cy, g.cell);
        let mut best = f64::INFINITY;
        loop {
            let i = cy * g.cols + cx;
            let cell = g.cells[i];
            if cell.clear >= JUMP_CLEARANCE {
                // Open space: leave the empty block of cells round this one in one jump.
                let k = cell.clear as usize - 1;
                // The block's far sides lie k cells past this cell's far sides.
                let far = |step: isize, t_max: f64, t_delta: f64| {
                    if step == 0 {
                        f64::INFINITY
                    } else {
                        t_max + k as f64 * t_delta
                    }
                };
                let tx = far(step_x, t_max_x, t_delta_x);
                let ty = far(step_y, t_max_y, t_delta_y);
                let t_jump = tx.min(ty);
                if t_jump >= limit {
                    break;
                }
                let p = ray.at(t_jump);
                if tx <= ty {
                    cx = cx.wrapping_add_signed(step_x * (k as isize + 1));
                    cy = ((p.y * g.inv_cell).max(0.0) as usize).clamp(cy.saturating_sub(k), cy + k);
                } else {
                    cy = cy.wrapping_add_signed(step_y * (k as isize + 1));
                    cx = ((p.x * g.inv_cell).max(0.0) as usize).clamp(cx.saturating_sub(k), cx + k);
                }
                if cx >= g.cols || cy >= g.rows {
                    break;
                }
                (_, t_max_x, _) = dda_axis(o.x, d.x, inv.x, cx, g.cell);
                (_, t_max_y, _) = dda_axis(o.y, d.y, inv.y, cy, g.cell);
                continue;
            }
            let t_exit = t_max_x.min(t_max_y);
            let (s, e) = (cell.start as usize, (cell.start + cell.len) as usize);
            for &k in &g.items[s..e] {
                if let Some(t) = ray.hit_rect(&self.rects[k as usize]) {
                    best = best.min(t);
                }
            }
            if best <= t_exit || t_exit >= limit {
                break;
            }
            if t_max_x < t_max_y {
                if step_x == 0 {
                    break;
                }
                cx = cx.wrapping_add_signed(step_x);
                if cx >= g.cols {
                    break;
                }
                t_max_x += t_delta_x;
            } else {
                if step_y == 0 {
                    break;
                }
                cy = cy.wrapping_add_signed(step_y);
                if cy >= g.rows {
                    break;
                }
                t_max_y += t_delta_y;
            }
        }
        best
    }

    /// Calls `f` with every rectangle and obstacle pixel (as a unit square) that may lie in
    /// `area`. A rectangle may be reported more than once.
    pub fn for_each_obstacle_in(&self, area: &Rect, mut f: impl FnMut(&Rect)) {
        let g = &self.grid;
        let Some((c0, c1, r0, r1)) = cell_range(area, g.cell, g.cols, g.rows) else {
            return;
        };
        for row in r0..=r1 {
            for col in c0..=c1 {
                let cell = g.cells[row * g.cols + col];
                let (s, e) = (cell.start as usize, (cell.start + cell.len) as usize);
                for &k in &g.items[s..e] {
                    f(&self.rects[k as usize]);
                }
                if cell.pix {
                    if let Some(b) = &self.bitmap {
                        let cp = g.cell_px;
                        let x0 = (col as u32 * cp).max(area.x1.floor().max(0.0) as u32);
                        let x1 = ((col as u32 + 1) * cp)
                            .min(b.width)
                            .min(area.x2.floor().max(0.0) as u32 + 1);
                        let y0 = (row as u32 * cp).max(area.y1.floor().max(0.0) as u32);
                        let y1 = ((row as u32 + 1) * cp)
                            .min(b.height)
                            .min(area.y2.floor().max(0.0) as u32 + 1);
                        for y in y0..y1 {
                            for x in x0..x1 {
                                if b.get(x, y) {
                                    let (fx, fy) = (f64::from(x), f64::from(y));
                                    f(&Rect::new(fx, fy, fx + 1.0, fy + 1.0));
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Fraction `s ∈ [0, 1]` of the straight motion `from → from + d` that a disc of radius
    /// `r` can make before it touches an obstacle or the border (1 = free). A disc already in
    /// contact is stopped only by motion that takes it deeper (see
    /// [`sweep_disc_rect`]).
    pub fn sweep_disc(&self, from: Vec2, d: Vec2, r: f64) -> f64 {
        let mut s: f64 = 1.0;
        // The border: the centre must stay in [r, size - r].
        for (pos, dv, size) in [(from.x, d.x, self.width), (from.y, d.y, self.height)] {
            if dv > 0.0 && pos + dv > size - r {
                s = s.min(((size - r - pos) / dv).max(0.0));
            } else if dv < 0.0 && pos + dv < r {
                s = s.min(((r - pos) / dv).max(0.0));
            }
        }
        let to = from + d;
        let area = Rect::new(from.x, from.y, to.x, to.y);
        let area = Rect::new(area.x1 - r, area.y1 - r, area.x2 + r, area.y2 + r);
        self.for_each_obstacle_in(&area, |rect| {
            if let Some(t) = sweep_disc_rect(from, d, r, rect) {
                s = s.min(t);
            }
        });
        s
    }

    /// Calls `f` with the closest point of every obstacle (border included) within `reach`
    /// of `centre`. Bumpers use it: a disc of radius `r` touches what lies within
    /// `r + tolerance`.
    pub fn for_each_contact(&self, centre: Vec2, reach: f64, mut f: impl FnMut(Vec2)) {
        let reach2 = reach * reach;
        if centre.x <= reach {
            f(Vec2::new(0.0, centre.y));
        }
        if centre.y <= reach {
            f(Vec2::new(centre.x, 0.0));
        }
        if self.width - centre.x <= reach {
            f(Vec2::new(self.width, centre.y));
        }
        if self.height - centre.y <= reach {
            f(Vec2::new(centre.x, self.height));
        }
        let area = Rect::new(
            centre.x - reach,
            centre.y - reach,
            centre.x + reach,
            centre.y + reach,
        );
        self.for_each_obstacle_in(&area, |rect| {
            let c = rect.closest_point(centre);
            if (c - centre).length_squared() <= reach2 {
                f(c);
            }
        });
    }

    /// Whether a disc of radius `r` at `centre` overlaps an obstacle or crosses the border
    /// (touching is not overlapping).
    pub fn disc_overlaps(&self, centre: Vec2, r: f64) -> bool {
        if !centre.is_finite()
            || centre.x < r
            || centre.y < r
            || centre.x > self.width - r
            || centre.y > self.height - r
        {
            return true;
        }
        let mut hit = false;
        let area = Rect::new(centre.x - r, centre.y - r, centre.x + r, centre.y + r);
        self.for_each_obstacle_in(&area, |rect| {
            hit |= (rect.closest_point(centre) - centre).length_squared() < r * r;
        });
        hit
    }
}

fn check_size(width: f64, height: f64) -> Result<(), MapError> {
    if !(width > 0.0 && height > 0.0 && width <= MAX_MAP_SIDE && height <= MAX_MAP_SIDE) {
        return Err(MapError::BadSize { width, height });
    }
    Ok(())
}

fn parse_numbers(line: &str) -> Result<Vec<f64>, String> {
    line.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .map(|s| match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(format!("{s:?} is not a finite number")),
        })
        .collect()
}

/// The grid cells (inclusive column and row ranges) that `r` touches, if any.
fn cell_range(
    r: &Rect,
    cell: f64,
    cols: usize,
    rows: usize,
) -> Option<(usize, usize, usize, usize)> {
    if !(r.x2 >= 0.0 && r.y2 >= 0.0) {
        return None;
    }
    let c0 = (r.x1.max(0.0) / cell) as usize;
    let r0 = (r.y1.max(0.0) / cell) as usize;
    if c0 >= cols || r0 >= rows {
        return None;
    }
    let c1 = ((r.x2 / cell) as usize).min(cols - 1);
    let r1 = ((r.y2 / cell) as usize).min(rows - 1);
    Some((c0, c1, r0, r1))
}

/// The pixel pass of [`Map::cast_ray`]: crosses free blocks of tiles in one step, free
/// tiles in one step, and walks pixel by pixel (DDA) only inside tiles that hold obstacle
/// pixels; the distance at which the ray enters the first obstacle pixel, if at most
/// `limit`. The origin must be inside the bitmap's area.
fn cast_pixels(ix: &PixelIndex, ray: &Ray, limit: f64) -> Option<f64> {
    let (w, h) = (ix.width, ix.height);
    let o = ray.origin;
    let d = ray.dir;
    let inv = ray.inv();
    let sx: i64 = if d.x > 0.0 {
        1
    } else if d.x < 0.0 {
        -1
    } else {
        0
    };
    let sy: i64 = if d.y > 0.0 {
        1
    } else if d.y < 0.0 {
        -1
    } else {
        0
    };
    let (dtx, dty) = (inv.x.abs(), inv.y.abs());
    // Origins are inside the map (non-negative), so truncation is floor.
    let mut px = (o.x as i64).min(w - 1);
    let mut py = (o.y as i64).min(h - 1);
    let mut t = 0.0;
    loop {
        // px, py ≥ 0 here: shifts and masks are floor division and remainder.
        let (tx, ty) = (px >> TILE_BITS, py >> TILE_BITS);
        let tile = (ty * ix.tiles_x + tx) as usize;
        let bits = ix.tile_bits[tile];
        if bits != 0 {
            // Pixel DDA inside this tile.
            let mut t_max_x = match sx {
                1 => ((px + 1) as f64 - o.x) * inv.x,
                -1 => (px as f64 - o.x) * inv.x,
                _ => f64::INFINITY,
            };
            let mut t_max_y = match sy {
                1 => ((py + 1) as f64 - o.y) * inv.y,
                -1 => (py as f64 - o.y) * inv.y,
                _ => f64::INFINITY,
            };
            loop {
                if bits >> (((py & (TILE - 1)) << TILE_BITS) | (px & (TILE - 1))) & 1 == 1 {
                    return Some(t);
                }
                if t_max_x < t_max_y {
                    t = t_max_x;
                    px += sx;
                    t_max_x += dtx;
                } else {
                    t = t_max_y;
                    py += sy;
                    t_max_y += dty;
                }
                if t > limit {
                    return None;
                }
                if px < 0 || py < 0 || px >> TILE_BITS != tx || py >> TILE_BITS != ty {
                    break;
                }
            }
        } else {
            // A free block of tiles round this one (at least the tile itself).
            let e = i64::from(ix.tile_clear[tile]).max(1) - 1;
            let (lo_x, hi_x) = ((tx - e) * TILE, (tx + e + 1) * TILE - 1);
            let (lo_y, hi_y) = ((ty - e) * TILE, (ty + e + 1) * TILE - 1);
            let t_x = match sx {
                1 => ((hi_x + 1) as f64 - o.x) * inv.x,
                -1 => (lo_x as f64 - o.x) * inv.x,
                _ => f64::INFINITY,
            };
            let t_y = match sy {
                1 => ((hi_y + 1) as f64 - o.y) * inv.y,
                -1 => (lo_y as f64 - o.y) * inv.y,
                _ => f64::INFINITY,
            };
            if t_x < t_y {
                t = t_x;
                px = if sx > 0 { hi_x + 1 } else { lo_x - 1 };
                py = ((o.y + d.y * t) as i64).clamp(lo_y.max(0), hi_y.min(h - 1));
            } else {
                t = t_y;
                py = if sy > 0 { hi_y + 1 } else { lo_y - 1 };
                px = ((o.x + d.x * t) as i64).clamp(lo_x.max(0), hi_x.min(w - 1));
            }
            if t > limit {
                return None;
            }
        }
        if px < 0 || py < 0 || px >= w || py >= h {
            return None;
        }
    }
}

/// Chebyshev distance (cells) from each cell of a `cols × rows` grid to the nearest occupied
/// cell, capped at 255: 0 on occupied cells. Two passes over the 8-neighbourhood.
fn chebyshev_clearance(cols: usize, rows: usize, occupied: impl Fn(usize) -> bool) -> Vec<u8> {
    let mut dist: Vec<u8> = (0..cols * rows)
        .map(|i| if occupied(i) { 0 } else { 255 })
        .collect();
    let relax = |dist: &mut Vec<u8>, i: usize, j: usize| {
        let v = dist[j].saturating_add(1);
        if v < dist[i] {
            dist[i] = v;
        }
    };
    for r in 0..rows {
        for c in 0..cols {
            let i = r * cols + c;
            if c > 0 {
                relax(&mut dist, i, i - 1);
            }
            if r > 0 {
                relax(&mut dist, i, i - cols);
                if c > 0 {
                    relax(&mut dist, i, i - cols - 1);
                }
                if c + 1 < cols {
                    relax(&mut dist, i, i - cols + 1);
                }
            }
        }
    }
    for r in (0..rows).rev() {
        for c in (0..cols).rev() {
            let i = r * cols + c;
            if c + 1 < cols {
                relax(&mut dist, i, i + 1);
            }
            if r + 1 < rows {
                relax(&mut dist, i, i + cols);
                if c + 1 < cols {
                    relax(&mut dist, i, i + cols + 1);
                }
                if c > 0 {
                    relax(&mut dist, i, i + cols - 1);
                }
            }
        }
    }
    dist
}

/// DDA set-up along one axis: step, distance to the first cell boundary, distance between
/// boundaries.
/// `inv` is `1 / dv`.
fn dda_axis(pos: f64, dv: f64, inv: f64, cell_index: usize, cell: f64) -> (isize, f64, f64) {
    if dv > 0.0 {
        (1, ((cell_index + 1) as f64 * cell - pos) * inv, cell * inv)
    } else if dv < 0.0 {
        (-1, (cell_index as f64 * cell - pos) * inv, -cell * inv)
    } else {
        (0, f64::INFINITY, f64::INFINITY)
    }
}
