// @ts-check
/**
 * The WebGL renderer, instanced: every body is an instance of one of a few meshes (box,
 * sphere, cylinder), or, when it is small on screen, a single point: a *sprite* under 24 px
 * across (the point's fragment shader casts a ray at the body's true box, sphere or cylinder,
 * turned as the body is, and lights it), a plain dot under 5 px. Robots get a heading arrow,
 * one more instance of a flat triangle on top of each (`heading.js`). Per body and frame the
 * page writes 16 floats into one array — position, quaternion, size, colour — and the vertex
 * shader rotates and scales: no matrices, no objects. The array is uploaded once a frame as a
 * float texture, and each draw call draws up to 256 instances from it (a buffer holding 256
 * copies of the mesh, each vertex knowing its copy), points all in one call: software WebGL
 * (SwiftShader, llvmpipe) pays for every hardware instance as for a draw call, and about a
 * microsecond for every triangle or point it rasterises however small, so a body a few pixels
 * across costs it one point instead of 12 to 60 triangles. Where vertex shaders cannot read
 * float textures, hardware instancing (`ANGLE_instanced_arrays`) draws each kind in one call
 * instead (`?gl=instanced` forces it).
 */
import { extent, kindOf } from './frame.js';
import { Headings } from './heading.js';

/** @typedef {import('./frame.js').Scene} Scene */
/** @typedef {import('./frame.js').Poses} Poses */
/** @typedef {import('./colours.js').Look} Look */

/** Floats per instance (four RGBA texels): position and diameter, quaternion, size, colour and shape. */
const PER_INSTANCE = 16;
/**
 * What an instance is drawn as: the box, sphere and cylinder meshes, the heading arrow, a
 * sprite (a point that ray-casts its body's shape) and a dot. The first three are also the
 * shape codes the sprite reads.
 */
const BOX = 0, SPHERE = 1, CYLINDER = 2, ARROW = 3, SPRITE = 4, DOT = 5, KINDS = 6;
/** Below this many pixels across, a body is drawn as a sprite… */
const SPRITE_PX = 24;
/** …and below this many, as a dot. */
const DOT_PX = 5;
/**
 * The least size on screen, in pixels across, of a humanoid and of a ball: smaller, each is
 * drawn magnified about its lowest point (it stays on the floor), as a map draws a symbol, so
 * that the players and the ball of a whole field in view are not specks. Picking and labels
 * keep the true geometry.
 */
const MIN_PX = { Humanoid: 40, Ball: 12 };
/** A robot smaller than this many pixels across gets no arrow. */
const ARROW_PX = 8;
/** The arrow's colour. */
const ARROW_RGB = [1, 1, 1];
/** Instances per draw call when they are read from the texture. */
const BATCH = 256;
/** Attribute locations, the same in both programs. */
const A_POS = 0, A_NOR = 1, A_I = 2, A_T = 3;

/** Where an instance's four texels come from: the texture (`FETCHED`) or attributes (`INSTANCED`). */
const FETCHED = `attribute float a_i; uniform sampler2D u_data; uniform float u_base; uniform float u_rows;
vec4 texel(float i, float k) {
  float row = floor(i / 256.0), col = (i - row * 256.0) * 4.0 + k;
  return texture2D(u_data, vec2((col + 0.5) / 1024.0, (row + 0.5) / u_rows));
}
#define INSTANCE float i = u_base + a_i; vec4 t0 = texel(i, 0.0), t1 = texel(i, 1.0), t2 = texel(i, 2.0), t3 = texel(i, 3.0);`;
const INSTANCED = `attribute vec4 a_t0; attribute vec4 a_t1; attribute vec4 a_t2; attribute vec4 a_t3;
#define INSTANCE vec4 t0 = a_t0, t1 = a_t1, t2 = a_t2, t3 = a_t3;`;
const ROT = 'vec3 rot(vec4 q, vec3 v) { return v + 2.0 * cross(q.xyz, cross(q.xyz, v) + q.w * v); }';
/** The light, from above (world space). */
const LIGHT = 'normalize(vec3(0.4, 0.3, 1.0))';

