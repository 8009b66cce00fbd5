// simrob viewer: draws the frames streamed on /ws, in 3D (WebGL) or top-down (canvas 2D),
// and sends the controls' commands back. Plain JavaScript, no dependencies.
'use strict';

const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
const glCanvas = $('gl');
const flatCanvas = $('flat');
const labels = $('labels');

const state = {
  frame: null,          // latest frame
  frames: 0,            // frames received
  drawn: 0,             // frames drawn
  view: params.get('view') === 'top' ? 'top' : '3d',
  selected: null,       // entity id
  hover: null,          // entity id under the cursor
  replay: null,         // {count, index, playing, speed} in replay mode
  cam: { target: [0, 0, 0.05], dist: 3.2, yaw: -0.9, pitch: 0.75 },
  top: { cx: 0, cy: 0, scale: 0 }, // scale = pixels per metre (0 = fit)
  fitted: false,
};
window.simrob = state; // for tests and the curious

if (params.has('scale')) state.top.scale = parseFloat(params.get('scale'));
if (params.has('cx')) state.top.cx = parseFloat(params.get('cx'));
if (params.has('cy')) state.top.cy = parseFloat(params.get('cy'));
if (params.has('scale')) state.fitted = true;
const hideLabels = params.get('labels') === '0';
const bench = params.get('bench') === '1';
// Humanoids: ?fov=1 (or the f key) draws each robot's camera field of view on the floor.
state.fov = params.get('fov') === '1';
window.addEventListener('keydown', (ev) => {
  if (ev.key === 'f' && !(ev.target instanceof HTMLInputElement)) { state.fov = !state.fov; state.lastDrawn = null; }
});
// ?panel=0 hides the side panel (kiosk displays, screenshots).
if (params.get('panel') === '0') $('side').style.display = 'none';

// ---------------------------------------------------------------- colours
const HUMANOID_TEAMS = { 14: [0.1, 0.8, 0.9], 15: [0.9, 0.2, 0.8] };
const KIDSIZE_MATERIALS = { 10: [0.2, 0.5, 0.25], 11: [0.95, 0.95, 0.95], 12: [0.95, 0.85, 0.25], 13: [1.0, 0.5, 0.1] };
const PAINT = 11; // the KidSize field's line paint lies 1 cm under the carpet: drawn on it
const lifted = (b, kinds) => (b.material === PAINT && kinds.get(b.e) === 'Field' ? [b.p[0], b.p[1], b.p[2] + 0.0115] : b.p);
function colourOf(body, kind) {
  if (state.selected === body.e) return [1.0, 0.85, 0.2];
  // Humanoid soccer (scenarios/soccer/kidsize.xml): the team colour is the robots' material
  // (14 cyan, 15 magenta), worn on the arms and feet; field materials carpet, paint, posts, ball.
  if (kind === 'Humanoid') {
    const team = HUMANOID_TEAMS[body.material] || [0.6, 0.6, 0.6];
    return body.id === 0 ? [0.22, 0.22, 0.25] : body.id === 1 ? [0.55, 0.55, 0.6] : team;
  }
  if ((kind === 'Field' || kind === 'Ball') && KIDSIZE_MATERIALS[body.material]) return KIDSIZE_MATERIALS[body.material];
  if (kind === 'Ball') return [0.9, 0.2, 0.2];
  if (kind === 'Robot') return body.shape === 'WheelCylinder' ? [0.15, 0.15, 0.18] : [1.0, 0.55, 0.1];
  if (kind === 'Item') return [0.2, 0.75, 0.7];
  if (kind === 'Drone') return [0.35, 0.55, 1.0];
  if (kind === 'Humanoid') return [0.8, 0.45, 0.9];
  if (kind && kind !== 'Field') return [0.95, 0.75, 0.3];
  // Field: the floor darker than the walls.
  if (body.shape === 'Box' && body.dims[2] < Math.min(body.dims[0], body.dims[1]) * 0.2) return [0.22, 0.45, 0.28];
  return [0.75, 0.78, 0.8];
}
const css = (c) => `rgb(${Math.round(c[0] * 255)},${Math.round(c[1] * 255)},${Math.round(c[2] * 255)})`;

