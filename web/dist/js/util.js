// Small DOM and formatting helpers shared by the views.

// h builds an element: h('button', {class: 'x', onclick: f}, 'text', child).
// Attributes whose value is false, null or undefined are left out; "on*" keys
// add event listeners; "dataset" and "style" take objects.
export function h(tag, attrs, ...children) {
  const el = tag.includes(':')
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.split(':')[1])
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'dataset') {
      Object.assign(el.dataset, v);
    } else if (k === 'style' && typeof v === 'object') {
      Object.assign(el.style, v);
    } else if (k === 'class') {
      el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    } else if (k in el && !(el instanceof SVGElement) && typeof v !== 'string') {
      el[k] = v;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

// svg is h for SVG elements.
export function svg(tag, attrs, ...children) {
  return h('svg:' + tag, attrs, ...children);
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// clear empties an element and fills it with children.
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let idSeq = 0;
// uid returns a document-unique id with a readable prefix.
export function uid(prefix = 'id') {
  idSeq += 1;
  return `${prefix}-${idSeq}`;
}

const num = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });
const num1 = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });
const num2 = new Intl.NumberFormat('en', { maximumFractionDigits: 2 });

// fmt formats a number for people: whole above 100, one decimal above 10, two below.
export function fmt(x) {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  if (!Number.isFinite(x) || Math.abs(x) > 1e15) return x < 0 ? '−∞' : '∞';
  const a = Math.abs(x);
  if (a >= 100) return num.format(x);
  if (a >= 10) return num1.format(x);
  return num2.format(x);
}

export const fmtMs = (x) => `${fmt(x)} ms`;
export function fmtPct(x, digits) {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  if (!Number.isFinite(x) || Math.abs(x) > 1e13) return '∞';
  const p = x * 100;
  const d = digits ?? (Math.abs(p) >= 10 || p === 0 ? 0 : Math.abs(p) >= 1 ? 1 : 2);
  return `${p.toFixed(d)}%`;
}
export function fmtMoney(x) {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  if (!Number.isFinite(x) || Math.abs(x) > 1e13) return '∞';
  return `$${x.toFixed(Math.abs(x) >= 10 ? 2 : 3)}`;
}
export const fmtCost = (x) => `${fmtMoney(x)}/h`;
export function fmtSec(x) {
  if (x === null || x === undefined) return '–';
  return `${fmt(x)} s`;
}

// fmtUnit formats a value in one of the evaluation's units.
export function fmtUnit(x, unit) {
  switch (unit) {
    case 'ms': return fmtMs(x);
    case 'ratio': return fmtPct(x);
    case '$/h': return fmtCost(x);
    case 'usage': return fmtPct(x);
    default: return `${fmt(x)} ${unit || ''}`.trim();
  }
}

export const KIND_LABELS = {
  load_balancer: 'Load balancer',
  api_gateway: 'API gateway',
  app_service: 'App service',
  container_pool: 'Container pool',
  serverless: 'Serverless function',
  cache: 'Cache',
  cdn: 'CDN',
  database: 'Database',
  queue: 'Queue',
};
export const kindLabel = (k) => KIND_LABELS[k] || k;

export const KIND_SHORT = {
  load_balancer: 'LB',
  api_gateway: 'GW',
  app_service: 'APP',
  container_pool: 'POOL',
  serverless: 'λ',
  cache: 'CACHE',
  cdn: 'CDN',
  database: 'DB',
  queue: 'QUEUE',
};

export const CONDITION_LABELS = {
  latency: 'p99 latency',
  errors: 'Error rate',
  cost: 'Cost',
  resilience: 'Resilience during chaos',
};

// HEALTHY_UTILIZATION is the one healthy limit the server judges by
// (challenges.HealthyUtilization; web_test.go keeps the two equal): a component is healthy
// while its utilisation stays below it.
export const HEALTHY_UTILIZATION = 0.9;
// HINT_HEADROOM is the margin the fix hint aims for (challenges.HeadroomUtilization):
// every component at or below it outside chaos, so that a hinted design is not on the edge.
export const HINT_HEADROOM = 0.85;
// BUSY_UTILIZATION is where the engine calls a component busy (internal/sim, StatusBusy):
// the knee of the latency curve, a warning rather than a verdict.
export const BUSY_UTILIZATION = 0.8;

// toast shows a short status message.
export function toast(message) {
  const el = document.getElementById('toast');
  if (!el) return;
  el.textContent = message;
  el.classList.add('show');
  clearTimeout(toast.t);
  toast.t = setTimeout(() => el.classList.remove('show'), 3500);
}

// dismissToast hides the toast at once: what it said was about the page being left.
export function dismissToast() {
  clearTimeout(toast.t);
  document.getElementById('toast')?.classList.remove('show');
}

// download offers text as a file.
export function download(name, text, type = 'application/json') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// clone deep-copies JSON data.
export const clone = (x) => JSON.parse(JSON.stringify(x));

// fmtDuration says how long ms is, to the second below an hour: "2 d 3 h", "1 h 05 min",
// "4 min 09 s", "12 s".
export function fmtDuration(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const d = Math.floor(s / 86400);
  const hr = Math.floor((s % 86400) / 3600);
  const min = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const two = (n) => String(n).padStart(2, '0');
  if (d > 0) return `${d} d ${hr} h`;
  if (hr > 0) return `${hr} h ${two(min)} min`;
  if (min > 0) return `${min} min ${two(sec)} s`;
  return `${sec} s`;
}

// whenText is a time for people, in their own time zone: the one date format of every page.
export function whenText(iso) {
  return iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '–';
}

// fmtWhen is whenText inside a <time> element.
export function fmtWhen(iso) {
  if (!iso) return '–';
  return h('time', { datetime: iso }, whenText(iso));
}

// fmtSpan is a span of time, from–to, the end's date left out when it is the start's day.
export function fmtSpan(from, to) {
  if (!from || !to) return [fmtWhen(from), ' – ', fmtWhen(to)];
  const sameDay = new Date(from).toDateString() === new Date(to).toDateString();
  // An event shorter than two minutes would read "11:43 AM – 11:43 AM": say how long instead.
  const seconds = Math.round((Date.parse(to) - Date.parse(from)) / 1000);
  if (sameDay && seconds >= 0 && seconds < 120) return [fmtWhen(from), `, for ${seconds} s`];
  const end = sameDay ? new Date(to).toLocaleTimeString(undefined, { timeStyle: 'short' }) : whenText(to);
  return [fmtWhen(from), ' – ', h('time', { datetime: to }, end)];
}

// problemText is a refused request as the server put it: the problem's title and detail.
export function problemText(err) {
  if (!err) return '';
  const detail = err.message || String(err);
  return err.title && err.title.toLowerCase() !== detail.toLowerCase() ? `${err.title}: ${detail}` : detail;
}
