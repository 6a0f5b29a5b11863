// Prices and capacities before any run: what an instance type costs and what it buys, and
// an estimate of a design's cost per hour while it is edited. It reads the price list the
// level response carries and mirrors the engine's cost rule (internal/sim/metrics.go,
// costPerHour): units × price per hour, plus per-request and per-worker charges, plus a
// balancer's health-check probes (one per backend per interval, at any load). Fixed
// charges are exact; per-request charges depend on traffic the editor cannot know, so they
// are estimated at the level's mean offered load as if every request passed through, and
// bounded above at its peak attempts (retries included) with every function execution as
// long as max_execution_ms allows — the range the server's CostEstimate gives
// (internal/challenges/price.go), which holds every campaign design's measured cost.
import { fmt, fmtMoney } from './util.js';
import { valueOf } from './catalog.js';

// fnFullCoreMB: a function gets a full core at this much memory (internal/sim/model.go).
const FN_FULL_CORE_MB = 1769;

const param = (info, comp, name) => {
  const p = info?.params.find((q) => q.name === name);
  return p ? Number(valueOf(comp, p)) : undefined;
};

// typeOf is the instance type a component uses: its own, else the kind's default.
export function typeOf(info, comp) {
  const name = comp.params?.instance_type || info?.defaultType || '';
  return { name, it: info?.prices?.[name] || null };
}

// perHour formats a price per hour with enough digits to tell small prices apart.
export function perHour(x) {
  return `${fmtMoney(x)}/h`;
}

// buys says in words what one unit of an instance type buys for a kind, with the design's
// current parameters where capacity depends on them (workers × speed ÷ service time).
export function buys(info, comp, typeName) {
  const it = info?.prices?.[typeName];
  if (!it) return '';
  const speed = it.speed || 1;
  const rps = (workers, ms) => (ms > 0 ? workers * 1000 * speed / ms : 0);
  switch (info.kind) {
    case 'app_service':
    case 'container_pool': {
      const c = param(info, comp, 'concurrency') ?? 6;
      const ms = param(info, comp, 'service_time_ms') ?? 15;
      // A worker is held while its synchronous calls are answered (the engine's rule), so a
      // replica that calls others serves fewer requests than its service time alone allows.
      return `${fmt(c)} workers per replica at ${fmt(speed)}× speed: ≈ ${fmt(rps(c, ms))} rps per replica at ${fmt(ms / speed)} ms a request, fewer while its workers wait on the components it calls`;
    }
    case 'database': {
      const c = param(info, comp, 'connections') ?? 10;
      const ms = param(info, comp, 'query_time_ms') ?? 8;
      return `${fmt(c)} connections per node at ${fmt(speed)}× speed: ≈ ${fmt(rps(c, ms))} queries/s per node at ${fmt(ms / speed)} ms a query`;
    }
    case 'cache':
      return `${fmt(it.memory_gb || 0)} GB of memory and ${fmt(it.capacity_rps || 0)} rps per node`;
    case 'load_balancer':
    case 'api_gateway':
      return `${fmt(it.capacity_rps || 0)} rps per instance`;
    case 'cdn':
      return `${fmt(it.capacity_rps || 0)} rps at the edge`;
    case 'queue':
      return `a broker of ${fmt(it.capacity_rps || 0)} messages/s; consumers priced per worker`;
    case 'serverless':
      return 'pay per use: per invocation and per GB-second of execution';
    default:
      return '';
  }
}

// priceWords lists an instance type's charges: "$0.055/h per replica + $0.02 per million".
export function priceWords(kind, it) {
  if (!it) return 'not priced';
  const unit = {
    app_service: 'replica', container_pool: 'replica', database: 'node', cache: 'node',
    load_balancer: 'instance', api_gateway: 'instance', queue: 'broker', cdn: 'edge',
  }[kind] || 'unit';
  const parts = [];
  if (it.price_per_hour) parts.push(`${perHour(it.price_per_hour)} per ${unit}`);
  if (it.price_per_worker_hour) parts.push(`${perHour(it.price_per_worker_hour)} per consumer`);
  if (it.price_per_million) parts.push(`${fmtMoney(it.price_per_million)} per million requests`);
  if (it.price_per_gb_second) parts.push(`$${it.price_per_gb_second} per GB-second`);
  if (it.price_per_million_probes) parts.push(`${fmtMoney(it.price_per_million_probes)} per million health-check probes`);
  return parts.join(' + ') || 'free';
}