// ---------------------------------------------------------------- maths (column-major 4x4)
function rotation(r) { // R = Rz(z) Ry(y) Rx(x), 3x3 row-major
  const [cx, sx, cy, sy, cz, sz] = [Math.cos(r[0]), Math.sin(r[0]), Math.cos(r[1]), Math.sin(r[1]), Math.cos(r[2]), Math.sin(r[2])];
  return [
    cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx,
    sz * cy, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx,
    -sy, cy * sx, cy * cx,
  ];
}
function model(p, r, s) {
  const R = rotation(r);
  return [
    R[0] * s[0], R[3] * s[0], R[6] * s[0], 0,
    R[1] * s[1], R[4] * s[1], R[7] * s[1], 0,
    R[2] * s[2], R[5] * s[2], R[8] * s[2], 0,
    p[0], p[1], p[2], 1,
  ];
}
function mul(a, b) {
  const o = new Array(16);
  for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
    let v = 0;
    for (let k = 0; k < 4; k++) v += a[k * 4 + r] * b[c * 4 + k];
    o[c * 4 + r] = v;
  }
  return o;
}
function perspective(fovy, aspect, near, far) {
  const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
  return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
}
function lookAt(eye, t, up) {
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const norm = (a) => { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; };
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const z = norm(sub(eye, t)), x = norm(cross(up, z)), y = cross(z, x);
  return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0, -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
}
function eye() {
  const c = state.cam;
  return [
    c.target[0] + c.dist * Math.cos(c.pitch) * Math.cos(c.yaw),
    c.target[1] + c.dist * Math.cos(c.pitch) * Math.sin(c.yaw),
    c.target[2] + c.dist * Math.sin(c.pitch),
  ];
}
function viewProjection(w, h) {
  return mul(perspective(0.8, w / Math.max(h, 1), 0.01, 200), lookAt(eye(), state.cam.target, [0, 0, 1]));
}
function project(vp, p, w, h) { // world → CSS pixels, or null behind the camera
  const x = vp[0] * p[0] + vp[4] * p[1] + vp[8] * p[2] + vp[12];
  const y = vp[1] * p[0] + vp[5] * p[1] + vp[9] * p[2] + vp[13];
  const ww = vp[3] * p[0] + vp[7] * p[1] + vp[11] * p[2] + vp[15];
  if (ww <= 0) return null;
  return [(x / ww * 0.5 + 0.5) * w, (1 - (y / ww * 0.5 + 0.5)) * h];
}

// ---------------------------------------------------------------- WebGL
const gl = glCanvas.getContext('webgl', { antialias: true, preserveDrawingBuffer: true });
/** @type {Record<string, {pos: WebGLBuffer, nor: WebGLBuffer, count: number}>|null} */
let meshes = null;
let prog = null;
function mesh(positions, normals) {
  const buf = (data) => { const b = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, b); gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(data), gl.STATIC_DRAW); return b; };
  return { pos: buf(positions), nor: buf(normals), count: positions.length / 3 };
}
function cubeMesh() {
  const p = [], n = [];
  const faces = [[0, 1], [0, -1], [1, 1], [1, -1], [2, 1], [2, -1]];
  for (const [axis, sign] of faces) {
    const u = (axis + 1) % 3, v = (axis + 2) % 3;
    const corner = (a, b) => { const c = [0, 0, 0]; c[axis] = 0.5 * sign; c[u] = a * 0.5; c[v] = b * 0.5; return c; };
    const quad = sign > 0 ? [[-1, -1], [1, -1], [1, 1], [-1, -1], [1, 1], [-1, 1]] : [[-1, -1], [1, 1], [1, -1], [-1, -1], [-1, 1], [1, 1]];
    for (const [a, b] of quad) { p.push(...corner(a, b)); const nn = [0, 0, 0]; nn[axis] = sign; n.push(...nn); }
  }
  return mesh(p, n);
}
function sphereMesh(rings = 10, segs = 14) {
  const p = [], n = [];
  const pt = (i, j) => { const th = Math.PI * i / rings, ph = 2 * Math.PI * j / segs; return [Math.sin(th) * Math.cos(ph), Math.sin(th) * Math.sin(ph), Math.cos(th)]; };
  for (let i = 0; i < rings; i++) for (let j = 0; j < segs; j++) {
    const a = pt(i, j), b = pt(i + 1, j), c = pt(i + 1, j + 1), d = pt(i, j + 1);
    for (const q of [a, b, c, a, c, d]) { p.push(...q); n.push(...q); }
  }
  return mesh(p, n);
}
function cylinderMesh(segs = 14) { // radius 1, along Z from -0.5 to 0.5
  const p = [], n = [];
  for (let j = 0; j < segs; j++) {
    const a0 = 2 * Math.PI * j / segs, a1 = 2 * Math.PI * (j + 1) / segs;
    const [c0, s0, c1, s1] = [Math.cos(a0), Math.sin(a0), Math.cos(a1), Math.sin(a1)];
    for (const [x, y, z] of [[c0, s0, -0.5], [c1, s1, -0.5], [c1, s1, 0.5], [c0, s0, -0.5], [c1, s1, 0.5], [c0, s0, 0.5]]) { p.push(x, y, z); n.push(x, y, 0); }
    for (const z of [0.5, -0.5]) {
      const tri = z > 0 ? [[0, 0], [c0, s0], [c1, s1]] : [[0, 0], [c1, s1], [c0, s0]];
      for (const [x, y] of tri) { p.push(x, y, z); n.push(0, 0, Math.sign(z)); }
    }
  }
  return mesh(p, n);
}
// Instanced drawing: one draw call per shape, each body an instance with its model matrix
// and colour (ANGLE_instanced_arrays, in every WebGL 1 implementation that matters).
const instancing = gl && gl.getExtension('ANGLE_instanced_arrays');
/** Floats per instance: a 4×4 model matrix and an RGB colour. */
const PER_INSTANCE = 19;
let instanceBuffer = null, instanceData = new Float32Array(PER_INSTANCE * 64);
function initGl() {
  if (!gl || !instancing) return false;
  const vs = `attribute vec3 a_pos; attribute vec3 a_nor;
    attribute vec4 a_m0; attribute vec4 a_m1; attribute vec4 a_m2; attribute vec4 a_m3; attribute vec3 a_col;
    uniform mat4 u_vp; varying vec3 v_nor; varying vec3 v_col;
    void main(){ mat4 m = mat4(a_m0, a_m1, a_m2, a_m3); v_nor = mat3(a_m0.xyz, a_m1.xyz, a_m2.xyz) * a_nor; v_col = a_col;
      gl_Position = u_vp * m * vec4(a_pos, 1.0); }`;
  const fs = `precision mediump float; varying vec3 v_nor; varying vec3 v_col;
    void main(){ vec3 n = normalize(v_nor); float l = 0.35 + 0.65 * max(dot(n, normalize(vec3(0.4, 0.3, 1.0))), 0.0); gl_FragColor = vec4(v_col * l, 1.0); }`;
  const sh = (type, src) => { const s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s); return s; };
  prog = gl.createProgram();
  gl.attachShader(prog, sh(gl.VERTEX_SHADER, vs));
  gl.attachShader(prog, sh(gl.FRAGMENT_SHADER, fs));
  gl.linkProgram(prog);
  if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) return false;
  // Far or small bodies (a few pixels across) use the coarse meshes.
  meshes = { Box: cubeMesh(), Sphere: sphereMesh(), Cylinder: cylinderMesh(), SphereFar: sphereMesh(4, 6), CylinderFar: cylinderMesh(6) };
  meshes.BoxFar = meshes.Box;
  instanceBuffer = gl.createBuffer();
  return true;
}
const glReady = initGl();

