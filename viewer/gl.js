// @ts-check
/**
 * The WebGL renderer, instanced: every body is an instance of one of six meshes (box, sphere,
 * cylinder, their coarse versions for bodies a few pixels across, and a point for bodies
 * smaller still). Per body and frame the page writes 16 floats into one array — position,
 * quaternion, size, colour — and the vertex shader rotates and scales: no matrices, no
 * objects. The array is uploaded once a frame as a float texture, and each draw call draws up
 * to 256 instances from it (a buffer holding 256 copies of the mesh, each vertex knowing its
 * copy): software WebGL (SwiftShader, llvmpipe) pays for every hardware instance as for a
 * draw call, so 10,000 hardware instances cost it a third of a second a frame. Where vertex
 * shaders cannot read float textures, hardware instancing (`ANGLE_instanced_arrays`) draws
 * each mesh in one call instead (`?gl=instanced` forces it).
 */
import { extent } from './frame.js';

/** @typedef {import('./frame.js').Scene} Scene */
/** @typedef {import('./frame.js').Poses} Poses */
/** @typedef {import('./colours.js').Look} Look */

/** Floats per instance (four RGBA texels): position and diameter, quaternion, size, colour. */
const PER_INSTANCE = 16;
/**
 * Meshes: box, sphere, disc (a small sphere: one point drawn as a shaded disc), cylinder,
 * coarse cylinder, point. A small sphere or cylinder is drawn with the mesh after its own.
 */
const BOX = 0, SPHERE = 1, DISC = 2, CYLINDER = 3, POINT = 5, MESHES = 6;
/** Below this many pixels across, a sphere is drawn as a disc and a cylinder with the coarse mesh… */
const COARSE_PX = 24;
/** …and below this many, as a point. */
const POINT_PX = 5;
/** Instances per draw call when they are read from the texture. */
const BATCH = 256;

const COMMON = `uniform mat4 u_vp; uniform float u_point; varying vec3 v_nor; varying vec3 v_col;
vec3 rot(vec4 q, vec3 v) { return v + 2.0 * cross(q.xyz, cross(q.xyz, v) + q.w * v); }
void place(vec3 pos, vec3 nor, vec4 pd, vec4 q, vec4 s, vec4 c) {
  v_nor = rot(q, nor / max(s.xyz, vec3(1e-6))); v_col = c.rgb;
  gl_Position = u_vp * vec4(pd.xyz + rot(q, pos * s.xyz), 1.0);
  // Points (u_point: device px per metre at distance 1): as wide as the body looks.
  gl_PointSize = max(u_point * pd.w / gl_Position.w, 1.5);
}`;
/** Instances read from a float texture, 256 to a row, by an index attribute (a batch of copies of the mesh). */
const FETCHED = `attribute vec3 a_pos; attribute vec3 a_nor; attribute float a_i;
uniform sampler2D u_data; uniform float u_base; uniform float u_rows;
${COMMON}
vec4 texel(float i, float k) {
  float row = floor(i / 256.0), col = (i - row * 256.0) * 4.0 + k;
  return texture2D(u_data, vec2((col + 0.5) / 1024.0, (row + 0.5) / u_rows));
}
void main() { float i = u_base + a_i; place(a_pos, a_nor, texel(i, 0.0), texel(i, 1.0), texel(i, 2.0), texel(i, 3.0)); }`;
/** Hardware instancing (where vertex shaders cannot read float textures). */
const INSTANCED = `attribute vec3 a_pos; attribute vec3 a_nor; attribute vec4 a_t0; attribute vec4 a_t1; attribute vec4 a_t2; attribute vec4 a_t3;
${COMMON}
void main() { place(a_pos, a_nor, a_t0, a_t1, a_t2, a_t3); }`;
/**
 * Lit from above (world space); a disc (`u_disc`) is a sphere's silhouette, its normal from
 * where in the point the pixel is, lit from the viewer's upper right.
 */
const FRAGMENT = `precision mediump float; uniform float u_disc; varying vec3 v_nor; varying vec3 v_col;
void main() { vec3 n = normalize(v_nor);
  if (u_disc > 0.5) { vec2 d = gl_PointCoord * 2.0 - 1.0; float r2 = dot(d, d); if (r2 > 1.0) discard; n = vec3(d.x, -d.y, sqrt(1.0 - r2)); }
  float l = 0.35 + 0.65 * max(dot(n, normalize(vec3(0.4, 0.3, 1.0))), 0.0);
  gl_FragColor = vec4(v_col * l, 1.0); }`;

