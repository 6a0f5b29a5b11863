// A run's outcome: the verdict (four win conditions and every structural failure as a
// condition), why it happened (the engine's timeline of causes, each with what to change),
// each chaos event against the level's allowance in words and numbers, per-component peaks
// against the one healthy limit, the charts over time and the per-step table.
import { h, fmt, fmtMs, fmtPct, fmtCost, fmtSec, fmtUnit, kindLabel, CONDITION_LABELS, HEALTHY_UTILIZATION } from '../util.js';
import { TimeChart, PALETTE } from '../charts.js';
import { chaosId, describeChaos } from '../diagram.js';
import { starText } from '../stars.js';

// STRUCTURAL names each structural failure as a condition: what must hold, and what broke.
const STRUCTURAL = {
  lost_data: ['Every acknowledged write is stored', (id) => `${id} acknowledged writes it never stored: its consumers or the database could not keep up`],
  replication_lag: ['Replicas keep up', (id) => `a replica of ${id} fell behind for good`],
  split_brain: ['One side accepts writes', (id) => `${id} took conflicting writes on both sides of a partition`],
  undrained: ['Queues drain by the end', (id) => `${id} still held acknowledged writes when the run ended`],
};

const CAUSE_WORDS = {
  saturated: 'saturated',
  node_failed: 'failed node still sent traffic',
  partition: 'network partition',
  breaker_open: 'circuit breaker open',
  rate_limited: 'rate limited',
  throttled: 'throttled (concurrency limit)',
  timeouts: 'clients timed out',
  no_route: 'nowhere to send requests',
  lost_writes: 'writes lost',
  replication_lag: 'replication lag',
};

// whyOf is the run's "why it happened" timeline. Servers that do not send one yet name
// only the first tier to saturate; that becomes a one-line timeline without advice.
export function whyOf(ev) {
  if (Array.isArray(ev?.why)) return ev.why;
  const b = ev?.bottleneck;
  if (!b || ev.passed) return [];
  return [{ start_sec: b.at_sec, end_sec: null, component: b.component, cause: 'saturated',
    detail: `${b.component} was the first component to saturate`, advice: '', fallback: true }];
}

