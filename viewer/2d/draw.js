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

/** The camera: screen = origin + map × scale (both with y down). */
export class Camera {
  constructor() {
    this.scale = 1;
    this.ox = 0;
    this.oy = 0;
  }

  /**
   * Frames the whole map in a `w` × `h` canvas with a margin.
   * @param {Scene2d} scene
   * @param {number} w
   * @param {number} h
   */
  fit(scene, w, h) {
    const m = 24;
    this.scale = Math.max(1e-6, Math.min((w - 2 * m) / scene.width, (h - 2 * m) / scene.height));
    this.ox = (w - scene.width * this.scale) / 2;
    this.oy = (h - scene.height * this.scale) / 2;
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
function niceStep(v) {
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  const m = v / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/** Places labels so that none overlaps another (first come, first placed). */
class LabelPlacer {
  constructor() {
    /** @type {{text: string, x: number, y: number, w: number, h: number}[]} */
    this.placed = [];
    /** @type {{x: number, y: number, w: number, h: number}[]} boxes no label may cover */
    this.avoid = [];
  }

  /**
   * Places `text` near (sx, sy) if a free spot exists; returns whether it did.
   * @param {CanvasRenderingContext2D} ctx
   * @param {string} text @param {number} sx @param {number} sy @param {number} r
   */
  place(ctx, text, sx, sy, r) {
    const w = ctx.measureText(text).width + 4;
    const h = 14;
    const spots = [
      [sx + r + 2, sy - h / 2],
      [sx - r - 2 - w, sy - h / 2],
      [sx - w / 2, sy - r - 2 - h],
      [sx - w / 2, sy + r + 2],
    ];
    for (const [x, y] of spots) {
      const free = (/** @type {{x: number, y: number, w: number, h: number}} */ b) => x + w <= b.x || b.x + b.w <= x || y + h <= b.y || b.y + b.h <= y;
      if (this.placed.every(free) && this.avoid.every(free)) {
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
    this.ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
    this.camera = new Camera();
    /** @type {Scene2d | null} */
    this.scene = null;
    /** @type {HTMLCanvasElement | null} */
    this.bitmap = null;
    /** @type {Map<number, number[]>} map points per id, while the trail is on */
    this.trails = new Map();
    /** @type {Drawn[]} */
    this.drawn = [];
    /** @type {{text: string, x: number, y: number, w: number, h: number}[]} */
    this.labels = [];
    /** @type {number | null} */
    this.selected = null;
  }

  /** @param {Scene2d} scene */
  setScene(scene) {
    const first = !this.scene || this.scene.width !== scene.width || this.scene.height !== scene.height;
    this.scene = scene;
    this.bitmap = scene.bitmap ? bitmapCanvas(scene.bitmap) : null;
    if (first) this.camera.fit(scene, this.canvas.width, this.canvas.height);
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
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = '#e9ecef';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    this.drawn = [];
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
    if (!frame || !frame.bodies) return;
    const b = frame.bodies;
    const names = new Map(frame.names || []);
    const carriers = new Map((frame.carried || []).map(([item, c]) => [item, c]));
    const index = new Map();
    for (let i = 0; i < b.n; i++) index.set(b.ids[i], i);
    // Routes.
    if (layers.routes && frame.routes) {
      ctx.setLineDash([6, 4]);
      ctx.lineWidth = 1.5;
      for (const r of frame.routes) {
        const i = index.get(r.id);
        ctx.strokeStyle = i === undefined ? '#888' : this.bodyColor(b, i);
        ctx.beginPath();
        r.points.forEach((p, k) => {
          const [x, y] = cam.toScreen(p[0], p[1]);
          if (k === 0) ctx.moveTo(x, y);
          else ctx.lineTo(x, y);
        });
        ctx.stroke();
      }
      ctx.setLineDash([]);
    }
    // Trails.
    if (layers.trail) {
      for (let i = 0; i < b.n; i++) {
        if (carriers.has(b.ids[i])) continue;
        let t = this.trails.get(b.ids[i]);
        if (!t) this.trails.set(b.ids[i], (t = []));
        const x = b.pose[5 * i];
        const y = b.pose[5 * i + 1];
        if (t.length < 2 || Math.hypot(t[t.length - 2] - x, t[t.length - 1] - y) > 0.5) t.push(x, y);
        if (t.length > 4000) t.splice(0, t.length - 4000);
        ctx.strokeStyle = this.bodyColor(b, i);
        ctx.globalAlpha = 0.5;
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        for (let k = 0; k < t.length; k += 2) {
          const [sx, sy] = cam.toScreen(t[k], t[k + 1]);
          if (k === 0) ctx.moveTo(sx, sy);
          else ctx.lineTo(sx, sy);
        }
        ctx.stroke();
        ctx.globalAlpha = 1;
      }
    } else if (this.trails.size) {
      this.trails.clear();
    }
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
    // POIs.
    ctx.font = '11px sans-serif';
    for (const p of scene.pois) {
      const [x, y] = cam.toScreen(p.x, p.y);
      ctx.fillStyle = '#3c82c8';
      ctx.beginPath();
      ctx.moveTo(x, y - 5);
      ctx.lineTo(x + 5, y);
      ctx.lineTo(x, y + 5);
      ctx.lineTo(x - 5, y);
      ctx.closePath();
      ctx.fill();
    }
    // Bodies: carriers first, carried items on top.
    /** @type {number[]} */
    const later = [];
    for (let i = 0; i < b.n; i++) {
      if (carriers.has(b.ids[i])) later.push(i);
      else this.body(b, i, names, null);
    }
    for (const i of later) this.body(b, i, names, carriers.get(b.ids[i]) ?? null);
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
    const tasks = this.tasks(frame, index);
    // Labels: POIs, then the selected body, items, robots (never overlapping).
    const placer = new LabelPlacer();
    // No label covers a task's square.
    for (const t of tasks) placer.avoid.push({ x: t.sx - TASK_MARK - 2, y: t.sy - TASK_MARK - 2, w: 2 * TASK_MARK + 4, h: 2 * TASK_MARK + 4 });
    ctx.font = '12px sans-serif';
    const order = this.drawn.slice().sort((p, q) => rank(q, this.selected) - rank(p, this.selected));
    const dense = this.drawn.length > 300;
    for (const d of order) {
      if (!layers.labels && d.id !== this.selected) continue;
      if (dense && d.id !== this.selected && d.carrier === null && d.r < 6) continue;
      placer.place(ctx, d.label, d.sx, d.sy, d.r);
    }
    for (const p of scene.pois) {
      const [x, y] = cam.toScreen(p.x, p.y);
      placer.place(ctx, p.name, x, y, 5);
    }
    if (layers.labels) for (const t of tasks) placer.place(ctx, `task ${t.id}`, t.sx, t.sy, TASK_MARK + 2);
    this.labels = placer.placed;
    this.taskLegend(tasks);
    this.scaleBar(scene);
  }

  /**
   * The coordination map's tasks: a square at each goal in its state's colour (dashed while
   * no robot has taken it, crossed out when aborted or failed) and, while a robot holds it
   * unfinished, a dashed line from the robot to the goal. Returns what was drawn.
   * @param {Frame2d} frame @param {Map<number, number>} index
   * @returns {{id: number, state: string, sx: number, sy: number}[]}
   */
  tasks(frame, index) {
    const { ctx, camera: cam } = this;
    /** @type {{id: number, state: string, sx: number, sy: number}[]} */
    const out = [];
    const b = frame.bodies;
    for (const t of frame.tasks || []) {
      if (t.x === null || t.y === null || t.x === undefined || t.y === undefined) continue;
      const st = TASK_STATES[t.state] || TASK_STATES.waiting;
      const [sx, sy] = cam.toScreen(t.x, t.y);
      const i = t.robot === null ? undefined : index.get(t.robot);
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
   * @param {import('./frame.js').Bodies} b @param {number} i
   * @param {Map<number, string>} names @param {number | null} carrier
   */
  body(b, i, names, carrier) {
    const { ctx, camera: cam, scene } = this;
    if (!scene) return;
    const x = b.pose[5 * i];
    const y = b.pose[5 * i + 1];
    const theta = b.pose[5 * i + 2];
    const hw = b.pose[5 * i + 3];
    const hh = b.pose[5 * i + 4];
    const disc = (b.flags[i] & 1) === 1;
    const st = this.style(b.states[i]);
    const color = this.bodyColor(b, i);
    const [sx, sy] = cam.toScreen(x, y);
    const s = cam.scale;
    let r = Math.max(3, Math.max(hw, hh) * s);
    const kind = scene.kinds[b.kinds[i]] || 'entity';
    ctx.lineWidth = 2;
    const path = () => {
      ctx.beginPath();
      if (disc) ctx.arc(sx, sy, r, 0, 2 * Math.PI);
      else ctx.rect(sx - Math.max(3, hw * s), sy - Math.max(3, hh * s), 2 * Math.max(3, hw * s), 2 * Math.max(3, hh * s));
    };
    if (carrier !== null) {
      // A carried item: a small square on its carrier, outlined so it shows on any colour.
      r = Math.max(4, Math.min(r, 7));
      ctx.fillStyle = st.color;
      ctx.strokeStyle = '#fff';
      ctx.fillRect(sx - r, sy - r, 2 * r, 2 * r);
      ctx.strokeRect(sx - r, sy - r, 2 * r, 2 * r);
    } else if (st.mark === 'ring') {
      path();
      ctx.fillStyle = 'rgba(255,255,255,0.85)';
      ctx.fill();
      ctx.strokeStyle = color;
      ctx.lineWidth = 3;
      ctx.stroke();
    } else if (st.mark === 'cross') {
      path();
      ctx.fillStyle = '#9a9ea5';
      ctx.fill();
      ctx.strokeStyle = color;
      ctx.lineWidth = 2.5;
      ctx.beginPath();
      ctx.moveTo(sx - r, sy - r);
      ctx.lineTo(sx + r, sy + r);
      ctx.moveTo(sx + r, sy - r);
      ctx.lineTo(sx - r, sy + r);
      ctx.stroke();
    } else {
      path();
      ctx.fillStyle = color;
      ctx.fill();
      if (scene.world === 'mrs') {
        // Its own colour inside, its state on the rim.
        ctx.strokeStyle = st.color;
        ctx.lineWidth = 3;
      } else {
        ctx.strokeStyle = 'rgba(0,0,0,0.35)';
        ctx.lineWidth = 1;
      }
      ctx.stroke();
      if (this.selected === b.ids[i]) {
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        ctx.arc(sx, sy, r + 4, 0, 2 * Math.PI);
        ctx.stroke();
      }
    }
    if (kind !== 'item' && st.mark !== 'cross' && carrier === null) {
      // Heading.
      ctx.strokeStyle = st.mark === 'ring' ? color : '#fff';
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(sx, sy);
      ctx.lineTo(sx + Math.cos(theta) * r, sy + Math.sin(theta) * r);
      ctx.stroke();
    }
    const name = names.get(b.ids[i]);
    const label =
      kind === 'item'
        ? `item ${name || '#' + b.ids[i]}`
        : scene.world === 'mrs'
          ? `robot ${b.ids[i]}`
          : `${kind} ${name || '#' + b.ids[i]}`;
    this.drawn.push({ id: b.ids[i], kind, state: st.name, x, y, theta, sx, sy, r, disc, color: carrier !== null ? st.color : color, mark: carrier !== null ? 'carried' : st.mark, label, carrier });
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
    ctx.fillText(`${step} ${scene.units}`, x + w + 6, y);
  }

  /**
   * The body drawn at screen point (sx, sy), by its shape (a few pixels of slack).
   * @param {number} sx @param {number} sy
   * @returns {Drawn | null}
   */
  pick(sx, sy) {
    let best = null;
    let bestD = Infinity;
    for (const d of this.drawn) {
      const dist = Math.hypot(d.sx - sx, d.sy - sy);
      if (dist <= d.r + 3 && dist < bestD) {
        best = d;
        bestD = dist;
      }
    }
    return best;
  }
}

/**
 * Label priority: the selected body, carried items, robots, the rest.
 * @param {Drawn} d @param {number | null} selected
 */
function rank(d, selected) {
  if (d.id === selected) return 3;
  if (d.carrier !== null) return 2;
  return d.kind === 'item' ? 0 : 1;
}