function kindOf(frame) {
  const kinds = new Map();
  for (const e of frame.entities) kinds.set(e.id, e.kind);
  return kinds;
}
function scaleOf(b) {
  if (b.shape === 'Box') return b.dims;
  if (b.shape === 'Sphere') return [b.dims[0], b.dims[0], b.dims[0]];
  return [b.dims[0], b.dims[0], b.dims[1]];
}

/** Writes body `b`'s model matrix and colour at instance `i` of `out`. */
function writeInstance(out, i, b, kinds) {
  const m = model(lifted(b, kinds), b.r, scaleOf(b)), o = i * PER_INSTANCE, colour = colourOf(b, kinds.get(b.e));
  for (let k = 0; k < 16; k++) out[o + k] = m[k];
  out[o + 16] = colour[0]; out[o + 17] = colour[1]; out[o + 18] = colour[2];
}
function draw3d(frame, w, h) {
  const vp = viewProjection(w, h), ey = eye(), pxPerRadian = h / 2 / Math.tan(0.4);
  drawGl(frame, w, h, vp, (b, size) => (size / Math.max(Math.hypot(b.p[0] - ey[0], b.p[1] - ey[1], b.p[2] - ey[2]), 1e-6)) * pxPerRadian);
  return (p) => project(vp, p, w, h);
}
/**
 * The top view through WebGL: an orthographic camera looking down (higher bodies in front),
 * with the grid and scale bar on the canvas above it.
 */
