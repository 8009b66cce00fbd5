// @ts-check
// The 2D view's page: the WebSocket, the controls, the panels, picking and placing. The
// state the tests read is `window.__simrob2d`.

import { decodeFrame, idColor } from './frame.js';
import { Renderer, MIN_R, SMALL_R } from './draw.js';

/** @typedef {import('./frame.js').Scene2d} Scene2d */
/** @typedef {import('./frame.js').Frame2d} Frame2d */

/** @param {string} id @returns {HTMLElement} */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {string} id @returns {HTMLInputElement} */
const input = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

const canvas = /** @type {HTMLCanvasElement} */ ($('map'));
const renderer = new Renderer(canvas);

/** @type {WebSocket | null} */
let ws = null;
/** @type {Frame2d | null} */
let frame = null;
let frames = 0;
let hello = { server: '', world: '', mode: '' };
let dirty = true;
/** @type {number | null} robot being placed (MRS) */
let placing = null;

const debug = {
  connected: false,
  hello,
  /** @type {Scene2d | null} */
  scene: null,
  /** @type {Frame2d | null} */
  frame: null,
  frames: 0,
  draws: 0,
  /** the version of the scene last drawn */
  drawnScene: 0,
  /** the number of the frame last drawn */
  drawnFrame: -1,
  /** @type {object | null} what `?bench=1` counts */
  bench: null,
  /** @type {{text: string, x: number, y: number, w: number, h: number}[]} */
  labels: [],
  /** @type {string[]} */
  responses: [],
  camera: renderer.camera,
  /** @param {number} x @param {number} y */
  toScreen: (x, y) => renderer.camera.toScreen(x, y),
  /**
   * The canvas pixel at screen point (x, y), RGBA.
   * @param {number} x @param {number} y
   */
  pixel: (x, y) => Array.from(renderer.ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data),
  /**
   * Selects body `id` (as a click on it does).
   * @param {number | null} id
   */
  select: (id) => {
    renderer.selected = id;
    dirty = true;
  },
  /**
   * Centres the view on map point (x, y) at `scale` pixels per map unit.
   * @param {number} x @param {number} y @param {number} scale
   */
  focus: (x, y, scale) => {
    const cam = renderer.camera;
    cam.scale = scale;
    cam.ox = canvas.width / 2 - x * scale;
    cam.oy = canvas.height / 2 - y * scale;
    dirty = true;
  },
};
// Every body as drawn, made when read; how many were stamped a few pixels across.
Object.defineProperty(debug, 'drawn', { get: () => renderer.drawn });
Object.defineProperty(debug, 'stamped', { get: () => renderer.stamped });
Object.defineProperty(debug, 'densityKey', { get: () => renderer.densityKey });
/** @type {any} */ (window).__simrob2d = debug;

function resize() {
  const w = Math.max(100, canvas.clientWidth);
  const h = Math.max(100, canvas.clientHeight);
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
    if (renderer.scene) renderer.camera.fit(renderer.scene, w, h, frame && frame.bodies);
    dirty = true;
  }
}

/** @param {object} cmd */
function send(cmd) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(cmd));
}

// The map rectangle shown and the canvas size, told to the server (which sends the bodies
// in it, or their density when there are too many): when it changes, at most 10 times a
// second.
let viewSent = '';
let viewAt = 0;
function tellView() {
  if (!ws || ws.readyState !== WebSocket.OPEN || !renderer.scene) return;
  const cam = renderer.camera;
  const [x0, y0] = cam.toMap(0, 0);
  const [x1, y1] = cam.toMap(canvas.width, canvas.height);
  const v = { cmd: 'view', x0, y0, x1, y1, w: canvas.width, h: canvas.height };
  const key = JSON.stringify(v);
  const now = performance.now();
  if (key === viewSent || now - viewAt < 100 || !(x1 > x0 && y1 > y0)) return;
  viewSent = key;
  viewAt = now;
  send(v);
}

/** @param {string} text */
function response(text) {
  debug.responses.push(text);
  if (debug.responses.length > 200) debug.responses.shift();
  const li = document.createElement('li');
  li.textContent = text;
  if (text.startsWith('Error')) li.className = 'error';
  const list = $('responses');
  list.prepend(li);
  while (list.children.length > 50) list.lastChild?.remove();
}

