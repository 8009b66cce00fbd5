// @ts-check
/**
 * Entity labels that never overlap, and humanoids' heading marks. Labels are placed by
 * priority — the selected and hovered entity, then robots, balls and the rest, items, fields
 * last — each at the first free spot around its entity; one that fits nowhere is left out
 * (hover shows it). A crowded scene (more than `CROWDED` entities) labels only the selected
 * and hovered entities. The label elements are reused from frame to frame.
 */
import { kindOf } from './frame.js';
import { yaw } from './maths.js';
import { HUMANOID_TEAMS, css } from './colours.js';

/** @typedef {import('./frame.js').Scene} Scene */
/** @typedef {import('./frame.js').Poses} Poses */
/** @typedef {(p: ArrayLike<number>) => number[] | null} ToScreen */

/** More entities than this: only the selected and hovered ones are labelled. */
export const CROWDED = 40;
const HEIGHT = 19;

export class Labels {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    /** @type {HTMLDivElement[]} */
    this.pool = [];
    this.marks = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    this.marks.setAttribute('width', '100%');
    this.marks.setAttribute('height', '100%');
    this.marks.style.cssText = 'position:absolute;left:0;top:0;overflow:visible';
    root.appendChild(this.marks);
    this.measure = /** @type {CanvasRenderingContext2D} */ (document.createElement('canvas').getContext('2d'));
    this.measure.font = '11px system-ui, sans-serif';
    /** @type {Map<string, number>} */
    this.widths = new Map();
    /** Where the labels are, [left, top, right, bottom] CSS px, for tests. @type {number[][]} */
    this.placed = [];
  }

  /** @param {string} text */
  width(text) {
    let w = this.widths.get(text);
    if (w === undefined) {
      w = Math.ceil(this.measure.measureText(text).width) + 12;
      if (this.widths.size > 10000) this.widths.clear();
      this.widths.set(text, w);
    }
    return w;
  }

  /**
   * @param {Scene} s @param {Poses} p @param {ToScreen} toScreen
   * @param {{selected: number | null, hover: number | null, hidden: boolean, fov: boolean}} o
   */
  draw(s, p, toScreen, o) {
    const placed = (this.placed = []);
    let used = 0;
    if (!o.hidden) {
      /** @type {number[]} */
      let chosen;
      if (s.m > CROWDED) {
        chosen = [];
        for (const id of [o.selected, o.hover]) {
          const k = id === null ? undefined : s.entityIndex.get(id);
          if (k !== undefined && !chosen.includes(k)) chosen.push(k);
        }
      } else {
        const rank = (/** @type {number} */ k) => {
          const id = s.entityId[k], kind = kindOf(s, k);
          return id === o.selected || id === o.hover ? 0 : kind === 'Field' ? 3 : kind === 'Item' ? 2 : 1;
        };
        chosen = Array.from({ length: s.m }, (_, k) => k).sort((a, b) => rank(a) - rank(b) || s.entityId[a] - s.entityId[b]);
      }
      const e = p.entityPose;
      for (const k of chosen) {
        let at;
        if (!Number.isNaN(e[6 * k])) at = [e[6 * k], e[6 * k + 1], e[6 * k + 2] + 0.06];
        else if (s.bodyStart[k] < s.bodyStart[k + 1]) { // a field: its first body
          const i = s.bodyList[s.bodyStart[k]];
          at = [p.position[3 * i], p.position[3 * i + 1], p.position[3 * i + 2] + 0.06];
        } else continue;
        const c = toScreen(at);
        if (!c) continue;
        const text = `${kindOf(s, k)} ${s.entityId[k]}`;
        const w = this.width(text), h = HEIGHT;
        // Above the entity, below it, right of it, left of it.
        const spots = [[c[0] - w / 2, c[1] - h], [c[0] - w / 2, c[1] + 6], [c[0] + 8, c[1] - h / 2], [c[0] - w - 8, c[1] - h / 2]];
        const spot = spots.find(([x, y]) => !placed.some((r) => x < r[2] && x + w > r[0] && y < r[3] && y + h > r[1]));
        if (!spot) continue;
        placed.push([spot[0], spot[1], spot[0] + w, spot[1] + h]);
        this.show(used++, text, s.entityId[k], spot[0], spot[1]);
      }
    }
    for (let j = used; j < this.pool.length; j++) this.pool[j].style.display = 'none';
    this.humanoidMarks(s, p, toScreen, o.fov);
  }

  /**
   * Shows label `j` of the pool.
   * @param {number} j @param {string} text @param {number} id @param {number} x @param {number} y
   */
  show(j, text, id, x, y) {
    let div = this.pool[j];
    if (!div) {
      div = document.createElement('div');
      div.className = 'label';
      this.root.appendChild(div);
      this.pool.push(div);
    }
    if (div.textContent !== text) { div.textContent = text; div.dataset.entity = String(id); }
    div.style.left = `${x}px`;
    div.style.top = `${y}px`;
    div.style.display = '';
  }

  /**
   * Each humanoid's heading (white) and head direction (its team colour), and with `fov` its
   * camera's field of view (75.3° wide, 2 m long on the floor).
   * @param {Scene} s @param {Poses} p @param {ToScreen} toScreen @param {boolean} fov
   */
  humanoidMarks(s, p, toScreen, fov) {
    /** @type {string[]} */
    const lines = [];
    const seg = (/** @type {number[]} */ a, /** @type {number[]} */ b, /** @type {string} */ colour, /** @type {number} */ width) => {
      const u = toScreen(a), v = toScreen(b);
      if (u && v) lines.push(`<line x1="${u[0]}" y1="${u[1]}" x2="${v[0]}" y2="${v[1]}" stroke="${colour}" stroke-width="${width}"/>`);
    };
    for (let k = 0; k < s.m; k++) {
      if (kindOf(s, k) !== 'Humanoid') continue;
      let trunk = -1, head = -1;
      for (let j = s.bodyStart[k]; j < s.bodyStart[k + 1]; j++) {
        const i = s.bodyList[j];
        if (s.id[i] === 0) trunk = i;
        if (s.id[i] === 1) head = i;
      }
      if (trunk < 0 || head < 0) continue;
      const at = [p.position[3 * trunk], p.position[3 * trunk + 1], 0.005];
      const heading = yaw(p.quaternion, trunk), look = yaw(p.quaternion, head);
      const ahead = (/** @type {number} */ a, /** @type {number} */ d) => [at[0] + d * Math.cos(a), at[1] + d * Math.sin(a), 0.005];
      const team = css(HUMANOID_TEAMS[s.material[head]] || [0.8, 0.8, 0.8]);
      seg(at, ahead(heading, 0.2), 'white', 2);
      seg(at, ahead(look, 0.35), team, 2);
      if (fov) {
        const half = 75.3 / 2 * Math.PI / 180;
        const l = ahead(look + half, 2), r = ahead(look - half, 2);
        seg(at, l, team, 1); seg(at, r, team, 1); seg(l, r, team, 1);
      }
    }
    const html = lines.join('');
    if (this.marks.innerHTML !== html) this.marks.innerHTML = html;
  }
}