function drawTopGl(frame, w, h) {
  const t = state.top, sx = 2 * t.scale / w, sy = 2 * t.scale / h;
  const vp = [sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, -0.01, 0, -t.cx * sx, -t.cy * sy, 0, 1];
  drawGl(frame, w, h, vp, (b, size) => size * t.scale);
  const dpr = window.devicePixelRatio || 1;
  const cw = Math.round(w * dpr), ch = Math.round(h * dpr);
  if (flatCanvas.width !== cw || flatCanvas.height !== ch) { flatCanvas.width = cw; flatCanvas.height = ch; }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  const px = (p) => [w / 2 + (p[0] - t.cx) * t.scale, h / 2 - (p[1] - t.cy) * t.scale];
  const step = gridStep(t.scale);
  drawGrid(w, h, step, px);
  drawScaleBar(h, step);
  return px;
}
/** Draws every body with the view-projection `vp`; `sizePx(body, size)` says how big it looks. */
function drawGl(frame, w, h, vp, sizePx) {
  const dpr = window.devicePixelRatio || 1;
  const cw = Math.round(w * dpr), ch = Math.round(h * dpr);
  if (glCanvas.width !== cw || glCanvas.height !== ch) { glCanvas.width = cw; glCanvas.height = ch; }
  gl.viewport(0, 0, glCanvas.width, glCanvas.height);
  gl.clearColor(0.11, 0.13, 0.15, 1);
  gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  gl.enable(gl.DEPTH_TEST);
  gl.useProgram(prog);
  gl.uniformMatrix4fv(gl.getUniformLocation(prog, 'u_vp'), false, new Float32Array(vp));
  const aPos = gl.getAttribLocation(prog, 'a_pos'), aNor = gl.getAttribLocation(prog, 'a_nor');
  const aM = [0, 1, 2, 3].map((k) => gl.getAttribLocation(prog, `a_m${k}`)), aCol = gl.getAttribLocation(prog, 'a_col');
  const kinds = kindOf(frame);
  // The bodies of each mesh, in one buffer of instances.
  /** @type {Map<string, any[]>} */
  const groups = new Map();
  for (const b of frame.bodies) {
    let name = b.shape === 'WheelCylinder' ? 'Cylinder' : b.shape;
    if (!meshes[name]) continue;
    const s = scaleOf(b), size = Math.max(s[0], s[1], s[2]);
    if (sizePx(b, size) < 24) name += 'Far';
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(b);
  }
  if (instanceData.length < frame.bodies.length * PER_INSTANCE) instanceData = new Float32Array(frame.bodies.length * PER_INSTANCE * 2);
  let n = 0;
  const ranges = [];
  for (const [name, bodies] of groups) {
    ranges.push([meshes[name], n, bodies.length]);
    for (const b of bodies) writeInstance(instanceData, n++, b, kinds);
  }
  gl.bindBuffer(gl.ARRAY_BUFFER, instanceBuffer);
  gl.bufferData(gl.ARRAY_BUFFER, instanceData.subarray(0, n * PER_INSTANCE), gl.DYNAMIC_DRAW);
  const stride = PER_INSTANCE * 4;
  for (const [m, first, count] of ranges) {
    gl.bindBuffer(gl.ARRAY_BUFFER, m.pos); gl.enableVertexAttribArray(aPos); gl.vertexAttribPointer(aPos, 3, gl.FLOAT, false, 0, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, m.nor); gl.enableVertexAttribArray(aNor); gl.vertexAttribPointer(aNor, 3, gl.FLOAT, false, 0, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, instanceBuffer);
    for (let k = 0; k < 4; k++) {
      gl.enableVertexAttribArray(aM[k]);
      gl.vertexAttribPointer(aM[k], 4, gl.FLOAT, false, stride, (first * PER_INSTANCE + k * 4) * 4);
      instancing.vertexAttribDivisorANGLE(aM[k], 1);
    }
    gl.enableVertexAttribArray(aCol);
    gl.vertexAttribPointer(aCol, 3, gl.FLOAT, false, stride, (first * PER_INSTANCE + 16) * 4);
    instancing.vertexAttribDivisorANGLE(aCol, 1);
    instancing.drawArraysInstancedANGLE(gl.TRIANGLES, 0, m.count, count);
  }
}