function connect() {
  const proto = location.protocol === 'https:' ? 'wss' : 'ws';
  ws = new WebSocket(`${proto}://${location.host}/ws`);
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => {
    viewSent = '';
    debug.connected = true;
    $('conn').textContent = 'connected';
  };
  ws.onclose = () => {
    debug.connected = false;
    $('conn').textContent = 'disconnected (the simulation has stopped?)';
  };
  ws.onmessage = (ev) => {
    if (ev.data instanceof ArrayBuffer) {
      frame = decodeFrame(ev.data);
      frames++;
      debug.frame = frame;
      debug.frames = frames;
      if (renderer.scene && renderer.scene.world !== 'mrs' && $('legend').dataset.states !== legendKey()) legend(renderer.scene);
      dirty = true;
      return;
    }
    const msg = JSON.parse(ev.data);
    if (msg.type === 'hello') {
      hello = msg;
      debug.hello = msg;
      document.body.dataset.world = msg.world;
      document.body.dataset.mode = msg.mode;
      $('server').textContent = msg.server;
      $('mode').textContent = msg.mode === 'replay' ? 'REPLAY' : 'LIVE';
      $('mode').className = msg.mode;
      $('replay').hidden = msg.mode !== 'replay';
    } else if (msg.type === 'scene') {
      renderer.setScene(msg);
      debug.scene = msg;
      $('title').textContent = msg.title;
      legend(msg);
      dirty = true;
    } else if (msg.type === 'response') {
      response(msg.text);
    }
  };
}

/** @param {Scene2d} scene */
function legend(scene) {
  const ul = $('legend');
  ul.innerHTML = '';
  if (scene.world === 'mrs') {
    for (const [color, text] of [
      ['rgb(40,170,60)', 'sonar ray (to what it hits)'],
      ['rgb(230,30,30)', 'closed bumper'],
      ['#2b2d31', 'obstacle'],
    ]) {
      ul.append(legendItem(color, text, 'fill'));
    }
    for (const s of scene.states) ul.append(legendItem(s.color, `rim: ${s.legend}`, 'ring'));
    ul.append(legendItem(idColor(0), 'body: one colour per robot, line = heading', 'fill'));
    return;
  }
  // The states bodies are in now, each with a square swatch when its bodies are drawn as
  // squares (boxes such as drones, and bodies a few pixels across).
  const present = new Set(presentStates());
  const square = squareStates();
  scene.states.forEach((s, i) => {
    if (present.has(i)) ul.append(legendItem(s.color, s.legend, s.mark, square.has(i)));
  });
  if (frame && frame.routes && frame.routes.length) ul.append(legendItem('#5b606a', 'planned route (dashed, in its robot\'s colour)', 'route'));
  if (scene.pois.length) ul.append(legendItem('#3c82c8', 'point of interest', 'fill'));
  if (scene.paths.length) ul.append(legendItem('rgba(60,130,200,0.45)', 'map-path', 'fill'));
  ul.dataset.states = legendKey();
}

/** What the swarm legend depends on: the states bodies are in, whether routes are drawn. */
function legendKey() {
  return `${presentStates().join(',')} square ${[...squareStates()].join(',')}${frame && frame.routes && frame.routes.length ? ' routes' : ''}`;
}

/**
 * The states whose bodies are mostly drawn as squares: boxes, and discs too small on screen to
 * be drawn round (see `Renderer.outline`).
 * @returns {Set<number>}
 */
function squareStates() {
  const out = new Set();
  if (!frame) return out;
  const b = frame.bodies, s = renderer.camera.scale;
  const round = new Uint32Array(256), squares = new Uint32Array(256);
  for (let i = 0; i < b.n; i++) {
    const half = Math.max(b.pose[5 * i + 3], b.pose[5 * i + 4]);
    const disc = (b.flags[i] & 1) === 1 && Math.max(half * s, MIN_R) >= SMALL_R;
    if (disc) round[b.states[i]]++;
    else squares[b.states[i]]++;
  }
  squares.forEach((n, k) => { if (n > round[k]) out.add(k); });
  return out;
}

/** The states the newest frame's bodies are in, in order. */
function presentStates() {
  const seen = new Uint8Array(256);
  if (frame) for (const s of frame.bodies.states) seen[s] = 1;
  /** @type {number[]} */
  const out = [];
  seen.forEach((v, i) => v && out.push(i));
  return out;
}

/** @param {string} color @param {string} text @param {string} mark @param {boolean} [square] */
function legendItem(color, text, mark, square = false) {
  const li = document.createElement('li');
  const sw = document.createElement('span');
  sw.className = `swatch ${mark}${square ? ' square' : ''}`;
  sw.style.setProperty('--c', color);
  li.append(sw, document.createTextNode(text));
  return li;
}

