// The level's offered load over time, for the briefing's chart before any run. It mirrors
// the engine's traffic curve (internal/sim/traffic.go: constant, ramp, step, wave, spikes)
// and its traffic_spike chaos (ingress × multiplier while the event lasts).
import { chaosId, describeChaos } from './diagram.js';
import { TimeChart, PALETTE } from './charts.js';
import { h, fmt } from './util.js';

// trafficChart draws a level's offered load into box as its page shows it: the fresh
// requests per second, spikes dashed, the warm-up shaded and each chaos event marked
// (chaos: the level's own, or with an event's hidden chaos added). Destroy it when done.
export function trafficChart(box, def, chaos = def.run.chaos || []) {
  const tc = curve({ ...def.run, chaos });
  const series = [{ label: 'offered load', values: tc.base, color: PALETTE[0], width: 2 }];
  if (tc.hasSpike) series.push({ label: 'with spikes', values: tc.withChaos, color: PALETTE[1], dash: [5, 4] });
  return new TimeChart(box, tc.xs, series, {
    title: 'Fresh requests per second (before retries)',
    desc: `Offered load over ${fmt(def.run.duration_sec)} seconds; the shaded start is the warm-up; chaos events are marked.`,
    events: eventBands(chaos, describeChaos, def), warmupSec: 0.2 * def.run.duration_sec, height: 150, sync: false,
  });
}

// chaosList is the chaos schedule in words, one event a line.
export function chaosList(chaos) {
  return chaos.length
    ? h('ul', { class: 'chaos-list' }, chaos.map((e) => h('li', {},
      h('strong', {}, `${fmt(e.at_sec)} s`), e.duration_sec ? `–${fmt(e.at_sec + e.duration_sec)} s` : '',
      ': ', describeChaos(e), ` (${chaosId(e)})`)))
    : h('p', { class: 'muted' }, 'No chaos in this level.');
}

export function rateAt(tr, t) {
  let r = tr.rps || 0;
  switch (tr.kind) {
    case 'ramp':
      if (t <= (tr.start_sec || 0)) break;
      if (t >= (tr.end_sec || 0)) r = tr.to_rps || 0;
      else r = tr.rps + ((tr.to_rps || 0) - tr.rps) * (t - (tr.start_sec || 0)) / ((tr.end_sec || 0) - (tr.start_sec || 0));
      break;
    case 'step':
      for (const s of tr.steps || []) {
        if (t < s.at_sec) break;
        r = s.rps;
      }
      break;
    case 'wave':
      r = tr.rps + (tr.amplitude_rps || 0) * Math.sin(2 * Math.PI * (t + (tr.phase_sec || 0)) / (tr.period_sec || 1));
      break;
    default:
  }
  for (const s of tr.spikes || []) {
    if (t >= s.at_sec && t < s.at_sec + (s.duration_sec || 0)) r += s.rps;
  }
  return Math.max(r, 0);
}

// curve samples the level's offered load: {xs, base, withChaos}, one point per tick (at
// most ~600 points).
export function curve(run) {
  const dur = run.duration_sec || 0;
  const tick = (run.tick_ms || 100) / 1000;
  const n = Math.min(600, Math.max(2, Math.ceil(dur / tick)));
  const step = dur / n;
  const xs = [];
  const base = [];
  const withChaos = [];
  const spikes = (run.chaos || []).filter((e) => e.kind === 'traffic_spike');
  for (let i = 0; i <= n; i++) {
    const t = i * step;
    const r = rateAt(run.traffic || {}, t);
    let m = 1;
    for (const e of spikes) if (t >= e.at_sec && t < e.at_sec + (e.duration_sec || 0)) m *= e.params?.multiplier || 1;
    xs.push(t);
    base.push(r);
    withChaos.push(r * m);
  }
  return { xs, base, withChaos, hasSpike: spikes.length > 0 };
}

// eventBands turns the chaos schedule into chart bands. A cache flush is instant but acts
// while the cache refills: its band lasts the event's warmup_sec, else the level's warm-up
// of that cache (the fixed warmup_sec or ttl_sec, else the parameter's default) when def,
// the level document, is given.
export function eventBands(chaos, label, def) {
  return (chaos || []).map((e) => {
    let dur = e.duration_sec || 0;
    if (!dur && e.kind === 'cache_flush' && e.params?.warmup_sec != null) dur = e.params.warmup_sec;
    else if (!dur && e.kind === 'cache_flush' && def) {
      const flushed = def.starting_design?.components?.find((c) => c.id === e.target);
      const kind = flushed?.type || 'cache';
      dur = kind === 'cdn'
        ? def.catalog?.components?.cdn?.fixed?.ttl_sec ?? 300
        : def.catalog?.components?.[kind]?.fixed?.warmup_sec ?? 60;
    }
    return { id: chaosId(e), start: e.at_sec, end: e.at_sec + dur, label: label ? label(e) : chaosId(e) };
  });
}