/**
 * A mesh's vertices (`count` of them) and its triangles as indices into them (null: points).
 * @typedef {{pos: number[], nor: number[], count: number, tris: number[] | null}} Shape
 */
/**
 * A shape's buffers: `copies` copies of its vertices (each knowing its copy, `index`) and of
 * its triangles (`elements`, `per` indices a copy).
 * @typedef {{pos: WebGLBuffer, nor: WebGLBuffer, index: WebGLBuffer | null, elements: WebGLBuffer | null, count: number, per: number, copies: number}} Mesh
 */

/**
 * Whether WebGL runs in software here (SwiftShader, llvmpipe): every pixel then costs
 * processor time, so the page draws fewer of them (see `?res=`).
 */
export function softwareGl() {
  const probe = document.createElement('canvas').getContext('webgl');
  if (!probe) return false;
  const info = probe.getExtension('WEBGL_debug_renderer_info');
  const name = String(probe.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : probe.RENDERER));
  const lose = probe.getExtension('WEBGL_lose_context');
  if (lose) lose.loseContext();
  return /swiftshader|llvmpipe|softpipe|software/i.test(name);
}

/**
 * @param {WebGLRenderingContext} gl @param {string} vertex
 * @returns {WebGLProgram | null}
 */
function program(gl, vertex) {
  const p = gl.createProgram();
  if (!p) return null;
  for (const [type, src] of /** @type {[number, string][]} */ ([[gl.VERTEX_SHADER, vertex], [gl.FRAGMENT_SHADER, FRAGMENT]])) {
    const sh = gl.createShader(type);
    if (!sh) return null;
    gl.shaderSource(sh, src);
    gl.compileShader(sh);
    gl.attachShader(p, sh);
  }
  gl.linkProgram(p);
  return gl.getProgramParameter(p, gl.LINK_STATUS) ? p : null;
}

