// A run's outcome: the verdict (four win conditions, structural failures, chaos events,
// the bottleneck, per-component peaks), the charts over time and the per-step table.
import { h, fmt, fmtMs, fmtPct, fmtCost, fmtSec, fmtUnit, kindLabel, CONDITION_LABELS } from '../util.js';
import { TimeChart, PALETTE } from '../charts.js';
import { chaosId, describeChaos } from '../diagram.js';

const FAILURE_WORDS = {
  lost_data: 'writes were acknowledged but never stored',
  replication_lag: 'a replica fell behind for good',
  split_brain: 'two sides accepted conflicting writes',
  undrained: 'acknowledged writes were still queued when the run ended',
};

export function renderVerdict(ev, def, result, { onBottleneck } = {}) {
  const box = h('div', { class: 'verdict-box' });
  const failing = (ev.conditions || []).filter((c) => !c.passed);
  box.append(h('p', { class: ['verdict', ev.passed ? 'pass' : 'fail'], id: 'verdict' },
    ev.passed
      ? [h('strong', {}, 'PASSED'), ` — score ${ev.score}`]
      : [h('strong', {}, 'FAILED'), ' — ', [
        ...failing.map((c) => CONDITION_LABELS[c.name] || c.name),
        ...(ev.failures || []).map((f) => f.split(':')[0].replace(/_/g, ' ')),
      ].join(', ')]));

  // The four win conditions.
  box.append(h('div', { class: 'table-wrap' }, h('table', { class: 'conditions', id: 'conditions' },
    h('caption', {}, 'Win conditions'),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Condition'),
      h('th', { scope: 'col', class: 'num' }, 'Measured'),
      h('th', { scope: 'col', class: 'num' }, 'Target'),
      h('th', { scope: 'col', class: 'num' }, 'Margin'),
      h('th', { scope: 'col' }, 'Result'))),
    h('tbody', {}, (ev.conditions || []).map((c) => h('tr', { class: c.passed ? 'ok' : 'bad', dataset: { condition: c.name } },
      h('th', { scope: 'row', title: c.detail }, CONDITION_LABELS[c.name] || c.name),
      h('td', { class: 'num' }, fmtUnit(c.measured, c.unit)),
      h('td', { class: 'num' }, `≤ ${fmtUnit(c.target, c.unit)}`),
      h('td', { class: 'num' }, (c.margin >= 0 ? '+' : '−') + fmtUnit(Math.abs(c.margin), c.unit)),
      h('td', {}, c.passed ? h('span', { class: 'pass' }, '✓ pass') : h('span', { class: 'fail' }, '✗ fail'))))))));

  if (ev.failures?.length) {
    box.append(h('div', { class: 'failures' }, h('h3', {}, 'Structural failures'),
      h('ul', {}, ev.failures.map((f) => {
        const [kind, ...rest] = f.split(':');
        return h('li', {}, h('strong', {}, kind.replace(/_/g, ' ')), rest.length ? ` at ${rest.join(' and ')}` : '', ` — ${FAILURE_WORDS[kind] || 'the run fails whatever its numbers'}.`);
      }))));
  }

  // Bottleneck.
  const b = ev.bottleneck;
  const bn = h('div', { class: 'bottleneck', id: 'bottleneck' }, h('h3', {}, 'Bottleneck'));
  if (b) {
    const comp = result.components.find((c) => c.id === b.component);
    const link = h('button', { type: 'button', class: 'link', onclick: () => onBottleneck?.(b.component) }, b.component);
    const peak = (ev.components || []).find((c) => c.id === b.component);
    bn.append(h('p', {}, link, comp ? ` (${kindLabel(comp.type)})` : '',
      ` saturated first, at ${fmtSec(b.at_sec)}.`,
      peak ? ` Its utilisation peaked at ${fmtPct(peak.peak_utilization, 0)}${peak.measure === 'mean' ? ' (mean)' : ''}.` : ''));
  } else {
    bn.append(h('p', {}, 'No component saturated.', ev.busiest ? ` The busiest was ${ev.busiest}.` : ''));
  }
  box.append(bn);

  // Chaos events.
  if (ev.events?.length) {
    box.append(h('div', { class: 'table-wrap' }, h('table', { class: 'events' },
      h('caption', {}, 'Chaos events'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Event'), h('th', { scope: 'col', class: 'num' }, 'When'),
        h('th', { scope: 'col', class: 'num' }, 'Errors during'), h('th', { scope: 'col', class: 'num' }, 'Recovery'),
        h('th', { scope: 'col' }, 'Result'))),
      h('tbody', {}, ev.events.map((e) => h('tr', { class: e.passed ? 'ok' : 'bad' },
        h('th', { scope: 'row' }, e.id, h('br'), h('span', { class: 'muted' }, e.kind.replace(/_/g, ' '))),
        h('td', { class: 'num' }, `${fmt(e.start_sec)}–${fmt(e.end_sec)} s`),
        h('td', { class: 'num' }, `${fmtPct(e.error_rate)} (≤ ${fmtPct(e.error_ceiling)})`),
        h('td', { class: 'num' }, e.recovery_sec == null ? 'never' : `${fmtSec(e.recovery_sec)} (≤ ${fmtSec(e.recovery_deadline_sec)})`),
        h('td', {}, e.passed ? h('span', { class: 'pass' }, '✓ held') : h('span', { class: 'fail' }, '✗ broke'))))))));
  }

  // Per-component peaks.
  if (ev.components?.length) {
    box.append(h('details', { class: 'peaks' },
      h('summary', {}, 'Utilisation per component'),
      h('div', { class: 'table-wrap' }, h('table', {},
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col' }, 'Component'), h('th', { scope: 'col', class: 'num' }, 'Peak'),
          h('th', { scope: 'col', class: 'num' }, 'Peak under chaos'), h('th', { scope: 'col' }, 'Headroom'))),
        h('tbody', {}, ev.components.map((c) => h('tr', { class: c.healthy ? 'ok' : 'bad' },
          h('th', { scope: 'row' }, c.id, ' ', h('span', { class: 'muted' }, kindLabel(c.type))),
          h('td', { class: 'num' }, fmtPct(c.peak_utilization, 0), c.measure === 'mean' ? ' (mean)' : ''),
          h('td', { class: 'num' }, fmtPct(c.chaos_peak_utilization, 0)),
          h('td', {}, c.healthy ? 'ok (< 90%)' : 'too hot (≥ 90%)'))))))));
  }
  return box;
}

