// @ts-check
/**
 * The simrob viewer's page: draws the frames streamed on /ws in 3D (WebGL) or from the top,
 * and sends the controls' commands back. No build step, no dependencies: ES modules served
 * by the simrob binary.
 *
 * URL parameters: `view=top`; `scale`, `cx`, `cy` (the top view's px per metre and centre);
 * `labels=0`; `panel=0` (no side panel); `fov=1` (humanoids' camera field of view, also the
 * f key); `res=F` (drawing resolution, default 1: one pixel per screen pixel; less is faster
 * with software WebGL); `gl=instanced` (hardware instancing, see gl.js); `depth=1` (small
 * bodies' pixels at their own depth even with software WebGL, see gl.js); `bench=1` (redraw
 * every animation frame and report the rate).
 */
import { decode, body, entity, kindOf } from './frame.js';
import { Look } from './colours.js';
import { GlView, softwareGl } from './gl.js';
import { TopCanvas, topProjection } from './top.js';
import { Labels } from './labels.js';
import { entityAt, outline } from './pick.js';
import { FOVY, eye, viewProjection, project } from './maths.js';
import { Panel } from './panel.js';

/** @typedef {import('./frame.js').Scene} Scene */
/** @typedef {import('./frame.js').Poses} Poses */

const params = new URLSearchParams(location.search);
const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** What the URL asked that could not be done (shown in the responses panel). @type {string[]} */
const urlErrors = [];
/**
 * URL option `key` as a number, if it is one that `ok` accepts; else undefined, and a bad
 * one is said (the default stays).
 * @param {string} key @param {(v: number) => boolean} ok @param {string} want what it must be
 * @returns {number | undefined}
 */
function urlNumber(key, ok, want) {
  const text = params.get(key);
  if (text === null) return undefined;
  const v = Number(text);
  if (text.trim() !== '' && Number.isFinite(v) && ok(v)) return v;
  urlErrors.push(`Error: ?${key}=${text} ignored: ${want}`);
  return undefined;
}
const glCanvas = /** @type {HTMLCanvasElement} */ ($('gl'));
const stage = $('stage');
const bench = params.get('bench') === '1';
const software = softwareGl();
const res = Math.min(Math.max(urlNumber('res', (v) => v > 0, 'a number greater than 0 (0.1 to 2)') ?? 1, 0.1), 2);
const glView = new GlView(glCanvas, { antialias: !software, res, instanced: params.get('gl') === 'instanced', depth: params.get('depth') === '1' || !software });
const glReady = glView.gl !== null;
const top = new TopCanvas(/** @type {HTMLCanvasElement} */ ($('flat')));
const labels = new Labels($('labels'));
const panel = new Panel((cmd) => send(cmd));

const state = {
  /** @type {Scene | null} */
  scene: null,
  /** @type {Look | null} */
  look: null,
  /** @type {Poses | null} the newest poses of the current scene */
  poses: null,
  /** @type {Poses | null} the poses drawn last (null: draw again) */
  drawnPoses: null,
  received: 0,
  drawn: 0,
  view: params.get('view') === 'top' ? 'top' : '3d',
  /** @type {number | null} entity id */
  selected: null,
  /** @type {number | null} entity id under the cursor */
  hover: null,
  cam: { target: [0, 0, 0.05], dist: 3.2, yaw: -0.9, pitch: 0.75 },
  top: { cx: 0, cy: 0, scale: 0 },
  fitted: false,
  fov: params.get('fov') === '1',
  hideLabels: params.get('labels') === '0',
  /** @type {(p: ArrayLike<number>) => number[] | null} world → CSS px of the last drawing */
  toScreen: () => null,
  /** The 3D view's px per radian at the last drawing. */
  pxPerRadian: 1,
  /** Milliseconds of script per drawing (for ?bench=1). */
  scriptMs: 0,
};
{
  const scale = urlNumber('scale', (v) => v > 0, 'pixels per metre, a number greater than 0');
  const cx = urlNumber('cx', () => true, 'metres, a number');
  const cy = urlNumber('cy', () => true, 'metres, a number');
  if (scale !== undefined) {
    state.top.scale = scale;
    state.fitted = true;
  }
  if (cx !== undefined) state.top.cx = cx;
  if (cy !== undefined) state.top.cy = cy;
}
for (const e of urlErrors) panel.log(e);
if (params.get('panel') === '0') $('side').style.display = 'none';
window.addEventListener('keydown', (ev) => {
  if (ev.key === 'f' && !(ev.target instanceof HTMLInputElement)) { state.fov = !state.fov; redraw(); }
});
const redraw = () => { state.drawnPoses = null; };
const isTop = () => state.view === 'top' || !glReady;