// componentCost estimates one component: {fixed, fixedMax, perUse, perUseMax, units, probes},
// in $/h. fixed is what it costs idle (fixedMax: when an autoscaler is at its ceiling),
// health checks included; perUse the per-request charges at rps requests per second,
// perUseMax at peak attempts a second with every function execution at its longest. probes
// is a balancer's health checks, {backends, everySec, perHour (probes), cost ($/h)}, or null:
// backends is how many components it calls, and its checks probe each.
export function componentCost(info, comp, rps, peak = rps, backends = 0) {
  const { it } = typeOf(info, comp);
  const out = { fixed: 0, fixedMax: 0, perUse: 0, perUseMax: 0, units: 0, probes: null };
  if (!it) return out;
  const pph = it.price_per_hour || 0;
  let units = 1;
  let unitsMax = null;
  switch (info.kind) {
    case 'load_balancer':
    case 'api_gateway':
      units = param(info, comp, 'instances') ?? 1;
      break;
    case 'app_service':
      units = param(info, comp, 'replicas') ?? 1;
      break;
    case 'container_pool':
      units = param(info, comp, 'min_replicas') ?? 2;
      unitsMax = param(info, comp, 'max_replicas') ?? 10;
      break;
    case 'database':
      units = 1 + (param(info, comp, 'read_replicas') ?? 0);
      break;
    case 'cache': {
      const mem = param(info, comp, 'memory_gb') || it.memory_gb || 0;
      units = it.memory_gb > 0 ? Math.ceil(mem / it.memory_gb - 1e-9) : 1;
      break;
    }
    case 'serverless':
      units = 0;
      break;
    default:
      units = 1;
  }
  out.units = units;
  out.fixed = units * pph;
  const rit = info.kind === 'database' && comp.params?.replica_instance_type ? info.prices?.[comp.params.replica_instance_type] : null;
  if (rit) out.fixed += (units - 1) * ((rit.price_per_hour || 0) - pph); // replicas at their own type's price
  if (info.kind === 'queue') out.fixed += (param(info, comp, 'workers') ?? 4) * (it.price_per_worker_hour || 0);
  if (info.kind === 'load_balancer' && param(info, comp, 'health_checks')) {
    // A probe of each backend every interval (sim.ProbeCostPerHour).
    const every = param(info, comp, 'health_check_interval_sec') ?? 5;
    if (every > 0) {
      const perHour = backends * 3600 / every;
      out.probes = { backends, everySec: every, perHour, cost: perHour * (it.price_per_million_probes || 0) / 1e6 };
      out.fixed += out.probes.cost;
    }
  }
  out.fixedMax = unitsMax != null ? Math.max(units, unitsMax) * pph : out.fixed;
  out.perUse = rps * 3600 / 1e6 * (it.price_per_million || 0);
  out.perUseMax = peak * 3600 / 1e6 * (it.price_per_million || 0);
  if (info.kind === 'serverless') {
    const mb = param(info, comp, 'memory_mb') ?? 1024;
    const ms = param(info, comp, 'service_time_ms') ?? 20;
    const memSpeed = Math.min(mb, FN_FULL_CORE_MB) / 1024;
    const busy = rps * (ms / 1000 / (it.speed || 1) / memSpeed);
    out.perUse += busy * (mb / 1024) * 3600 * (it.price_per_gb_second || 0);
    // An execution waits on what it calls too, up to max_execution_ms.
    const longest = (param(info, comp, 'max_execution_ms') ?? 30000) / 1000;
    out.perUseMax += peak * longest * (mb / 1024) * 3600 * (it.price_per_gb_second || 0);
  }
  return out;
}

// designCost estimates a design: {fixed, fixedMax, perUse, low, high, rps, parts}.
// low is the fixed part; high adds the autoscaler ceilings and the per-request charges at
// peak attempts a second (default: rps).
export function designCost(catalog, design, rps, peak = rps) {
  const parts = [];
  let fixed = 0;
  let fixedMax = 0;
  let perUse = 0;
  let perUseMax = 0;
  const callees = new Map();
  for (const e of design.edges || []) callees.set(e.from, (callees.get(e.from) || 0) + 1);
  for (const c of design.components || []) {
    const info = catalog.find((k) => k.kind === c.type);
    if (!info) continue;
    const cc = componentCost(info, c, rps, peak, callees.get(c.id) || 0);
    parts.push({ id: c.id, ...cc });
    fixed += cc.fixed;
    fixedMax += cc.fixedMax;
    perUse += cc.perUse;
    perUseMax += cc.perUseMax;
  }
  return { fixed, fixedMax, perUse, low: fixed, high: fixedMax + perUseMax, rps, peak, parts };
}

// meanRate is the level's mean offered load over its run (fresh requests, before retries).
export function meanRate(xs, values) {
  if (values.length < 2) return values[0] || 0;
  let area = 0;
  for (let i = 1; i < values.length; i++) area += (xs[i] - xs[i - 1]) * (values[i] + values[i - 1]) / 2;
  const span = xs[xs.length - 1] - xs[0];
  return span > 0 ? area / span : values[0];
}
