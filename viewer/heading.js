// @ts-check
/**
 * Which way each robot faces, for its heading arrow (drawn by `gl.js`, one instance of a flat
 * arrow per robot, on top of it). Robots get one (drones have no heading: none); humanoids have their own marks
 * (`labels.js`).
 *
 * Facing is the direction the robot drives when it drives forwards:
 * - a SimRob wheeled robot (it has `WheelCylinder` bodies, as the SimRob manual's SumBot):
 *   positive wheel speeds drive it towards −X of its frame (the wheel joints follow ODE's
 *   sign), so it faces −X;
 * - any other robot (the swarm's robots and drones, whose boxes are turned to their heading):
 *   +X of its frame.
 * The frame is the entity's reported pose (R = Rz·Ry·Rx), or its first body's when it reports
 * none. A robot lying on its side (its X axis within 12° of vertical) gets no arrow.
 */
import { kindOf } from './frame.js';

/** @typedef {import('./frame.js').Scene} Scene */
/** @typedef {import('./frame.js').Poses} Poses */

/**
 * The robots of a scene and where their arrows go.
 * `yaw` (rad, from +X towards +Y), `x`, `y`, `top` (the highest point of its bodies, m),
 * `radius` (how far its bodies reach from its centre on the floor, m), for `count` robots.
 */
export class Headings {
  /** @param {Scene} s */
  constructor(s) {
    /** Entity indices of the robots that get an arrow. */
    const robots = [];
    /** @type {number[]} 1: faces −X of its frame (wheeled), 0: +X */
    const backwards = [];
    for (let k = 0; k < s.m; k++) {
      const kind = kindOf(s, k);
      // Not drones: the swarm's drones fly any way without turning (no heading).
      if (kind !== 'Robot') continue;
      const first = s.bodyStart[k], last = s.bodyStart[k + 1];
      if (first === last) continue;
      let wheeled = false;
      for (let j = first; j < last; j++) if (s.shapes[s.shape[s.bodyList[j]]] === 'WheelCylinder') wheeled = true;
      robots.push(k);
      backwards.push(wheeled ? 1 : 0);
    }
    this.scene = s;
    this.entity = Uint32Array.from(robots);
    this.backwards = Uint8Array.from(backwards);
    const r = robots.length;
    this.count = 0;
    this.id = new Uint32Array(r);
    this.yaw = new Float32Array(r);
    this.x = new Float32Array(r);
    this.y = new Float32Array(r);
    this.top = new Float32Array(r);
    this.radius = new Float32Array(r);
  }

  /**
   * Where every robot is and faces in `p`.
   * Robots all of whose bodies are `tiny` (a dot on screen) are left out.
   * @param {Poses} p @param {Float32Array} bound each body's bounding sphere's radius, m
   * @param {Uint8Array} tiny 1 for a body too small on screen to show a heading
   */
  update(p, bound, tiny) {
    const s = this.scene, e = p.entityPose, pos = p.position, q = p.quaternion;
    let c = 0;
    for (let r = 0; r < this.entity.length; r++) {
      const k = this.entity[r], o = 6 * k, first = s.bodyList[s.bodyStart[k]];
      let seen = false;
      for (let j = s.bodyStart[k]; j < s.bodyStart[k + 1] && !seen; j++) seen = !tiny[s.bodyList[j]];
      if (!seen) continue;
      let fx, fy, fz;
      if (!Number.isNaN(e[o])) {
        // X of R = Rz·Ry·Rx: (cos ry cos rz, cos ry sin rz, −sin ry).
        const ry = e[o + 4], rz = e[o + 5];
        fx = Math.cos(ry) * Math.cos(rz); fy = Math.cos(ry) * Math.sin(rz); fz = -Math.sin(ry);
      } else {
        const x = q[4 * first], y = q[4 * first + 1], z = q[4 * first + 2], w = q[4 * first + 3];
        fx = 1 - 2 * (y * y + z * z); fy = 2 * (x * y + w * z); fz = 2 * (x * z - w * y);
      }
      if (Math.hypot(fx, fy) < 0.2 * Math.hypot(fx, fy, fz)) continue;
      const cx = Number.isNaN(e[o]) ? pos[3 * first] : e[o], cy = Number.isNaN(e[o]) ? pos[3 * first + 1] : e[o + 1];
      let top = -Infinity, reach = 0;
      for (let j = s.bodyStart[k]; j < s.bodyStart[k + 1]; j++) {
        const i = s.bodyList[j], half = bound[i];
        top = Math.max(top, pos[3 * i + 2] + half);
        reach = Math.max(reach, Math.hypot(pos[3 * i] - cx, pos[3 * i + 1] - cy) + half);
      }
      if (!Number.isFinite(top) || !Number.isFinite(cx) || !Number.isFinite(cy)) continue;
      this.id[c] = s.entityId[k];
      const yaw = Math.atan2(fy, fx) + (this.backwards[r] ? Math.PI : 0);
      this.yaw[c] = yaw > Math.PI ? yaw - 2 * Math.PI : yaw;
      this.x[c] = cx; this.y[c] = cy; this.top[c] = top; this.radius[c] = reach;
      c++;
    }
    this.count = c;
  }
}