// ---------------------------------------------------------------- drawing
/** Frames the whole scene: the top view's centre and scale, the 3D camera's target and distance. */
function fit(/** @type {Scene} */ s, /** @type {Poses} */ p, /** @type {number} */ w, /** @type {number} */ h) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  const pos = p.position;
  for (let i = 0; i < s.n; i++) {
    const r = 0.5 * Math.max(s.dims[3 * i], s.dims[3 * i + 1], s.dims[3 * i + 2]);
    const x = pos[3 * i], y = pos[3 * i + 1];
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    x0 = Math.min(x0, x - r); x1 = Math.max(x1, x + r); y0 = Math.min(y0, y - r); y1 = Math.max(y1, y + r);
  }
  if (!Number.isFinite(x0)) return;
  const t = state.top, c = state.cam;
  t.cx = (x0 + x1) / 2; t.cy = (y0 + y1) / 2;
  t.scale = 0.92 * Math.min(w / Math.max(x1 - x0, 0.1), h / Math.max(y1 - y0, 0.1));
  c.target = [t.cx, t.cy, 0.05];
  // Far enough that the whole scene fits the field of view, whichever way it is turned.
  const aspect = w / Math.max(h, 1), span = Math.max(x1 - x0, y1 - y0, 0.5);
  c.dist = (0.62 * span) / Math.tan(FOVY / 2) / Math.min(1, aspect);
}

function render() {
  requestAnimationFrame(render);
  const s = state.scene, p = state.poses, look = state.look;
  if (!s || !p || !look || (p === state.drawnPoses && !bench)) return;
  const t0 = performance.now();
  state.drawnPoses = p;
  const w = stage.clientWidth, h = stage.clientHeight;
  if (!state.fitted && s.n) { fit(s, p, w, h); state.fitted = true; }
  look.select(state.selected);
  const flat = top.canvas;
  glCanvas.style.display = glReady ? 'block' : 'none';
  flat.style.display = isTop() ? 'block' : 'none';
  if (!glReady) {
    top.drawAll(s, look, p, state.top, w, h);
    state.toScreen = topProjection(state.top, w, h);
  } else if (state.view === 'top') {
    const t = state.top, sx = 2 * t.scale / w, sy = 2 * t.scale / h;
    // Orthographic, looking down: higher bodies in front.
    const vp = [sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, -0.01, 0, -t.cx * sx, -t.cy * sy, 0, 1];
    glView.draw(s, look, p, vp, w, h, { eye: null, k: t.scale });
    top.drawOverlay(t, w, h);
    state.toScreen = topProjection(t, w, h);
  } else {
    const vp = viewProjection(state.cam, w, h);
    state.pxPerRadian = h / 2 / Math.tan(FOVY / 2);
    glView.draw(s, look, p, vp, w, h, { eye: eye(state.cam), k: state.pxPerRadian });
    state.toScreen = (q) => project(vp, q, w, h);
  }
  state.drawn++;
  labels.draw(s, p, state.toScreen, { selected: state.selected, hover: state.hover, hidden: state.hideLabels, fov: state.fov });
  panel.frame(s, p, state.selected);
  state.scriptMs += performance.now() - t0;
}

