// The design editor: components with their parameters (within the level's limits) and the
// calls between them. It owns no state beyond the form: every change is reported with the
// whole new design through onChange, and errors from the server are shown next to the
// field whose JSON path they name.
import { h, clear, kindLabel, clone, uid } from './util.js';
import { valueOf, humanize } from './catalog.js';

const ID_BASE = {
  load_balancer: 'lb', api_gateway: 'gateway', app_service: 'app', container_pool: 'pool',
  serverless: 'fn', cache: 'cache', cdn: 'cdn', database: 'db', queue: 'queue',
};

export class Editor {
  constructor(container, { catalog, onChange }) {
    this.el = container;
    this.catalog = catalog;
    this.onChange = onChange;
    this.design = { components: [], edges: [] };
  }

  kindInfo(kind) {
    return this.catalog.find((k) => k.kind === kind);
  }

  setDesign(design) {
    this.design = clone(design);
    this.design.components ||= [];
    this.design.edges ||= [];
    this.render();
  }

  changed(structural) {
    this.onChange?.(clone(this.design), { structural });
  }

  render() {
    const d = this.design;
    this.general = h('div', { class: 'form-errors', role: 'alert' });
    const list = h('ol', { class: 'comp-list' });
    d.components.forEach((c, i) => list.append(h('li', {}, this.renderComponent(c, i))));
    clear(this.el,
      this.general,
      h('h3', {}, 'Components'),
      d.components.length ? list : h('p', { class: 'muted' }, 'No components yet.'),
      this.renderAdd(),
      h('h3', {}, 'Connections'),
      h('p', { class: 'help' }, 'A connection is a call: the first component sends requests to the second. Requests enter at the components nobody calls.'),
      this.renderEdges(),
    );
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
    for (const p of info?.params || []) {
      if (p.knob) fields.push(this.paramField(c, i, p));
      else if (p.name !== 'instance_type' || info.instanceTypes.length === 1) fixed.push(p);
    }
    const fs = h('fieldset', { class: 'comp', dataset: { path, id: c.id }, id: `comp-${cssId(c.id)}` },
      h('legend', {}, h('span', { class: 'comp-id' }, c.id), ' ', h('span', { class: 'comp-kind' }, kindLabel(c.type))),
      h('div', { class: 'fields' }, fields),
      fixed.length
        ? h('details', { class: 'fixed' },
          h('summary', {}, 'Set by the level'),
          h('dl', {}, fixed.map((p) => [h('dt', { title: p.doc }, humanize(p.name)), h('dd', {}, String(valueOf(c, p)))])))
        : null,
      h('button', {
        type: 'button', class: 'link danger',
        onclick: () => this.remove(i),
        'aria-label': `Remove ${c.id}`,
      }, 'Remove'),
    );
    if (!info) fs.append(h('p', { class: 'field-error' }, `This level does not offer ${kindLabel(c.type)}.`));
    return fs;
  }

  paramField(c, i, p) {
    const path = `components[${i}].params.${p.name}`;
    const v = valueOf(c, p);
    const id = uid('p');
    let input;
    const set = (val) => {
      c.params ||= {};
      if (val === undefined) delete c.params[p.name];
      else c.params[p.name] = val;
      this.changed(false);
    };
    if (p.type === 'boolean') {
      input = h('input', { id, type: 'checkbox', checked: Boolean(v), dataset: { path } });
      input.addEventListener('change', () => set(input.checked));
    } else if (p.type === 'enum') {
      input = h('select', { id, dataset: { path } }, (p.enum || []).map((o) => h('option', { value: o, selected: o === v }, o)));
      input.addEventListener('change', () => set(input.value));
    } else if (p.type === 'integer' || p.type === 'number') {
      input = h('input', {
        id, type: 'number', inputmode: p.type === 'integer' ? 'numeric' : 'decimal',
        min: p.min, max: p.max, step: p.type === 'integer' ? 1 : 'any', value: String(v), dataset: { path },
      });
      input.addEventListener('input', () => {
        const raw = input.value.trim();
        const n = Number(raw);
        let problem = '';
        if (raw === '') problem = '';
        else if (!Number.isFinite(n)) problem = 'must be a number';
        else if (p.type === 'integer' && !Number.isInteger(n)) problem = 'must be a whole number';
        else if (n < p.min || n > p.max) problem = `must be between ${p.min} and ${p.max}`;
        setFieldError(input, problem);
        if (raw === '') set(undefined);
        else if (Number.isFinite(n)) set(n);
      });
    } else {
      input = h('input', { id, type: 'text', value: String(v ?? ''), dataset: { path } });
      input.addEventListener('change', () => set(input.value || undefined));
    }
    const range = p.type === 'integer' || p.type === 'number' ? `${p.min.toLocaleString('en')}–${p.max.toLocaleString('en')}` : '';
    const doc = sentence(p.doc).toLowerCase() === `${humanize(p.name).toLowerCase()}.` ? '' : sentence(p.doc);
    return field(input, humanize(p.name), path, [doc, range && `Allowed: ${range}.`].filter(Boolean).join(' '));
  }

