// @ts-check
/**
 * The side panel: what the page is connected to (live or replay), the status line, the
 * simulation's or the replay's controls, the selected entity and the responses.
 */
import { body, entity } from './frame.js';

/** @typedef {import('./frame.js').Scene} Scene */
/** @typedef {import('./frame.js').Poses} Poses */
/** @typedef {import('./frame.js').FrameMeta} FrameMeta */
/** @typedef {import('./frame.js').ReplayStatus} ReplayStatus */

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const input = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (document.getElementById(id));
/** @param {number} t */
const seconds = (t) => `${t.toFixed(2)} s`;

/** @param {ReplayStatus} r */
export function replayWord(r) {
  return r.error ? 'stopped: the recording is damaged' : r.ended ? 'ended' : r.waiting ? 'waiting for a viewer' : r.playing ? 'playing' : 'paused';
}

export class Panel {
  /** @param {(cmd: object) => void} send */
  constructor(send) {
    const num = (/** @type {string} */ id) => parseFloat(input(id).value);
    /** @type {Record<string, () => object>} */
    const buttons = {
      initialize: () => ({ cmd: 'initialize' }),
      play: () => ({ cmd: 'play' }),
      pause: () => ({ cmd: 'pause' }),
      step: () => ({ cmd: 'step' }),
      'set-rtf': () => ({ cmd: 'rtf', value: num('rtf') }),
      'set-timestep': () => ({ cmd: 'timestep', value: num('timestep') }),
      'set-gravity': () => ({ cmd: 'gravity', value: num('gravity') }),
      'r-play': () => ({ cmd: 'play' }),
      'r-pause': () => ({ cmd: 'pause' }),
      'r-back': () => ({ cmd: 'step', value: -1 }),
      'r-step': () => ({ cmd: 'step', value: 1 }),
      'set-speed': () => ({ cmd: 'speed', value: num('r-speed') }),
    };
    for (const [id, cmd] of Object.entries(buttons)) $(id).onclick = () => send(cmd());
    $('seek').oninput = () => send({ cmd: 'seek', value: parseInt(input('seek').value, 10) });
    /** @type {FrameMeta | null} */
    this.last = null;
    this.infoText = '';
    this.captionText = '';
  }

  /**
   * The server said what it is: a replay or a live simulation (only now are its controls
   * shown); `watch`, why a live world is only watched (then no controls are shown).
   * @param {string} server @param {boolean} replay @param {string} [watch]
   */
  hello(server, replay, watch) {
    // The heading already says simrob: `simrob soccer match` shows as `soccer match`.
    const source = server.replace(/^simrob\s+/, '');
    $('source').textContent = source;
    $('replay').style.display = replay ? 'block' : 'none';
    $('sim').style.display = replay || watch ? 'none' : 'block';
    $('watch').textContent = watch ? `Watched only: ${watch}.` : '';
    $('watch').style.display = watch ? 'block' : 'none';
    $('mode').textContent = replay ? 'REPLAY' : 'LIVE';
    $('mode').className = replay ? 'replay' : 'live';
    document.body.dataset.mode = replay ? 'replay' : 'live';
    document.title = `simrob ${replay ? 'replay' : 'viewer'}${source ? ': ' + source : ''}`;
  }

  disconnected() {
    $('status').textContent = 'disconnected, retrying…';
  }

  /**
   * A frame arrived: the replay panel follows it at once (also while the drawing lags).
   * @param {FrameMeta} meta
   */
  meta(meta) {
    this.last = meta;
    // A caption (a match's score and clock) over the view, while frames carry one.
    const caption = meta.caption || '';
    if (caption !== this.captionText) {
      $('caption').textContent = caption;
      $('caption').style.display = caption ? 'block' : 'none';
      this.captionText = caption;
    }
    if (meta.replay) this.replay(meta.replay, meta.time);
  }

  /**
   * The replay panel: play state, the slider in simulated seconds and the real speed.
   * @param {ReplayStatus} r @param {number} time simulated time of the frame shown
   */
  replay(r, time) {
    const word = replayWord(r);
    $('r-state').textContent = word;
    $('r-state').className = r.error ? 'damaged' : r.ended ? 'ended' : r.playing ? 'playing' : '';
    $('r-state').title = r.error || '';
    document.body.dataset.replay = word;
    const start = r.start ?? 0, end = r.end ?? time;
    $('r-time').textContent = `t = ${seconds(time)} of ${seconds(end)}`;
    $('r-start').textContent = seconds(start);
    $('r-end').textContent = seconds(end);
    const s = input('seek');
    s.max = String(Math.max(r.count - 1, 0));
    s.title = `simulated time ${seconds(time)}`;
    if (!s.matches(':active')) s.value = String(r.index);
    const box = input('r-speed');
    if (document.activeElement !== box) { box.value = String(r.speed); box.setAttribute('value', String(r.speed)); }
  }

  /**
   * The frame was drawn: the status line and the selected entity.
   * @param {Scene} s @param {Poses} p @param {number | null} selected
   */
  frame(s, p, selected) {
    const m = p.meta, r = m.replay;
    $('status').textContent = r
      ? `replay · ${replayWord(r)} · t = ${m.time.toFixed(2)} s · iteration ${m.iteration} · ${s.n} bodies · frame ${r.index + 1}/${r.count}`
      : `iteration ${m.iteration} · t = ${m.time.toFixed(2)} s · ` +
        (!m.initialized ? 'not initialized' : m.paused ? 'paused' : 'running') + ` · ${s.n} bodies`;
    let text = 'click an entity';
    if (selected !== null) {
      const k = s.entityIndex.get(selected);
      if (k === undefined) text = `entity ${selected} is gone`;
      else {
        const e = entity(s, p, k);
        const f = (/** @type {number[]} */ v) => v.map((x) => x.toFixed(3)).join(', ');
        const lines = [`${e.kind} ${e.id}`];
        if (e.p && e.r) lines.push(`position (${f(e.p)})`, `rotation (${f(e.r)})`);
        for (let j = s.bodyStart[k]; j < Math.min(s.bodyStart[k + 1], s.bodyStart[k] + 6); j++) {
          const b = body(s, p, s.bodyList[j]);
          lines.push(`body ${b.id} ${b.shape}`, `  p (${f(b.p)})`, `  v (${f(b.v)})`, `  ω (${f(b.w)})`);
        }
        text = lines.join('\n');
      }
    }
    if (text !== this.infoText) { $('info').textContent = text; this.infoText = text; }
  }

  /** A line in the responses panel. @param {string} text */
  log(text) {
    const div = document.createElement('div');
    div.textContent = text;
    if (text.startsWith('Error')) div.className = 'err';
    const l = $('log');
    l.insertBefore(div, l.firstChild);
    while (l.childNodes.length > 200) l.removeChild(/** @type {ChildNode} */ (l.lastChild));
  }
}