/** Meshes (and dots): the mesh turned, scaled and placed. */
const MESH_VERTEX = `attribute vec3 a_pos; attribute vec3 a_nor; uniform mat4 u_vp; uniform float u_point;
varying vec3 v_nor; varying vec3 v_col;
${ROT}
void main() { INSTANCE
  v_nor = rot(t1, a_nor / max(t2.xyz, vec3(1e-6))); v_col = t3.rgb;
  gl_Position = u_vp * vec4(t0.xyz + rot(t1, a_pos * t2.xyz), 1.0);
  // Dots (u_point: device px per metre at distance 1): as wide as the body looks.
  gl_PointSize = max(u_point * t0.w / gl_Position.w, 1.5);
}`;
const MESH_FRAGMENT = `precision mediump float; varying vec3 v_nor; varying vec3 v_col;
void main() { float l = 0.35 + 0.65 * max(dot(normalize(v_nor), ${LIGHT}), 0.0); gl_FragColor = vec4(v_col * l, 1.0); }`;

/**
 * Sprites: a point covering the body's bounding sphere. Per body (here) the ray through the
 * sprite's centre and the sprite's axes, in the body's own frame; per pixel (the fragment
 * shader) that ray moved to the pixel and intersected with the body's box, sphere or
 * cylinder (parallel rays: the body is small on screen). `u_eye.w` is 1 for a perspective
 * view from `u_eye.xyz`, 0 for an orthographic one; `u_right`, `u_up`: the screen's axes in
 * the world.
 */
/**
 * Five vec4s (software WebGL pays for each varying at every pixel; a sixth, `v_z`, for depth): the ray's direction and
 * how far before the centre it starts (`v_d`), the sprite's half axes (`v_r`, `v_u`), the
 * light, all in the body's frame, the body's half sizes in their `w`s, the colour and shape.
 */
const SPRITE_VARYINGS = 'varying vec4 v_d; varying vec4 v_r; varying vec4 v_u; varying vec4 v_l; varying vec4 v_col;';
const SPRITE_VERTEX = `uniform mat4 u_vp; uniform float u_point; uniform vec4 u_eye; uniform vec3 u_right; uniform vec3 u_up;
${SPRITE_VARYINGS} varying vec4 v_z;
${ROT}
void main() { INSTANCE
  float kind = t3.w;
  vec3 h = kind < 0.5 ? 0.5 * t2.xyz : kind < 1.5 ? t2.xxx : vec3(t2.x, t2.x, 0.5 * t2.z);
  float r = kind < 0.5 ? length(h) : kind < 1.5 ? h.x : length(h.xz);
  vec3 d = u_eye.w > 0.5 ? normalize(t0.xyz - u_eye.xyz) : cross(u_up, u_right);
  vec4 inv = vec4(-t1.xyz, t1.w);
  vec3 right = rot(inv, u_right), up = rot(inv, u_up);
  // Half the body's width and height on screen, m: the sprite is a square as large as the larger.
  vec2 e = kind < 0.5 ? vec2(dot(abs(right), h), dot(abs(up), h)) : kind < 1.5 ? h.xx
    : h.x * sqrt(max(1.0 - vec2(right.z, up.z) * vec2(right.z, up.z), 0.0)) + h.z * abs(vec2(right.z, up.z));
  gl_Position = u_vp * vec4(t0.xyz, 1.0);
  float px = 2.0 * max(e.x, e.y) * u_point / gl_Position.w + 2.0;
  gl_PointSize = px;
  float hs = 0.5 * px * gl_Position.w / u_point;
  v_d = vec4(rot(inv, d), 2.0 * r); v_r = vec4(right * hs, h.x); v_u = vec4(up * hs, h.y);
  v_l = vec4(rot(inv, ${LIGHT}), h.z); v_col = vec4(t3.rgb, kind);
  // Clip z and w at the centre and per metre along the ray, for the depth of each pixel's hit.
  v_z = vec4(gl_Position.zw, (u_vp * vec4(d, 0.0)).zw);
}`;
/**
 * The sprites' fragment shader; with `depth` (`EXT_frag_depth`) each pixel's depth is where its
 * ray hits the body, so small bodies that touch or overlap hide each other as they should
 * (without it, the whole sprite lies at the body's centre).
 * @param {boolean} depth
 */