// ---------------------------------------------------------------- input
/** @type {{at: number[], moved: boolean, shift: boolean} | null} */
let drag = null;
const stageAt = (/** @type {MouseEvent} */ ev) => { const r = stage.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; };
/** The entity under `at` in the last drawing. @param {number[]} at */
function entityUnder(at) {
  const s = state.scene, p = state.drawnPoses || state.poses;
  if (!s || !p) return null;
  return entityAt(s, p, at, state.toScreen, { top: isTop(), eye: eye(state.cam), scale: state.top.scale, pxPerRadian: state.pxPerRadian });
}
stage.addEventListener('mousedown', (ev) => { drag = { at: stageAt(ev), moved: false, shift: ev.shiftKey }; });
window.addEventListener('mouseup', (ev) => {
  if (drag && !drag.moved) {
    state.selected = entityUnder(stageAt(ev));
    redraw();
  }
  drag = null;
});
window.addEventListener('mousemove', (ev) => {
  if (!drag) return;
  const at = stageAt(ev), dx = at[0] - drag.at[0], dy = at[1] - drag.at[1];
  if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
  drag.at = at;
  const c = state.cam;
  if (isTop()) { state.top.cx -= dx / state.top.scale; state.top.cy += dy / state.top.scale; }
  else if (drag.shift) {
    const k = c.dist * 0.0015;
    c.target[0] += (dx * Math.sin(c.yaw) + dy * Math.cos(c.yaw)) * k;
    c.target[1] += (-dx * Math.cos(c.yaw) + dy * Math.sin(c.yaw)) * k;
  } else { c.yaw -= dx * 0.008; c.pitch = Math.min(1.55, Math.max(0.05, c.pitch + dy * 0.008)); }
  redraw();
});
stage.addEventListener('wheel', (ev) => {
  ev.preventDefault();
  const k = Math.exp(ev.deltaY * 0.001);
  if (isTop()) state.top.scale /= k; else state.cam.dist *= k;
  redraw();
}, { passive: false });
// Hover: the entity under the cursor gets its label (crowded scenes), at most once per
// animation frame however fast the mouse moves; the top view shows the cursor's coordinates.
/** @type {number[] | null} */
let hoverAt = null;
function hoverPick() {
  const at = hoverAt;
  hoverAt = null;
  if (!at) return;
  const hover = entityUnder(at);
  if (hover !== state.hover) { state.hover = hover; redraw(); }
}
stage.addEventListener('mousemove', (ev) => {
  if (drag) return;
  const at = stageAt(ev);
  if (hoverAt === null) requestAnimationFrame(hoverPick);
  hoverAt = at;
  const coords = $('coords');
  if (isTop()) {
    const w = stage.clientWidth, h = stage.clientHeight, t = state.top;
    const x = t.cx + (at[0] - w / 2) / t.scale, y = t.cy - (at[1] - h / 2) / t.scale;
    coords.textContent = `x ${x.toFixed(3)} m · y ${y.toFixed(3)} m`;
    coords.style.display = 'block';
  } else coords.style.display = 'none';
});
$('view-3d').onclick = () => { state.view = '3d'; redraw(); };
$('view-top').onclick = () => { state.view = 'top'; redraw(); };
$('fit').onclick = () => { state.fitted = false; redraw(); };
window.addEventListener('resize', redraw);

// ---------------------------------------------------------------- connection
/** @type {WebSocket | null} */
let ws = null;
/** @param {object} cmd */
function send(cmd) {
  if (ws && ws.readyState === 1) ws.send(JSON.stringify(cmd));
}
function connect() {
  const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
  socket.binaryType = 'arraybuffer';
  ws = socket;
  socket.onmessage = (ev) => {
    if (ev.data instanceof ArrayBuffer) {
      let msg;
      try { msg = decode(ev.data); } catch (e) { panel.log(`Error: ${e instanceof Error ? e.message : e}`); return; }
      if (msg.kind === 'scene') {
        state.scene = msg.scene;
        state.look = new Look(msg.scene);
        state.poses = null;
      } else if (state.scene && msg.poses.meta.scene === state.scene.generation) {
        state.poses = msg.poses;
        state.received++;
        panel.meta(msg.poses.meta);
      }
      return;
    }
    const msg = JSON.parse(ev.data);
    if (msg.type === 'response') panel.log(msg.text);
    else if (msg.type === 'hello') {
      // A new connection: the server sends its scene again.
      state.scene = null; state.poses = null; state.look = null;
      panel.hello(msg.server || '', msg.mode === 'replay', msg.watch || undefined);
    }
  };
  socket.onclose = () => { panel.disconnected(); setTimeout(connect, 1000); };
}
connect();
requestAnimationFrame(render);

// ---------------------------------------------------------------- for tests and the curious
/**
 * `window.simrob`, read by the browser tests through the DevTools protocol and handy in the
 * console: the newest frame's meta, bodies and entities as plain objects, where things are
 * drawn, and the view's state.
 */
