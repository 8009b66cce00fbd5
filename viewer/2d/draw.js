// @ts-check
// The 2D view's Canvas renderer: map, rooms, POIs, paths, routes, trails, sonar rays,
// bumpers, bodies by state, the coordination map's tasks by state, labels that never overlap,
// grid and scale bar.

import { bitmapCanvas, idColor } from './frame.js';

/** @typedef {import('./frame.js').Scene2d} Scene2d */
/** @typedef {import('./frame.js').Frame2d} Frame2d */
/** @typedef {import('./frame.js').StateStyle} StateStyle */

/**
 * What was drawn for one body: where (map and screen), how, and its label.
 * @typedef {{id: number, kind: string, state: string, x: number, y: number, theta: number,
 *   sx: number, sy: number, r: number, disc: boolean, color: string, mark: string,
 *   label: string, carrier: number | null}} Drawn
 */

/** @typedef {{trail: boolean, rays: boolean, routes: boolean, labels: boolean}} Layers */

/** Half the side of a task's square, pixels. */
export const TASK_MARK = 10;

/**
 * How each task state of the coordination map is drawn (the Control Center's names).
 * @type {Record<string, {legend: string, color: string, mark: string}>}
 */
export const TASK_STATES = {
  waiting: { legend: 'waiting for a robot', color: '#8a8f98', mark: 'dashed' },
  auction: { legend: 'being auctioned', color: '#cc79a7', mark: 'dashed' },
  sent: { legend: 'sent, not yet confirmed', color: '#56b4e9', mark: 'dashed' },
  queued: { legend: 'queued', color: '#0072b2', mark: 'solid' },
  running: { legend: 'running', color: '#e69f00', mark: 'solid' },
  ended: { legend: 'ended', color: '#009e73', mark: 'solid' },
  blocked: { legend: 'blocked (a precondition failed)', color: '#b00020', mark: 'solid' },
  aborted: { legend: 'aborted', color: '#5b606a', mark: 'cross' },
  failed: { legend: 'failed', color: '#d55e00', mark: 'cross' },
};

/** Pixels at the bottom of the canvas the scale bar takes (its box, and a gap above it). */
export const SCALE_BAR_ROOM = 44;

/** The camera: screen = origin + map × scale (both with y down). */
export class Camera {
  constructor() {
    this.scale = 1;
    this.ox = 0;
    this.oy = 0;
  }

  /**
   * Frames the whole map in a `w` × `h` canvas with a margin, and the bodies of `bodies`
   * outside it (those within a map's width and height of it: a stray body far away does
   * not shrink the map to a dot).
   * @param {Scene2d} scene
   * @param {number} w
   * @param {number} h
   * @param {import('./frame.js').Bodies | null} [bodies]
   */
  fit(scene, w, h, bodies) {
    // The margin; below the map, room for the scale bar (`Renderer.scaleBar`).
    const m = 24;
    const below = SCALE_BAR_ROOM;
    let x0 = 0;
    let y0 = 0;
    let x1 = scene.width;
    let y1 = scene.height;
    if (bodies) {
      const p = bodies.pose;
      for (let i = 0; i < bodies.n; i++) {
        const x = p[5 * i];
        const y = p[5 * i + 1];
        const r = Math.max(p[5 * i + 3], p[5 * i + 4]);
        if (x < -scene.width || x > 2 * scene.width || y < -scene.height || y > 2 * scene.height) continue;
        x0 = Math.min(x0, x - r);
        y0 = Math.min(y0, y - r);
        x1 = Math.max(x1, x + r);
        y1 = Math.max(y1, y + r);
      }
    }
    const bw = Math.max(1e-6, x1 - x0);
    const bh = Math.max(1e-6, y1 - y0);
    this.scale = Math.max(1e-6, Math.min((w - 2 * m) / bw, (h - m - below) / bh));
    this.ox = (w - bw * this.scale) / 2 - x0 * this.scale;
    this.oy = m + (h - m - below - bh * this.scale) / 2 - y0 * this.scale;
  }

  /** @param {number} x @param {number} y @returns {[number, number]} */
  toScreen(x, y) {
    return [this.ox + x * this.scale, this.oy + y * this.scale];
  }

  /** @param {number} sx @param {number} sy @returns {[number, number]} */
  toMap(sx, sy) {
    return [(sx - this.ox) / this.scale, (sy - this.oy) / this.scale];
  }

  /**
   * Zooms by `f` keeping the map point under (sx, sy) in place.
   * @param {number} f @param {number} sx @param {number} sy
   */
  zoom(f, sx, sy) {
    const [x, y] = this.toMap(sx, sy);
    this.scale *= f;
    this.ox = sx - x * this.scale;
    this.oy = sy - y * this.scale;
  }
}

/**
 * A "nice" step (1, 2 or 5 × 10^k) near `v`.
 * @param {number} v
 */
/**
 * The shade of a density cell holding `n` bodies when the most in a cell is `max`: pale to
 * dark blue on a logarithmic scale.
 * @param {number} n @param {number} max
 * @returns {[number, number, number]}
 */
function densityShade(n, max) {
  const f = 0.25 + 0.75 * (Math.log1p(n) / Math.log1p(Math.max(1, max)));
  return [Math.round(200 - 170 * f), Math.round(220 - 150 * f), Math.round(255 - 75 * f)];
}

/** A cell's size for the density key: three significant figures, no trailing zeros. */
function fmtSize(v) {
  return String(Number(v.toPrecision(3)));
}

