// The side panel of the design: the selected component's knobs (within the level's limits,
// with each instance type's price and what it buys), its connections with a "connect to"
// choice, and delete; or the selected connection. Every component is also a button here,
// so that everything the canvas does can be done from the keyboard. The panel owns no state
// beyond the form: every change goes out through the callbacks, and errors from the server
// are shown next to the field whose JSON path they name.
import { h, clear, kindLabel, uid, fmt } from './util.js';
import { valueOf, humanize, connectProblem, rangeProblem } from './catalog.js';
import { buys, priceWords, typeOf } from './cost.js';
import { partWords, componentEstimate, probeWords } from './estimate.js';
import { entries } from './layout.js';

// CALLEES_NONE: kinds that answer calls and make none.
const CALLEES_NONE = new Set(['cache']);

export class Editor {
  // opts: catalog; rps (the level's mean load, for per-request prices); callbacks
  // onChange(design, {structural}), onSelect(id|null), onConnect(from, to), onDelete(id),
  // onDisconnect(from, to).
  constructor(container, opts) {
    this.el = container;
    this.opts = opts;
    this.catalog = opts.catalog;
    this.design = { components: [], edges: [] };
    this.selected = null;
    this.selectedEdge = null;
    this.serverErrors = [];
    this.blank = new Set(); // paths of numeric fields left empty
  }

  kindInfo(kind) {
    return this.catalog.find((k) => k.kind === kind);
  }

  setDesign(design) {
    this.design = design;
    if (this.selected && !design.components.some((c) => c.id === this.selected)) this.selected = null;
    if (this.selectedEdge && !design.edges.some((e) => e.from === this.selectedEdge.from && e.to === this.selectedEdge.to)) this.selectedEdge = null;
    this.render();
  }

  select(id, { edge } = {}) {
    this.selected = id || null;
    this.selectedEdge = edge || null;
    this.render();
  }

  // refreshCost says what the selected component costs, from the estimate's own sum (so the
  // panel and the estimate never disagree), after every edit.
  refreshCost() {
    if (!this.costLine) return;
    const { el, comp: c, info } = this.costLine;
    const part = componentEstimate(this.opts.catalog, this.design, c.id, this.opts.rps || 0);
    const { name: typeName, it } = typeOf(info, c);
    const probes = probeWords(part, it?.price_per_million_probes);
    clear(el, part ? h('strong', {}, partWords(part)) : '', part?.perUse > 0.0005 ? ` at ${fmt(this.opts.rps)} rps` : '',
      ` · ${typeName}: ${priceWords(c.type, info.prices[typeName])}`,
      probes ? h('span', { class: 'comp-probes' }, ` · ${probes}`) : '');
  }

  changed() {
    this.refreshCost();
    this.opts.onChange?.(this.design, { structural: false });
  }

  render() {
    const d = this.design;
    this.general = h('div', { class: 'form-errors', role: 'alert' });
    const chips = h('ul', { class: 'comp-chips', 'aria-label': 'Components of the design' },
      d.components.map((c) => h('li', {}, h('button', {
        type: 'button', class: ['chip', c.id === this.selected && 'on'], 'aria-pressed': c.id === this.selected ? 'true' : 'false',
        dataset: { select: c.id }, onclick: () => this.opts.onSelect?.(c.id),
      }, c.id, h('span', { class: 'chip-kind' }, ` ${kindLabel(c.type)}`)))));
    let body;
    const i = d.components.findIndex((c) => c.id === this.selected);
    if (i >= 0) body = this.renderComponent(d.components[i], i);
    else if (this.selectedEdge) body = this.renderEdge(this.selectedEdge);
    else {
      body = h('p', { class: 'muted' }, d.components.length
        ? 'Select a component on the canvas, or its button above, to edit it.'
        : 'Add components from the palette.');
    }
    clear(this.el, this.general, d.components.length ? chips : null, body);
    this.placeErrors();
  }