// ---------------------------------------------------------------- top view (canvas 2D)
const ctx = flatCanvas.getContext('2d');
function fitTop(frame, w, h) {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const b of frame.bodies) {
    const s = scaleOf(b), r = Math.max(s[0], s[1], s[2]) * 0.5;
    x0 = Math.min(x0, b.p[0] - r); x1 = Math.max(x1, b.p[0] + r);
    y0 = Math.min(y0, b.p[1] - r); y1 = Math.max(y1, b.p[1] + r);
  }
  if (!isFinite(x0)) return;
  state.top.cx = (x0 + x1) / 2; state.top.cy = (y0 + y1) / 2;
  state.top.scale = 0.92 * Math.min(w / Math.max(x1 - x0, 0.1), h / Math.max(y1 - y0, 0.1));
  const c = state.cam; c.target = [state.top.cx, state.top.cy, 0.05];
  c.dist = 1.3 * Math.max(x1 - x0, y1 - y0, 0.5);
}
function drawTop(frame, w, h) {
  const dpr = window.devicePixelRatio || 1;
  const cw = Math.round(w * dpr), ch = Math.round(h * dpr);
  if (flatCanvas.width !== cw || flatCanvas.height !== ch) { flatCanvas.width = cw; flatCanvas.height = ch; }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = '#1c2126'; ctx.fillRect(0, 0, w, h);
  const t = state.top;
  const px = (p) => [w / 2 + (p[0] - t.cx) * t.scale, h / 2 - (p[1] - t.cy) * t.scale];
  const step = gridStep(t.scale);
  drawGrid(w, h, step, px);
  const kinds = kindOf(frame);
  // Lowest first, so that robots and balls are drawn over the floor.
  const order = frame.bodies.slice().sort((a, b) => (lifted(a, kinds)[2] + scaleOf(a)[2] / 2) - (lifted(b, kinds)[2] + scaleOf(b)[2] / 2));
  for (const b of order) {
    const R = rotation(b.r);
    ctx.fillStyle = css(colourOf(b, kinds.get(b.e)));
    ctx.strokeStyle = 'rgba(0,0,0,0.5)';
    const [cx, cy] = px(b.p);
    if (b.shape === 'Sphere') {
      ctx.beginPath(); ctx.arc(cx, cy, Math.max(b.dims[0] * t.scale, 1.5), 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
      continue;
    }
    // The footprint: the body's box (cylinders: radius × radius × length) projected on XY.
    const s = scaleOf(b), half = [s[0] / 2, s[1] / 2, s[2] / 2];
    const pts = [];
    for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) {
      const l = [sx * half[0], sy * half[1], sz * half[2]];
      pts.push([b.p[0] + R[0] * l[0] + R[1] * l[1] + R[2] * l[2], b.p[1] + R[3] * l[0] + R[4] * l[1] + R[5] * l[2]]);
    }
    const hull = convexHull(pts).map(px);
    ctx.beginPath(); hull.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y))); ctx.closePath(); ctx.fill(); ctx.stroke();
  }
  drawScaleBar(h, step);
  return (p) => px(p);
}
/** The grid's spacing in metres: 1, 2 or 5 × 10^k, at least 60 px apart. @param {number} scale px/m */
function gridStep(scale) {
  const raw = 60 / Math.max(scale, 1e-9), k = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * k >= raw) return m * k;
  return 10 * k;
}
function drawGrid(w, h, step, px) {
  const t = state.top;
  const x0 = t.cx - w / 2 / t.scale, x1 = t.cx + w / 2 / t.scale;
  const y0 = t.cy - h / 2 / t.scale, y1 = t.cy + h / 2 / t.scale;
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
}
const metres = (m) => (m >= 1 ? `${+m.toPrecision(3)} m` : m >= 0.01 ? `${+(m * 100).toPrecision(3)} cm` : `${+(m * 1000).toPrecision(3)} mm`);
/** A bar one grid step long, bottom left. */
function drawScaleBar(h, step) {
  const len = step * state.top.scale, x = 14, y = h - 16;
  ctx.strokeStyle = '#fff'; ctx.lineWidth = 2;
  ctx.beginPath(); ctx.moveTo(x, y - 5); ctx.lineTo(x, y); ctx.lineTo(x + len, y); ctx.lineTo(x + len, y - 5); ctx.stroke();
  ctx.fillStyle = '#fff'; ctx.font = '11px system-ui, sans-serif'; ctx.textAlign = 'center';
  ctx.fillText(`${metres(step)} (grid)`, x + len / 2, y - 6);
  ctx.textAlign = 'start';
  state.scaleBar = { metres: step, px: len };
}
function convexHull(points) {
  const p = points.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower = [], upper = [];
  for (const q of p) { while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], q) <= 0) lower.pop(); lower.push(q); }
  for (const q of p.reverse()) { while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], q) <= 0) upper.pop(); upper.push(q); }
  return lower.slice(0, -1).concat(upper.slice(0, -1));
}

// ---------------------------------------------------------------- drawing loop
let toScreen = null;
function render() {
  requestAnimationFrame(render);
  const frame = state.frame;
  // ?bench=1 redraws every animation frame, to measure how fast the page can draw.
  if (!frame || (frame === state.lastDrawn && !bench)) return;
  state.lastDrawn = frame;
  const w = glCanvas.parentElement.clientWidth, h = glCanvas.parentElement.clientHeight;
  if (!state.fitted && frame.bodies.length) { fitTop(frame, w, h); state.fitted = true; }
  // Without WebGL the top view falls back to the canvas alone.
  const top = state.view === 'top' || !glReady;
  glCanvas.style.display = glReady ? 'block' : 'none';
  flatCanvas.style.display = top ? 'block' : 'none';
  toScreen = !glReady ? drawTop(frame, w, h) : top ? drawTopGl(frame, w, h) : draw3d(frame, w, h);
  state.drawn++;
  drawLabels(frame);
  updateInfo(frame);
  const r = state.replay;
  $('status').textContent = r
    ? `replay · ${replayWord(r)} · t = ${frame.time.toFixed(2)} s · iteration ${frame.iteration} · ` +
      `${frame.bodies.length} bodies · frame ${r.index + 1}/${r.count}`
    : `iteration ${frame.iteration} · t = ${frame.time.toFixed(2)} s · ` +
      (!frame.initialized ? 'not initialized' : frame.paused ? 'paused' : 'running') +
      ` · ${frame.bodies.length} bodies`;
}
const measure = document.createElement('canvas').getContext('2d');
/**
 * Entity labels that never overlap: the selected and hovered entity first, then robots and
 * balls, items, and fields last; a label that fits nowhere near its entity is left out (hover
 * shows it). Crowded scenes label only the selected and hovered entities.
 */
