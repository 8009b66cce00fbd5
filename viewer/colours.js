// @ts-check
/** How bodies look: a colour per body from its entity's kind and its material. */
import { kindOf } from './frame.js';

/** @typedef {import('./frame.js').Scene} Scene */

/** Humanoid soccer (scenarios/soccer/kidsize.xml): the team is the robots' material (14 cyan, 15 magenta). */
export const HUMANOID_TEAMS = /** @type {Record<number, number[]>} */ ({ 14: [0.1, 0.8, 0.9], 15: [0.9, 0.2, 0.8] });
/** The KidSize field's materials: carpet, paint, posts, ball. */
const KIDSIZE_MATERIALS = /** @type {Record<number, number[]>} */ ({ 10: [0.2, 0.5, 0.25], 11: [0.95, 0.95, 0.95], 12: [0.95, 0.85, 0.25], 13: [1.0, 0.5, 0.1] });
/** The KidSize field's line paint lies 1 cm under the carpet: it is drawn on it. */
const PAINT = 11;
const SELECTED = [1.0, 0.85, 0.2];

/**
 * @param {Scene} s
 * @param {number} i body
 * @returns {number[]} RGB in 0..1
 */
function colourOf(s, i) {
  const kind = kindOf(s, s.bodyEntity[i]), material = s.material[i], shape = s.shapes[s.shape[i]];
  if (kind === 'Humanoid') {
    const team = HUMANOID_TEAMS[material] || [0.6, 0.6, 0.6];
    return s.id[i] === 0 ? [0.22, 0.22, 0.25] : s.id[i] === 1 ? [0.55, 0.55, 0.6] : team;
  }
  if ((kind === 'Field' || kind === 'Ball') && KIDSIZE_MATERIALS[material]) return KIDSIZE_MATERIALS[material];
  if (kind === 'Ball') return [0.9, 0.2, 0.2];
  if (kind === 'Robot') return shape === 'WheelCylinder' ? [0.15, 0.15, 0.18] : [1.0, 0.55, 0.1];
  if (kind === 'Item') return [0.2, 0.75, 0.7];
  if (kind === 'Drone') return [0.35, 0.55, 1.0];
  if (kind && kind !== 'Field') return [0.95, 0.75, 0.3];
  // Field: the floor darker than the walls.
  const d = s.dims;
  if (shape === 'Box' && d[3 * i + 2] < Math.min(d[3 * i], d[3 * i + 1]) * 0.2) return [0.22, 0.45, 0.28];
  return [0.75, 0.78, 0.8];
}

/**
 * Per-body drawing data, made once per scene: colour (3 per body, the selected entity's
 * highlighted), and a lift along Z (the KidSize paint raised onto the carpet).
 */
export class Look {
  /** @param {Scene} s */
  constructor(s) {
    this.scene = s;
    this.base = new Float32Array(3 * s.n);
    this.colour = new Float32Array(3 * s.n);
    this.lift = new Float32Array(s.n);
    for (let i = 0; i < s.n; i++) {
      this.base.set(colourOf(s, i), 3 * i);
      if (s.material[i] === PAINT && kindOf(s, s.bodyEntity[i]) === 'Field') this.lift[i] = 0.0115;
    }
    /** @type {number | null} */
    this.selected = null;
    this.colour.set(this.base);
    /** Bumped when colours change, so that renderers upload them again. */
    this.version = 1;
  }

  /**
   * Highlights entity `id` (null: none).
   * @param {number | null} id
   */
  select(id) {
    if (id === this.selected) return;
    const s = this.scene;
    for (const e of [this.selected, id]) {
      const k = e === null ? undefined : s.entityIndex.get(e);
      if (k === undefined) continue;
      for (let j = s.bodyStart[k]; j < s.bodyStart[k + 1]; j++) {
        const i = s.bodyList[j];
        for (let c = 0; c < 3; c++) this.colour[3 * i + c] = e === id ? SELECTED[c] : this.base[3 * i + c];
      }
    }
    this.selected = id;
    this.version++;
  }
}

/** @param {ArrayLike<number>} c @param {number} [o] */
export const css = (c, o = 0) => `rgb(${Math.round(c[o] * 255)},${Math.round(c[o + 1] * 255)},${Math.round(c[o + 2] * 255)})`;