// renderCharts draws the run's charts into box and returns them (for playback).
export function renderCharts(box, result, def, ev) {
  const ticks = result.ticks;
  const xs = ticks.map((t) => t.t);
  const events = (result.summary?.events || []).map((e) => {
    const sched = (def.run.chaos || []).find((c) => chaosId(c) === e.id);
    return { start: e.start_sec, end: e.end_sec, label: sched ? describeChaos(sched) : e.id };
  });
  const warmupSec = ev.window?.start_sec ?? 0.2 * def.run.duration_sec;
  const common = { events, warmupSec };
  const cell = () => {
    const c = h('div', { class: 'chart-cell' });
    box.append(c);
    return c;
  };
  const charts = [];
  charts.push(new TimeChart(cell(), xs, [
    { label: 'offered', values: ticks.map((t) => t.offered_rps), color: PALETTE[0], width: 2 },
    { label: 'served', values: ticks.map((t) => t.served_rps), color: PALETTE[2], width: 2 },
    { label: 'failed', values: ticks.map((t) => t.rejected_rps + t.error_rps + t.timed_out_rps), color: PALETTE[1] },
  ], { ...common, title: 'Offered vs served load (rps)', desc: 'Requests per second offered, served and failed, per tick.' }));
  charts.push(new TimeChart(cell(), xs, [
    { label: 'p99', values: ticks.map((t) => t.p99_ms), color: PALETTE[3], width: 2 },
    { label: 'p50', values: ticks.map((t) => t.p50_ms), color: PALETTE[5] },
  ], { ...common, title: 'Latency (ms)', target: def.sla.p99_latency_ms, targetLabel: `p99 target ${fmtMs(def.sla.p99_latency_ms)}`, yFmt: (v) => fmt(v), desc: 'p99 and p50 latency per tick against the p99 target.' }));
  charts.push(new TimeChart(cell(), xs, [
    { label: 'error rate', values: ticks.map((t) => t.error_rate), color: PALETTE[1], width: 2 },
  ], { ...common, title: 'Error rate', target: def.sla.error_rate, targetLabel: `target ${fmtPct(def.sla.error_rate)}`, yFmt: (v) => fmtPct(v), yMax: undefined, desc: 'Share of finished attempts that failed, per tick, against the target.' }));
  charts.push(new TimeChart(cell(), xs, [
    { label: 'cost', values: ticks.map((t) => t.cost_per_hour), color: PALETTE[4], width: 2 },
  ], { ...common, title: 'Cost ($ per hour)', target: def.budget_per_hour, targetLabel: `budget ${fmtCost(def.budget_per_hour)}`, yFmt: (v) => `$${fmt(v)}`, desc: 'Cost per hour per tick against the budget.' }));
  charts.push(new TimeChart(cell(), xs, result.components.map((c, i) => ({
    label: c.id,
    values: ticks.map((t) => Math.min(1.5, t.components[i].utilization)),
    color: PALETTE[i % PALETTE.length],
  })), { ...common, title: 'Utilisation per component', target: 0.9, targetLabel: '90% healthy limit', yFmt: (v) => fmtPct(v, 0), yMax: 1.05, desc: 'Each component\u2019s utilisation per tick (shown up to 150%).' }));
  return charts;
}