const spriteFragment = (depth) => `${depth ? '#extension GL_EXT_frag_depth : enable\n' : ''}#ifdef GL_FRAGMENT_PRECISION_HIGH
precision highp float;
#else
precision mediump float;
#endif
${SPRITE_VARYINGS} varying vec4 v_z;
void main() {
  vec2 uv = vec2(gl_PointCoord.x * 2.0 - 1.0, 1.0 - gl_PointCoord.y * 2.0);
  vec3 d = v_d.xyz, o = v_r.xyz * uv.x + v_u.xyz * uv.y - v_d.w * d, h = vec3(v_r.w, v_u.w, v_l.w), n;
  float kind = v_col.w, t;
  if (kind < 0.5) {
    vec3 dd = mix(d, vec3(1e-6), vec3(lessThan(abs(d), vec3(1e-6))));
    vec3 t1 = (-h - o) / dd, t2 = (h - o) / dd, tn = min(t1, t2), tf = max(t1, t2);
    t = max(max(tn.x, tn.y), tn.z);
    if (t > min(min(tf.x, tf.y), tf.z)) discard;
    n = t == tn.x ? vec3(-sign(dd.x), 0.0, 0.0) : t == tn.y ? vec3(0.0, -sign(dd.y), 0.0) : vec3(0.0, 0.0, -sign(dd.z));
  } else if (kind < 1.5) {
    float b = dot(o, d), q = b * b - dot(o, o) + h.x * h.x;
    if (q < 0.0) discard;
    t = -b - sqrt(q);
    n = (o + t * d) / h.x;
  } else {
    t = 1e9;
    float a = dot(d.xy, d.xy), b = dot(o.xy, d.xy), q = b * b - a * (dot(o.xy, o.xy) - h.x * h.x);
    n = vec3(0.0, 0.0, 1.0);
    if (a > 1e-9 && q >= 0.0) {
      float ts = (-b - sqrt(q)) / a;
      if (abs(o.z + ts * d.z) <= h.z) { t = ts; n = vec3((o.xy + ts * d.xy) / h.x, 0.0); }
    }
    if (abs(d.z) > 1e-9) {
      float z = -sign(d.z) * h.z, tc = (z - o.z) / d.z;
      vec2 p = o.xy + tc * d.xy;
      if (tc < t && dot(p, p) <= h.x * h.x) { t = tc; n = vec3(0.0, 0.0, sign(z)); }
    }
    if (t > 1e8) discard;
  }
  float l = 0.35 + 0.65 * max(dot(n, v_l.xyz), 0.0);
  gl_FragColor = vec4(v_col.rgb * l, 1.0);
  ${depth ? 'float s = t - v_d.w; gl_FragDepthEXT = 0.5 + 0.5 * (v_z.x + s * v_z.z) / (v_z.y + s * v_z.w);' : ''}
}`;

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
 * @param {WebGLRenderingContext} gl @param {string} vertex @param {string} fragment
 * @returns {WebGLProgram | null}
 */
function program(gl, vertex, fragment) {
  const p = gl.createProgram();
  if (!p) return null;
  for (const [type, src] of /** @type {[number, string][]} */ ([[gl.VERTEX_SHADER, vertex], [gl.FRAGMENT_SHADER, fragment]])) {
    const sh = gl.createShader(type);
    if (!sh) return null;
    gl.shaderSource(sh, src);
    gl.compileShader(sh);
    gl.attachShader(p, sh);
  }
  for (const [at, name] of /** @type {[number, string][]} */ ([[A_POS, 'a_pos'], [A_NOR, 'a_nor'], [A_I, 'a_i'], [A_T, 'a_t0'], [A_T + 1, 'a_t1'], [A_T + 2, 'a_t2'], [A_T + 3, 'a_t3']])) gl.bindAttribLocation(p, at, name);
  gl.linkProgram(p);
  return gl.getProgramParameter(p, gl.LINK_STATUS) ? p : null;
}

/**
 * A linked program and its uniforms.
 * @typedef {{program: WebGLProgram, uniform: (name: string) => WebGLUniformLocation | null}} Program
 */
