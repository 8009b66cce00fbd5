// @ts-check
/**
 * Picking: the entity whose drawn shape is under the cursor — a sphere's disc, any other
 * body's outline as drawn (the convex hull of its bounding box's corners on screen). The
 * highest body wins in the top view, the nearest in 3D. Fields are not picked.
 */
import { halfExtent, kindOf } from './frame.js';
import { convexHull, inside, rotate } from './maths.js';

/** @typedef {import('./frame.js').Scene} Scene */
/** @typedef {import('./frame.js').Poses} Poses */
/** @typedef {import('./labels.js').ToScreen} ToScreen */

/**
 * The screen outline of body `i` (null if a corner is behind the camera).
 * @param {Scene} s @param {Poses} p @param {number} i @param {ToScreen} toScreen
 */
export function outline(s, p, i, toScreen) {
  const half = halfExtent(s, i, [0, 0, 0]), l = [0, 0, 0], r = [0, 0, 0], pos = p.position;
  /** @type {number[][]} */
  const pts = [];
  for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) {
    l[0] = sx * half[0]; l[1] = sy * half[1]; l[2] = sz * half[2];
    rotate(p.quaternion, i, l, r);
    const q = toScreen([pos[3 * i] + r[0], pos[3 * i + 1] + r[1], pos[3 * i + 2] + r[2]]);
    if (!q) return null;
    pts.push(q);
  }
  return convexHull(pts);
}

/**
 * The entity under `at` (CSS px), or null.
 * @param {Scene} s @param {Poses} p @param {number[]} at @param {ToScreen} toScreen
 * @param {{top: boolean, eye: number[], scale: number, pxPerRadian: number}} view `scale`: the
 *   top view's px per metre; `pxPerRadian`: the 3D view's
 * @returns {number | null}
 */
export function entityAt(s, p, at, toScreen, view) {
  let best = null, bestKey = Infinity;
  const pos = p.position, half = [0, 0, 0], e = view.eye;
  for (let i = 0; i < s.n; i++) {
    if (kindOf(s, s.bodyEntity[i]) === 'Field') continue;
    const x = pos[3 * i], y = pos[3 * i + 1], z = pos[3 * i + 2];
    const c = toScreen([x, y, z]);
    if (!c) continue;
    halfExtent(s, i, half);
    const radius = Math.hypot(half[0], half[1], half[2]);
    const dist = Math.hypot(x - e[0], y - e[1], z - e[2]);
    // A circle sure to hold the body's outline: anything farther is not it.
    const reach = view.top ? radius * view.scale : dist > radius ? (radius / (dist - radius)) * view.pxPerRadian * 1.5 : Infinity;
    if (Math.hypot(c[0] - at[0], c[1] - at[1]) > reach + 2) continue;
    let hit;
    if (s.shapes[s.shape[i]] === 'Sphere' && view.top) hit = Math.hypot(c[0] - at[0], c[1] - at[1]) <= Math.max(half[0] * view.scale, 3);
    else {
      const hull = outline(s, p, i, toScreen);
      hit = hull !== null && inside(hull, at);
    }
    if (!hit) continue;
    const key = view.top ? -(z + half[2]) : dist;
    if (key < bestKey) { bestKey = key; best = s.entity[i]; }
  }
  return best;
}