export class GlView {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{antialias: boolean, res: number, instanced: boolean}} options `res` scales the
   *   drawing buffer (1: one pixel per device pixel); `instanced` uses hardware instancing
   *   even where instances could be read from a texture
   */
  constructor(canvas, options) {
    this.canvas = canvas;
    this.res = options.res;
    /** @type {WebGLRenderingContext | null} */
    this.gl = null;
    /** How instances reach the vertex shader: `texture` (batches of 256 per draw call) or `instanced`. */
    this.mode = '';
    const gl = canvas.getContext('webgl', { antialias: options.antialias, alpha: false, preserveDrawingBuffer: false });
    if (!gl) return;
    const fetchable = !options.instanced && gl.getParameter(gl.MAX_VERTEX_TEXTURE_IMAGE_UNITS) > 0 && gl.getExtension('OES_texture_float');
    const inst = gl.getExtension('ANGLE_instanced_arrays');
    const prog = fetchable ? program(gl, FETCHED) : inst ? program(gl, INSTANCED) : null;
    if (!prog) return;
    this.gl = gl;
    this.inst = inst;
    this.mode = fetchable ? 'texture' : 'instanced';
    this.program = prog;
    this.uVp = gl.getUniformLocation(prog, 'u_vp');
    this.uPoint = gl.getUniformLocation(prog, 'u_point');
    this.uDisc = gl.getUniformLocation(prog, 'u_disc');
    this.uBase = gl.getUniformLocation(prog, 'u_base');
    this.uRows = gl.getUniformLocation(prog, 'u_rows');
    this.aPos = gl.getAttribLocation(prog, 'a_pos');
    this.aNor = gl.getAttribLocation(prog, 'a_nor');
    this.aI = gl.getAttribLocation(prog, 'a_i');
    this.aT = [0, 1, 2, 3].map((k) => gl.getAttribLocation(prog, `a_t${k}`));
    /** @type {Shape[]} */
    const point = { pos: [0, 0, 0], nor: [0, 0, 1], count: 1, tris: null };
    this.shapes = [cube(), sphere(10, 14), point, cylinder(14), cylinder(6), point];
    /** @type {(Mesh | null)[]} made when first needed */
    this.meshes = this.shapes.map(() => null);
    this.instances = gl.createBuffer();
    this.texture = gl.createTexture();
    if (this.mode === 'texture') {
      gl.bindTexture(gl.TEXTURE_2D, this.texture);
      for (const [k, v] of [[gl.TEXTURE_MIN_FILTER, gl.NEAREST], [gl.TEXTURE_MAG_FILTER, gl.NEAREST], [gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE], [gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE]]) gl.texParameteri(gl.TEXTURE_2D, k, v);
    }
    this.vp = new Float32Array(16);
    /** What the last drawing cost: draw calls, vertices and triangles sent. */
    this.stats = { calls: 0, vertices: 0, triangles: 0 };
    this.counts = new Uint32Array(MESHES);
    this.starts = new Uint32Array(MESHES);
    /** @type {Scene | null} */
    this.scene = null;
    this.data = new Float32Array(0);
    /** Floats in the instance texture (or buffer) as last allocated. */
    this.uploaded = 0;
    this.mesh = new Uint8Array(0);
    this.group = new Uint8Array(0);
    this.diameter = new Float32Array(0);
    this.extent = new Float32Array(0);
  }

  /**
   * Mesh `g`'s buffers: for the texture, `copies` copies of it with each vertex's copy index.
   * @param {number} g @param {number} copies at least
   */
  meshFor(g, copies) {
    const gl = /** @type {WebGLRenderingContext} */ (this.gl), old = this.meshes[g];
    if (old && old.copies >= copies) return old;
    const shape = this.shapes[g], texture = this.mode === 'texture';
    // Triangles index their copy's vertices with 16 bits.
    const k = !texture ? 1 : !shape.tris ? Math.max(copies, 2 * (old ? old.copies : 0), 1024) : Math.min(BATCH, Math.floor(65536 / shape.count));
    const buf = (/** @type {number} */ target, /** @type {Float32Array | Uint16Array} */ data) => {
      const b = /** @type {WebGLBuffer} */ (gl.createBuffer());
      gl.bindBuffer(target, b);
      gl.bufferData(target, data, gl.STATIC_DRAW);
      return b;
    };
    const repeat = (/** @type {number[]} */ a) => { const out = new Float32Array(a.length * k); for (let c = 0; c < k; c++) out.set(a, c * a.length); return out; };
    const index = new Float32Array(shape.count * k);
    for (let c = 0; c < k; c++) index.fill(c, c * shape.count, (c + 1) * shape.count);
    const tris = shape.tris, per = tris ? tris.length : 0;
    let elements = null;
    if (tris) {
      const e = new Uint16Array(per * k);
      for (let c = 0; c < k; c++) for (let t = 0; t < per; t++) e[c * per + t] = c * shape.count + tris[t];
      elements = buf(gl.ELEMENT_ARRAY_BUFFER, e);
    }
    if (old) for (const b of [old.pos, old.nor, old.index, old.elements]) gl.deleteBuffer(b);
    const m = {
      pos: buf(gl.ARRAY_BUFFER, repeat(shape.pos)), nor: buf(gl.ARRAY_BUFFER, repeat(shape.nor)),
      index: texture ? buf(gl.ARRAY_BUFFER, index) : null, elements, count: shape.count, per, copies: k,
    };
    this.meshes[g] = m;
    return m;
  }

  /** @param {Scene} s the per-scene tables */
  prepare(s) {
    if (this.scene === s) return;
    this.scene = s;
    this.mesh = new Uint8Array(s.n);
    this.group = new Uint8Array(s.n);
    this.extent = new Float32Array(3 * s.n);
    this.diameter = new Float32Array(s.n);
    // Whole rows of the texture: 256 instances each.
    this.data = new Float32Array(PER_INSTANCE * BATCH * Math.max(1, Math.ceil(s.n / BATCH)));
    for (let i = 0; i < s.n; i++) {
      const shape = s.shapes[s.shape[i]];
      this.mesh[i] = shape === 'Sphere' ? SPHERE : shape === 'Cylinder' || shape === 'WheelCylinder' ? CYLINDER : BOX;
      extent(s, i, this.extent, 3 * i);
      const x = this.extent[3 * i], y = this.extent[3 * i + 1], z = this.extent[3 * i + 2];
      this.diameter[i] = this.mesh[i] === SPHERE ? 2 * x : this.mesh[i] === CYLINDER ? Math.max(2 * x, z) : Math.max(x, y, z);
    }
  }

  /**
   * Draws every body.
   * @param {Scene} s
   * @param {Look} look
   * @param {Poses} p
   * @param {ArrayLike<number>} vp view-projection
   * @param {number} w CSS px
   * @param {number} h CSS px
   * @param {{eye: number[] | null, k: number}} lod how big a body 1 m across looks: `k / distance to eye` px, or `k` px without an eye
   */
  draw(s, look, p, vp, w, h, lod) {
    const gl = this.gl;
    if (!gl) return;
    this.prepare(s);
    const scale = (window.devicePixelRatio || 1) * this.res;
    const cw = Math.max(1, Math.round(w * scale)), ch = Math.max(1, Math.round(h * scale));
    if (this.canvas.width !== cw || this.canvas.height !== ch) { this.canvas.width = cw; this.canvas.height = ch; }
    gl.viewport(0, 0, cw, ch);
    gl.clearColor(0.11, 0.13, 0.15, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    gl.enable(gl.CULL_FACE);
    this.stats = { calls: 0, vertices: 0, triangles: 0 };
    gl.useProgram(this.program);
    this.vp.set(vp);
    gl.uniformMatrix4fv(this.uVp, false, this.vp);
    // Which mesh each body gets, then the instances grouped by mesh.
    const n = s.n, pos = p.position, q = p.quaternion, group = this.group, counts = this.counts, starts = this.starts;
    const e = lod.eye, k = lod.k, diameter = this.diameter;
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      let g = this.mesh[i];
      const px = (e ? k / Math.max(Math.hypot(pos[3 * i] - e[0], pos[3 * i + 1] - e[1], pos[3 * i + 2] - e[2]), 1e-6) : k) * diameter[i];
      if (px < POINT_PX) g = POINT;
      else if (px < COARSE_PX && g !== BOX) g++;
      group[i] = g;
      counts[g]++;
    }
    for (let g = 0, at = 0; g < MESHES; g++) { starts[g] = at; at += counts[g]; }
    const d = this.data, ext = this.extent, colour = look.colour, lift = look.lift;
    for (let i = 0; i < n; i++) {
      const o = PER_INSTANCE * starts[group[i]]++;
      d[o] = pos[3 * i]; d[o + 1] = pos[3 * i + 1]; d[o + 2] = pos[3 * i + 2] + lift[i]; d[o + 3] = diameter[i];
      d[o + 4] = q[4 * i]; d[o + 5] = q[4 * i + 1]; d[o + 6] = q[4 * i + 2]; d[o + 7] = q[4 * i + 3];
      d[o + 8] = ext[3 * i]; d[o + 9] = ext[3 * i + 1]; d[o + 10] = ext[3 * i + 2];
      d[o + 12] = colour[3 * i]; d[o + 13] = colour[3 * i + 1]; d[o + 14] = colour[3 * i + 2];
    }
    if (this.mode === 'texture') {
      const rows = d.length / (PER_INSTANCE * BATCH);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, this.texture);
      // Storage is made when the size changes; each frame only replaces its contents.
      if (this.uploaded !== d.length) gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, 4 * BATCH, rows, 0, gl.RGBA, gl.FLOAT, d);
      else gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, 4 * BATCH, rows, gl.RGBA, gl.FLOAT, d);
      gl.uniform1f(this.uRows, rows);
    } else {
      gl.bindBuffer(gl.ARRAY_BUFFER, this.instances);
      if (this.uploaded !== d.length) gl.bufferData(gl.ARRAY_BUFFER, d, gl.DYNAMIC_DRAW);
      else gl.bufferSubData(gl.ARRAY_BUFFER, 0, d);
    }
    this.uploaded = d.length;
    for (let g = 0, first = 0; g < MESHES; first += counts[g], g++) {
      if (counts[g]) this.drawGroup(g, first, counts[g], g === POINT || g === DISC ? k * scale : 0);
    }
  }

  /**
   * Draws instances `first`… of mesh `g`.
   * @param {number} g @param {number} first @param {number} count @param {number} point px per metre at distance 1 (points)
   */
  drawGroup(g, first, count, point) {
    const gl = /** @type {WebGLRenderingContext} */ (this.gl), m = this.meshFor(g, count), inst = this.inst;
    gl.uniform1f(this.uPoint, point);
    gl.uniform1f(this.uDisc, g === DISC ? 1 : 0);
    const attribute = (/** @type {number} */ loc, /** @type {WebGLBuffer} */ b, /** @type {number} */ size) => {
      gl.bindBuffer(gl.ARRAY_BUFFER, b); gl.enableVertexAttribArray(loc); gl.vertexAttribPointer(loc, size, gl.FLOAT, false, 0, 0);
    };
    attribute(this.aPos, m.pos, 3);
    attribute(this.aNor, m.nor, 3);
    if (m.elements) gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, m.elements);
    const stats = this.stats;
    if (this.mode === 'texture' && m.index) {
      attribute(this.aI, m.index, 1);
      // Points: all at once; meshes: a batch of copies per call.
      for (let b = 0; b < count; b += m.copies) {
        const c = Math.min(m.copies, count - b);
        gl.uniform1f(this.uBase, first + b);
        if (m.elements) gl.drawElements(gl.TRIANGLES, c * m.per, gl.UNSIGNED_SHORT, 0);
        else gl.drawArrays(gl.POINTS, 0, c * m.count);
        stats.calls++;
      }
    } else if (inst) {
      gl.bindBuffer(gl.ARRAY_BUFFER, this.instances);
      this.aT.forEach((loc, t) => {
        gl.enableVertexAttribArray(loc);
        gl.vertexAttribPointer(loc, 4, gl.FLOAT, false, PER_INSTANCE * 4, (first * PER_INSTANCE + 4 * t) * 4);
        inst.vertexAttribDivisorANGLE(loc, 1);
      });
      if (m.elements) inst.drawElementsInstancedANGLE(gl.TRIANGLES, m.per, gl.UNSIGNED_SHORT, 0, count);
      else inst.drawArraysInstancedANGLE(gl.POINTS, 0, m.count, count);
      stats.calls++;
    }
    stats.vertices += count * m.count;
    stats.triangles += count * m.per / 3;
  }
}