/**
 * @param {WebGLRenderingContext} gl @param {string} vertex @param {string} fragment
 * @returns {Program | null}
 */
function linked(gl, vertex, fragment) {
  const p = program(gl, vertex, fragment);
  if (!p) return null;
  /** @type {Map<string, WebGLUniformLocation | null>} */
  const cache = new Map();
  const uniform = (/** @type {string} */ name) => {
    if (!cache.has(name)) cache.set(name, gl.getUniformLocation(p, name));
    return /** @type {WebGLUniformLocation | null} */ (cache.get(name));
  };
  return { program: p, uniform };
}

export class GlView {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{antialias: boolean, res: number, instanced: boolean, depth: boolean}} options `res`
   *   scales the drawing buffer (1: one pixel per device pixel); `instanced` uses hardware
   *   instancing even where instances could be read from a texture; `depth` gives each
   *   sprite pixel its own depth where the browser can (software WebGL is faster without)
   */
  constructor(canvas, options) {
    this.canvas = canvas;
    this.res = options.res;
    /** @type {WebGLRenderingContext | null} */
    this.gl = null;
    /** How instances reach the vertex shader: `texture` (batches of 256 per draw call) or `instanced`. */
    this.mode = '';
    const gl = canvas.getContext('webgl', { antialias: options.antialias, alpha: false, preserveDrawingBuffer: false, powerPreference: 'high-performance' });
    if (!gl) return;
    const fetchable = !options.instanced && gl.getParameter(gl.MAX_VERTEX_TEXTURE_IMAGE_UNITS) > 0 && gl.getExtension('OES_texture_float');
    const inst = gl.getExtension('ANGLE_instanced_arrays');
    const source = fetchable ? FETCHED : inst ? INSTANCED : null;
    if (!source) return;
    const mesh = linked(gl, `${source}\n${MESH_VERTEX}`, MESH_FRAGMENT);
    const depth = options.depth && gl.getExtension('EXT_frag_depth') !== null;
    const exact = depth ? linked(gl, `${source}\n${SPRITE_VERTEX}`, spriteFragment(true)) : null;
    const sprite = exact || linked(gl, `${source}\n${SPRITE_VERTEX}`, spriteFragment(false));
    if (!mesh || !sprite) return;
    this.gl = gl;
    /** Sprites write each pixel's depth. */
    this.spriteDepth = exact !== null;
    this.inst = inst;
    this.mode = fetchable ? 'texture' : 'instanced';
    this.meshProgram = mesh;
    this.spriteProgram = sprite;
    /** @type {Shape} */
    const point = { pos: [0, 0, 0], nor: [0, 0, 1], count: 1, tris: null };
    /** A flat arrow along +X, tip at 1, on the XY plane facing up. @type {Shape} */
    const arrow = { pos: [1, 0, 0, -0.35, 0.5, 0, -0.35, -0.5, 0], nor: [0, 0, 1, 0, 0, 1, 0, 0, 1], count: 3, tris: [0, 1, 2] };
    this.shapes = [cube(), sphere(10, 14), cylinder(14), arrow, point, point];
    /** @type {(Mesh | null)[]} made when first needed */
    this.meshes = this.shapes.map(() => null);
    this.instances = gl.createBuffer();
    this.texture = gl.createTexture();
    if (this.mode === 'texture') {
      gl.bindTexture(gl.TEXTURE_2D, this.texture);
      for (const [k, v] of [[gl.TEXTURE_MIN_FILTER, gl.NEAREST], [gl.TEXTURE_MAG_FILTER, gl.NEAREST], [gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE], [gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE]]) gl.texParameteri(gl.TEXTURE_2D, k, v);
    }
    this.vp = new Float32Array(16);
    /** What the last drawing cost: draw calls, vertices and triangles sent, and what was drawn how. */
    this.stats = { calls: 0, vertices: 0, triangles: 0, meshes: 0, sprites: 0, dots: 0, arrows: 0 };
    this.counts = new Uint32Array(KINDS);
    this.starts = new Uint32Array(KINDS);
    /** @type {Scene | null} */
    this.scene = null;
    /** @type {Headings | null} the robots' headings as last drawn */
    this.headings = null;
    this.data = new Float32Array(0);
    /** Floats in the instance texture (or buffer) as last allocated. */
    this.uploaded = 0;
    this.mesh = new Uint8Array(0);
    this.group = new Uint8Array(0);
    /** 1 for a body drawn as a dot. */
    this.tiny = new Uint8Array(0);
    this.drawnAt = new Float32Array(0);
    this.magnify = new Float32Array(0);
    /** @type {{k: number, id: number, min: number}[]} */
    this.symbols = [];
    /** @type {Map<number, number>} */
    this.across = new Map();
    this.arrowShown = new Uint8Array(0);
    this.diameter = new Float32Array(0);
    /** Each body's bounding sphere's radius, m. */
    this.bound = new Float32Array(0);
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
    this.headings = new Headings(s);
    const arrows = this.headings.entity.length;
    this.mesh = new Uint8Array(s.n);
    this.group = new Uint8Array(s.n);
    this.tiny = new Uint8Array(s.n);
    this.arrowShown = new Uint8Array(arrows);
    this.extent = new Float32Array(3 * s.n);
    this.diameter = new Float32Array(s.n);
    this.bound = new Float32Array(s.n);
    /** Where each body is drawn (its true place, or magnified) and by how much it is magnified. */
    this.drawnAt = new Float32Array(3 * s.n);
    this.magnify = new Float32Array(s.n);
    /** @type {{k: number, id: number, min: number}[]} entities drawn at least `min` px across */
    this.symbols = [];
    for (let k = 0; k < s.m; k++) {
      const min = /** @type {Record<string, number>} */ (MIN_PX)[kindOf(s, k)];
      if (min && s.bodyStart[k + 1] > s.bodyStart[k]) this.symbols.push({ k, id: s.entityId[k], min });
    }
    /** @type {Map<number, number>} entity id → pixels across as drawn, for the symbols */
    this.across = new Map();
    // Whole rows of the texture: 256 instances each.
    this.data = new Float32Array(PER_INSTANCE * BATCH * Math.max(1, Math.ceil((s.n + arrows) / BATCH)));
    for (let i = 0; i < s.n; i++) {
      const shape = s.shapes[s.shape[i]];
      this.mesh[i] = shape === 'Sphere' ? SPHERE : shape === 'Cylinder' || shape === 'WheelCylinder' ? CYLINDER : BOX;
      extent(s, i, this.extent, 3 * i);
      const x = this.extent[3 * i], y = this.extent[3 * i + 1], z = this.extent[3 * i + 2];
      this.diameter[i] = this.mesh[i] === SPHERE ? 2 * x : this.mesh[i] === CYLINDER ? Math.max(2 * x, z) : Math.max(x, y, z);
      this.bound[i] = this.mesh[i] === SPHERE ? x : this.mesh[i] === CYLINDER ? Math.hypot(x, z / 2) : Math.hypot(x, y, z) / 2;
    }
  }

  /**
   * Draws every body, and the robots' heading arrows.
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
    const stats = (this.stats = { calls: 0, vertices: 0, triangles: 0, meshes: 0, sprites: 0, dots: 0, arrows: 0 });
    this.vp.set(vp);
    // Which kind each body is drawn as, then the instances grouped by kind.
    const n = s.n, pos = p.position, q = p.quaternion, group = this.group, counts = this.counts, starts = this.starts;
    const e = lod.eye, k = lod.k, diameter = this.diameter;
    const px = (/** @type {number} */ x, /** @type {number} */ y, /** @type {number} */ z, /** @type {number} */ size) =>
      (e ? k / Math.max(Math.hypot(x - e[0], y - e[1], z - e[2]), 1e-6) : k) * size;
    counts.fill(0);
    const tiny = this.tiny, at = this.drawnAt, mag = this.magnify;
    at.set(pos.subarray(0, 3 * n));
    mag.fill(1);
    this.across.clear();
    for (const { k, id, min } of this.symbols) {
      // The entity's reach about its centre on the floor, and how big that looks.
      const first = s.bodyStart[k], last = s.bodyStart[k + 1];
      let cx = 0, cy = 0, z0 = Infinity, cz = 0;
      for (let j = first; j < last; j++) {
        const i = s.bodyList[j];
        cx += pos[3 * i]; cy += pos[3 * i + 1]; cz += pos[3 * i + 2];
        z0 = Math.min(z0, pos[3 * i + 2] - this.bound[i]);
      }
      const count = last - first;
      cx /= count; cy /= count; cz /= count;
      let reach = 0;
      for (let j = first; j < last; j++) {
        const i = s.bodyList[j];
        reach = Math.max(reach, Math.hypot(pos[3 * i] - cx, pos[3 * i + 1] - cy, pos[3 * i + 2] - cz) + this.bound[i]);
      }
      const seen = px(cx, cy, cz, 2 * reach);
      if (!(seen > 0) || !Number.isFinite(z0)) continue;
      const m = seen < min ? min / seen : 1;
      this.across.set(id, seen * m);
      if (m === 1) continue;
      for (let j = first; j < last; j++) {
        const i = s.bodyList[j];
        at[3 * i] = cx + (pos[3 * i] - cx) * m;
        at[3 * i + 1] = cy + (pos[3 * i + 1] - cy) * m;
        at[3 * i + 2] = z0 + (pos[3 * i + 2] - z0) * m;
        mag[i] = m;
      }
    }
    for (let i = 0; i < n; i++) {
      const across = px(at[3 * i], at[3 * i + 1], at[3 * i + 2], diameter[i] * mag[i]);
      const g = across < DOT_PX ? DOT : across < SPRITE_PX ? SPRITE : this.mesh[i];
      group[i] = g;
      tiny[i] = g === DOT ? 1 : 0;
      counts[g]++;
    }
    const heads = /** @type {Headings} */ (this.headings), shown = this.arrowShown;
    heads.update(p, this.bound, tiny);
    for (let r = 0; r < heads.count; r++) {
      shown[r] = px(heads.x[r], heads.y[r], heads.top[r], 2 * heads.radius[r]) >= ARROW_PX ? 1 : 0;
      counts[ARROW] += shown[r];
    }
    for (let g = 0, at = 0; g < KINDS; g++) { starts[g] = at; at += counts[g]; }
    const d = this.data, ext = this.extent, colour = look.colour, lift = look.lift, mesh = this.mesh;
    for (let i = 0; i < n; i++) {
      const o = PER_INSTANCE * starts[group[i]]++;
      const m = mag[i];
      d[o] = at[3 * i]; d[o + 1] = at[3 * i + 1]; d[o + 2] = at[3 * i + 2] + lift[i]; d[o + 3] = diameter[i] * m;
      d[o + 4] = q[4 * i]; d[o + 5] = q[4 * i + 1]; d[o + 6] = q[4 * i + 2]; d[o + 7] = q[4 * i + 3];
      d[o + 8] = ext[3 * i] * m; d[o + 9] = ext[3 * i + 1] * m; d[o + 10] = ext[3 * i + 2] * m;
      d[o + 12] = colour[3 * i]; d[o + 13] = colour[3 * i + 1]; d[o + 14] = colour[3 * i + 2]; d[o + 15] = mesh[i];
    }
    // An arrow from the robot's centre to a third beyond its reach, just above its top.
    for (let r = 0; r < heads.count; r++) {
      if (!shown[r]) continue;
      const o = PER_INSTANCE * starts[ARROW]++, half = heads.yaw[r] / 2, reach = heads.radius[r];
      d[o] = heads.x[r]; d[o + 1] = heads.y[r]; d[o + 2] = heads.top[r] + Math.max(0.002, 0.02 * reach); d[o + 3] = 2 * reach;
      d[o + 4] = 0; d[o + 5] = 0; d[o + 6] = Math.sin(half); d[o + 7] = Math.cos(half);
      d[o + 8] = 1.3 * reach; d[o + 9] = 0.9 * reach; d[o + 10] = 1;
      d[o + 12] = ARROW_RGB[0]; d[o + 13] = ARROW_RGB[1]; d[o + 14] = ARROW_RGB[2]; d[o + 15] = BOX;
    }
    if (this.mode === 'texture') {
      const rows = d.length / (PER_INSTANCE * BATCH);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, this.texture);
      // Storage is made when the size changes; each frame only replaces its contents.
      if (this.uploaded !== d.length) gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, 4 * BATCH, rows, 0, gl.RGBA, gl.FLOAT, d);
      else gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, 4 * BATCH, rows, gl.RGBA, gl.FLOAT, d);
    } else {
      gl.bindBuffer(gl.ARRAY_BUFFER, this.instances);
      if (this.uploaded !== d.length) gl.bufferData(gl.ARRAY_BUFFER, d, gl.DYNAMIC_DRAW);
      else gl.bufferSubData(gl.ARRAY_BUFFER, 0, d);
    }
    this.uploaded = d.length;
    const rows = d.length / (PER_INSTANCE * BATCH), point = k * scale;
    // The screen's axes in the world: the view-projection's first two rows.
    const axis = (/** @type {number} */ r) => { const v = [vp[r], vp[4 + r], vp[8 + r]], l = Math.hypot(v[0], v[1], v[2]) || 1; return [v[0] / l, v[1] / l, v[2] / l]; };
    for (const [prog, sprite] of /** @type {[Program, boolean][]} */ ([[this.meshProgram, false], [this.spriteProgram, true]])) {
      const kinds = sprite ? [SPRITE] : [BOX, SPHERE, CYLINDER, ARROW, DOT];
      if (!kinds.some((g) => counts[g])) continue;
      gl.useProgram(prog.program);
      gl.uniformMatrix4fv(prog.uniform('u_vp'), false, this.vp);
      gl.uniform1f(prog.uniform('u_point'), point);
      gl.uniform1f(prog.uniform('u_rows'), rows);
      if (sprite) {
        gl.uniform4f(prog.uniform('u_eye'), e ? e[0] : 0, e ? e[1] : 0, e ? e[2] : 0, e ? 1 : 0);
        gl.uniform3fv(prog.uniform('u_right'), axis(0));
        gl.uniform3fv(prog.uniform('u_up'), axis(1));
      }
      for (const g of kinds) {
        let first = 0;
        for (let j = 0; j < g; j++) first += counts[j];
        if (counts[g]) this.drawGroup(prog, g, first, counts[g]);
      }
    }
    stats.sprites = counts[SPRITE]; stats.dots = counts[DOT]; stats.arrows = counts[ARROW];
    stats.meshes = counts[BOX] + counts[SPHERE] + counts[CYLINDER];
  }

  /**
   * Draws instances `first`… of kind `g` with `prog` (in use).
   * @param {Program} prog @param {number} g @param {number} first @param {number} count
   */
  drawGroup(prog, g, first, count) {
    const gl = /** @type {WebGLRenderingContext} */ (this.gl), m = this.meshFor(g, count), inst = this.inst;
    const attribute = (/** @type {number} */ loc, /** @type {WebGLBuffer} */ b, /** @type {number} */ size) => {
      gl.bindBuffer(gl.ARRAY_BUFFER, b); gl.enableVertexAttribArray(loc); gl.vertexAttribPointer(loc, size, gl.FLOAT, false, 0, 0);
    };
    attribute(A_POS, m.pos, 3);
    attribute(A_NOR, m.nor, 3);
    if (m.elements) gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, m.elements);
    const stats = this.stats;
    if (this.mode === 'texture' && m.index) {
      attribute(A_I, m.index, 1);
      // Points: all at once; meshes: a batch of copies per call.
      for (let b = 0; b < count; b += m.copies) {
        const c = Math.min(m.copies, count - b);
        gl.uniform1f(prog.uniform('u_base'), first + b);
        if (m.elements) gl.drawElements(gl.TRIANGLES, c * m.per, gl.UNSIGNED_SHORT, 0);
        else gl.drawArrays(gl.POINTS, 0, c * m.count);
        stats.calls++;
      }
    } else if (inst) {
      gl.bindBuffer(gl.ARRAY_BUFFER, this.instances);
      for (let t = 0; t < 4; t++) {
        gl.enableVertexAttribArray(A_T + t);
        gl.vertexAttribPointer(A_T + t, 4, gl.FLOAT, false, PER_INSTANCE * 4, (first * PER_INSTANCE + 4 * t) * 4);
        inst.vertexAttribDivisorANGLE(A_T + t, 1);
      }
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