  renderAdd() {
    const counts = {};
    for (const c of this.design.components) counts[c.type] = (counts[c.type] || 0) + 1;
    const sel = h('select', { id: uid('add'), 'aria-label': 'Component type to add' },
      this.catalog.map((k) => {
        const n = counts[k.kind] || 0;
        return h('option', { value: k.kind, disabled: n >= k.maxCount },
          `${kindLabel(k.kind)} (${n}/${k.maxCount})`);
      }));
    const first = [...sel.options].find((o) => !o.disabled);
    (first || sel.options[0])?.setAttribute('selected', '');
    const btn = h('button', { type: 'button', class: 'secondary', disabled: !first }, 'Add component');
    btn.addEventListener('click', () => this.add(sel.value));
    return h('div', { class: 'add-row' }, h('label', { for: sel.id }, 'Add'), sel, btn);
  }

  renderEdges() {
    const d = this.design;
    const ul = h('ul', { class: 'edge-list' });
    d.edges.forEach((e, j) => {
      ul.append(h('li', { dataset: { path: `edges[${j}]` } },
        h('span', { class: 'edge-text' }, e.from, ' → ', e.to),
        h('button', { type: 'button', class: 'link danger', 'aria-label': `Remove connection ${e.from} to ${e.to}`, onclick: () => this.removeEdge(j) }, 'Remove'),
      ));
    });
    const ids = d.components.map((c) => c.id);
    const from = h('select', { id: uid('ef'), 'aria-label': 'Caller' }, ids.map((id) => h('option', { value: id }, id)));
    const to = h('select', { id: uid('et'), 'aria-label': 'Callee' }, ids.map((id) => h('option', { value: id }, id)));
    if (ids.length > 1) to.selectedIndex = 1;
    const btn = h('button', { type: 'button', class: 'secondary' }, 'Connect');
    const msg = h('p', { class: 'field-error', id: uid('em'), hidden: true });
    btn.addEventListener('click', () => {
      const f = from.value;
      const t = to.value;
      let problem = '';
      if (!f || !t) problem = 'Add components first.';
      else if (f === t) problem = 'A component cannot call itself.';
      else if (d.edges.some((e) => e.from === f && e.to === t)) problem = `${f} already calls ${t}.`;
      msg.hidden = !problem;
      msg.textContent = problem;
      if (problem) return;
      d.edges.push({ from: f, to: t });
      this.render();
      this.changed(true);
    });
    return h('div', {},
      d.edges.length ? ul : h('p', { class: 'muted' }, 'No connections yet.'),
      h('div', { class: 'add-row' },
        h('label', { for: from.id }, 'From'), from,
        h('label', { for: to.id }, 'to'), to, btn),
      msg);
  }

  add(kind) {
    const info = this.kindInfo(kind);
    if (!info) return;
    const base = ID_BASE[kind] || kind;
    let id = base;
    for (let n = 2; this.design.components.some((c) => c.id === id); n++) id = `${base}-${n}`;
    this.design.components.push({ id, type: kind });
    this.render();
    this.changed(true);
    this.focusComponent(id);
  }

  remove(i) {
    const [c] = this.design.components.splice(i, 1);
    this.design.edges = this.design.edges.filter((e) => e.from !== c.id && e.to !== c.id);
    this.render();
    this.changed(true);
  }

  removeEdge(j) {
    this.design.edges.splice(j, 1);
    this.render();
    this.changed(true);
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
    const prev = c.id;
    c.id = next;
    for (const e of this.design.edges) {
      if (e.from === prev) e.from = next;
      if (e.to === prev) e.to = next;
    }
    this.render();
    this.changed(true);
  }

  focusComponent(id) {
    const fs = this.el.querySelector(`fieldset[data-id="${CSS.escape(id)}"]`);
    if (!fs) return;
    fs.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    const first = fs.querySelector('input, select');
    first?.focus({ preventScroll: true });
    fs.classList.add('flash');
    setTimeout(() => fs.classList.remove('flash'), 1200);
  }

  // showErrors places each {field, reason} (paths relative to the design) next to its field;
  // those that name no field are listed above the form. It returns how many were placed.
  showErrors(fields) {
    this.clearErrors();
    const loose = [];
    for (const f of fields) {
      const target = this.findPath(f.field);
      if (target) addFieldError(target, f.reason, f.field);
      else loose.push(f);
    }
    if (loose.length) {
      clear(this.general, h('p', {}, 'The design has problems:'),
        h('ul', {}, loose.map((f) => h('li', {}, f.field ? h('code', {}, f.field) : '', f.field ? ' ' : '', f.reason))));
    }
    const firstBad = this.el.querySelector('[aria-invalid="true"]');
    firstBad?.focus();
    return fields.length - loose.length;
  }

  clearErrors() {
    for (const el of this.el.querySelectorAll('.server-error')) el.remove();
    for (const el of this.el.querySelectorAll('[aria-invalid="true"]')) {
      el.removeAttribute('aria-invalid');
      el.setAttribute('aria-describedby', (el.dataset.help || '').trim());
    }
    for (const el of this.el.querySelectorAll('.has-error')) el.classList.remove('has-error');
    clear(this.general);
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
  return h('div', { class: ['field', isCheck && 'check'] },
    h('label', { for: input.id }, label),
    input,
    help ? h('p', { class: 'help', id: helpId }, help) : null,
  );
}

// setFieldError shows (or, with '', clears) a client-side error under an input.
function setFieldError(input, reason) {
  const wrap = input.closest('.field') || input.parentElement;
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