/** A unit cube centred on the origin: four vertices a face, for its normal. @returns {Shape} */
function cube() {
  /** @type {number[]} */
  const pos = [], nor = [], tris = [];
  for (const [axis, sign] of [[0, 1], [0, -1], [1, 1], [1, -1], [2, 1], [2, -1]]) {
    const u = (axis + 1) % 3, v = (axis + 2) % 3, at = pos.length / 3;
    for (const [a, b] of [[-1, -1], [1, -1], [1, 1], [-1, 1]]) {
      const c = [0, 0, 0], nn = [0, 0, 0];
      c[axis] = 0.5 * sign; c[u] = a * 0.5; c[v] = b * 0.5; nn[axis] = sign;
      pos.push(...c); nor.push(...nn);
    }
    // Counter-clockwise seen from outside (back faces are culled).
    tris.push(...(sign > 0 ? [0, 1, 2, 0, 2, 3] : [0, 2, 1, 0, 3, 2]).map((t) => at + t));
  }
  return { pos, nor, count: pos.length / 3, tris };
}

/** A sphere of radius 1: `rings` × `segs` quads, one triangle where they meet a pole. @param {number} rings @param {number} segs @returns {Shape} */
function sphere(rings, segs) {
  /** @type {number[]} */
  const pos = [], tris = [];
  for (let i = 0; i <= rings; i++) for (let j = 0; j <= segs; j++) {
    const th = Math.PI * i / rings, ph = 2 * Math.PI * j / segs;
    pos.push(Math.sin(th) * Math.cos(ph), Math.sin(th) * Math.sin(ph), Math.cos(th));
  }
  const at = (/** @type {number} */ i, /** @type {number} */ j) => i * (segs + 1) + j;
  for (let i = 0; i < rings; i++) for (let j = 0; j < segs; j++) {
    const a = at(i, j), b = at(i + 1, j), c = at(i + 1, j + 1), d = at(i, j + 1);
    if (i < rings - 1) tris.push(a, b, c);
    if (i > 0) tris.push(a, c, d);
  }
  return { pos, nor: pos, count: pos.length / 3, tris };
}