  renderEdge(e) {
    const j = this.design.edges.findIndex((x) => x.from === e.from && x.to === e.to);
    return h('div', { class: 'edge-panel', dataset: { path: `edges[${j}]` } },
      h('h3', {}, `Connection ${e.from} → ${e.to}`),
      h('p', { class: 'help' }, `${e.from} sends requests to ${e.to} and waits for its answer${this.typeOf(e.to) === 'queue' ? ' (a queue answers at once: the work is done later)' : ''}.`),
      h('button', { type: 'button', class: 'danger', id: 'remove-edge', onclick: () => this.opts.onDisconnect?.(e.from, e.to) }, 'Remove connection'));
  }

  typeOf(id) {
    return this.design.components.find((c) => c.id === id)?.type;
  }

  renderComponent(c, i) {
    const info = this.kindInfo(c.type);
    const path = `components[${i}]`;
    const idInput = h('input', {
      id: uid('cid'), type: 'text', value: c.id, required: true, maxlength: 64, spellcheck: 'false',
      autocomplete: 'off', dataset: { path: `${path}.id` },
    });
    idInput.addEventListener('change', () => this.rename(i, idInput));
    const fields = [field(idInput, 'Name', `${path}.id`)];
    const fixed = [];
    // The instance type first: it decides the price and what the other numbers buy.
    const params = [...(info?.params || [])].sort((a, b) => (b.name === 'instance_type') - (a.name === 'instance_type'));
    for (const p of params) {
      if (p.knob) fields.push(this.paramField(c, i, p, info));
      else fixed.push(p);
    }
    const costLine = info ? h('p', { class: 'comp-cost', id: 'comp-cost' }) : null;
    this.costLine = costLine && { el: costLine, comp: c, info };
    this.refreshCost();
    const fs = h('fieldset', { class: 'comp', dataset: { path, id: c.id }, id: `comp-${cssId(c.id)}` },
      h('legend', {}, h('span', { class: 'comp-id' }, c.id), ' ', h('span', { class: 'comp-kind' }, kindLabel(c.type))),
      costLine,
      h('div', { class: 'fields' }, fields),
      fixed.length
        ? h('details', { class: 'fixed', open: true },
          h('summary', {}, 'Set by the level'),
          h('dl', {}, fixed.map((p) => [h('dt', { title: p.doc }, humanize(p.name)), h('dd', {}, fixedValue(c, p, info))])))
        : null,
      this.renderConnections(c),
      h('div', { class: 'toolbar' },
        h('button', { type: 'button', class: 'danger', id: 'delete-comp', 'aria-label': `Delete ${c.id}`, onclick: () => this.opts.onDelete?.(c.id) }, `Delete ${c.id}`),
        h('span', { class: 'help' }, 'or press Delete on the canvas')),
    );
    if (!info) fs.append(h('p', { class: 'field-error' }, `This level does not offer ${kindLabel(c.type)}.`));
    return fs;
  }

