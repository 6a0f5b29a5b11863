// The studio's server check: a level and an optional reference design are sent to
// POST /v1/challenges/check, which runs every check of publishing and stores nothing. The
// answer is drawn here: the starting design fails (and why), the reference passes (each
// condition with its margin), the level's worst-case run cost against the server's ceiling,
// and the lesson search's warnings.
import { h, fmt, fmtPct, fmtSec, fmtUnit, CONDITION_LABELS } from '../util.js';
import { whyOf } from './results.js';

// resilienceWords says the resilience condition in the level's own terms: its measure is the
// share of the allowance (def.resilience: an error ceiling during each chaos event, a recovery
// deadline after it) that the worst event used.
function resilienceWords(c, ev, def) {
  const n = ev.events?.length || 0;
  if (!n) return { measured: 'no chaos in this level', target: '—' };
  const rule = def?.resilience;
  return {
    measured: `${fmtPct(c.measured, 0)} of the allowance, by the worst of ${n} chaos event${n === 1 ? '' : 's'}`,
    target: rule
      ? `≤ 100%: errors ≤ ${fmtPct(rule.error_ceiling)} during each, recovery ≤ ${fmtSec(rule.recovery_deadline_sec)}`
      : '≤ 100% of the allowance',
  };
}

// conditionTable lists a verdict's conditions: measured, allowed, and the margin left (or
// by how much it failed).
function conditionTable(id, ev, def) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'conditions', id },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Condition'),
      h('th', { scope: 'col', class: 'num' }, 'Measured'),
      h('th', { scope: 'col', class: 'num' }, 'Allowed'),
      h('th', { scope: 'col', class: 'num' }, 'Margin'))),
    h('tbody', {}, (ev.conditions || []).map((c) => {
      const words = c.name === 'resilience' ? resilienceWords(c, ev, def) : { measured: fmtUnit(c.measured, c.unit), target: `≤ ${fmtUnit(c.target, c.unit)}` };
      return h('tr', { class: c.passed ? 'ok' : 'bad', dataset: { condition: c.name } },
        h('th', { scope: 'row', title: c.detail }, CONDITION_LABELS[c.name] || c.name),
        h('td', { class: 'num', dataset: { label: 'Measured' } }, words.measured),
        h('td', { class: 'num', dataset: { label: 'Allowed' } }, words.target),
        h('td', { class: 'num', dataset: { label: 'Margin' } }, c.passed
          ? `${fmtUnit(c.margin, c.unit)} to spare`
          : h('span', { class: 'fail' }, `over by ${fmtUnit(-c.margin, c.unit)}`)));
    }))));
}

// whyItems is the first few stretches of the engine's "why it happened" timeline.
function whyItems(ev) {
  const why = whyOf(ev).slice(0, 3);
  if (!why.length) return null;
  return h('ul', { class: 'why-list' }, why.map((w) => h('li', { class: 'why-item', dataset: { cause: w.cause } },
    h('strong', {}, w.end_sec != null ? `${fmt(w.start_sec)}–${fmt(w.end_sec)} s` : `from ${fmt(w.start_sec)} s`), ' ',
    w.detail || `${w.component}: ${String(w.cause).replace(/_/g, ' ')}`)));
}

function designResult(id, title, check, wantPass, def) {
  const ok = check.passed === wantPass;
  return h('div', { class: 'studio-check-part', id },
    h('p', { class: ['receipt', ok ? 'pass' : 'fail'] },
      h('strong', {}, `${title}: ${check.passed ? 'passes' : 'fails'}`),
      ok ? ` (as it must). ${capital(check.summary)}.` : ` — it must ${wantPass ? 'pass' : 'fail'}. ${capital(check.summary)}.`),
    conditionTable(`${id}-conditions`, check.evaluation, def),
    check.passed ? null : whyItems(check.evaluation),
    h('p', { class: 'help' }, `This run cost ${fmt(check.run_cost)} units of your simulation budget.`));
}

const capital = (s) => (s ? s[0].toUpperCase() + s.slice(1) : '');

// renderLevelCheck draws the server's answer (a LevelCheck) on the level document def, its
// warnings (drawn by the caller, who marks them in the document) under the verdict.
export function renderLevelCheck(res, def, warnings = null) {
  const c = res.cost;
  const share = c.ceiling > 0 ? c.worst_case_cost / c.ceiling : 0;
  return h('div', { class: 'studio-check', id: 'server-check-ok' },
    h('p', { class: ['verdict', res.ready ? 'pass' : 'fail'], id: 'server-check-verdict' },
      h('strong', {}, res.ready ? 'Ready to publish' : 'Not ready'), ' — ',
      res.ready
        ? (res.reference_design ? 'the starting design fails and the reference design passes.' : 'the starting design fails. Add a reference design to check that the level can be won.')
        : 'the reference design must pass.',
      res.warnings?.length ? ` The lesson search warns about ${res.warnings.length === 1 ? 'one thing' : `${res.warnings.length} things`}, below.` : ''),
    warnings,
    designResult('check-start', 'Starting design', res.starting_design, false, def),
    res.reference_design ? designResult('check-reference', 'Reference design', res.reference_design, true, def) : null,
    h('p', { class: 'receipt pass', id: 'check-cost' }, h('strong', {}, 'Cost bound holds'),
      `: the most one run may cost is ${fmt(c.worst_case_cost)} path-ticks (${c.ticks} ticks × its most request paths), ${fmt(share * 100)}% of the server’s ceiling of ${fmt(c.ceiling)}.`));
}