// next: the campaign's next level (null after the last); nextWords, when given, replaces
// that line (an event's page: submit to the event).
export function renderVerdict(ev, def, result, { onComponent, next, nextWords } = {}) {
  const box = h('div', { class: 'verdict-box' });
  const failing = (ev.conditions || []).filter((c) => !c.passed);
  const structural = (ev.failures || []).map(parseFailure);
  box.append(h('p', { class: ['verdict', ev.passed ? 'pass' : 'fail'], id: 'verdict', tabindex: -1 },
    ev.passed
      ? [h('strong', {}, 'PASSED'), ` — score ${ev.score} `,
        h('span', { class: 'stars', id: 'run-stars', title: def.stars ? `two stars at ${def.stars.two}, three at ${def.stars.three}` : 'one star for passing' },
          starText(ev.stars ?? 0))]
      : [h('strong', {}, 'FAILED'), ' — ', [
        ...failing.map((c) => CONDITION_LABELS[c.name] || c.name),
        ...structural.map((f) => f.title.toLowerCase()),
      ].join(', ')]));
  if (ev.passed && ev.score_parts?.length) {
    // What the score is made of: a cheaper design that scores lower shows where it lost.
    box.append(h('p', { class: 'score-parts', id: 'score-parts' }, `Score = 1000 + `,
      ev.score_parts.map((p, i) => [i ? ' + ' : '', h('span', { title: `${fmtPct(p.headroom, 0)} of the allowance left × weight ${p.weight}` },
        `${CONDITION_LABELS[p.condition] || p.condition} ${Math.round(p.points)}`)]),
      h('span', { class: 'muted' }, ' (each: the share of its allowance left unused × its weight × 9000)')));
  }
  if (ev.passed) {
    box.append(h('p', { class: 'next', id: 'next-level' }, nextWords || (next
      ? ['Well done. ', h('a', { href: `#/levels/${encodeURIComponent(next.slug)}`, class: 'button primary' }, `Next level: ${next.title} →`), ' or submit below for a rank.']
      : ['That was the last level of the campaign. ', h('a', { href: '#/' }, 'Back to the levels')])));
  }

  // The win conditions, then every structural failure as a condition of its own.
  const rows = (ev.conditions || []).map((c) => conditionRow(c, ev, def));
  for (const f of structural) {
    rows.push(h('tr', { class: 'bad', dataset: { condition: f.kind } },
      h('th', { scope: 'row' }, f.title),
      h('td', { dataset: { label: 'Measured' } }, f.words),
      h('td', { dataset: { label: 'Allowed' } }, 'must hold'),
      h('td', { dataset: { label: 'Result' } }, h('span', { class: 'fail' }, '✗ fail'))));
  }
  box.append(h('div', { class: 'table-wrap' }, h('table', { class: 'conditions', id: 'conditions' },
    h('caption', {}, 'Win conditions (over the evaluation window)'),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Condition'),
      h('th', { scope: 'col' }, 'Measured'),
      h('th', { scope: 'col' }, 'Allowed'),
      h('th', { scope: 'col' }, 'Result'))),
    h('tbody', {}, rows))));

  box.append(renderWhy(ev, result, onComponent));
  box.append(renderResilience(ev, def));

  // Per-component peaks against the healthy limit.
  if (ev.components?.length) {
    box.append(h('details', { class: 'peaks' },
      h('summary', {}, `Utilisation per component (healthy: below ${fmtPct(HEALTHY_UTILIZATION, 0)})`),
      h('div', { class: 'table-wrap' }, h('table', {},
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col' }, 'Component'), h('th', { scope: 'col', class: 'num' }, 'Peak outside chaos'),
          h('th', { scope: 'col', class: 'num' }, 'Peak under chaos'), h('th', { scope: 'col' }, 'Headroom'))),
        h('tbody', {}, ev.components.map((c) => h('tr', { class: c.healthy ? 'ok' : 'bad' },
          h('th', { scope: 'row' }, c.id, ' ', h('span', { class: 'muted' }, kindLabel(c.type))),
          h('td', { class: 'num' }, fmtPct(c.peak_utilization, 0), c.measure === 'mean' ? ' (mean)' : ''),
          h('td', { class: 'num' }, fmtPct(c.chaos_peak_utilization, 0)),
          h('td', {}, c.healthy ? `healthy (< ${fmtPct(HEALTHY_UTILIZATION, 0)})` : `too hot (≥ ${fmtPct(HEALTHY_UTILIZATION, 0)})`))))))));
  }
  return box;
}

function conditionRow(c, ev, def) {
  let measured = fmtUnit(c.measured, c.unit);
  let target = `≤ ${fmtUnit(c.target, c.unit)}`;
  if (c.name === 'resilience') {
    if (!ev.events?.length) {
      measured = 'no chaos in this level';
      target = '—';
    } else {
      const broke = ev.events.filter((e) => !e.passed);
      measured = broke.length
        ? `${broke.length} of ${ev.events.length} event${ev.events.length === 1 ? '' : 's'} broke the allowance (see below)`
        : `all ${ev.events.length} event${ev.events.length === 1 ? '' : 's'} within the allowance`;
      target = def.resilience
        ? `errors ≤ ${fmtPct(def.resilience.error_ceiling)} during each, recovery ≤ ${fmtSec(def.resilience.recovery_deadline_sec)}`
        : '—';
    }
  } else if (c.name === 'latency') {
    measured = c.unmeasured ? 'no request was answered' : `${fmtMs(c.measured)} (99th percentile)`;
  } else if (c.name === 'errors') {
    measured = `${fmtPct(c.measured)} of requests failed`;
  }
  return h('tr', { class: c.passed ? 'ok' : 'bad', dataset: { condition: c.name } },
    h('th', { scope: 'row', title: c.detail }, CONDITION_LABELS[c.name] || c.name),
    h('td', { dataset: { label: 'Measured' } }, measured),
    h('td', { dataset: { label: 'Allowed' } }, target),
    h('td', { dataset: { label: 'Result' } }, c.passed ? h('span', { class: 'pass' }, '✓ pass') : h('span', { class: 'fail' }, '✗ fail')));
}