  renderConnections(c) {
    const d = this.design;
    const out = d.edges.map((e, j) => ({ e, j })).filter(({ e }) => e.from === c.id || e.to === c.id);
    const list = out.length
      ? h('ul', { class: 'edge-list' }, out.map(({ e, j }) => h('li', { dataset: { path: `edges[${j}]` } },
        h('span', { class: 'edge-text' }, e.from, ' → ', e.to),
        h('button', { type: 'button', class: 'link danger', 'aria-label': `Remove connection ${e.from} to ${e.to}`, onclick: () => this.opts.onDisconnect?.(e.from, e.to) }, 'Remove'))))
      : h('p', { class: 'muted' }, `${c.id} is not connected yet${d.edges.some((e) => e.to === c.id) ? '' : entries(d).includes(c.id) ? ': nobody calls it, so users send it their requests' : ': nobody calls it, so no request reaches it (users call only entry points such as balancers and app servers)'}.`);
    const others = d.components.filter((o) => o.id !== c.id);
    const label = (k) => kindLabel(k);
    const allowed = others.filter((o) => !connectProblem(d, c.id, o.id, label));
    const sel = h('select', { id: uid('connect'), 'aria-label': `Connect ${c.id} to`, dataset: { connectFrom: c.id } },
      allowed.map((o) => h('option', { value: o.id }, `${o.id} (${kindLabel(o.type)})`)));
    const msg = h('p', { class: 'field-error', hidden: true, role: 'alert' });
    const btn = h('button', { type: 'button', class: 'secondary', id: 'connect-btn' }, 'Connect');
    btn.addEventListener('click', () => {
      const problem = connectProblem(d, c.id, sel.value, label);
      msg.hidden = !problem;
      msg.textContent = problem;
      if (!problem) this.opts.onConnect?.(c.id, sel.value);
    });
    let connectRow = null;
    if (allowed.length) connectRow = h('div', { class: 'add-row' }, h('label', { for: sel.id }, `${c.id} calls`), sel, btn);
    else if (others.length) {
      connectRow = h('p', { class: 'help' }, `${c.id} ${d.edges.some((e) => e.from === c.id) ? 'already calls everything it may call here' : 'may call none of the other components'}${CALLEES_NONE.has(c.type) ? ' (it answers calls but makes none)' : ''}.`);
    }
    return h('div', { class: 'connections' },
      h('h4', {}, 'Connections'),
      list,
      connectRow,
      msg);
  }

  paramField(c, i, p, info) {
    const path = `components[${i}].params.${p.name}`;
    const v = valueOf(c, p);
    const id = uid('p');
    let input;
    const set = (val) => {
      c.params ||= {};
      if (val === undefined) delete c.params[p.name];
      else c.params[p.name] = val;
      if (!Object.keys(c.params).length) delete c.params;
      this.changed();
    };
    let extra = '';
    if (p.type === 'boolean') {
      input = h('input', { id, type: 'checkbox', checked: Boolean(v), dataset: { path } });
      input.addEventListener('change', () => set(input.checked));
    } else if (p.name === 'instance_type' || p.name === 'replica_instance_type') {
      input = h('select', { id, dataset: { path } }, (p.enum || []).map((o) => h('option', { value: o, selected: o === v },
        o ? `${o} — ${priceWords(c.type, info.prices[o])}` : 'same as the primary')));
      input.addEventListener('change', () => {
        set(input.value || undefined);
        this.render();
      });
      extra = v ? buys(info, c, v) : '';
    } else if (p.type === 'enum') {
      input = h('select', { id, dataset: { path } }, (p.enum || []).map((o) => h('option', { value: o, selected: o === v }, o)));
      input.addEventListener('change', () => set(input.value));
    } else if (p.type === 'integer' || p.type === 'number') {
      const blank = this.blank.has(path);
      input = h('input', {
        id, type: 'number', inputmode: p.type === 'integer' ? 'numeric' : 'decimal',
        min: p.min, max: p.max, step: p.type === 'integer' ? 1 : 'any', value: blank ? '' : String(v), dataset: { path },
      });
      input.addEventListener('input', () => {
        const raw = input.value.trim();
        if (raw === '') this.blank.add(path);
        else this.blank.delete(path);
        setFieldError(input, rangeProblem(p, raw));
        const n = Number(raw);
        if (raw === '') set(undefined);
        else if (Number.isFinite(n)) set(n);
      });
      input.addEventListener('change', () => this.opts.onCommit?.());
      if (blank) queueMicrotask(() => setFieldError(input, rangeProblem(p, '')));
      else if (rangeProblem(p, v)) queueMicrotask(() => setFieldError(input, rangeProblem(p, v)));
    } else {
      input = h('input', { id, type: 'text', value: String(v ?? ''), dataset: { path } });
      input.addEventListener('change', () => set(input.value || undefined));
    }
    const range = p.type === 'integer' || p.type === 'number' ? `${p.min.toLocaleString('en')}–${p.max.toLocaleString('en')}` : '';
    const doc = sentence(p.doc).toLowerCase() === `${humanize(p.name).toLowerCase()}.` ? '' : sentence(p.doc);
    const help = p.name === 'instance_type' || (p.name === 'replica_instance_type' && extra)
      ? `Buys: ${extra}${p.name === 'replica_instance_type' ? ' for each read replica' : ''}.`
      : p.name === 'replica_instance_type'
        ? 'Read replicas of the primary\u2019s type (choose one only when the design has read replicas).'
      : [doc, range && `This level allows ${range}.`].filter(Boolean).join(' ');
    return field(input, humanize(p.name), path, help);
  }

