// What a level lets the player build: per offered component kind, its count limit,
// instance types and every parameter with the range the level allows. It reads the level
// response: the level document (catalog rules), the engine's parameter specs (params), the
// parameters a player may set (knobs) and the price list.

export const KIND_ORDER = [
  'load_balancer', 'api_gateway', 'app_service', 'container_pool', 'serverless',
  'cache', 'cdn', 'database', 'queue',
];

// catalogOf turns a level response into [{kind, maxCount, instanceTypes, defaultType,
// params: [{name, type, min, max, default, enum, doc, knob, fixed, value}]}].
// A parameter is a knob when the player may set it; the others show the level's value.
export function catalogOf(challenge) {
  const def = challenge.definition || {};
  const offered = def.catalog?.components || {};
  const prices = challenge.price_list || {};
  const kinds = Object.keys(offered).sort((a, b) => KIND_ORDER.indexOf(a) - KIND_ORDER.indexOf(b));
  return kinds.map((kind) => {
    const rules = offered[kind] || {};
    const specs = challenge.params?.[kind] || [];
    const knobs = challenge.knobs?.[kind] || [];
    const fixed = rules.fixed || {};
    const limits = rules.limits || {};
    let types = rules.instance_types?.length
      ? rules.instance_types.slice()
      : Object.keys(prices).filter((n) => prices[n].kind === kind).sort();
    types = types.filter((n) => !prices[n] || prices[n].kind === kind);
    const defaultType = types.find((n) => prices[n]?.default) || types[0] || '';
    const params = specs.map((s) => {
      const numeric = s.type === 'number' || s.type === 'integer';
      const zero = numeric ? 0 : s.type === 'boolean' ? false : '';
      const p = {
        name: s.name,
        type: s.type,
        doc: s.doc || '',
        enum: s.enum,
        default: s.default ?? zero,
        min: numeric ? (s.min ?? 0) : undefined,
        max: numeric ? (s.max ?? 0) : undefined,
      };
      if (numeric && limits[s.name]) {
        if (limits[s.name].min != null) p.min = Math.max(p.min, limits[s.name].min);
        if (limits[s.name].max != null) p.max = Math.min(p.max, limits[s.name].max);
      }
      p.knob = knobs.includes(s.name) && !(s.name in fixed);
      if (numeric && p.min === p.max && p.default === p.min) {
        // A range of one value, which is the default, is no choice: the level sets it.
        p.knob = false;
      }
      if (s.name in fixed) p.default = fixed[s.name];
      if (s.name === 'instance_type') {
        p.type = 'enum';
        p.enum = types;
        p.default = defaultType;
        p.knob = types.length > 1 && p.knob;
      }
      if (s.name === 'replica_instance_type') {
        // Empty: the read replicas are of the primary's type.
        p.type = 'enum';
        p.enum = ['', ...types];
        p.default = '';
        p.knob = types.length > 1 && p.knob;
      }
      return p;
    });
    return { kind, maxCount: rules.max_count ?? 1, instanceTypes: types, defaultType, params, prices };
  });
}

// valueOf is a component's value of a parameter: its own, else the level's or the default.
export function valueOf(comp, p) {
  const v = comp.params?.[p.name];
  return v === undefined || v === null ? p.default : v;
}

// humanize turns a parameter name into a label: "queue_per_replica" -> "Queue per replica".
export function humanize(name) {
  const words = name.split('_');
  const units = { ms: '(ms)', sec: '(s)', rps: '(rps)', gb: '(GB)', mb: '(MB)' };
  const last = words[words.length - 1];
  let unit = '';
  if (units[last] && words.length > 1) {
    words.pop();
    unit = ` ${units[last]}`;
  }
  const s = words.join(' ');
  return s.charAt(0).toUpperCase() + s.slice(1) + unit;
}

// CALLEES mirrors the engine's rule of what each kind may call (internal/sim/validate.go,
// calleeKinds), so that the editor refuses a connection before the server has to.
const COMPUTE = ['load_balancer', 'api_gateway', 'app_service', 'container_pool', 'serverless', 'cache', 'database', 'queue'];
export const CALLEES = {
  load_balancer: ['api_gateway', 'app_service', 'container_pool', 'serverless', 'load_balancer'],
  api_gateway: ['load_balancer', 'app_service', 'container_pool', 'serverless'],
  cdn: ['load_balancer', 'api_gateway', 'app_service', 'container_pool', 'serverless'],
  app_service: COMPUTE,
  container_pool: COMPUTE,
  serverless: COMPUTE,
  cache: [],
  database: ['database'],
  queue: ['database'],
};

const article = (s) => (/^[aeiou]/i.test(s) ? `an ${s}` : `a ${s}`);

// connectProblem says why from may not call to in design ('' when it may).
export function connectProblem(design, from, to, labelOf) {
  const a = design.components.find((c) => c.id === from);
  const b = design.components.find((c) => c.id === to);
  if (!a || !b) return 'Pick two components of the design.';
  if (from === to) return 'A component cannot call itself.';
  if (design.edges.some((e) => e.from === from && e.to === to)) return `${from} already calls ${to}.`;
  const ok = CALLEES[a.type];
  if (ok && !ok.includes(b.type)) {
    const la = labelOf(a.type).toLowerCase();
    const lb = labelOf(b.type).toLowerCase();
    if (!ok.length) return `${capital(article(la))} calls nothing: connect the components that use it to it instead.`;
    return `${capital(article(la))} cannot call ${article(lb)}; it can call ${ok.map((k) => labelOf(k).toLowerCase()).filter((v, i, s) => s.indexOf(v) === i).join(', ')}.`;
  }
  return '';
}

const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);

// rangeProblem checks a numeric value against the level's own range ('' when it fits).
export function rangeProblem(p, v) {
  if (p.type !== 'integer' && p.type !== 'number') return '';
  if (v === '' || v === undefined || v === null) return `enter a number from ${p.min.toLocaleString('en')} to ${p.max.toLocaleString('en')}`;
  const n = Number(v);
  if (!Number.isFinite(n)) return 'must be a number';
  if (p.type === 'integer' && !Number.isInteger(n)) return 'must be a whole number';
  if (n < p.min || n > p.max) return `this level allows ${p.min.toLocaleString('en')} to ${p.max.toLocaleString('en')}`;
  return '';
}
