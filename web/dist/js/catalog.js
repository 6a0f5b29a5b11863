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

const DESIGN_KEYS = new Set(['components', 'edges']);
const COMPONENT_KEYS = new Set(['id', 'type', 'params']);
const EDGE_KEYS = new Set(['from', 'to']);
const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

// designProblems lists every problem of a design against the level at once ({field,
// reason}, paths from the design's root, as the server names them): what the server would
// refuse and the browser can tell without running it — unknown fields, kinds the level does
// not offer, too many of a kind, names, parameters out of the level's ranges or set by the
// level, connections to nothing or that the engine forbids.
export function designProblems(design, catalog, labelOf) {
  const out = [];
  const add = (field, reason) => out.push({ field, reason });
  if (!design || typeof design !== 'object' || Array.isArray(design)) return [{ field: '', reason: 'is not a design (a JSON object with "components" and "edges")' }];
  for (const k of Object.keys(design)) if (!DESIGN_KEYS.has(k)) add(k, 'is not a field of a design');
  if (!Array.isArray(design.components)) add('components', 'must be a list of components');
  if (design.edges !== undefined && !Array.isArray(design.edges)) add('edges', 'must be a list of connections');
  const comps = Array.isArray(design.components) ? design.components : [];
  const seen = new Map();
  const counts = {};
  comps.forEach((c, i) => {
    const path = `components[${i}]`;
    if (!c || typeof c !== 'object' || Array.isArray(c)) {
      add(path, 'must be an object with "id", "type" and "params"');
      return;
    }
    for (const k of Object.keys(c)) if (!COMPONENT_KEYS.has(k)) add(`${path}.${k}`, 'is not a field of a component');
    if (typeof c.id !== 'string' || !ID.test(c.id)) add(`${path}.id`, 'must be a name of letters, digits, ".", "_" or "-", starting with a letter or digit');
    else if (seen.has(c.id)) add(`${path}.id`, `"${c.id}" is also the name of components[${seen.get(c.id)}]`);
    else seen.set(c.id, i);
    const info = catalog.find((k) => k.kind === c.type);
    if (!info) {
      add(`${path}.type`, KIND_ORDER.includes(c.type) ? `this level offers no ${labelOf(c.type).toLowerCase()}` : `"${c.type}" is not a component type`);
      return;
    }
    counts[c.type] = (counts[c.type] || 0) + 1;
    if (counts[c.type] === info.maxCount + 1) add(path, `this level allows at most ${info.maxCount} ${labelOf(c.type).toLowerCase()}${info.maxCount === 1 ? '' : 's'}`);
    if (c.params === undefined) return;
    if (!c.params || typeof c.params !== 'object' || Array.isArray(c.params)) {
      add(`${path}.params`, 'must be an object');
      return;
    }
    for (const [name, v] of Object.entries(c.params)) {
      const p = info.params.find((q) => q.name === name);
      const at = `${path}.params.${name}`;
      const add = (field, reason) => out.push({ field, reason: `${humanize(name).toLowerCase()}: ${reason}` });
      if (!p) add(at, `is not a parameter of ${article(labelOf(c.type).toLowerCase())}`);
      else if (!p.knob) {
        if (v !== p.default) add(at, 'is set by the level');
      } else if (p.type === 'enum') {
        if (!p.enum.includes(v)) add(at, `this level offers ${p.enum.filter(Boolean).join(', ')}`);
      } else if (p.type === 'boolean') {
        if (typeof v !== 'boolean') add(at, 'must be true or false');
      } else {
        const r = typeof v === 'number' ? rangeProblem(p, v) : 'must be a number';
        if (r) add(at, r);
      }
    }
  });
  const edges = Array.isArray(design.edges) ? design.edges : [];
  edges.forEach((e, i) => {
    const path = `edges[${i}]`;
    if (!e || typeof e !== 'object' || Array.isArray(e)) {
      add(path, 'must be an object with "from" and "to"');
      return;
    }
    for (const k of Object.keys(e)) if (!EDGE_KEYS.has(k)) add(`${path}.${k}`, 'is not a field of a connection');
    for (const end of ['from', 'to']) if (!seen.has(e[end])) add(`${path}.${end}`, `"${e[end]}" is not a component of the design`);
    if (seen.has(e.from) && seen.has(e.to)) {
      const earlier = { components: comps, edges: edges.slice(0, i) };
      const problem = connectProblem(earlier, e.from, e.to, labelOf);
      if (problem) add(path, problem);
    }
  });
  return out;
}