  // clientProblems lists what the server would refuse that the form already knows:
  // values outside the level's ranges and numeric fields left empty ({field, reason}).
  clientProblems() {
    const out = [];
    this.design.components.forEach((c, i) => {
      const info = this.kindInfo(c.type);
      for (const p of info?.params || []) {
        if (!p.knob) continue;
        const path = `components[${i}].params.${p.name}`;
        const reason = this.blank.has(path) ? rangeProblem(p, '') : rangeProblem(p, valueOf(c, p));
        if (reason) out.push({ field: path, reason: `${c.id}: ${humanize(p.name).toLowerCase()}: ${reason}` });
      }
      if (c.type === 'database' && c.params?.replica_instance_type && !(Number(c.params.read_replicas) > 0)) {
        out.push({ field: `components[${i}].params.replica_instance_type`, reason: `${c.id}: a replica instance type needs read replicas: add some, or choose “same as the primary”` });
      }
    });
    return out;
  }

  // showLocal selects the component of the first of clientProblems' findings; its fields
  // show their own messages.
  showLocal(problems) {
    this.serverErrors = [];
    const m = /^components\[(\d+)\]/.exec(problems[0]?.field || '');
    const first = m ? this.design.components[Number(m[1])] : null;
    if (first && first.id !== this.selected) this.opts.onSelect?.(first.id);
    else this.render();
    queueMicrotask(() => this.el.querySelector('[aria-invalid="true"]')?.focus());
  }

  forgetBlank(prefix) {
    for (const p of [...this.blank]) if (!prefix || p.startsWith(prefix)) this.blank.delete(p);
  }

  rename(i, input) {
    const c = this.design.components[i];
    const next = input.value.trim();
    if (!next) {
      setFieldError(input, 'is required');
      return;
    }
    if (this.design.components.some((o, k) => k !== i && o.id === next)) {
      setFieldError(input, `"${next}" is already the name of another component`);
      return;
    }
    this.opts.onRename?.(c.id, next);
  }

  // showErrors keeps {field, reason} (paths relative to the design), selects the component
  // of the first, and places each next to its field when that field is on screen; the
  // others are listed above the panel with a button that shows them.
  showErrors(fields) {
    this.serverErrors = fields;
    const m = /^components\[(\d+)\]/.exec(fields[0]?.field || '');
    const first = m ? this.design.components[Number(m[1])] : null;
    if (first && first.id !== this.selected) this.opts.onSelect?.(first.id);
    else this.render();
    this.el.querySelector('[aria-invalid="true"]')?.focus();
  }

  clearErrors() {
    this.serverErrors = [];
    this.render();
  }

  placeErrors() {
    const loose = [];
    for (const f of this.serverErrors) {
      const target = this.findPath(f.field);
      if (target) addFieldError(target, f.reason, f.field);
      else loose.push(f);
    }
    if (!loose.length) return;
    clear(this.general, h('p', {}, 'The design has problems:'),
      h('ul', {}, loose.map((f) => {
        const m = /^components\[(\d+)\]/.exec(f.field || '');
        const comp = m ? this.design.components[Number(m[1])] : null;
        return h('li', {},
          comp ? h('button', { type: 'button', class: 'link', onclick: () => this.opts.onSelect?.(comp.id) }, comp.id) : (f.field ? h('code', {}, f.field) : ''),
          comp || f.field ? ': ' : '', f.reason);
      })));
  }

