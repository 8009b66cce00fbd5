// @ts-check
// The 2D view's data: the scene (static map, sent once) and the binary frames (poses and
// states), as the server sends them (crates/viewer/src/view2d/mod.rs).

/** @typedef {{name: string, legend: string, color: string, mark: string}} StateStyle */
/** @typedef {{text: string, x: number, y: number, w: number, h: number}} Label2d */
/** @typedef {{name: string, x: number, y: number}} Poi2d */
/** @typedef {{width: number, height: number, cell: number, runs: number[]}} Bitmap2d */
/**
 * @typedef {{world: string, title: string, units: string, width: number, height: number,
 *   rects: number[][], bitmap: Bitmap2d | null, labels: Label2d[], pois: Poi2d[],
 *   paths: number[][], kinds: string[], states: StateStyle[], version: number}} Scene2d
 */
/**
 * @typedef {{id: number, rays: number[][], sonar: number[], bumpers: number[][],
 *   message: string, speed: number, turn: number}} Sensors2d
 */
/** @typedef {{id: number, points: number[][]}} Route2d */
/**
 * @typedef {{id: number, what: string, state: string, robot: number | null,
 *   x: number | null, y: number | null}} Task2d
 */
/** @typedef {{state: string, speed: number, controls: boolean}} Status2d */
/**
 * Where a replay is: the frame shown among `count`, the simulated times of the first and last.
 * @typedef {{count: number, index: number, start: number, end: number, following: boolean}} Replay2d
 */
/**
 * Bodies in struct-of-arrays form: `pose` holds x, y, theta, half width, half height per
 * body.
 * @typedef {{n: number, pose: Float32Array, ids: Uint32Array, kinds: Uint8Array,
 *   states: Uint8Array, flags: Uint8Array}} Bodies
 */
/**
 * A density picture: `cols` × `rows` counts over the map rectangle x0..x1, y0..y1 (row 0
 * at y0), `bodies` in it in all, the largest count `max`.
 * @typedef {{x0: number, y0: number, x1: number, y1: number, cols: number, rows: number,
 *   bodies: number, max: number, counts: Uint16Array}} Grid2d
 */
/**
 * @typedef {{scene: number, frame: number, time: number, status: Status2d,
 *   names?: [number, string][], sensors?: Sensors2d[], carried?: [number, number][],
 *   routes?: Route2d[], tasks?: Task2d[], figures?: [string, string][], replay?: Replay2d,
 *   bodies: Bodies, grid?: Grid2d}} Frame2d
 */

const MAGIC = 'S2D1';
const GRID_MAGIC = 'S2G1';

/** No bodies (a density frame's). */
function noBodies() {
  return { n: 0, pose: new Float32Array(0), ids: new Uint32Array(0), kinds: new Uint8Array(0), states: new Uint8Array(0), flags: new Uint8Array(0) };
}

/**
 * Decodes a binary frame: "S2D1" (JSON header, bodies) or "S2G1" (JSON header, a density
 * picture).
 * @param {ArrayBuffer} buf
 * @returns {Frame2d}
 */
export function decodeFrame(buf) {
  const view = new DataView(buf);
  const magic = String.fromCharCode(view.getUint8(0), view.getUint8(1), view.getUint8(2), view.getUint8(3));
  if (magic !== MAGIC && magic !== GRID_MAGIC) throw new Error(`not a 2D frame (${magic})`);
  const len = view.getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, len)));
  let off = 8 + len;
  off += (4 - (off % 4)) % 4;
  if (magic === GRID_MAGIC) {
    // The density picture of the page's view: too many bodies in it to send one by one.
    const cols = view.getUint32(off, true);
    const rows = view.getUint32(off + 4, true);
    const counts = new Uint16Array(buf.slice(off + 8, off + 8 + 2 * cols * rows));
    return { ...header, bodies: noBodies(), grid: { ...header.grid, cols, rows, counts } };
  }
  const n = view.getUint32(off, true);
  off += 4;
  const pose = new Float32Array(buf, off, 5 * n);
  off += 20 * n;
  const ids = new Uint32Array(buf, off, n);
  off += 4 * n;
  const kinds = new Uint8Array(buf, off, n);
  const states = new Uint8Array(buf, off + n, n);
  const flags = new Uint8Array(buf, off + 2 * n, n);
  return { ...header, bodies: { n, pose, ids, kinds, states, flags } };
}

/**
 * Paints a run-length coded obstacle bitmap into a canvas of its own size (black
 * obstacles on transparent).
 * @param {Bitmap2d} b
 * @returns {HTMLCanvasElement}
 */
export function bitmapCanvas(b) {
  const c = document.createElement('canvas');
  c.width = Math.max(1, b.width);
  c.height = Math.max(1, b.height);
  const ctx = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
  const img = ctx.createImageData(c.width, c.height);
  let p = 0;
  let obstacle = false;
  for (const run of b.runs) {
    if (obstacle) {
      for (let k = p; k < p + run; k++) {
        img.data[4 * k] = 30;
        img.data[4 * k + 1] = 30;
        img.data[4 * k + 2] = 34;
        img.data[4 * k + 3] = 255;
      }
    }
    p += run;
    obstacle = !obstacle;
  }
  ctx.putImageData(img, 0, 0);
  return c;
}

/**
 * A distinct colour for entity `id` (golden-angle hues).
 * @param {number} id
 * @returns {string}
 */
export function idColor(id) {
  const hue = (id * 137.508 + 210) % 360;
  return `hsl(${hue.toFixed(1)}, 70%, 42%)`;
}
