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