// renderStepTable is the per-step table: every tick as numbers (the charts' text
// alternative). Rows are built when it is first opened.
export function renderStepTable(result, chaos) {
  const ticks = result.ticks;
  const tbody = h('tbody');
  const table = h('table', { class: 'steps', id: 'steps' },
    h('caption', { class: 'sr-only' }, 'Every tick of the run'),
    h('thead', {}, h('tr', {},
      ['t (s)', 'offered', 'served', 'rejected', 'errors', 'timed out', 'queued', 'p50 ms', 'p99 ms', 'error rate', '$/h']
        .map((t) => h('th', { scope: 'col', class: 'num' }, t)),
      result.components.map((c) => h('th', { scope: 'col', class: 'num', title: `${c.id}: utilisation, status` }, `${c.id} util`)),
      h('th', { scope: 'col' }, 'chaos'))),
    tbody);
  const details = h('details', { class: 'step-table' },
    h('summary', {}, `Per-step table (${ticks.length} steps)`),
    h('div', { class: 'table-wrap tall' }, table));
  let built = false;
  let rows = [];
  let current = -1;
  details.addEventListener('toggle', () => {
    if (!details.open || built) return;
    built = true;
    const frag = document.createDocumentFragment();
    rows = ticks.map((t) => {
      const tr = h('tr', {},
        h('th', { scope: 'row', class: 'num' }, fmt(t.t)),
        h('td', { class: 'num' }, fmt(t.offered_rps)),
        h('td', { class: 'num' }, fmt(t.served_rps)),
        h('td', { class: 'num' }, fmt(t.rejected_rps)),
        h('td', { class: 'num' }, fmt(t.error_rps)),
        h('td', { class: 'num' }, fmt(t.timed_out_rps)),
        h('td', { class: 'num' }, fmt(t.queued)),
        h('td', { class: 'num' }, fmt(t.p50_ms)),
        h('td', { class: 'num' }, fmt(t.p99_ms)),
        h('td', { class: 'num' }, fmtPct(t.error_rate)),
        h('td', { class: 'num' }, fmtCost(t.cost_per_hour).replace('/h', '')),
        t.components.map((c) => h('td', { class: ['num', `st-${c.status}`] }, `${fmtPct(c.utilization, 0)} ${c.status}`)),
        h('td', {}, (t.events || []).join(', ')));
      frag.append(tr);
      return tr;
    });
    tbody.append(frag);
    if (current >= 0) rows[current]?.classList.add('current');
  });
  return {
    el: details,
    setCurrent(i) {
      if (rows[current]) rows[current].classList.remove('current');
      current = i;
      if (rows[i]) rows[i].classList.add('current');
    },
  };
}
