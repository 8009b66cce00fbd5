// @ts-check
/**
 * The top view's canvas: a metric grid and a scale bar over the WebGL drawing, and, without
 * WebGL, the bodies' footprints too.
 */
import { halfExtent } from './frame.js';
import { convexHull, rotate } from './maths.js';
import { css } from './colours.js';

/** @typedef {import('./frame.js').Scene} Scene */
/** @typedef {import('./frame.js').Poses} Poses */
/** @typedef {import('./colours.js').Look} Look */
/** @typedef {{cx: number, cy: number, scale: number}} TopCamera centre (m) and pixels per metre */

/** The grid's spacing in metres: 1, 2 or 5 × 10^k, at least 60 px apart. @param {number} scale px/m */
export function gridStep(scale) {
  const raw = 60 / Math.max(scale, 1e-9), k = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * k >= raw) return m * k;
  return 10 * k;
}

/** @param {number} m */
export const metres = (m) => (m >= 1 ? `${+m.toPrecision(3)} m` : m >= 0.01 ? `${+(m * 100).toPrecision(3)} cm` : `${+(m * 1000).toPrecision(3)} mm`);

/**
 * World (x, y) → CSS pixels for a top camera.
 * @param {TopCamera} t @param {number} w @param {number} h
 */
export const topProjection = (t, w, h) => (/** @type {ArrayLike<number>} */ p) => [w / 2 + (p[0] - t.cx) * t.scale, h / 2 - (p[1] - t.cy) * t.scale];

export class TopCanvas {
  /** @param {HTMLCanvasElement} canvas */
  constructor(canvas) {
    this.canvas = canvas;
    this.ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
    /** The scale bar drawn last: its length in metres and in CSS px. */
    this.scaleBar = { metres: 0, px: 0 };
  }

  /**
   * Clears the canvas (sized to `w` × `h` CSS px) and draws the grid and the scale bar;
   * `opaque` fills the background (nothing is drawn under it).
   * @param {TopCamera} t @param {number} w @param {number} h @param {boolean} opaque
   */
  overlay(t, w, h, opaque) {
    const dpr = window.devicePixelRatio || 1, cw = Math.round(w * dpr), ch = Math.round(h * dpr);
    if (this.canvas.width !== cw || this.canvas.height !== ch) { this.canvas.width = cw; this.canvas.height = ch; }
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    if (opaque) { ctx.fillStyle = '#1c2126'; ctx.fillRect(0, 0, w, h); } else ctx.clearRect(0, 0, w, h);
    const step = gridStep(t.scale);
    const x0 = t.cx - w / 2 / t.scale, x1 = t.cx + w / 2 / t.scale, y0 = t.cy - h / 2 / t.scale, y1 = t.cy + h / 2 / t.scale;
    const px = topProjection(t, w, h);
    ctx.lineWidth = 1;
    for (let x = Math.ceil(x0 / step) * step; x <= x1; x += step) {
      const sx = Math.round(px([x, 0])[0]) + 0.5;
      ctx.strokeStyle = Math.abs(x) < step / 2 ? 'rgba(255,255,255,0.22)' : 'rgba(255,255,255,0.07)';
      ctx.beginPath(); ctx.moveTo(sx, 0); ctx.lineTo(sx, h); ctx.stroke();
    }
    for (let y = Math.ceil(y0 / step) * step; y <= y1; y += step) {
      const sy = Math.round(px([0, y])[1]) + 0.5;
      ctx.strokeStyle = Math.abs(y) < step / 2 ? 'rgba(255,255,255,0.22)' : 'rgba(255,255,255,0.07)';
      ctx.beginPath(); ctx.moveTo(0, sy); ctx.lineTo(w, sy); ctx.stroke();
    }
    return step;
  }

  /** A bar one grid step long, bottom left. @param {TopCamera} t @param {number} h @param {number} step */
  drawScaleBar(t, h, step) {
    const ctx = this.ctx, len = step * t.scale, x = 14, y = h - 16;
    ctx.strokeStyle = '#fff'; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(x, y - 5); ctx.lineTo(x, y); ctx.lineTo(x + len, y); ctx.lineTo(x + len, y - 5); ctx.stroke();
    ctx.fillStyle = '#fff'; ctx.font = '11px system-ui, sans-serif'; ctx.textAlign = 'center';
    ctx.fillText(`${metres(step)} (grid)`, x + len / 2, y - 6);
    ctx.textAlign = 'start';
    this.scaleBar = { metres: step, px: len };
  }

  /**
   * The grid and scale bar over the WebGL drawing.
   * @param {TopCamera} t @param {number} w @param {number} h
   */
  drawOverlay(t, w, h) {
    this.drawScaleBar(t, h, this.overlay(t, w, h, false));
  }

  /**
   * Everything, without WebGL: footprints lowest first, so robots and balls are drawn over the floor.
   * @param {Scene} s @param {Look} look @param {Poses} p @param {TopCamera} t @param {number} w @param {number} h
   */
  drawAll(s, look, p, t, w, h) {
    const step = this.overlay(t, w, h, true), ctx = this.ctx, px = topProjection(t, w, h);
    const pos = p.position, half = [0, 0, 0], l = [0, 0, 0], r = [0, 0, 0];
    const top = new Float32Array(s.n);
    for (let i = 0; i < s.n; i++) top[i] = pos[3 * i + 2] + look.lift[i] + halfExtent(s, i, half)[2];
    const order = Array.from({ length: s.n }, (_, i) => i).sort((a, b) => top[a] - top[b]);
    ctx.strokeStyle = 'rgba(0,0,0,0.5)';
    for (const i of order) {
      ctx.fillStyle = css(look.colour, 3 * i);
      const [cx, cy] = px([pos[3 * i], pos[3 * i + 1]]);
      halfExtent(s, i, half);
      if (s.shapes[s.shape[i]] === 'Sphere') {
        ctx.beginPath(); ctx.arc(cx, cy, Math.max(half[0] * t.scale, 1.5), 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
        continue;
      }
      /** @type {number[][]} */
      const pts = [];
      for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) {
        l[0] = sx * half[0]; l[1] = sy * half[1]; l[2] = sz * half[2];
        rotate(p.quaternion, i, l, r);
        pts.push(px([pos[3 * i] + r[0], pos[3 * i + 1] + r[1]]));
      }
      const hull = convexHull(pts);
      ctx.beginPath(); hull.forEach(([x, y], j) => (j ? ctx.lineTo(x, y) : ctx.moveTo(x, y))); ctx.closePath(); ctx.fill(); ctx.stroke();
    }
    this.drawScaleBar(t, h, step);
  }
}