// failureWords says a structural failure ("lost_data:jobs") in a few words, as a list of
// what failed says it.
export function failureWords(f) {
  const { title, id } = parseFailure(f);
  return `${title[0].toLowerCase()}${title.slice(1)}: broken by ${id}`;
}

function parseFailure(f) {
  const [kind, ...rest] = f.split(':');
  const id = rest.join(' and ') || 'a component';
  const [title, words] = STRUCTURAL[kind] || [kind.replace(/_/g, ' '), () => 'the run fails whatever its numbers'];
  return { kind, id, title, words: words(id) };
}

// renderWhy is the "why it happened" timeline: one entry per failing stretch.
function renderWhy(ev, result, onComponent) {
  const why = whyOf(ev);
  const box = h('div', { class: 'why', id: 'why' }, h('h3', {}, 'Why it happened'));
  if (!why.length) {
    box.append(h('p', {}, ev.passed
      ? `Nothing failed.${ev.busiest ? ` The busiest component was ${ev.busiest}.` : ''}`
      : 'No single component explains the failure: look at the conditions above.'));
    if (ev.warnings?.length) box.append(renderWarnings(ev.warnings));
    return box;
  }
  const ol = h('ol', { class: 'why-list' }, why.map((w) => {
    const comp = result.components.find((c) => c.id === w.component);
    const when = w.end_sec != null ? `${fmt(w.start_sec)}–${fmt(w.end_sec)} s` : `from ${fmt(w.start_sec)} s`;
    return h('li', { class: ['why-item', `cause-${w.cause}`], dataset: { cause: w.cause, component: w.component || '' } },
      h('p', { class: 'why-head' },
        h('span', { class: 'why-when' }, when), ' ',
        w.component ? h('button', { type: 'button', class: 'link', onclick: () => onComponent?.(w.component), title: 'Select it on the canvas' }, w.component) : '',
        comp ? h('span', { class: 'muted' }, ` (${kindLabel(comp.type)})`) : '',
        ' — ', h('strong', {}, CAUSE_WORDS[w.cause] || String(w.cause).replace(/_/g, ' '))),
      w.detail ? h('p', {}, w.detail, /[.!?]$/.test(w.detail) ? '' : '.') : null,
      w.retry_amplification > 1.05 && !/retr/i.test(w.detail || '')
        ? h('p', { class: 'why-retries' }, `Retries multiplied the load by ${fmt(w.retry_amplification)}: for every fresh request, ${fmt(w.retry_amplification)} attempts arrived.`)
        : null,
      w.advice ? h('p', { class: 'why-advice' }, h('strong', {}, 'What to change: '), w.advice, /[.!?]$/.test(w.advice) ? '' : '.') : null);
  }));
  box.append(ol);
  if (ev.warnings?.length) box.append(renderWarnings(ev.warnings));
  if (why.some((w) => w.fallback)) box.append(h('p', { class: 'help' }, 'Use the fix hint for the smallest change that passes.'));
  return box;
}

// renderWarnings lists the parts of a design that change nothing (never a failure).
function renderWarnings(warnings) {
  return h('ul', { class: 'warnings', id: 'warnings' }, warnings.map((w) => h('li', {}, h('strong', {}, 'Changes nothing: '), w.reason, '.')));
}

