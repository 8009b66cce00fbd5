// @ts-check
/** Small linear algebra for the viewer: column-major 4×4 matrices, quaternions, cameras. */

/** @typedef {number[] | Float32Array} Mat4 column-major */
/** @typedef {{target: number[], dist: number, yaw: number, pitch: number}} OrbitCamera */

/** The 3D view's vertical field of view, rad. */
export const FOVY = 0.8;

/**
 * @param {Mat4} a
 * @param {Mat4} b
 * @returns {number[]} a·b
 */
export function mul(a, b) {
  const o = new Array(16);
  for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
    let v = 0;
    for (let k = 0; k < 4; k++) v += a[k * 4 + r] * b[c * 4 + k];
    o[c * 4 + r] = v;
  }
  return o;
}

/** @param {number} fovy @param {number} aspect @param {number} near @param {number} far */
export function perspective(fovy, aspect, near, far) {
  const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
  return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
}

/** @param {number[]} eye @param {number[]} t @param {number[]} up */
export function lookAt(eye, t, up) {
  const sub = (/** @type {number[]} */ a, /** @type {number[]} */ b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const norm = (/** @type {number[]} */ a) => { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; };
  const cross = (/** @type {number[]} */ a, /** @type {number[]} */ b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const dot = (/** @type {number[]} */ a, /** @type {number[]} */ b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const z = norm(sub(eye, t)), x = norm(cross(up, z)), y = cross(z, x);
  return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0, -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
}

/** @param {OrbitCamera} c the camera's position */
export function eye(c) {
  return [
    c.target[0] + c.dist * Math.cos(c.pitch) * Math.cos(c.yaw),
    c.target[1] + c.dist * Math.cos(c.pitch) * Math.sin(c.yaw),
    c.target[2] + c.dist * Math.sin(c.pitch),
  ];
}

/** @param {OrbitCamera} c @param {number} w @param {number} h */
export function viewProjection(c, w, h) {
  return mul(perspective(FOVY, w / Math.max(h, 1), 0.01, 500), lookAt(eye(c), c.target, [0, 0, 1]));
}

/**
 * World → CSS pixels, or null behind the camera.
 * @param {Mat4} vp @param {ArrayLike<number>} p @param {number} w @param {number} h
 * @returns {number[] | null}
 */
export function project(vp, p, w, h) {
  const x = vp[0] * p[0] + vp[4] * p[1] + vp[8] * p[2] + vp[12];
  const y = vp[1] * p[0] + vp[5] * p[1] + vp[9] * p[2] + vp[13];
  const ww = vp[3] * p[0] + vp[7] * p[1] + vp[11] * p[2] + vp[15];
  if (ww <= 0) return null;
  return [(x / ww * 0.5 + 0.5) * w, (1 - (y / ww * 0.5 + 0.5)) * h];
}

/**
 * Rotates `v` by the unit quaternion at `q[4i..4i+4]` (x, y, z, w), into `out`.
 * @param {ArrayLike<number>} q @param {number} i @param {number[]} v @param {number[]} out
 */
export function rotate(q, i, v, out) {
  const x = q[4 * i], y = q[4 * i + 1], z = q[4 * i + 2], w = q[4 * i + 3];
  // t = 2 q×v; v' = v + w t + q×t
  const tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]), tz = 2 * (x * v[1] - y * v[0]);
  out[0] = v[0] + w * tx + (y * tz - z * ty);
  out[1] = v[1] + w * ty + (z * tx - x * tz);
  out[2] = v[2] + w * tz + (x * ty - y * tx);
  return out;
}

/**
 * The yaw (rotation about Z, rad) of the quaternion at `q[4i..]`.
 * @param {ArrayLike<number>} q @param {number} i
 */
export function yaw(q, i) {
  const x = q[4 * i], y = q[4 * i + 1], z = q[4 * i + 2], w = q[4 * i + 3];
  return Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
}

/**
 * The convex hull of 2D points (counter-clockwise, no repeats).
 * @param {number[][]} points
 */
export function convexHull(points) {
  const p = points.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (/** @type {number[]} */ o, /** @type {number[]} */ a, /** @type {number[]} */ b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  /** @type {number[][]} */
  const lower = [], upper = [];
  for (const q of p) { while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], q) <= 0) lower.pop(); lower.push(q); }
  for (const q of p.reverse()) { while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], q) <= 0) upper.pop(); upper.push(q); }
  return lower.slice(0, -1).concat(upper.slice(0, -1));
}

/**
 * Whether `q` is inside the polygon.
 * @param {number[][]} poly @param {number[]} q
 */
export function inside(poly, q) {
  let c = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i], [xj, yj] = poly[j];
    if ((yi > q[1]) !== (yj > q[1]) && q[0] < ((xj - xi) * (q[1] - yi)) / (yj - yi) + xi) c = !c;
  }
  return c;
}