function panels() {
  if (!frame) return;
  const st = frame.status;
  const r = frame.replay;
  $('time').textContent = r
    ? `t = ${frame.time.toFixed(2)} s of ${r.end.toFixed(2)} s, frame ${frame.frame} (snapshot ${r.index + 1}/${r.count})`
    : `t = ${frame.time.toFixed(2)} s, frame ${frame.frame}`;
  $('state').textContent = st.state;
  $('status').dataset.state = st.state;
  const speed = input(r ? 'r-speed' : 'speed');
  if (document.activeElement !== speed) speed.value = String(st.speed);
  $('controls').hidden = !st.controls || !!r;
  if (r) {
    const seek = input('seek');
    seek.min = String(r.start);
    seek.max = String(r.end);
    if (!seek.matches(':active')) seek.value = String(frame.time);
    $('r-start').textContent = `${r.start.toFixed(2)} s`;
    $('r-end').textContent = `${r.end.toFixed(2)} s${r.following ? ' (growing)' : ''}`;
  }
  const figs = $('figures');
  figs.textContent = (frame.figures || []).map(([k, v]) => `${k}: ${v}`).join(' · ');
  const sel = renderer.selected;
  const info = $('info');
  if (sel === null) {
    info.textContent = 'Click a body to inspect it.';
  } else {
    const d = renderer.drawnById(sel);
    if (!d) {
      info.textContent = `#${sel} is gone`;
    } else {
      const lines = [`${d.label} (${d.kind}, id ${d.id})`, `state: ${d.state || '—'}`, `x ${d.x.toFixed(1)}, y ${d.y.toFixed(1)}, heading ${((d.theta * 180) / Math.PI).toFixed(1)}°`];
      if (d.carrier !== null) lines.push(`carried by #${d.carrier}`);
      const carries = (frame.carried || []).filter(([, c]) => c === d.id).map(([item]) => renderer.drawnById(item)?.label || `item #${item}`);
      if (carries.length) lines.push(`carries ${carries.join(', ')}`);
      const route = (frame.routes || []).find((r) => r.id === d.id);
      if (route && route.points.length > 1) {
        const end = route.points[route.points.length - 1];
        lines.push(`route: ${route.points.length - 1} legs to (${end[0].toFixed(1)}, ${end[1].toFixed(1)})`);
      }
      const sn = (frame.sensors || []).find((x) => x.id === d.id);
      if (sn) {
        lines.push(`velocity ${sn.speed} in/s, turn ${sn.turn}°/s`);
        lines.push(`sonars ${sn.sonar.map((v) => v.toFixed(0)).join(' ')}`);
        lines.push(`bumpers closed: ${sn.bumpers.map((b) => b[0]).join(', ') || 'none'}`);
        if (sn.message) lines.push(`message: ${sn.message}`);
      }
      info.textContent = lines.join('\n');
    }
  }
  if (renderer.scene && renderer.scene.world === 'mrs') {
    const robots = $('robots');
    const ids = (frame.sensors || []).map((s) => s.id);
    if (robots.dataset.ids !== ids.join(',')) {
      robots.dataset.ids = ids.join(',');
      robots.innerHTML = '';
      for (const id of ids) {
        const b = document.createElement('button');
        b.textContent = `robot ${id}`;
        b.style.borderColor = idColor(id);
        b.onclick = () => {
          renderer.selected = id;
          dirty = true;
        };
        robots.append(b);
      }
    }
  }
}

// `?bench=1`: redraw every animation frame and count, in `__simrob2d.bench`, from the first
// frame drawn with a scene: frames drawn, milliseconds of script they took in all and by
// phase (crates/viewer/examples/page_fps_2d.rs reads it twice and divides).
const bench = new URLSearchParams(location.search).has('bench')
  ? { frames: 0, script_ms: 0, phases: /** @type {Record<string, number>} */ ({}), bodies: 0, labels: 0, width: 0, height: 0 }
  : null;
if (bench) renderer.timing = bench.phases;

/** What the panels show now. */
const panelsFor = { frame: /** @type {Frame2d | null} */ (null), selected: /** @type {number | null} */ (null) };