const debug = {
  get frame() { return state.poses ? state.poses.meta : null; },
  get scene() { return state.scene; },
  get received() { return state.received; },
  get drawn() { return state.drawn; },
  /** True when the newest frame is on screen as the view now stands. */
  get current() { return state.poses !== null && state.drawnPoses === state.poses; },
  get selected() { return state.selected; },
  get hover() { return state.hover; },
  get view() { return state.view; },
  get software() { return software; },
  get res() { return res; },
  get gl() { return glView.mode; },
  /** Whether sprites give each pixel its own depth (not with software WebGL). */
  get spriteDepth() { return glView.spriteDepth; },
  /** The last 3D drawing's draw calls, vertices, triangles, and bodies drawn as meshes, sprites and dots, arrows. */
  get glStats() { return glView.stats; },
  /** Humanoids and balls: entity id → pixels across as drawn (magnified when small). */
  get symbols() { return Object.fromEntries(glView.across || []); },
  /**
   * The robots' heading arrows as last drawn: entity id, yaw (rad, from +X towards +Y), the
   * arrow's tail (the robot's centre, on its top) and tip, world metres.
   */
  headings: () => {
    const hd = glView.headings;
    if (!hd) return [];
    return Array.from({ length: hd.count }, (_, r) => {
      const tail = [hd.x[r], hd.y[r], hd.top[r]], reach = 1.3 * hd.radius[r];
      return { id: hd.id[r], yaw: hd.yaw[r], tail, tip: [tail[0] + reach * Math.cos(hd.yaw[r]), tail[1] + reach * Math.sin(hd.yaw[r]), tail[2]] };
    });
  },
  get scaleBar() { return top.scaleBar; },
  /** The URL options ignored, and why. */
  urlErrors,
  get labels() { return labels.placed; },
  top: state.top,
  cam: state.cam,
  redraw,
  count: () => (state.scene ? state.scene.n : 0),
  /** @param {number} i */
  body: (i) => (state.scene && state.poses ? body(state.scene, state.poses, i) : null),
  /** Bodies of entity `id`, as plain objects. @param {number} id */
  bodiesOf: (id) => {
    const s = state.scene, p = state.poses, k = s ? s.entityIndex.get(id) : undefined;
    if (!s || !p || k === undefined) return [];
    return Array.from(s.bodyList.subarray(s.bodyStart[k], s.bodyStart[k + 1]), (i) => body(s, p, i));
  },
  /** @param {number} id */
  entity: (id) => {
    const s = state.scene, p = state.poses, k = s ? s.entityIndex.get(id) : undefined;
    return s && p && k !== undefined ? entity(s, p, k) : null;
  },
  entities: () => (state.scene && state.poses ? Array.from({ length: state.scene.m }, (_, k) => entity(/** @type {Scene} */ (state.scene), /** @type {Poses} */ (state.poses), k)) : []),
  /** @param {number} k */
  kind: (k) => (state.scene ? kindOf(state.scene, k) : ''),
  /** @param {number[]} p */
  toScreen: (p) => state.toScreen(p),
  /** The outline of body `i` on screen. @param {number} i */
  outline: (i) => (state.scene && state.poses ? outline(state.scene, state.poses, i, state.toScreen) : null),
  /** @param {number} x @param {number} y */
  entityAt: (x, y) => entityUnder([x, y]),
};
Object.assign(window, { simrob: debug });

// ?bench=1: after 3 s, count the drawings of the next 5 s and report them to the server (it is
// told when the count starts, to measure the browser's processor time over the same span).
if (bench) {
  setTimeout(() => {
    const d0 = state.drawn, t0 = performance.now(), ms0 = state.scriptMs;
    send({ cmd: 'bench-start' });
    setTimeout(() => {
      const frames = state.drawn - d0, seconds = (performance.now() - t0) / 1000;
      send({ cmd: 'report', fps: frames / seconds, frames, seconds, bodies: state.scene ? state.scene.n : 0, script_ms: (state.scriptMs - ms0) / Math.max(frames, 1), software, res, gl: glView.mode, draw: glView.stats });
    }, 5000);
  }, 3000);
}
