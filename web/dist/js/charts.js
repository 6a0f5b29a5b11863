// Time charts drawn by uPlot. Each chart is a <figure> with a caption; every chart of a
// run shares one time axis and one cursor, marks the warm-up (not evaluated) and the chaos
// events, draws its target as a dashed line, and follows playback with a vertical line.
import uPlot from '../vendor/uplot/uPlot.esm.js';
import { h, fmt } from './util.js';

// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#8C6D1F'];

const SYNC_KEY = 'bp-run';

// marksPlugin draws shading, event bands, the target line and the playback line.
function marksPlugin(opts) {
  return {
    hooks: {
      drawClear: [
        (u) => {
          const { ctx } = u;
          const { left, top, width, height } = u.bbox;
          ctx.save();
          if (opts.warmupSec > 0) {
            const x1 = u.valToPos(0, 'x', true);
            const x2 = u.valToPos(opts.warmupSec, 'x', true);
            ctx.fillStyle = 'rgba(100,100,110,0.10)';
            ctx.fillRect(Math.max(left, x1), top, Math.min(x2, left + width) - Math.max(left, x1), height);
          }
          // Bands at least 6 px wide (an instant event is still visible); labels in up to
          // three rows, each placed in the first row where it overlaps no other label.
          const dpr = devicePixelRatio;
          ctx.font = `${11 * dpr}px system-ui, sans-serif`;
          // uPlot leaves the context aligned as it drew its last axis: the labels below are
          // placed by their left end and their baseline.
          ctx.textAlign = 'left';
          ctx.textBaseline = 'alphabetic';
          const rows = [];
          for (const ev of opts.events || []) {
            const x1 = u.valToPos(ev.start, 'x', true);
            const x2 = u.valToPos(Math.max(ev.end, ev.start), 'x', true);
            ctx.fillStyle = 'rgba(213,94,0,0.16)';
            ctx.fillRect(x1, top, Math.max(x2 - x1, 6 * dpr), height);
            ctx.fillStyle = 'rgba(213,94,0,0.7)';
            ctx.fillRect(x1, top, 1.5 * dpr, height);
            const text = `⚡ ${ev.label}`;
            const w = ctx.measureText(text).width + 6 * dpr;
            let x = x1 + 3 * dpr;
            if (x + w > left + width) x = Math.max(left, left + width - w);
            let row = rows.findIndex((end) => end <= x);
            if (row < 0) row = rows.length < 3 ? rows.length : rows.indexOf(Math.min(...rows));
            rows[row] = x + w;
            ctx.fillStyle = 'rgba(255,255,255,0.85)';
            ctx.fillRect(x - 2 * dpr, top + (2 + row * 14) * dpr, w - 2 * dpr, 13 * dpr);
            ctx.fillStyle = '#8a3a00';
            ctx.fillText(text, x, top + (12 + row * 14) * dpr);
          }
          ctx.restore();
        },
      ],
      draw: [
        (u) => {
          const { ctx } = u;
          const { left, top, width, height } = u.bbox;
          ctx.save();
          if (opts.target != null && Number.isFinite(opts.target)) {
            const y = u.valToPos(opts.target, 'y', true);
            if (y >= top && y <= top + height) {
              ctx.strokeStyle = '#B00020';
              ctx.lineWidth = 1.5 * devicePixelRatio;
              ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
              ctx.beginPath();
              ctx.moveTo(left, y);
              ctx.lineTo(left + width, y);
              ctx.stroke();
              ctx.setLineDash([]);
              ctx.fillStyle = '#B00020';
              ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
              ctx.textAlign = 'left';
              ctx.textBaseline = 'alphabetic';
              const label = opts.targetLabel || 'target';
              const tw = ctx.measureText(label).width;
              ctx.fillText(label, left + width - tw - 4 * devicePixelRatio, y - 4 * devicePixelRatio);
            }
          }
          if (opts.now != null) {
            const x = u.valToPos(opts.now, 'x', true);
            if (x >= left && x <= left + width) {
              ctx.strokeStyle = '#1a1a1a';
              ctx.lineWidth = 2 * devicePixelRatio;
              ctx.beginPath();
              ctx.moveTo(x, top);
              ctx.lineTo(x, top + height);
              ctx.stroke();
            }
          }
          ctx.restore();
        },
      ],
    },
  };
}