// renderResilience is each chaos event against the allowance, in words and numbers.
function renderResilience(ev, def) {
  const box = h('div', { class: 'resilience', id: 'resilience' }, h('h3', {}, 'Chaos events'));
  if (!ev.events?.length) {
    box.append(h('p', { id: 'no-chaos' }, 'No chaos in this level.'));
    return box;
  }
  const sched = def.run.chaos || [];
  box.append(h('div', { class: 'table-wrap' }, h('table', { class: 'events', id: 'events' },
    h('caption', {}, 'Each event against the allowance'),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Event'),
      h('th', { scope: 'col' }, 'Errors while it acted'),
      h('th', { scope: 'col' }, 'Back to normal'),
      h('th', { scope: 'col' }, 'Result'))),
    h('tbody', {}, ev.events.map((e) => {
      const s = sched.find((c) => chaosId(c) === e.id);
      const rec = e.recovery_sec == null
        ? `never, within the run (allowed ${fmtSec(e.recovery_deadline_sec)})`
        : e.recovery_sec === 0
          ? `at once (allowed ${fmtSec(e.recovery_deadline_sec)})`
          : `${fmtSec(e.recovery_sec)} after it ended (allowed ${fmtSec(e.recovery_deadline_sec)})`;
      return h('tr', { class: e.passed ? 'ok' : 'bad', dataset: { event: e.id } },
        h('th', { scope: 'row' }, s ? describeChaos(s) : e.id, h('br'),
          h('span', { class: 'muted' }, `${e.id}, ${fmt(e.start_sec)}–${fmt(e.end_sec)} s`)),
        h('td', { class: e.ceiling_held ? '' : 'fail', dataset: { label: 'Errors while it acted' } }, `${fmtPct(e.error_rate)} of requests failed (ceiling ${fmtPct(e.error_ceiling)}) ${e.ceiling_held ? '✓' : '✗'}`),
        h('td', { class: e.recovered ? '' : 'fail', dataset: { label: 'Back to normal' } }, `${rec} ${e.recovered ? '✓' : '✗'}`),
        h('td', { dataset: { label: 'Result' } }, e.passed ? h('span', { class: 'pass' }, '✓ held') : h('span', { class: 'fail' }, '✗ broke')));
    })))));
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
  const fresh = ticks.map((t) => t.fresh_rps ?? t.offered_rps);
  charts.push(new TimeChart(cell(), xs, [
    { label: 'fresh requests', values: fresh, color: PALETTE[0], width: 1.5, fill: 'rgba(0,114,178,0.22)' },
    { label: 'fresh + retries (offered)', values: ticks.map((t) => t.offered_rps), color: PALETTE[4], width: 1.5 },
    { label: 'served', values: ticks.map((t) => t.served_rps), color: PALETTE[2], width: 2 },
    { label: 'failed', values: ticks.map((t) => t.rejected_rps + t.error_rps + t.timed_out_rps), color: PALETTE[1] },
  ], {
    ...common,
    title: 'Load: fresh requests and retries stacked (rps)',
    desc: 'Per tick: fresh requests from the traffic curve, with the clients\u2019 retries stacked on top (together the offered load), then served and failed.',
    bands: [{ series: [2, 1], fill: 'rgba(230,159,0,0.35)' }],
  }));
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
    values: ticks.map((t) => t.components[i].utilization),
    color: PALETTE[i % PALETTE.length],
  })), { ...common, title: 'Utilisation per component', target: HEALTHY_UTILIZATION, targetLabel: `healthy below ${fmtPct(HEALTHY_UTILIZATION, 0)}`, yFmt: (v) => fmtPct(v, 0), yMax: 1.05, desc: 'Each component\u2019s utilisation per tick, up to its true peak, against the healthy limit.' }));
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
      ['t (s)', 'fresh', 'retries', 'offered', 'served', 'rejected', 'errors', 'timed out', 'queued', 'p50 ms', 'p99 ms', 'error rate', '$/h']
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
        h('td', { class: 'num' }, fmt(t.fresh_rps)),
        h('td', { class: 'num' }, fmt(t.retry_rps)),
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