function drawLabels(frame) {
  if (hideLabels) { labels.textContent = ''; return; }
  const crowded = frame.entities.length > 40;
  const rank = (e) => (e.id === state.selected || e.id === state.hover ? 0 : e.kind === 'Field' ? 3 : e.kind === 'Item' ? 2 : 1);
  const chosen = frame.entities.filter((e) => !crowded || e.id === state.selected || e.id === state.hover)
    .sort((a, b) => rank(a) - rank(b) || a.id - b.id);
  measure.font = '11px system-ui, sans-serif';
  /** @type {number[][]} */
  const placed = [];
  const html = [];
  for (const e of chosen) {
    let p = e.p;
    if (!p) { // a field: label its first body
      const b = frame.bodies.find((x) => x.e === e.id);
      if (!b) continue;
      p = b.p;
    }
    const s = toScreen([p[0], p[1], p[2] + 0.06]);
    if (!s) continue;
    const text = `${e.kind} ${e.id}`;
    const w = Math.ceil(measure.measureText(text).width) + 12, h = 19;
    // Above the entity, below it, right of it, left of it.
    const spots = [[s[0] - w / 2, s[1] - h], [s[0] - w / 2, s[1] + 6], [s[0] + 8, s[1] - h / 2], [s[0] - w - 8, s[1] - h / 2]];
    const spot = spots.find(([x, y]) => !placed.some((r) => x < r[2] && x + w > r[0] && y < r[3] && y + h > r[1]));
    if (!spot) continue;
    placed.push([spot[0], spot[1], spot[0] + w, spot[1] + h]);
    html.push(`<div class="label" data-entity="${e.id}" style="left:${spot[0]}px;top:${spot[1]}px">${text}</div>`);
  }
  html.push(humanoidMarks(frame));
  labels.innerHTML = html.join('');
}
// Each humanoid's heading (white) and head direction (its team colour), and with state.fov its
// camera's field of view (75.3° wide, drawn 2 m long on the floor), as lines over either view.
function humanoidMarks(frame) {
  const lines = [];
  const seg = (a, b, colour, width) => {
    const p = toScreen(a), q = toScreen(b);
    if (p && q) lines.push(`<line x1="${p[0]}" y1="${p[1]}" x2="${q[0]}" y2="${q[1]}" stroke="${colour}" stroke-width="${width}"/>`);
  };
  for (const e of frame.entities) {
    if (e.kind !== 'Humanoid') continue;
    const trunk = frame.bodies.find((b) => b.e === e.id && b.id === 0);
    const head = frame.bodies.find((b) => b.e === e.id && b.id === 1);
    if (!trunk || !head) continue;
    const at = [trunk.p[0], trunk.p[1], 0.005];
    const heading = trunk.r[2], look = head.r[2];
    const ahead = (a, d) => [at[0] + d * Math.cos(a), at[1] + d * Math.sin(a), 0.005];
    const team = css(HUMANOID_TEAMS[head.material] || [0.8, 0.8, 0.8]);
    seg(at, ahead(heading, 0.2), 'white', 2);
    seg(at, ahead(look, 0.35), team, 2);
    if (state.fov) {
      const half = 75.3 / 2 * Math.PI / 180;
      const l = ahead(look + half, 2), r = ahead(look - half, 2);
      seg(at, l, team, 1); seg(at, r, team, 1); seg(l, r, team, 1);
    }
  }
  return lines.length ? `<svg width="100%" height="100%" style="position:absolute;left:0;top:0;overflow:visible">${lines.join('')}</svg>` : '';
}
function updateInfo(frame) {
  if (state.selected === null) return;
  const e = frame.entities.find((x) => x.id === state.selected);
  if (!e) { $('info').textContent = `entity ${state.selected} is gone`; return; }
  const f = (v) => v.map((x) => x.toFixed(3)).join(', ');
  const lines = [`${e.kind} ${e.id}`];
  if (e.p) lines.push(`position (${f(e.p)})`, `rotation (${f(e.r)})`);
  for (const b of frame.bodies.filter((x) => x.e === e.id).slice(0, 6)) {
    lines.push(`body ${b.id} ${b.shape}`, `  p (${f(b.p)})`, `  v (${f(b.v)})`, `  ω (${f(b.w)})`);
  }
  $('info').textContent = lines.join('\n');
}