// TimeChart is one chart over the run's time axis.
//   xs: seconds; series: [{label, values, color, width, dash, fill}]
//   opts: {title, desc, yFmt, yMin, yMax, target, targetLabel, events, warmupSec, height, sync,
//   bands} (bands: uPlot's fills between two series, for stacked areas)
export class TimeChart {
  constructor(container, xs, series, opts = {}) {
    this.opts = opts;
    this.marks = { target: opts.target, targetLabel: opts.targetLabel, events: opts.events, warmupSec: opts.warmupSec, now: null };
    this.plotEl = h('div', { class: 'chart-plot', role: 'img', 'aria-label': opts.desc || opts.title });
    this.figure = h('figure', { class: 'chart' }, h('figcaption', {}, opts.title), this.plotEl);
    container.append(this.figure);
    const yFmt = opts.yFmt || fmt;
    let yMax = opts.yMax;
    if (yMax === undefined && opts.target != null && Number.isFinite(opts.target)) {
      // Keep the target in view even when every value is well below it.
      const top = Math.max(opts.target * 1.15, ...series.flatMap((s) => s.values.filter(Number.isFinite)));
      yMax = top;
    }
    const width = Math.max(240, container.clientWidth || 600);
    const cfg = {
      width,
      height: opts.height || 190,
      legend: { show: opts.legend ?? series.length > 1, live: true },
      cursor: {
        sync: opts.sync === false ? undefined : { key: SYNC_KEY, setSeries: false },
        drag: { x: false, y: false },
        points: { size: 6 },
      },
      scales: {
        x: { time: false },
        y: {
          range: (u, min, max) => [opts.yMin ?? Math.min(0, min), yMax != null ? Math.max(yMax, max * 1.06) : max > 0 ? max * 1.08 : 1],
        },
      },
      axes: [
        { values: (u, vals) => vals.map((v) => `${fmt(v)} s`), stroke: '#333', grid: { stroke: '#e4e4e8' }, ticks: { stroke: '#ccc' } },
        { values: (u, vals) => vals.map((v) => yFmt(v)), stroke: '#333', size: 64, grid: { stroke: '#e4e4e8' }, ticks: { stroke: '#ccc' } },
      ],
      series: [
        { label: 'time', value: (u, v) => (v == null ? '–' : `${fmt(v)} s`) },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color || PALETTE[i % PALETTE.length],
          width: s.width || 1.75,
          dash: s.dash,
          fill: s.fill,
          points: { show: false },
          value: (u, v) => (v == null ? '–' : yFmt(v)),
        })),
      ],
      plugins: [marksPlugin(this.marks)],
    };
    if (opts.bands) cfg.bands = opts.bands;
    this.plot = new uPlot(cfg, [xs, ...series.map((s) => s.values)], this.plotEl);
    this.ro = new ResizeObserver(() => {
      const w = Math.max(240, container.clientWidth);
      if (Math.abs(w - this.plot.width) > 2) this.plot.setSize({ width: w, height: this.plot.height });
    });
    this.ro.observe(container);
  }

  // setNow moves the playback line to t seconds (null hides it); idx, the tick's index,
  // puts that tick's values in the legend.
  setNow(t, idx) {
    this.marks.now = t;
    this.plot.redraw(false, false);
    if (idx != null && this.plot.cursor.left < 0) this.plot.setLegend({ idx });
  }

  destroy() {
    this.ro.disconnect();
    this.plot.destroy();
    this.figure.remove();
  }
}
