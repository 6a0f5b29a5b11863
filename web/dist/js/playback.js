// Playback of a run: simulated time advances at a chosen speed (10× by default: a
// two-minute level plays in twelve seconds), and every listener is told the tick to show.
// The scrubber jumps to any tick; Space pauses and resumes when the controls have focus.
import { h, fmt, uid } from './util.js';
import { loadSpeed, saveSpeed } from './store.js';

export const SPEEDS = [1, 5, 10, 30, 60];

export class Playback {
  // ticks: result.ticks; tickSec: seconds per tick (of the ticks as sent); onTick(i).
  constructor({ ticks, tickSec, onTick }) {
    this.ticks = ticks;
    this.tickSec = tickSec;
    this.onTick = onTick;
    this.i = 0;
    this.playing = false;
    this.speed = SPEEDS.includes(loadSpeed()) ? loadSpeed() : 10;
    this.frame = null;
    this.el = this.render();
  }

  get duration() {
    return this.ticks.length ? this.ticks[this.ticks.length - 1].t : 0;
  }

  render() {
    const n = this.ticks.length;
    this.btn = h('button', { type: 'button', class: 'play', 'aria-pressed': 'false' }, 'Play');
    this.btn.addEventListener('click', () => (this.playing ? this.pause() : this.play()));
    const rangeId = uid('scrub');
    this.range = h('input', {
      id: rangeId, type: 'range', min: 0, max: Math.max(0, n - 1), step: 1, value: '0', class: 'scrubber',
    });
    this.range.addEventListener('input', () => {
      this.pause();
      this.seek(Number(this.range.value));
    });
    const speedId = uid('speed');
    this.speedSel = h('select', { id: speedId },
      SPEEDS.map((s) => h('option', { value: String(s), selected: s === this.speed }, `${s}×`)));
    this.speedSel.addEventListener('change', () => {
      this.speed = Number(this.speedSel.value);
      saveSpeed(this.speed);
    });
    this.clock = h('output', { class: 'clock', for: rangeId }, '');
    const el = h('div', { class: 'playback', role: 'group', 'aria-label': 'Playback' },
      this.btn,
      h('label', { for: rangeId, class: 'sr-only' }, 'Time'),
      this.range,
      this.clock,
      h('label', { for: speedId }, 'Speed'),
      this.speedSel,
    );
    el.addEventListener('keydown', (ev) => {
      if (ev.key === ' ' && ev.target !== this.btn && ev.target.tagName !== 'SELECT') {
        ev.preventDefault();
        if (this.playing) this.pause();
        else this.play();
      }
    });
    return el;
  }

  play() {
    if (!this.ticks.length) return;
    if (this.i >= this.ticks.length - 1) this.seek(0);
    this.playing = true;
    this.btn.textContent = 'Pause';
    this.btn.setAttribute('aria-pressed', 'true');
    this.simT = this.ticks[this.i].t;
    let last = performance.now();
    const step = (now) => {
      if (!this.playing) return;
      const dt = Math.min(0.25, (now - last) / 1000);
      last = now;
      this.simT += dt * this.speed;
      let i = this.i;
      while (i < this.ticks.length - 1 && this.ticks[i + 1].t <= this.simT) i++;
      if (i !== this.i) this.seek(i, true);
      if (this.i >= this.ticks.length - 1) {
        this.pause();
        return;
      }
      this.frame = requestAnimationFrame(step);
    };
    this.frame = requestAnimationFrame(step);
    this.onPlayState?.(true);
  }

  pause() {
    if (!this.playing) return;
    this.playing = false;
    cancelAnimationFrame(this.frame);
    this.btn.textContent = 'Play';
    this.btn.setAttribute('aria-pressed', 'false');
    this.onPlayState?.(false);
  }

  seek(i, fromPlay = false) {
    this.i = Math.max(0, Math.min(this.ticks.length - 1, i));
    if (!fromPlay) this.simT = this.ticks[this.i]?.t ?? 0;
    this.range.value = String(this.i);
    const t = this.ticks[this.i]?.t ?? 0;
    const text = `${fmt(t)} s / ${fmt(this.duration)} s`;
    this.clock.textContent = text;
    this.range.setAttribute('aria-valuetext', text);
    this.onTick(this.i);
  }

  destroy() {
    this.pause();
  }
}