  // findPath finds the input (or fieldset, or edge row) for a JSON path, walking up to the
  // closest enclosing element that exists.
  findPath(path) {
    for (let p = path; p; p = parentPath(p)) {
      const el = this.el.querySelector(`[data-path="${CSS.escape(p)}"]`);
      if (el) return el;
    }
    return null;
  }
}

// fixedValue is a parameter the level sets, in words: the cache's memory comes from its
// instance type when the design sets none.
function fixedValue(c, p, info) {
  const v = valueOf(c, p);
  if (p.name === 'memory_gb' && !v) {
    const { name, it } = typeOf(info, c);
    return it?.memory_gb ? `${fmt(it.memory_gb)} GB (${name}'s memory)` : String(v);
  }
  if (p.name === 'replica_instance_type' && !v) return 'same as the primary';
  if (p.name === 'instance_type') return `${v || info.defaultType} — ${priceWords(c.type, info.prices[v || info.defaultType])}`;
  if (typeof v === 'number') return `${fmt(v)}${unitOf(p.name)}`;
  return String(v);
}

function unitOf(name) {
  if (name.endsWith('_ms')) return ' ms';
  if (name.endsWith('_sec')) return ' s';
  if (name.endsWith('_gb')) return ' GB';
  if (name.endsWith('_mb')) return ' MB';
  if (name.endsWith('_rps')) return ' rps';
  return '';
}

function sentence(s) {
  if (!s) return '';
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

function parentPath(p) {
  const i = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
  return i > 0 ? p.slice(0, i) : '';
}

function cssId(id) {
  return id.replace(/[^a-zA-Z0-9_-]/g, '_');
}

// field wraps an input with its label, help text and an error slot.
function field(input, label, path, help) {
  const helpId = help ? uid('help') : '';
  if (helpId) {
    input.setAttribute('aria-describedby', helpId);
    input.dataset.help = helpId;
  }
  const isCheck = input.type === 'checkbox';
  return h('div', { class: ['field', isCheck && 'check', input.tagName === 'SELECT' && 'wide'] },
    h('label', { for: input.id }, label),
    input,
    help ? h('p', { class: 'help', id: helpId }, help) : null,
  );
}

// setFieldError shows (or, with '', clears) a client-side error under an input.
function setFieldError(input, reason) {
  const wrap = input.closest('.field') || input.parentElement;
  if (!wrap) return;
  let el = wrap.querySelector('.client-error');
  if (!reason) {
    el?.remove();
    if (!wrap.querySelector('.server-error')) {
      input.removeAttribute('aria-invalid');
      input.setAttribute('aria-describedby', input.dataset.help || '');
    }
    return;
  }
  if (!el) {
    el = h('p', { class: 'field-error client-error', id: uid('err') });
    wrap.append(el);
  }
  el.textContent = reason;
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', `${input.dataset.help || ''} ${el.id}`.trim());
}

// addFieldError shows a server error next to the element its path names.
function addFieldError(target, reason, path) {
  const err = h('p', { class: 'field-error server-error', id: uid('err'), dataset: { field: path } }, reason);
  const isInput = target.matches('input, select, textarea');
  if (isInput) {
    const wrap = target.closest('.field') || target.parentElement;
    wrap.querySelector('.client-error')?.remove();
    wrap.classList.add('has-error');
    wrap.append(err);
    target.setAttribute('aria-invalid', 'true');
    target.setAttribute('aria-describedby', `${target.dataset.help || ''} ${err.id}`.trim());
  } else if (target.tagName === 'FIELDSET') {
    target.classList.add('has-error');
    target.querySelector('legend').after(err);
    const first = target.querySelector('input, select');
    if (first) first.setAttribute('aria-invalid', 'true');
  } else {
    target.classList.add('has-error');
    target.append(err);
  }
}