function niceStep(v) {
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  const m = v / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/** Widths of label texts (12 px sans-serif), pixels: measuring is slow. */
const textWidths = new Map();

/** Smallest radius a body is drawn with, pixels: a body is drawn at its true size down to
 * one pixel across, so a crowd shows its spacing rather than a solid block. */
export const MIN_R = 0.5;
/** Below this radius (pixels) a disc is drawn as a square and without its heading. */
export const SMALL_R = 4;
/** From this many bodies a few pixels across on the screen, they are stamped into one image
 * rather than drawn as paths. */
const STAMP_FROM = 300;
/** Most labels placed in a dense scene (the rest show on hover). */
const MAX_LABELS = 200;
/** More bodies on the screen than this is a dense scene: only big bodies, carried items and
 * the selected one are labelled. */
const DENSE = 300;

/** Side of the cells the label placer buckets the bodies' screen boxes into, pixels. */
const LABEL_CELL = 32;

/** Places labels so that none overlaps another label, a body or a task's square, nor leaves
 * the canvas (first come, first placed). */
class LabelPlacer {
  /** @param {number} w @param {number} h the canvas' size */
  constructor(w, h) {
    this.w = w;
    this.h = h;
    /** @type {{text: string, x: number, y: number, w: number, h: number}[]} */
    this.placed = [];
    /** @type {{x: number, y: number, w: number, h: number}[]} boxes no label may cover */
    this.avoid = [];
    /** The bodies' screen boxes (x0, y0, x1, y1 each) and group (a carried item's is its
     * carrier's index, any other body's its own). */
    this.boxes = new Float32Array(0);
    this.group = new Int32Array(0);
    this.cols = Math.max(1, Math.ceil(w / LABEL_CELL));
    this.rows = Math.max(1, Math.ceil(h / LABEL_CELL));
    /** The bodies in each cell: `cellBodies[cellStart[c] .. cellStart[c + 1]]`. */
    this.cellStart = new Uint32Array(this.cols * this.rows + 1);
    this.cellBodies = new Uint32Array(0);
  }

  /**
   * The bodies no label may cover: `boxes` holds x0, y0, x1, y1 of each body on the screen
   * (x1 < x0 for one off it), `group` whose labels may come next to it.
   * @param {Float32Array} boxes @param {Int32Array} group @param {number} n
   */
  setBodies(boxes, group, n) {
    this.boxes = boxes;
    this.group = group;
    const { cols, rows } = this;
    const counts = new Uint32Array(cols * rows + 1);
    /** @param {number} i @param {(c: number) => void} f */
    const cells = (i, f) => {
      if (boxes[4 * i + 2] < boxes[4 * i]) return;
      const cx0 = Math.max(0, Math.floor(boxes[4 * i] / LABEL_CELL));
      const cy0 = Math.max(0, Math.floor(boxes[4 * i + 1] / LABEL_CELL));
      const cx1 = Math.min(cols - 1, Math.floor(boxes[4 * i + 2] / LABEL_CELL));
      const cy1 = Math.min(rows - 1, Math.floor(boxes[4 * i + 3] / LABEL_CELL));
      for (let cy = cy0; cy <= cy1; cy++) for (let cx = cx0; cx <= cx1; cx++) f(cy * cols + cx);
    };
    for (let i = 0; i < n; i++) cells(i, (c) => counts[c + 1]++);
    for (let c = 0; c < cols * rows; c++) counts[c + 1] += counts[c];
    this.cellStart = counts.slice();
    this.cellBodies = new Uint32Array(counts[cols * rows]);
    for (let i = 0; i < n; i++) cells(i, (c) => (this.cellBodies[counts[c]++] = i));
  }

  /**
   * Whether the box (x, y, w, h) covers a body not of group `g`.
   * @param {number} x @param {number} y @param {number} w @param {number} h @param {number} g
   */
  coversBody(x, y, w, h, g) {
    const { cols, rows, boxes, group, cellStart, cellBodies } = this;
    if (!cellBodies.length) return false;
    const cx0 = Math.max(0, Math.floor(x / LABEL_CELL));
    const cy0 = Math.max(0, Math.floor(y / LABEL_CELL));
    const cx1 = Math.min(cols - 1, Math.floor((x + w) / LABEL_CELL));
    const cy1 = Math.min(rows - 1, Math.floor((y + h) / LABEL_CELL));
    for (let cy = cy0; cy <= cy1; cy++) {
      for (let cx = cx0; cx <= cx1; cx++) {
        const c = cy * cols + cx;
        for (let k = cellStart[c]; k < cellStart[c + 1]; k++) {
          const i = cellBodies[k];
          if (group[i] === g) continue;
          if (x + w <= boxes[4 * i] || boxes[4 * i + 2] <= x || y + h <= boxes[4 * i + 1] || boxes[4 * i + 3] <= y) continue;
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Places `text` next to the box of half-sizes (rx, ry) around (sx, sy) if a free spot
   * exists; returns whether it did. The bodies of group `g` (the one labelled, and what it
   * carries) may be next to it; no other body is covered.
   * @param {CanvasRenderingContext2D} ctx
   * @param {string} text @param {number} sx @param {number} sy @param {number} rx
   * @param {number} [ry] @param {number} [g]
   */
  place(ctx, text, sx, sy, rx, ry = rx, g = -1) {
    let w = textWidths.get(text);
    if (w === undefined) {
      if (textWidths.size > 5000) textWidths.clear();
      w = ctx.measureText(text).width + 4;
      textWidths.set(text, w);
    }
    const h = 14;
    const spots = [
      [sx + rx + 2, sy - h / 2],
      [sx - rx - 2 - w, sy - h / 2],
      [sx - w / 2, sy - ry - 2 - h],
      [sx - w / 2, sy + ry + 2],
    ];
    for (const [x, y] of spots) {
      if (x < 0 || y < 0 || x + w > this.w || y + h > this.h) continue;
      const free = (/** @type {{x: number, y: number, w: number, h: number}} */ b) => x + w <= b.x || b.x + b.w <= x || y + h <= b.y || b.y + b.h <= y;
      if (this.placed.every(free) && this.avoid.every(free) && !this.coversBody(x, y, w, h, g)) {
        this.placed.push({ text, x, y, w, h });
        ctx.fillStyle = 'rgba(255,255,255,0.8)';
        ctx.fillRect(x, y, w, h);
        ctx.fillStyle = '#111';
        ctx.fillText(text, x + 2, y + h - 3);
        return true;
      }
    }
    return false;
  }
}

export class Renderer {
  /** @param {HTMLCanvasElement} canvas */
  constructor(canvas) {
    this.canvas = canvas;
    // A canvas the processor draws (Skia), not the GPU: thousands of small paths raster
    // faster there, and reading pixels back (tests, picking colours) is cheap.
    const cpu = new URLSearchParams(location.search).get('canvas') !== 'gpu';
    this.ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d', { alpha: false, willReadFrequently: cpu }));
    this.camera = new Camera();
    /** @type {HTMLCanvasElement | null} the density picture's pixels, one a cell */
    this.gridCanvas = null;
    /** @type {{text: string, cellW: number, cellH: number, max: number} | null} the density picture's key as last drawn */
    this.densityKey = null;
    /** @type {Scene2d | null} */
    this.scene = null;
    /** @type {HTMLCanvasElement | null} */
    this.bitmap = null;
    /** @type {Map<number, number[]>} map points per id, while the trail is on */
    this.trails = new Map();
    /** @type {Frame2d | null} the frame last drawn */
    this.frame = null;
    /** Screen centre and radius of every body of that frame, pixels. */
    this.sx = new Float32Array(0);
    this.sy = new Float32Array(0);
    this.sr = new Float32Array(0);
    /** Per body of that frame: 1 if it is on the screen, 1 if it is a carried item. */
    this.vis = new Uint8Array(0);
    this.carried = new Uint8Array(0);
    /** Index of each id in that frame (−1: none), or `idMap` when ids are too large. */
    this.idIndex = new Int32Array(0);
    /** @type {Map<number, number> | null} */
    this.idMap = null;
    /** Bodies on the screen, not carried, a few pixels across. */
    this.tinyCount = 0;
    /** Bodies stamped (not drawn as paths) in the frame last drawn. */
    this.stamped = 0;
    /** @type {Map<number, number>} item id → carrier id */
    this.carriers = new Map();
    /** @type {Map<number, string>} */
    this.names = new Map();
    /** Bodies on the screen in the frame last drawn. */
    this.visibleCount = 0;
    /** @type {({size: number, words: Uint32Array} | undefined)[]} pixel stamps of tiny
     * bodies, by state × 16 + size */
    this.stamps = [];
    /** The layer tiny bodies are stamped into, pixel by pixel, then drawn at once. */
    this.layer = document.createElement('canvas');
    /** @type {ImageData | null} */
    this.layerImage = null;
    /** The layer's pixels that hold stamps: x0, y0, x1, y1 (empty when x1 ≤ x0). */
    this.layerBox = [0, 0, 0, 0];
    /** @type {{text: string, x: number, y: number, w: number, h: number}[]} */
    this.labels = [];
    /** @type {number | null} */
    this.selected = null;
    /** The camera frames the bodies too once the first frame of a new map comes. */
    this.fitBodies = false;
    /** @type {Record<string, number> | null} milliseconds of drawing by phase, summed (only
     * while the page is benchmarked) */
    this.timing = null;
    this.lastLap = 0;
  }

  /**
   * Adds the milliseconds since the last lap to phase `name`, while timing.
   * @param {string} name
   */
  lap(name) {
    if (!this.timing) return;
    const now = performance.now();
    this.timing[name] = (this.timing[name] || 0) + now - this.lastLap;
    this.lastLap = now;
  }

  /** @param {Scene2d} scene */
  setScene(scene) {
    this.stamps = [];
    const first = !this.scene || this.scene.width !== scene.width || this.scene.height !== scene.height;
    this.scene = scene;
    this.bitmap = scene.bitmap ? bitmapCanvas(scene.bitmap) : null;
    if (first) {
      this.camera.fit(scene, this.canvas.width, this.canvas.height);
      this.fitBodies = true;
    }
  }

  /**
   * The style of state index `i`.
   * @param {number} i
   * @returns {StateStyle}
   */
  style(i) {
    const s = this.scene && this.scene.states[i];
    return s || { name: '', legend: '', color: '#4477aa', mark: 'fill' };
  }

  /**
   * Draws the scene and `frame`.
   * @param {Frame2d | null} frame
   * @param {Layers} layers
   */
  draw(frame, layers) {
    const { ctx, canvas, camera: cam, scene } = this;
    if (this.timing) this.lastLap = performance.now();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = '#e9ecef';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    this.labels = [];
    if (!scene) return;
    const s = cam.scale;
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(cam.ox, cam.oy, scene.width * s, scene.height * s);
    this.grid(scene);
    // Obstacles.
    if (this.bitmap && scene.bitmap) {
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(this.bitmap, cam.ox, cam.oy, scene.bitmap.width * scene.bitmap.cell * s, scene.bitmap.height * scene.bitmap.cell * s);
    }
    ctx.fillStyle = '#2b2d31';
    for (const r of scene.rects) {
      const w = Math.max(1, (r[2] - r[0]) * s);
      const h = Math.max(1, (r[3] - r[1]) * s);
      ctx.fillRect(cam.ox + r[0] * s, cam.oy + r[1] * s, w, h);
    }
    ctx.strokeStyle = '#2b2d31';
    ctx.lineWidth = 2;
    ctx.strokeRect(cam.ox, cam.oy, scene.width * s, scene.height * s);
    // Rooms and named shapes.
    ctx.font = '13px sans-serif';
    ctx.textAlign = 'center';
    ctx.fillStyle = '#7a7f87';
    for (const l of scene.labels) {
      const [x, y] = cam.toScreen(l.x + l.w / 2, l.y + l.h / 2);
      ctx.fillText(l.text, x, y + 4);
    }
    ctx.textAlign = 'left';
    // Map-paths.
    ctx.strokeStyle = 'rgba(60,130,200,0.45)';
    ctx.lineWidth = 2;
    ctx.beginPath();
    for (const p of scene.paths) {
      const [ax, ay] = cam.toScreen(p[0], p[1]);
      const [bx, by] = cam.toScreen(p[2], p[3]);
      ctx.moveTo(ax, ay);
      ctx.lineTo(bx, by);
    }
    ctx.stroke();
    if (!frame || !frame.bodies) {
      this.frame = null;
      this.scaleBar(scene);
      return;
    }
    const b = frame.bodies;
    if (this.fitBodies) {
      this.fitBodies = false;
      const before = [cam.scale, cam.ox, cam.oy].join();
      cam.fit(scene, canvas.width, canvas.height, b);
      // Drawn again from the start if the bodies reach beyond the map.
      if ([cam.scale, cam.ox, cam.oy].join() !== before) return this.draw(frame, layers);
    }
    this.lap('map');
    if (frame.grid) this.density(frame.grid);
    this.layout(frame);
    const visible = this.visibleCount;
    this.lap('layout');
    // Routes: one path per colour.
    if (layers.routes && frame.routes && frame.routes.length) {
      /** @type {Map<string, import('./frame.js').Route2d[]>} */
      const byColor = new Map();
      for (const r of frame.routes) {
        const i = this.indexOf(r.id);
        const c = i === undefined ? '#888' : this.bodyColor(b, i);
        let list = byColor.get(c);
        if (!list) byColor.set(c, (list = []));
        list.push(r);
      }
      // Dashed while few (dashes cost time), faint and solid when many.
      const few = frame.routes.length <= 200;
      ctx.setLineDash(few ? [6, 4] : []);
      ctx.globalAlpha = few ? 1 : 0.5;
      ctx.lineWidth = few ? 1.5 : 1;
      for (const [c, list] of byColor) {
        ctx.strokeStyle = c;
        ctx.beginPath();
        for (const r of list) {
          r.points.forEach((p, k) => {
            const x = cam.ox + p[0] * s;
            const y = cam.oy + p[1] * s;
            if (k === 0) ctx.moveTo(x, y);
            else ctx.lineTo(x, y);
          });
        }
        ctx.stroke();
      }
      ctx.setLineDash([]);
      ctx.globalAlpha = 1;
    }
    this.lap('routes');
    // Trails: one path per colour.
    if (layers.trail) {
      /** @type {Map<string, number[][]>} */
      const byColor = new Map();
      for (let i = 0; i < b.n; i++) {
        if (this.carried[i]) continue;
        let t = this.trails.get(b.ids[i]);
        if (!t) this.trails.set(b.ids[i], (t = []));
        const x = b.pose[5 * i];
        const y = b.pose[5 * i + 1];
        if (t.length < 2 || Math.hypot(t[t.length - 2] - x, t[t.length - 1] - y) > 0.5) t.push(x, y);
        if (t.length > 4000) t.splice(0, t.length - 4000);
        const c = this.bodyColor(b, i);
        let list = byColor.get(c);
        if (!list) byColor.set(c, (list = []));
        list.push(t);
      }
      ctx.globalAlpha = 0.5;
      ctx.lineWidth = 1.5;
      for (const [c, list] of byColor) {
        ctx.strokeStyle = c;
        ctx.beginPath();
        for (const t of list) {
          for (let k = 0; k < t.length; k += 2) {
            const x = cam.ox + t[k] * s;
            const y = cam.oy + t[k + 1] * s;
            if (k === 0) ctx.moveTo(x, y);
            else ctx.lineTo(x, y);
          }
        }
        ctx.stroke();
      }
      ctx.globalAlpha = 1;
    } else if (this.trails.size) {
      this.trails.clear();
    }
    this.lap('trails');
    // Sonar rays and bumpers.
    if (layers.rays && frame.sensors) {
      ctx.strokeStyle = 'rgb(40,170,60)';
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (const sn of frame.sensors) {
        for (const r of sn.rays) {
          const [ax, ay] = cam.toScreen(r[0], r[1]);
          const [bx, by] = cam.toScreen(r[2], r[3]);
          ctx.moveTo(ax, ay);
          ctx.lineTo(bx, by);
        }
      }
      ctx.stroke();
    }
    // POIs: one path of diamonds.
    ctx.fillStyle = '#3c82c8';
    ctx.beginPath();
    for (const p of scene.pois) {
      const [x, y] = cam.toScreen(p.x, p.y);
      ctx.moveTo(x, y - 5);
      ctx.lineTo(x + 5, y);
      ctx.lineTo(x, y + 5);
      ctx.lineTo(x - 5, y);
      ctx.closePath();
    }
    ctx.fill();
    // The coordination map's task squares under the bodies: a robot at (or next to) a task's
    // goal stays in sight.
    const tasks = this.tasks(frame);
    // Bodies: the Mobile Robot Simulator's few robots one by one (each its own colour),
    // others batched by state; carried items on top.
    if (scene.world === 'mrs') {
      for (let i = 0; i < b.n; i++) this.body(b, i);
    } else {
      this.bodies(b);
    }
    this.lap('bodies');
    if (frame.sensors) {
      ctx.fillStyle = 'rgb(230,30,30)';
      for (const sn of frame.sensors) {
        for (const bp of sn.bumpers) {
          const [x, y] = cam.toScreen(bp[1], bp[2]);
          ctx.beginPath();
          ctx.arc(x, y, Math.max(2.5, 1.8 * s), 0, 2 * Math.PI);
          ctx.fill();
        }
      }
    }
    // Labels: POIs, then the selected body, items, robots (never overlapping).
    const placer = new LabelPlacer(canvas.width, canvas.height);
    // No label covers a task's square.
    for (const t of tasks) placer.avoid.push({ x: t.sx - TASK_MARK - 2, y: t.sy - TASK_MARK - 2, w: 2 * TASK_MARK + 4, h: 2 * TASK_MARK + 4 });
    ctx.font = '12px sans-serif';
    const order = this.labelOrder(layers.labels, visible > DENSE);
    // No label covers a body: their screen boxes, a carried item in its carrier's group.
    const { boxes, group } = this.screenBoxes(b);
    placer.setBodies(boxes, group, b.n);
    for (const i of order) {
      // A carried item's label goes next to its carrier, as the carrier's does.
      const g = group[i];
      const rx = (boxes[4 * g + 2] - boxes[4 * g]) / 2;
      const ry = (boxes[4 * g + 3] - boxes[4 * g + 1]) / 2;
      const [x, y] = [this.sx[g], this.sy[g]];
      // A robot at a task's goal: its label goes outside the task's square.
      if (!placer.place(ctx, this.label(i), x, y, rx, ry, g) && tasks.length) {
        placer.place(ctx, this.label(i), x, y, Math.max(rx, TASK_MARK + 2), Math.max(ry, TASK_MARK + 2), g);
      }
    }
    for (const p of scene.pois) {
      const [x, y] = cam.toScreen(p.x, p.y);
      placer.place(ctx, p.name, x, y, 5);
    }
    if (layers.labels) for (const t of tasks) placer.place(ctx, `task ${t.id}`, t.sx, t.sy, TASK_MARK + 2);
    this.labels = placer.placed;
    this.lap('labels');
    this.taskLegend(tasks);
    this.scaleBar(scene);
    this.densityKey = frame.grid ? this.densityLegend(frame.grid, scene) : null;
    this.lap('overlay');
  }

  /**
   * Paints a density picture (too many bodies in view to send one by one): each cell's
   * count as a shade from pale to dark blue on a logarithmic scale, empty cells clear.
   * @param {import('./frame.js').Grid2d} g
   */
  density(g) {
    const { ctx, camera: cam } = this;
    if (!this.gridCanvas) this.gridCanvas = document.createElement('canvas');
    const c = this.gridCanvas;
    c.width = g.cols;
    c.height = g.rows;
    const gctx = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
    const img = gctx.createImageData(g.cols, g.rows);
    for (let k = 0; k < g.counts.length; k++) {
      const n = g.counts[k];
      if (n === 0) continue;
      const [r, gr, bl] = densityShade(n, g.max);
      img.data[4 * k] = r;
      img.data[4 * k + 1] = gr;
      img.data[4 * k + 2] = bl;
      img.data[4 * k + 3] = 255;
    }
    gctx.putImageData(img, 0, 0);
    const [ax, ay] = cam.toScreen(g.x0, g.y0);
    const [bx, by] = cam.toScreen(g.x1, g.y1);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(c, ax, ay, bx - ax, by - ay);
  }

  /**
   * The density picture's key, in a box at the top right of the canvas: the shades from one
   * body a cell to the most in a cell, and a cell's size. Returns what it says.
   * @param {import('./frame.js').Grid2d} g @param {Scene2d} scene
   * @returns {{text: string, cellW: number, cellH: number, max: number}}
   */
  densityLegend(g, scene) {
    const { ctx, canvas } = this;
    const cellW = (g.x1 - g.x0) / g.cols;
    const cellH = (g.y1 - g.y0) / g.rows;
    const units = scene.units === 'unit' ? 'units' : scene.units;
    const size = cellW.toPrecision(3) === cellH.toPrecision(3)
      ? `${fmtSize(cellW)} ${units}`
      : `${fmtSize(cellW)} × ${fmtSize(cellH)} ${units}`;
    const text = `bodies in a cell ${size} across`;
    const most = g.max >= 65535 ? '≥ 65,535' : g.max.toLocaleString('en');
    ctx.font = '12px sans-serif';
    const ramp = 120;
    const w = Math.max(ctx.measureText(text).width, ramp + 16 + ctx.measureText(most).width) + 16;
    const x = canvas.width - w - 8;
    ctx.fillStyle = 'rgba(255,255,255,0.9)';
    ctx.fillRect(x, 8, w, 42);
    ctx.fillStyle = '#111';
    ctx.fillText(text, x + 8, 22);
    const steps = 24;
    for (let i = 0; i < steps; i++) {
      const n = Math.max(1, Math.round(Math.expm1((Math.log1p(Math.max(1, g.max)) * (i + 1)) / steps)));
      const [r, gr, bl] = densityShade(n, g.max);
      ctx.fillStyle = `rgb(${r},${gr},${bl})`;
      ctx.fillRect(x + 20 + (ramp * i) / steps, 30, ramp / steps + 0.5, 12);
    }
    ctx.fillStyle = '#111';
    ctx.fillText('1', x + 8, 41);
    ctx.fillText(most, x + 24 + ramp, 41);
    return { text: `${text}: 1 to ${most}`, cellW, cellH, max: g.max };
  }

  /**
   * The coordination map's tasks: a square at each goal in its state's colour (dashed while
   * no robot has taken it, crossed out when aborted or failed) and, while a robot holds it
   * unfinished, a dashed line from the robot to the goal. Returns what was drawn.
   * @param {Frame2d} frame
   * @returns {{id: number, state: string, sx: number, sy: number}[]}
   */
  tasks(frame) {
    const { ctx, camera: cam } = this;
    /** @type {{id: number, state: string, sx: number, sy: number}[]} */
    const out = [];
    const b = frame.bodies;
    for (const t of frame.tasks || []) {
      if (t.x === null || t.y === null || t.x === undefined || t.y === undefined) continue;
      const st = TASK_STATES[t.state] || TASK_STATES.waiting;
      const [sx, sy] = cam.toScreen(t.x, t.y);
      const i = t.robot === null ? undefined : this.indexOf(t.robot);
      if (i !== undefined && !['ended', 'aborted', 'failed'].includes(t.state)) {
        const [rx, ry] = cam.toScreen(b.pose[5 * i], b.pose[5 * i + 1]);
        ctx.strokeStyle = st.color;
        ctx.lineWidth = 1.5;
        ctx.setLineDash([3, 4]);
        ctx.beginPath();
        ctx.moveTo(rx, ry);
        ctx.lineTo(sx, sy);
        ctx.stroke();
      }
      const m = TASK_MARK;
      ctx.setLineDash(st.mark === 'dashed' ? [4, 3] : []);
      ctx.strokeStyle = st.color;
      ctx.lineWidth = 3;
      ctx.strokeRect(sx - m, sy - m, 2 * m, 2 * m);
      ctx.setLineDash([]);
      if (st.mark === 'cross') {
        ctx.beginPath();
        ctx.moveTo(sx - m, sy - m);
        ctx.lineTo(sx + m, sy + m);
        ctx.moveTo(sx + m, sy - m);
        ctx.lineTo(sx - m, sy + m);
        ctx.stroke();
      }
      out.push({ id: t.id, state: t.state, sx, sy });
    }
    return out;
  }

  /**
   * The task states on the map, in a box at the top left of the canvas.
   * @param {{state: string}[]} tasks
   */
  taskLegend(tasks) {
    const present = Object.keys(TASK_STATES).filter((k) => tasks.some((t) => t.state === k));
    if (!present.length) return;
    const { ctx } = this;
    ctx.font = '12px sans-serif';
    const w = 8 + Math.max(...present.map((k) => ctx.measureText(TASK_STATES[k].legend).width)) + 28;
    ctx.fillStyle = 'rgba(255,255,255,0.9)';
    ctx.fillRect(8, 8, w, 20 + 18 * present.length);
    ctx.fillStyle = '#111';
    ctx.fillText('tasks', 14, 22);
    present.forEach((k, n) => {
      const st = TASK_STATES[k];
      const y = 30 + 18 * n;
      ctx.strokeStyle = st.color;
      ctx.lineWidth = 2.5;
      ctx.setLineDash(st.mark === 'dashed' ? [3, 2] : []);
      ctx.strokeRect(15, y, 10, 10);
      ctx.setLineDash([]);
      ctx.fillStyle = '#111';
      ctx.fillText(st.legend, 32, y + 10);
    });
  }

  /**
   * The colour of body `i`: its own (by id) for the Mobile Robot Simulator's few robots,
   * its state's otherwise.
   * @param {import('./frame.js').Bodies} b @param {number} i
   */
  bodyColor(b, i) {
    if (this.scene && this.scene.world === 'mrs') return idColor(b.ids[i]);
    return this.style(b.states[i]).color;
  }

  /**
   * Where every body of `frame` is on the screen (centre and radius in pixels, whether it is
   * on the screen at all), who carries what, the names, the index of each id.
   * @param {Frame2d} frame
   */
  layout(frame) {
    const { camera: cam, canvas } = this;
    const b = frame.bodies;
    const n = b.n;
    this.frame = frame;
    this.names = new Map(frame.names || []);
    this.carriers = new Map((frame.carried || []).map(([item, c]) => [item, c]));
    if (this.sx.length < n) {
      const size = Math.max(n, 2 * this.sx.length);
      this.sx = new Float32Array(size);
      this.sy = new Float32Array(size);
      this.sr = new Float32Array(size);
      this.vis = new Uint8Array(size);
      this.carried = new Uint8Array(size);
    }
    // Ids index a typed array while they are not much larger than the bodies are many.
    const ids = b.ids;
    let maxId = 0;
    for (let i = 0; i < n; i++) if (ids[i] > maxId) maxId = ids[i];
    if (maxId < 4 * n + 65536) {
      this.idMap = null;
      if (this.idIndex.length <= maxId) this.idIndex = new Int32Array(Math.max(maxId + 1, 2 * this.idIndex.length));
      this.idIndex.fill(-1);
      for (let i = 0; i < n; i++) this.idIndex[ids[i]] = i;
    } else {
      this.idMap = new Map();
      for (let i = 0; i < n; i++) this.idMap.set(ids[i], i);
    }
    const carrying = this.carriers.size > 0;
    const { sx, sy, sr, vis, carried } = this;
    const w = canvas.width;
    const h = canvas.height;
    const s = cam.scale;
    const p = b.pose;
    let visible = 0;
    let tiny = 0;
    for (let i = 0; i < n; i++) {
      const x = cam.ox + p[5 * i] * s;
      const y = cam.oy + p[5 * i + 1] * s;
      const half = p[5 * i + 3] > p[5 * i + 4] ? p[5 * i + 3] : p[5 * i + 4];
      let r = half * s > MIN_R ? half * s : MIN_R;
      const c = carrying && this.carriers.has(ids[i]) ? 1 : 0;
      if (c) r = Math.max(4, Math.min(r, 7));
      sx[i] = x;
      sy[i] = y;
      sr[i] = r;
      carried[i] = c;
      const v = x + r >= 0 && x - r <= w && y + r >= 0 && y - r <= h ? 1 : 0;
      vis[i] = v;
      visible += v;
      if (v && !c && r < SMALL_R) tiny++;
    }
    this.visibleCount = visible;
    this.tinyCount = tiny;
  }

  /**
   * The screen box of every body of the frame last laid out, as drawn (x0, y0, x1, y1; empty
   * for one off the screen), and its label group: a carried item's carrier, else itself.
   * @param {import('./frame.js').Bodies} b
   */
  screenBoxes(b) {
    const n = b.n;
    const boxes = new Float32Array(4 * n);
    const group = new Int32Array(n);
    const s = this.camera.scale;
    for (let i = 0; i < n; i++) {
      group[i] = i;
      if (!this.vis[i]) {
        boxes[4 * i] = 1;
        boxes[4 * i + 2] = 0;
        continue;
      }
      let ex = this.sr[i];
      let ey = ex;
      if (ex >= SMALL_R && !this.carried[i] && (b.flags[i] & 1) !== 1) {
        // A box turned by its heading (as `outline` draws it).
        const hw = Math.max(MIN_R, b.pose[5 * i + 3] * s);
        const hh = Math.max(MIN_R, b.pose[5 * i + 4] * s);
        const c = Math.abs(Math.cos(b.pose[5 * i + 2]));
        const sn = Math.abs(Math.sin(b.pose[5 * i + 2]));
        ex = c * hw + sn * hh;
        ey = sn * hw + c * hh;
      }
      boxes[4 * i] = this.sx[i] - ex;
      boxes[4 * i + 1] = this.sy[i] - ey;
      boxes[4 * i + 2] = this.sx[i] + ex;
      boxes[4 * i + 3] = this.sy[i] + ey;
    }
    for (let i = 0; i < n; i++) {
      if (!this.carried[i]) continue;
      const c = this.carriers.get(b.ids[i]);
      const k = c === undefined ? undefined : this.indexOf(c);
      if (k !== undefined && this.vis[k]) group[i] = k;
    }
    return { boxes, group };
  }

  /**
   * Adds body `i`'s outline to the current path: a disc, or its box turned by its heading (a
   * square when it is only a few pixels across).
   * @param {import('./frame.js').Bodies} b @param {number} i
   */
  outline(b, i) {
    const { ctx } = this;
    const x = this.sx[i];
    const y = this.sy[i];
    const r = this.sr[i];
    if (r < SMALL_R) {
      ctx.rect(x - r, y - r, 2 * r, 2 * r);
    } else if ((b.flags[i] & 1) === 1) {
      ctx.moveTo(x + r, y);
      ctx.arc(x, y, r, 0, 2 * Math.PI);
    } else {
      const s = this.camera.scale;
      const hw = Math.max(MIN_R, b.pose[5 * i + 3] * s);
      const hh = Math.max(MIN_R, b.pose[5 * i + 4] * s);
      const c = Math.cos(b.pose[5 * i + 2]);
      const sn = Math.sin(b.pose[5 * i + 2]);
      ctx.moveTo(x + c * hw - sn * hh, y + sn * hw + c * hh);
      ctx.lineTo(x - c * hw - sn * hh, y - sn * hw + c * hh);
      ctx.lineTo(x - c * hw + sn * hh, y - sn * hw - c * hh);
      ctx.lineTo(x + c * hw + sn * hh, y + sn * hw - c * hh);
      ctx.closePath();
    }
  }

  /**
   * Every body but the Mobile Robot Simulator's, batched: one path per state for the bodies,
   * one for their outlines, one for their headings, one for crosses; then carried items.
   * @param {import('./frame.js').Bodies} b
   */
  bodies(b) {
    const { ctx, scene } = this;
    if (!scene) return;
    const states = Math.max(1, scene.states.length);
    const item = scene.kinds.indexOf('item');
    const drone = scene.kinds.indexOf('drone');
    // Bucket the bodies on the screen by state (counting sort), carried items apart.
    // Bodies a few pixels across are stamped into one image when there are many (a path
    // per body costs more), bucketed apart from the others.
    const stamping = this.tinyCount >= STAMP_FROM;
    const { vis, sr } = this;
    const bucket = new Uint8Array(b.n);
    const counts = new Uint32Array(states + 2);
    for (let i = 0; i < b.n; i++) {
      if (!vis[i]) continue;
      const k = this.carried[i] ? states : stamping && sr[i] < SMALL_R ? states + 1 : b.states[i] < states ? b.states[i] : 0;
      bucket[i] = k;
      counts[k]++;
    }
    const stateOf = (/** @type {number} */ i) => (b.states[i] < states ? b.states[i] : 0);
    const start = new Uint32Array(states + 3);
    for (let k = 0; k <= states + 1; k++) start[k + 1] = start[k] + counts[k];
    const order = new Uint32Array(start[states + 2]);
    const fill = start.slice(0, states + 2);
    for (let i = 0; i < b.n; i++) if (vis[i]) order[fill[bucket[i]]++] = i;
    this.lap('bodies');
    this.stampTiny(b, order.subarray(start[states + 1], start[states + 2]), stateOf);
    this.lap('stamps');
    for (let k = 0; k < states; k++) {
      if (start[k] === start[k + 1]) continue;
      const st = this.style(k);
      const list = order.subarray(start[k], start[k + 1]);
      ctx.beginPath();
      for (const i of list) this.outline(b, i);
      if (st.mark === 'ring') {
        ctx.fillStyle = 'rgba(255,255,255,0.85)';
        ctx.fill();
        ctx.strokeStyle = st.color;
        ctx.lineWidth = 3;
        ctx.stroke();
      } else if (st.mark === 'cross') {
        ctx.fillStyle = '#9a9ea5';
        ctx.fill();
        ctx.strokeStyle = st.color;
        ctx.lineWidth = 2.5;
        ctx.beginPath();
        for (const i of list) {
          const x = this.sx[i];
          const y = this.sy[i];
          const r = this.sr[i];
          ctx.moveTo(x - r, y - r);
          ctx.lineTo(x + r, y + r);
          ctx.moveTo(x + r, y - r);
          ctx.lineTo(x - r, y + r);
        }
        ctx.stroke();
      } else {
        ctx.fillStyle = st.color;
        ctx.fill();
        ctx.strokeStyle = 'rgba(0,0,0,0.35)';
        ctx.lineWidth = 1;
        ctx.stroke();
      }
      if (st.mark !== 'cross') {
        // Headings, from the centre to the rim (not for items, nor drones, which fly any
        // way without turning, nor bodies a few pixels across).
        ctx.strokeStyle = st.mark === 'ring' ? st.color : '#fff';
        ctx.lineWidth = 2;
        ctx.beginPath();
        for (const i of list) {
          if (b.kinds[i] === item || b.kinds[i] === drone || this.sr[i] < SMALL_R) continue;
          const t = b.pose[5 * i + 2];
          ctx.moveTo(this.sx[i], this.sy[i]);
          ctx.lineTo(this.sx[i] + Math.cos(t) * this.sr[i], this.sy[i] + Math.sin(t) * this.sr[i]);
        }
        ctx.stroke();
      }
    }
    // Carried items: small squares on their carriers, outlined so they show on any colour.
    const carried = order.subarray(start[states], start[states + 1]);
    ctx.strokeStyle = '#fff';
    ctx.lineWidth = 2;
    for (let k = 0; k < states && carried.length; k++) {
      ctx.beginPath();
      let any = false;
      for (const i of carried) {
        if (stateOf(i) !== k) continue;
        const r = this.sr[i];
        ctx.rect(this.sx[i] - r, this.sy[i] - r, 2 * r, 2 * r);
        any = true;
      }
      if (!any) continue;
      ctx.fillStyle = this.style(k).color;
      ctx.fill();
      ctx.stroke();
    }
    const sel = this.selected === null ? undefined : this.indexOf(this.selected);
    if (sel !== undefined) {
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.arc(this.sx[sel], this.sy[sel], this.sr[sel] + 4, 0, 2 * Math.PI);
      ctx.stroke();
    }
  }

  /**
   * The stamp of a body in state `k` a few pixels across: its mark (filled, ring, crossed
   * out) as RGBA words, 0 where it is transparent; one per state and size (1 to 15 pixels
   * across; under 3, only the state's colour).
   * @param {number} k @param {number} r pixels
   */
  stamp(k, r) {
    const size = Math.min(15, Math.max(1, Math.round(2 * r)));
    const key = 16 * k + size;
    let st = this.stamps[key];
    if (st) return st;
    const c = document.createElement('canvas');
    c.width = size;
    c.height = size;
    const g = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d', { willReadFrequently: true }));
    const style = this.style(k);
    if (size < 3) {
      g.fillStyle = style.color;
      g.fillRect(0, 0, size, size);
    } else if (style.mark === 'ring') {
      g.fillStyle = '#fff';
      g.fillRect(0, 0, size, size);
      g.strokeStyle = style.color;
      g.lineWidth = 2;
      g.strokeRect(1, 1, size - 2, size - 2);
    } else if (style.mark === 'cross') {
      g.fillStyle = '#9a9ea5';
      g.fillRect(0, 0, size, size);
      g.strokeStyle = style.color;
      g.lineWidth = 1.5;
      g.beginPath();
      g.moveTo(0, 0);
      g.lineTo(size, size);
      g.moveTo(size, 0);
      g.lineTo(0, size);
      g.stroke();
    } else {
      g.fillStyle = style.color;
      g.fillRect(0, 0, size, size);
    }
    st = { size, words: new Uint32Array(g.getImageData(0, 0, size, size).data.buffer) };
    this.stamps[key] = st;
    return st;
  }

  /**
   * Stamps the bodies of `list` (a few pixels across each) into the layer, then draws the
   * layer: one image for thousands of bodies. Only the box the stamps cover is cleared,
   * copied and drawn.
   * @param {import('./frame.js').Bodies} b @param {Uint32Array} list
   * @param {(i: number) => number} stateOf
   */
  stampTiny(b, list, stateOf) {
    const { canvas, layer } = this;
    const w = canvas.width;
    const h = canvas.height;
    if (layer.width !== w || layer.height !== h || !this.layerImage) {
      layer.width = w;
      layer.height = h;
      this.layerImage = new ImageData(w, h);
      this.layerBox = [0, 0, 0, 0];
    }
    this.stamped = list.length;
    const img = this.layerImage;
    const px = new Uint32Array(img.data.buffer);
    // Clear what the last stamps covered.
    const old = this.layerBox;
    for (let y = old[1]; y < old[3]; y++) px.fill(0, y * w + old[0], y * w + old[2]);
    if (!list.length) {
      this.layerBox = [0, 0, 0, 0];
      return;
    }
    let bx0 = w;
    let by0 = h;
    let bx1 = 0;
    let by1 = 0;
    const { sx, sy, sr } = this;
    for (let k = 0; k < list.length; k++) {
      const i = list[k];
      const st = this.stamp(stateOf(i), sr[i]);
      const words = st.words;
      const size = st.size;
      const x0 = Math.round(sx[i] - size / 2);
      const y0 = Math.round(sy[i] - size / 2);
      const xa = x0 < 0 ? -x0 : 0;
      const xb = size < w - x0 ? size : w - x0;
      const ya = y0 < 0 ? -y0 : 0;
      const yb = size < h - y0 ? size : h - y0;
      if (xa >= xb || ya >= yb) continue;
      if (x0 + xa < bx0) bx0 = x0 + xa;
      if (x0 + xb > bx1) bx1 = x0 + xb;
      if (y0 + ya < by0) by0 = y0 + ya;
      if (y0 + yb > by1) by1 = y0 + yb;
      for (let y = ya; y < yb; y++) {
        let o = (y0 + y) * w + x0 + xa;
        let q = y * size + xa;
        for (let x = xa; x < xb; x++) px[o++] = words[q++];
      }
    }
    this.layerBox = [bx0, by0, bx1, by1];
    if (bx1 <= bx0 || by1 <= by0) return;
    const g = /** @type {CanvasRenderingContext2D} */ (layer.getContext('2d'));
    g.clearRect(bx0, by0, bx1 - bx0, by1 - by0);
    g.putImageData(img, 0, 0, bx0, by0, bx1 - bx0, by1 - by0);
    this.ctx.drawImage(layer, bx0, by0, bx1 - bx0, by1 - by0, bx0, by0, bx1 - bx0, by1 - by0);
  }

  /**
   * One Mobile Robot Simulator robot: its own colour inside, its state on the rim, its
   * heading.
   * @param {import('./frame.js').Bodies} b @param {number} i
   */
  body(b, i) {
    const { ctx } = this;
    const st = this.style(b.states[i]);
    const color = this.bodyColor(b, i);
    const x = this.sx[i];
    const y = this.sy[i];
    const r = this.sr[i];
    ctx.beginPath();
    this.outline(b, i);
    ctx.fillStyle = color;
    ctx.fill();
    ctx.strokeStyle = st.color;
    ctx.lineWidth = 3;
    ctx.stroke();
    if (this.selected === b.ids[i]) {
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.arc(x, y, r + 4, 0, 2 * Math.PI);
      ctx.stroke();
    }
    const t = b.pose[5 * i + 2];
    ctx.strokeStyle = '#fff';
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x, y);
    ctx.lineTo(x + Math.cos(t) * r, y + Math.sin(t) * r);
    ctx.stroke();
  }

  /**
   * The index of body `id` in the frame last drawn.
   * @param {number} id
   * @returns {number | undefined}
   */
  indexOf(id) {
    if (!this.frame) return undefined;
    if (this.idMap) return this.idMap.get(id);
    const i = id >= 0 && id < this.idIndex.length ? this.idIndex[id] : -1;
    return i >= 0 ? i : undefined;
  }

  /**
   * The label of body `i`: `robot 3` in the Mobile Robot Simulator, else its kind and name
   * (or id): `item Medicine A`, `drone #12`.
   * @param {number} i
   */
  label(i) {
    const b = /** @type {Frame2d} */ (this.frame).bodies;
    const scene = /** @type {Scene2d} */ (this.scene);
    const kind = scene.kinds[b.kinds[i]] || 'entity';
    const name = this.names.get(b.ids[i]);
    if (kind === 'item') return `item ${name || '#' + b.ids[i]}`;
    if (scene.world === 'mrs') return `robot ${b.ids[i]}`;
    return `${kind} ${name || '#' + b.ids[i]}`;
  }

  /**
   * The bodies to label, first first: the selected one, carried items, robots, other items;
   * in a dense scene only the selected one, carried items and bodies at least 6 px across,
   * at most [`MAX_LABELS`] (the rest show on hover).
   * @param {boolean} all labels are on
   * @param {boolean} dense
   * @returns {number[]}
   */
  labelOrder(all, dense) {
    const b = this.frame && this.frame.bodies;
    if (!b || !this.scene) return [];
    const item = this.scene.kinds.indexOf('item');
    const sel = this.selected === null ? undefined : this.indexOf(this.selected);
    /** @type {number[][]} */
    const ranks = [[], [], []];
    if (all) {
      for (let i = 0; i < b.n && ranks[0].length + ranks[1].length < MAX_LABELS; i++) {
        if (i === sel || !this.vis[i]) continue;
        if (this.carried[i]) ranks[0].push(i);
        else if (!dense || this.sr[i] >= 6) ranks[b.kinds[i] === item ? 2 : 1].push(i);
      }
    }
    const out = sel === undefined ? [] : [sel];
    for (const r of ranks) out.push(...r);
    return out.slice(0, MAX_LABELS);
  }

  /**
   * What was drawn for body `i`.
   * @param {number} i
   * @returns {Drawn}
   */
  drawnAt(i) {
    const b = /** @type {Frame2d} */ (this.frame).bodies;
    const scene = /** @type {Scene2d} */ (this.scene);
    const st = this.style(b.states[i]);
    const c = this.carriers.get(b.ids[i]);
    const carrier = c === undefined ? null : c;
    return {
      id: b.ids[i],
      kind: scene.kinds[b.kinds[i]] || 'entity',
      state: st.name,
      x: b.pose[5 * i],
      y: b.pose[5 * i + 1],
      theta: b.pose[5 * i + 2],
      sx: this.sx[i],
      sy: this.sy[i],
      r: this.sr[i],
      disc: (b.flags[i] & 1) === 1,
      color: carrier !== null ? st.color : this.bodyColor(b, i),
      mark: carrier !== null ? 'carried' : st.mark,
      label: this.label(i),
      carrier,
    };
  }

  /** Every body of the frame last drawn (made on demand: the tests and the panel read it). */
  get drawn() {
    const b = this.frame && this.frame.bodies;
    if (!b || !this.scene) return [];
    /** @type {Drawn[]} */
    const out = [];
    for (let i = 0; i < b.n; i++) out.push(this.drawnAt(i));
    return out;
  }

  /**
   * Body `id` as drawn, if it was.
   * @param {number} id
   * @returns {Drawn | null}
   */
  drawnById(id) {
    const i = this.indexOf(id);
    return i === undefined ? null : this.drawnAt(i);
  }

  /** @param {Scene2d} scene */
  grid(scene) {
    const { ctx, camera: cam } = this;
    const step = niceStep(80 / cam.scale);
    ctx.strokeStyle = 'rgba(0,0,0,0.07)';
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let x = 0; x <= scene.width; x += step) {
      const [sx] = cam.toScreen(x, 0);
      ctx.moveTo(sx, cam.oy);
      ctx.lineTo(sx, cam.oy + scene.height * cam.scale);
    }
    for (let y = 0; y <= scene.height; y += step) {
      const [, sy] = cam.toScreen(0, y);
      ctx.moveTo(cam.ox, sy);
      ctx.lineTo(cam.ox + scene.width * cam.scale, sy);
    }
    ctx.stroke();
  }

  /** @param {Scene2d} scene */
  scaleBar(scene) {
    const { ctx, canvas, camera: cam } = this;
    const step = niceStep(120 / cam.scale);
    const w = step * cam.scale;
    const x = 16;
    const y = canvas.height - 18;
    ctx.fillStyle = 'rgba(255,255,255,0.85)';
    ctx.fillRect(x - 6, y - 18, w + 70, 26);
    ctx.strokeStyle = '#111';
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x, y - 4);
    ctx.lineTo(x, y);
    ctx.lineTo(x + w, y);
    ctx.lineTo(x + w, y - 4);
    ctx.stroke();
    ctx.fillStyle = '#111';
    ctx.font = '12px sans-serif';
    ctx.fillText(`${step} ${scene.units === 'unit' && step !== 1 ? 'units' : scene.units}`, x + w + 6, y);
  }

  /**
   * The body drawn at screen point (px, py), by its shape (a disc, or its box turned by its
   * heading; 3 px of slack); carried items before their carriers.
   * @param {number} px @param {number} py
   * @returns {Drawn | null}
   */
  pick(px, py) {
    const b = this.frame && this.frame.bodies;
    if (!b || !this.scene) return null;
    const s = this.camera.scale;
    const slack = 3;
    let best = -1;
    let bestD = Infinity;
    for (let i = 0; i < b.n; i++) {
      const dx = px - this.sx[i];
      const dy = py - this.sy[i];
      const r = this.sr[i];
      if (Math.abs(dx) > 2 * r + slack || Math.abs(dy) > 2 * r + slack) continue;
      let inside;
      if ((b.flags[i] & 1) === 1 || r < SMALL_R || this.carried[i]) {
        inside = Math.hypot(dx, dy) <= r + slack;
      } else {
        const c = Math.cos(b.pose[5 * i + 2]);
        const sn = Math.sin(b.pose[5 * i + 2]);
        const lx = dx * c + dy * sn;
        const ly = -dx * sn + dy * c;
        inside = Math.abs(lx) <= Math.max(MIN_R, b.pose[5 * i + 3] * s) + slack && Math.abs(ly) <= Math.max(MIN_R, b.pose[5 * i + 4] * s) + slack;
      }
      if (!inside) continue;
      const d = Math.hypot(dx, dy) - (this.carried[i] ? 0.5 : 0);
      if (d < bestD) {
        best = i;
        bestD = d;
      }
    }
    return best < 0 ? null : this.drawnAt(best);
  }
}