// ---------------------------------------------------------------- input
let drag = null;
function stageEvent(ev) { const r = glCanvas.parentElement.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; }
glCanvas.parentElement.addEventListener('mousedown', (ev) => { drag = { at: stageEvent(ev), moved: false, shift: ev.shiftKey }; });
window.addEventListener('mouseup', (ev) => {
  if (drag && !drag.moved) pick(stageEvent(ev));
  drag = null;
});
window.addEventListener('mousemove', (ev) => {
  if (!drag) return;
  const p = stageEvent(ev), dx = p[0] - drag.at[0], dy = p[1] - drag.at[1];
  if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
  drag.at = p;
  const c = state.cam;
  if (state.view === 'top') { state.top.cx -= dx / state.top.scale; state.top.cy += dy / state.top.scale; }
  else if (drag.shift) {
    const k = c.dist * 0.0015;
    c.target[0] += (-dx * Math.sin(c.yaw) - dy * Math.cos(c.yaw)) * k * -1;
    c.target[1] += (dx * Math.cos(c.yaw) - dy * Math.sin(c.yaw)) * k * -1;
  } else { c.yaw -= dx * 0.008; c.pitch = Math.min(1.55, Math.max(0.05, c.pitch + dy * 0.008)); }
  state.lastDrawn = null;
});
glCanvas.parentElement.addEventListener('wheel', (ev) => {
  ev.preventDefault();
  const k = Math.exp(ev.deltaY * 0.001);
  if (state.view === 'top') state.top.scale /= k; else state.cam.dist *= k;
  state.lastDrawn = null;
}, { passive: false });
/** The body's box corners in the world (cylinders: radius × radius × length). */
function corners(b) {
  const R = rotation(b.r), s = scaleOf(b), out = [];
  for (const sx of [-0.5, 0.5]) for (const sy of [-0.5, 0.5]) for (const sz of [-0.5, 0.5]) {
    const l = [sx * s[0], sy * s[1], sz * s[2]];
    out.push([b.p[0] + R[0] * l[0] + R[1] * l[1] + R[2] * l[2], b.p[1] + R[3] * l[0] + R[4] * l[1] + R[5] * l[2], b.p[2] + R[6] * l[0] + R[7] * l[1] + R[8] * l[2]]);
  }
  return out;
}
function inside(poly, q) {
  let c = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i], [xj, yj] = poly[j];
    if ((yi > q[1]) !== (yj > q[1]) && q[0] < ((xj - xi) * (q[1] - yi)) / (yj - yi) + xi) c = !c;
  }
  return c;
}
/**
 * The entity whose drawn shape is under `at` (CSS px): a sphere's disc, any other body's
 * outline as drawn; the highest (top view) or nearest (3D) wins. Fields are not picked.
 * @returns {number|null}
 */
function entityAt(at) {
  const frame = state.frame;
  if (!frame || !toScreen) return null;
  const kinds = kindOf(frame), top = state.view === 'top' || !glReady, e = eye();
  let best = null, bestKey = Infinity;
  for (const b of frame.bodies) {
    if (kinds.get(b.e) === 'Field') continue;
    let hit;
    if (b.shape === 'Sphere' && top) {
      const c = toScreen(b.p);
      hit = c && Math.hypot(c[0] - at[0], c[1] - at[1]) <= Math.max(b.dims[0] * state.top.scale, 3);
    } else {
      const pts = corners(b).map((q) => toScreen(q));
      hit = pts.every((q) => q) && inside(convexHull(pts), at);
    }
    if (!hit) continue;
    const key = top ? -(b.p[2] + scaleOf(b)[2] / 2) : Math.hypot(b.p[0] - e[0], b.p[1] - e[1], b.p[2] - e[2]);
    if (key < bestKey) { bestKey = key; best = b.e; }
  }
  return best;
}
function pick(at) {
  const best = entityAt(at);
  state.selected = best;
  if (best === null) $('info').textContent = 'click an entity';
  state.lastDrawn = null;
}
// Hover: the entity under the cursor gets its label (dense scenes), and the top view shows the
// cursor's world coordinates.
// Picking under the cursor runs at most once per animation frame, however fast the mouse moves.
let hoverAt = null;
function hoverPick() {
  const at = hoverAt;
  hoverAt = null;
  const hover = entityAt(at);
  if (hover !== state.hover) { state.hover = hover; state.lastDrawn = null; }
}
glCanvas.parentElement.addEventListener('mousemove', (ev) => {
  if (drag) return;
  const at = stageEvent(ev);
  if (hoverAt === null) requestAnimationFrame(hoverPick);
  hoverAt = at;
  const coords = $('coords');
  if (state.view === 'top' || !glReady) {
    const w = glCanvas.parentElement.clientWidth, h = glCanvas.parentElement.clientHeight, t = state.top;
    const x = t.cx + (at[0] - w / 2) / t.scale, y = t.cy - (at[1] - h / 2) / t.scale;
    coords.textContent = `x ${x.toFixed(3)} m · y ${y.toFixed(3)} m`;
    coords.style.display = 'block';
  } else coords.style.display = 'none';
});

