// Words for what a level and a design say in numbers: how the clients behave, what a box
// on the canvas holds before any run, and the engine's type names in a problem.
import { fmt, fmtMs, fmtPct, kindLabel } from './util.js';
import { rangeProblem, valueOf } from './catalog.js';
import { typeOf } from './cost.js';

// clientWords says how the level's clients behave: timeout, retries, backoff, budget.
export function clientWords(cl) {
  const timeout = cl.timeout_ms ? `give up on a request after ${fmtMs(cl.timeout_ms)}` : 'wait for as long as it takes';
  const n = cl.max_retries || 0;
  let retries = n ? `retry a failed or timed-out request up to ${n} time${n === 1 ? '' : 's'}` : 'never retry';
  if (n) {
    retries += cl.backoff_ms
      ? `, first after ${fmtMs(cl.backoff_ms)}${cl.backoff_multiplier && cl.backoff_multiplier !== 1 ? `, each later retry ${fmt(cl.backoff_multiplier)}× longer` : ''}`
      : ', immediately (no backoff)';
    retries += cl.retry_budget ? `, with retries capped at ${fmtPct(cl.retry_budget)} of fresh requests (retry budget)` : ', with no retry budget';
  }
  return `Clients ${timeout} and ${retries}.`;
}

// idleSummary is what a box says before any run, short enough for its box: its size and
// instance type ("3 × app.small"). A value the level refuses shows as "?", as the field
// refuses it.
export function idleSummary(c, catalog) {
  const info = catalog.find((k) => k.kind === c.type);
  const v = (name, dflt) => {
    const p = info?.params.find((q) => q.name === name);
    if (!p) return fmt(dflt);
    return rangeProblem(p, valueOf(c, p)) ? '?' : fmt(valueOf(c, p));
  };
  const { name } = typeOf(info, c);
  switch (c.type) {
    case 'app_service': return `${v('replicas', 1)} × ${name}`;
    case 'container_pool': return `${v('min_replicas', 2)}–${v('max_replicas', 10)} × ${name}`;
    case 'database': {
      const r = v('read_replicas', 0);
      return r === '0' ? name : `${name} + ${r} read`;
    }
    case 'queue': return `${v('workers', 4)} workers`;
    case 'load_balancer':
    case 'api_gateway': return `${v('instances', 1)} × ${name}`;
    case 'serverless': return `≤ ${v('max_concurrency', 1000)} at once`;
    default: return name || kindLabel(c.type);
  }
}

// plainReason rewrites the engine's type names in a problem into words.
export function plainReason(r) {
  return String(r).replace(/\ba (load_balancer|api_gateway|app_service|container_pool|serverless|cache|cdn|database|queue)\b/g,
    (m, k) => { const w = kindLabel(k).toLowerCase(); return /^[aeiou]/.test(w) ? `an ${w}` : `a ${w}`; });
}