/** @param {number} now */
function loop() {
  resize();
  tellView();
  if (bench && frame && renderer.scene) dirty = true;
  if (dirty) {
    const t0 = performance.now();
    dirty = false;
    /** @type {import('./draw.js').Layers} */
    const layers = {
      trail: input('trail').checked,
      rays: input('rays').checked,
      routes: input('routes').checked,
      labels: input('labels').checked,
    };
    renderer.draw(frame, layers);
    debug.labels = renderer.labels;
    debug.draws++;
    debug.drawnScene = renderer.scene ? renderer.scene.version : 0;
    debug.drawnFrame = frame ? frame.frame : -1;
    // The legend's swatches take the shapes bodies are drawn in, which change with the zoom.
    if (renderer.scene && renderer.scene.world !== 'mrs' && $('legend').dataset.states !== legendKey()) legend(renderer.scene);
    // The panels follow the frame and the selection, not the camera.
    if (frame !== panelsFor.frame || renderer.selected !== panelsFor.selected) {
      panelsFor.frame = frame;
      panelsFor.selected = renderer.selected;
      panels();
    }
    if (bench && frame && renderer.scene) {
      renderer.lap('panels');
      bench.frames++;
      bench.script_ms += performance.now() - t0;
      bench.bodies = frame.bodies.n;
      bench.labels = renderer.labels.length;
      bench.width = canvas.width;
      bench.height = canvas.height;
      debug.bench = bench;
    }
  }
  requestAnimationFrame(loop);
}

// Pan, zoom, pick, place.
let drag = /** @type {{x: number, y: number, moved: boolean} | null} */ (null);
canvas.addEventListener('mousedown', (e) => {
  drag = { x: e.offsetX, y: e.offsetY, moved: false };
});
canvas.addEventListener('mousemove', (e) => {
  const [x, y] = renderer.camera.toMap(e.offsetX, e.offsetY);
  const unit = renderer.scene ? renderer.scene.units : '';
  $('cursor').textContent = `x ${x.toFixed(1)} ${unit}, y ${y.toFixed(1)} ${unit}`;
  if (drag) {
    const dx = e.offsetX - drag.x;
    const dy = e.offsetY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (drag.moved) {
      renderer.camera.ox += dx;
      renderer.camera.oy += dy;
      drag.x = e.offsetX;
      drag.y = e.offsetY;
      dirty = true;
    }
  } else {
    const d = renderer.pick(e.offsetX, e.offsetY);
    canvas.title = d ? d.label : '';
  }
});
canvas.addEventListener('mouseup', (e) => {
  const moved = drag && drag.moved;
  drag = null;
  if (moved) return;
  if (placing !== null) {
    const [x, y] = renderer.camera.toMap(e.offsetX, e.offsetY);
    send({ cmd: 'place', robot: placing, x, y, heading: Number(input('heading').value) || 0 });
    placing = null;
    $('place').classList.remove('active');
    return;
  }
  const d = renderer.pick(e.offsetX, e.offsetY);
  renderer.selected = d ? d.id : null;
  dirty = true;
});
canvas.addEventListener('wheel', (e) => {
  e.preventDefault();
  renderer.camera.zoom(Math.exp(-e.deltaY * 0.0015), e.offsetX, e.offsetY);
  dirty = true;
}, { passive: false });

$('fit').onclick = () => {
  if (renderer.scene) renderer.camera.fit(renderer.scene, canvas.width, canvas.height, frame && frame.bodies);
  dirty = true;
};
for (const id of ['trail', 'rays', 'routes', 'labels']) input(id).onchange = () => (dirty = true);
$('play').onclick = () => send({ cmd: 'play' });
$('pause').onclick = () => send({ cmd: 'pause' });
$('step').onclick = () => send({ cmd: 'step', value: 1 });
input('speed').onchange = () => send({ cmd: 'speed', value: Number(input('speed').value) });
$('r-play').onclick = () => send({ cmd: 'play' });
$('r-pause').onclick = () => send({ cmd: 'pause' });
$('r-step').onclick = () => send({ cmd: 'step', value: 1 });
$('r-back').onclick = () => send({ cmd: 'step', value: -1 });
input('r-speed').onchange = () => send({ cmd: 'speed', value: Number(input('r-speed').value) });
input('seek').oninput = () => send({ cmd: 'seek', time: Number(input('seek').value) });
$('place').onclick = () => {
  if (renderer.selected === null) {
    response('Error: select a robot first (click it or its button)');
    return;
  }
  placing = renderer.selected;
  $('place').classList.add('active');
};
$('load').onclick = () => send({ cmd: 'load', file: input('file').value });
$('merge').onclick = () => send({ cmd: 'merge', file: input('file').value });
$('rect').onclick = () => {
  const v = input('rectv').value.trim().split(/[\s,]+/).map(Number);
  send({ cmd: 'rect', rect: v });
};

window.addEventListener('resize', () => (dirty = true));
connect();
requestAnimationFrame(loop);
