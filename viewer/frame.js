// @ts-check
/**
 * The frames the viewer's server streams on /ws, as binary WebSocket messages (the
 * simrob-viewer crate's `Frame::encode` writes them): a **scene** (what each body and entity
 * is) whenever it changes, then **poses** for every frame. Decoding makes typed-array views
 * on the message: no object per body, nothing copied.
 *
 * Every message: `SRVF`, version u8, kind u8 (1 scene, 2 poses), two zero bytes, u32 meta
 * length, the meta JSON (space-padded to a multiple of 4 bytes), then little-endian arrays.
 */

export const MAGIC = 'SRVF';
export const VERSION = 1;

/**
 * Where a replay is (present in replay mode only).
 * @typedef {object} ReplayStatus
 * @property {number} count frames in the recording
 * @property {number} index the frame shown, 0-based
 * @property {boolean} playing
 * @property {number} speed recorded simulated seconds per wall second
 * @property {boolean} [waiting] playing, but held until a page connects
 * @property {boolean} [ended] stopped on the last frame of a finished recording
 * @property {number} [start] simulated time of the first frame, s
 * @property {number} [end] simulated time of the last frame, s
 * @property {string} [error] why the replay stopped short of the recording's end (damaged)
 */

/**
 * A frame's meta: the server's modes and what the arrays hold.
 * @typedef {object} FrameMeta
 * @property {'frame'} type
 * @property {number} scene generation of the scene the poses belong to
 * @property {number} bodies
 * @property {number} entities
 * @property {number} iteration
 * @property {number} time simulated seconds
 * @property {boolean} initialized
 * @property {boolean} paused step mode
 * @property {boolean} sync
 * @property {boolean} auto_adjust
 * @property {number} timestep s
 * @property {number} gravity m/s²
 * @property {number} steps_per_iteration
 * @property {number} real_time_factor
 * @property {ReplayStatus} [replay]
 * @property {string} [caption] text shown over the view (a match's score and clock)
 */

/**
 * What the world is made of; changes rarely (an entity created or removed).
 * @typedef {object} Scene
 * @property {number} generation
 * @property {number} n bodies
 * @property {number} m entities
 * @property {Uint32Array} entity each body's entity id
 * @property {Uint32Array} id each body's id within its entity
 * @property {Uint32Array} shape each body's shape, an index into `shapes`
 * @property {string[]} shapes shape names: `Box`, `Sphere`, `Cylinder`, `WheelCylinder`
 * @property {Uint32Array} material
 * @property {Float32Array} dims 3 per body: sphere [radius, 0, 0], box sizes, cylinders [radius, length, 0]
 * @property {Float32Array} mass
 * @property {Uint32Array} entityId
 * @property {Uint32Array} entityKind an index into `kinds`
 * @property {string[]} kinds entity kinds named by the world: Robot, Ball, Field, Item, Drone, Humanoid…
 * @property {Map<number, number>} entityIndex entity id → entity index
 * @property {Uint32Array} bodyEntity each body's entity index
 * @property {Uint32Array} bodyStart entity index → first slot in `bodyList` (m + 1 entries)
 * @property {Uint32Array} bodyList body indices grouped by entity, in body order
 */

/**
 * Where everything is at one moment.
 * @typedef {object} Poses
 * @property {FrameMeta} meta
 * @property {Float32Array} position 3 per body, m
 * @property {Float32Array} quaternion 4 per body: x, y, z, w
 * @property {Float32Array} velocity 3 per body, m/s
 * @property {Float32Array} angular 3 per body, rad/s
 * @property {Float32Array} entityPose 6 per entity: position, Euler rotation (R = Rz·Ry·Rx); NaN when it has none
 */

/** @typedef {{kind: 'scene', scene: Scene} | {kind: 'poses', poses: Poses}} Message */

const text = new TextDecoder();

/**
 * Decodes one binary message; throws on anything that is not one.
 * @param {ArrayBuffer} buf
 * @returns {Message}
 */
export function decode(buf) {
  if (buf.byteLength < 12) throw new Error('frame too short');
  const head = new Uint8Array(buf, 0, 6);
  if (String.fromCharCode(head[0], head[1], head[2], head[3]) !== MAGIC) throw new Error('not a simrob frame');
  if (head[4] !== VERSION) throw new Error(`frame version ${head[4]}, this page reads ${VERSION}`);
  const dv = new DataView(buf);
  const metaLen = dv.getUint32(8, true);
  if (12 + metaLen > buf.byteLength || metaLen % 4) throw new Error('bad frame meta');
  const meta = JSON.parse(text.decode(new Uint8Array(buf, 12, metaLen)));
  let at = 12 + metaLen;
  /** @param {number} count */
  const take = (count) => {
    const from = at;
    at += count * 4;
    if (at > buf.byteLength) throw new Error('frame cut short');
    return from;
  };
  /** @param {number} count */
  const u32 = (count) => new Uint32Array(buf, take(count), count);
  /** @param {number} count */
  const f32 = (count) => new Float32Array(buf, take(count), count);
  const n = meta.bodies, m = meta.entities;
  if (!Number.isInteger(n) || !Number.isInteger(m) || n < 0 || m < 0) throw new Error('bad frame counts');
  if (head[5] === 1) {
    const entity = u32(n), id = u32(n), shape = u32(n), material = u32(n), dims = f32(3 * n), mass = f32(n);
    const entityId = u32(m), entityKind = u32(m);
    return { kind: 'scene', scene: index({ generation: meta.scene, n, m, entity, id, shape, shapes: meta.shapes, material, dims, mass, entityId, entityKind, kinds: meta.kinds }) };
  }
  if (head[5] === 2) {
    const position = f32(3 * n), quaternion = f32(4 * n), velocity = f32(3 * n), angular = f32(3 * n), entityPose = f32(6 * m);
    return { kind: 'poses', poses: { meta, position, quaternion, velocity, angular, entityPose } };
  }
  throw new Error(`unknown frame kind ${head[5]}`);
}