/** A cylinder of radius 1 along Z from −0.5 to 0.5. @param {number} segs @returns {Shape} */
function cylinder(segs) {
  /** @type {number[]} */
  const pos = [], nor = [], tris = [];
  const angle = (/** @type {number} */ j) => 2 * Math.PI * j / segs;
  // The side: a bottom and a top vertex per angle, normals outwards.
  for (let j = 0; j <= segs; j++) {
    const c = Math.cos(angle(j)), s = Math.sin(angle(j));
    pos.push(c, s, -0.5, c, s, 0.5); nor.push(c, s, 0, c, s, 0);
  }
  for (let j = 0; j < segs; j++) tris.push(2 * j, 2 * j + 2, 2 * j + 3, 2 * j, 2 * j + 3, 2 * j + 1);
  // The caps: a ring each, normals along Z, a fan of triangles from its first vertex.
  for (const z of [0.5, -0.5]) {
    const first = pos.length / 3;
    for (let j = 0; j < segs; j++) { pos.push(Math.cos(angle(j)), Math.sin(angle(j)), z); nor.push(0, 0, Math.sign(z)); }
    for (let j = 1; j + 1 < segs; j++) tris.push(...(z > 0 ? [first, first + j, first + j + 1] : [first, first + j + 1, first + j]));
  }
  return { pos, nor, count: pos.length / 3, tris };
}