// ---------------------------------------------------------------- connection and controls
let ws = null;
function log(text) {
  const div = document.createElement('div');
  div.textContent = text;
  if (text.startsWith('Error')) div.className = 'err';
  const l = $('log');
  l.insertBefore(div, l.firstChild);
  while (l.childNodes.length > 200) l.removeChild(l.lastChild);
}
function send(cmd) {
  if (ws && ws.readyState === 1) ws.send(JSON.stringify(cmd));
}
function connect() {
  ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === 'frame') {
      state.frame = msg; state.frames++;
      if (msg.replay) showReplay(msg.replay, msg.time);
    } else if (msg.type === 'response') log(msg.text);
    else if (msg.type === 'hello') {
      $('source').textContent = msg.server || '';
      // Only now does the page know what it shows: a replay or a live simulation.
      const replay = msg.mode === 'replay';
      $('replay').style.display = replay ? 'block' : 'none';
      $('sim').style.display = replay ? 'none' : 'block';
      $('mode').textContent = replay ? 'REPLAY' : 'LIVE';
      $('mode').className = replay ? 'replay' : 'live';
      document.body.dataset.mode = replay ? 'replay' : 'live';
      document.title = `simrob ${replay ? 'replay' : 'viewer'}${msg.server ? ': ' + msg.server : ''}`;
    }
  };
  ws.onclose = () => { $('status').textContent = 'disconnected, retrying…'; setTimeout(connect, 1000); };
}
/** @param {{playing: boolean, waiting?: boolean, ended?: boolean}} r */
function replayWord(r) {
  return r.ended ? 'ended' : r.waiting ? 'waiting for a viewer' : r.playing ? 'playing' : 'paused';
}
const seconds = (t) => `${t.toFixed(2)} s`;
/**
 * The replay panel: play state, the slider in simulated seconds and the real speed.
 * @param {{count: number, index: number, playing: boolean, speed: number, waiting?: boolean,
 *          ended?: boolean, start?: number, end?: number}} r
 * @param {number} time simulated time of the frame shown
 */
function showReplay(r, time) {
  state.replay = r;
  const word = replayWord(r);
  $('r-state').textContent = word;
  $('r-state').className = r.ended ? 'ended' : r.playing ? 'playing' : '';
  document.body.dataset.replay = word;
  const start = r.start ?? 0, end = r.end ?? time;
  $('r-time').textContent = `t = ${seconds(time)} of ${seconds(end)}`;
  $('r-start').textContent = seconds(start);
  $('r-end').textContent = seconds(end);
  const s = $('seek');
  s.max = String(Math.max(r.count - 1, 0));
  s.title = `simulated time ${seconds(time)}`;
  if (!s.matches(':active')) s.value = String(r.index);
  const box = $('r-speed');
  if (document.activeElement !== box) { box.value = String(r.speed); box.setAttribute('value', String(r.speed)); }
}
const num = (id) => parseFloat($(id).value);
$('initialize').onclick = () => send({ cmd: 'initialize' });
$('play').onclick = () => send({ cmd: 'play' });
$('pause').onclick = () => send({ cmd: 'pause' });
$('step').onclick = () => send({ cmd: 'step' });
$('set-rtf').onclick = () => send({ cmd: 'rtf', value: num('rtf') });
$('set-timestep').onclick = () => send({ cmd: 'timestep', value: num('timestep') });
$('set-gravity').onclick = () => send({ cmd: 'gravity', value: num('gravity') });
$('r-play').onclick = () => send({ cmd: 'play' });
$('r-pause').onclick = () => send({ cmd: 'pause' });
$('set-speed').onclick = () => send({ cmd: 'speed', value: num('r-speed') });
$('seek').oninput = () => send({ cmd: 'seek', value: parseInt($('seek').value, 10) });
$('view-3d').onclick = () => { state.view = '3d'; state.lastDrawn = null; };
$('view-top').onclick = () => { state.view = 'top'; state.lastDrawn = null; };
$('fit').onclick = () => { state.fitted = false; state.lastDrawn = null; };
window.addEventListener('resize', () => { state.lastDrawn = null; });
connect();
requestAnimationFrame(render);
// ?bench=1: after 3 s, count the draws of the next 5 s and report the rate to the server.
if (bench) {
  setTimeout(() => {
    const d0 = state.drawn, t0 = performance.now();
    setTimeout(() => {
      const fps = (state.drawn - d0) / ((performance.now() - t0) / 1000);
      send({ cmd: 'report', fps, bodies: state.frame ? state.frame.bodies.length : 0 });
    }, 5000);
  }, 3000);
}