/**
 * Adds the lookup tables (made once per scene).
 * @param {Omit<Scene, 'entityIndex' | 'bodyEntity' | 'bodyStart' | 'bodyList'>} s
 * @returns {Scene}
 */
function index(s) {
  /** @type {Map<number, number>} */
  const entityIndex = new Map();
  for (let k = 0; k < s.m; k++) entityIndex.set(s.entityId[k], k);
  const bodyEntity = new Uint32Array(s.n), bodyStart = new Uint32Array(s.m + 1), bodyList = new Uint32Array(s.n);
  const none = s.m; // a body whose entity is not listed
  for (let i = 0; i < s.n; i++) {
    const k = entityIndex.get(s.entity[i]);
    bodyEntity[i] = k === undefined ? none : k;
    if (k !== undefined) bodyStart[k + 1]++;
  }
  for (let k = 0; k < s.m; k++) bodyStart[k + 1] += bodyStart[k];
  const fill = bodyStart.slice(0, s.m);
  for (let i = 0; i < s.n; i++) if (bodyEntity[i] < none) bodyList[fill[bodyEntity[i]]++] = i;
  return { ...s, entityIndex, bodyEntity, bodyStart, bodyList };
}

/**
 * The kind of entity index `k` (`''` for a body without a listed entity).
 * @param {Scene} s
 * @param {number} k
 */
export const kindOf = (s, k) => (k < s.m ? s.kinds[s.entityKind[k]] : '');

/**
 * The body's size along its own axes (cylinders: radius × radius × length), written to `out`.
 * @param {Scene} s
 * @param {number} i body
 * @param {Float32Array | number[]} out
 * @param {number} [o] where in `out`
 */
export function extent(s, i, out, o = 0) {
  const d0 = s.dims[3 * i], d1 = s.dims[3 * i + 1], d2 = s.dims[3 * i + 2], shape = s.shapes[s.shape[i]];
  if (shape === 'Sphere') { out[o] = d0; out[o + 1] = d0; out[o + 2] = d0; }
  else if (shape === 'Cylinder' || shape === 'WheelCylinder') { out[o] = d0; out[o + 1] = d0; out[o + 2] = d1; }
  else { out[o] = d0; out[o + 1] = d1; out[o + 2] = d2; }
}

/**
 * Half the body's bounding box along its own axes (a sphere's or cylinder's radius, half a
 * box), written to `out`.
 * @param {Scene} s
 * @param {number} i body
 * @param {number[]} out
 */
export function halfExtent(s, i, out) {
  extent(s, i, out);
  const shape = s.shapes[s.shape[i]];
  if (shape === 'Sphere') return out;
  if (shape !== 'Cylinder' && shape !== 'WheelCylinder') { out[0] /= 2; out[1] /= 2; }
  out[2] /= 2;
  return out;
}

/**
 * One body as a plain object, for the inspector and for tests (not for drawing loops).
 * @param {Scene} s
 * @param {Poses} p
 * @param {number} i
 */
export function body(s, p, i) {
  const v3 = (/** @type {Float32Array} */ a) => [a[3 * i], a[3 * i + 1], a[3 * i + 2]];
  return {
    index: i, e: s.entity[i], id: s.id[i], shape: s.shapes[s.shape[i]], material: s.material[i], mass: s.mass[i],
    dims: v3(s.dims), p: v3(p.position), q: [0, 1, 2, 3].map((k) => p.quaternion[4 * i + k]), v: v3(p.velocity), w: v3(p.angular),
  };
}

/**
 * One entity: id, kind and (robots, balls…) its reported pose.
 * @param {Scene} s
 * @param {Poses} p
 * @param {number} k entity index
 * @returns {{id: number, kind: string, p: number[] | null, r: number[] | null}}
 */
export function entity(s, p, k) {
  const e = p.entityPose, o = 6 * k, posed = !Number.isNaN(e[o]);
  return {
    id: s.entityId[k], kind: kindOf(s, k),
    p: posed ? [e[o], e[o + 1], e[o + 2]] : null, r: posed ? [e[o + 3], e[o + 4], e[o + 5]] : null,
  };
}
