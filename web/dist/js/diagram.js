// The design as a diagram: dagre lays the graph out left to right (requests flow from the
// users on the left through the entry components to the data stores on the right); this
// module only draws dagre's boxes and edge routes as SVG and, during playback, paints each
// component's load, backlog and status onto its box.
import dagre from '../vendor/dagre/dagre.esm.js';
import { svg, h, fmt, fmtPct, kindLabel, KIND_SHORT } from './util.js';

const NODE_W = 176;
const NODE_H = 82;
const USERS = '\u0000users';

export const STATUS_TEXT = {
  idle: 'idle',
  ok: 'ok',
  busy: 'busy',
  saturated: 'saturated',
  failed: 'failed',
};

// chaosId is the engine's default id of an event that has none.
export function chaosId(e) {
  return e.id || `${e.kind}@${e.at_sec}s`;
}

export function describeChaos(e) {
  switch (e.kind) {
    case 'node_failure': return `${e.target} fails`;
    case 'traffic_spike': return `traffic ×${e.params?.multiplier ?? '?'}`;
    case 'cache_flush': return `${e.target} is flushed`;
    case 'network_partition': return `${e.from} → ${e.to} cut off`;
    case 'latency_injection': return `${e.from} → ${e.to} +${e.params?.extra_latency_ms ?? '?'} ms`;
    default: return e.kind;
  }
}

export class Diagram {
  // container: an element to draw in. onSelect(id) is called when a box is activated.
  constructor(container, { onSelect, caption } = {}) {
    this.container = container;
    this.onSelect = onSelect;
    this.caption = caption || 'Design diagram';
    this.nodes = new Map(); // id -> {g, rect, load, bar, barBg, backlog, status}
    this.edges = []; // {from, to, path}
    this.chaos = [];
    this.dir = null;
    // A narrow container (a phone) stacks the diagram top to bottom.
    this.ro = new ResizeObserver(() => {
      if (this.design && this.direction() !== this.dir) {
        this.setDesign(this.design, this.chaos);
        this.showTick(this.lastTick, this.lastOrder);
        if (this.highlighted) this.highlight(...this.highlighted);
        this.setPlaying(this.playing);
      }
    });
    this.ro.observe(container);
  }

  direction() {
    const w = this.container.clientWidth;
    return w > 0 && w < 560 ? 'TB' : 'LR';
  }

  destroy() {
    this.ro.disconnect();
  }

  // setDesign lays out and draws a design. chaos is the level's schedule (for marking
  // partitioned and slowed edges during playback).
  setDesign(design, chaos = []) {
    this.design = design;
    this.chaos = chaos;
    const comps = design?.components || [];
    const edges = (design?.edges || []).filter(
      (e) => comps.some((c) => c.id === e.from) && comps.some((c) => c.id === e.to),
    );
    const g = new dagre.graphlib.Graph();
    this.dir = this.direction();
    g.setGraph({ rankdir: this.dir, nodesep: 26, ranksep: this.dir === 'TB' ? 36 : 56, marginx: 12, marginy: 12 });
    g.setDefaultEdgeLabel(() => ({}));
    const incoming = new Set(edges.map((e) => e.to));
    if (comps.length) g.setNode(USERS, { width: 70, height: 52 });
    for (const c of comps) g.setNode(c.id, { width: NODE_W, height: NODE_H });
    for (const c of comps) if (!incoming.has(c.id)) g.setEdge(USERS, c.id);
    for (const e of edges) g.setEdge(e.from, e.to);
    dagre.layout(g);
    const gg = g.graph();
    const W = Math.max(gg.width || 0, 200);
    const H = Math.max(gg.height || 0, 100);

    const root = svg('svg', {
      class: 'diagram-svg',
      viewBox: `0 0 ${W} ${H}`,
      role: 'group',
      'aria-label': this.caption,
      style: { maxHeight: `${Math.max(H, 160)}px`, maxWidth: `${Math.max(W, 320)}px` },
    });
    root.append(svg('defs', {},
      svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 10, markerHeight: 10, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' },
        svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }))));
    this.edges = [];
    const edgeLayer = svg('g', { class: 'edges' });
    const nodeLayer = svg('g', { class: 'nodes' });
    root.append(edgeLayer, nodeLayer);
    for (const ek of g.edges()) {
      const pts = g.edge(ek).points || [];
      const d = pts.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
      const to = comps.find((c) => c.id === ek.w);
      const isAsync = to?.type === 'queue';
      const path = svg('path', { d, class: ['edge', isAsync && 'async', ek.v === USERS && 'ingress'], 'marker-end': 'url(#arrow)' });
      const title = svg('title', {}, ek.v === USERS ? `users → ${ek.w}` : `${ek.v} → ${ek.w}${isAsync ? ' (asynchronous hand-off)' : ''}`);
      path.append(title);
      edgeLayer.append(path);
      this.edges.push({ from: ek.v, to: ek.w, path });
    }
    this.nodes.clear();
    if (comps.length) {
      const u = g.node(USERS);
      const ug = svg('g', { class: 'users', transform: `translate(${u.x - u.width / 2},${u.y - u.height / 2})` },
        svg('rect', { width: u.width, height: u.height, rx: 26 }),
      );
      this.usersLabel = svg('text', { x: u.width / 2, y: 30, 'text-anchor': 'middle', class: 'users-label' }, 'users');
      this.usersLoad = svg('text', { x: u.width / 2, y: 40, 'text-anchor': 'middle', class: 'users-load' }, '');
      ug.append(this.usersLabel);
      ug.append(this.usersLoad);
      nodeLayer.append(ug);
    }
    for (const c of comps) {
      const n = g.node(c.id);
      const x = n.x - NODE_W / 2;
      const y = n.y - NODE_H / 2;
      const group = svg('g', {
        class: 'node status-none',
        transform: `translate(${x},${y})`,
        tabindex: 0,
        role: 'button',
        'data-id': c.id,
        'aria-label': `${c.id}, ${kindLabel(c.type)}. Press Enter to edit.`,
      });
      const rect = svg('rect', { width: NODE_W, height: NODE_H, rx: 8, class: 'box' });
      const kind = svg('text', { x: 10, y: 18, class: 'kind' }, KIND_SHORT[c.type] || c.type);
      const name = svg('text', { x: 10, y: 36, class: 'name' }, truncate(c.id, 20));
      const load = svg('text', { x: 10, y: 54, class: 'load' }, summary(c));
      const status = svg('text', { x: NODE_W - 10, y: 18, 'text-anchor': 'end', class: 'status' }, '');
      const barBg = svg('rect', { x: 10, y: 64, width: NODE_W - 20, height: 8, rx: 3, class: 'bar-bg' });
      const bar = svg('rect', { x: 10, y: 64, width: 0, height: 8, rx: 3, class: 'bar' });
      const backlog = svg('rect', { x: NODE_W - 6, y: NODE_H - 4, width: 0, height: 0, class: 'backlog' });
      const title = svg('title', {}, `${c.id} (${kindLabel(c.type)})`);
      const bolt = svg('text', { x: NODE_W - 10, y: 54, 'text-anchor': 'end', class: 'bolt' }, '');
      group.append(title, rect, kind, name, load, status, barBg, bar, backlog, bolt);
      const activate = () => this.onSelect?.(c.id);
      group.addEventListener('click', activate);
      group.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          activate();
        }
      });
      nodeLayer.append(group);
      this.nodes.set(c.id, { g: group, rect, load, bar, status, backlog, title, bolt, comp: c, idle: summary(c) });
    }
    const wrap = h('div', { class: 'diagram-wrap' }, root);
    if (!comps.length) wrap.append(h('p', { class: 'muted' }, 'The design is empty: add a component.'));
    this.container.replaceChildren(wrap);
    this.svg = root;
  }

  // showTick paints one tick of a run whose components are listed in order (the run's
  // result.components) onto the boxes; null restores the idle drawing.
  showTick(tick, order) {
    this.lastTick = tick;
    this.lastOrder = order;
    const active = new Set(tick?.events || []);
    const struck = new Map(); // component id -> chaos kinds striking it now
    for (const e of this.chaos) {
      if (!active.has(chaosId(e))) continue;
      for (const id of [e.target, e.from, e.to].filter(Boolean)) struck.set(id, [...(struck.get(id) || []), e.kind.replace(/_/g, ' ')]);
    }
    for (const [id, n] of this.nodes) {
      n.bolt.textContent = struck.has(id) ? '⚡' : '';
      n.g.classList.toggle('struck', struck.has(id));
      const i = order ? order.findIndex((c) => c.id === id) : -1;
      const ct = tick && i >= 0 ? tick.components[i] : null;
      n.g.classList.remove('status-none', 'status-idle', 'status-ok', 'status-busy', 'status-saturated', 'status-failed');
      if (!ct) {
        n.g.classList.add('status-none');
        n.load.textContent = n.idle;
        n.status.textContent = '';
        n.bar.setAttribute('width', 0);
        n.backlog.setAttribute('width', 0);
        n.title.textContent = `${id} (${kindLabel(n.comp.type)})`;
        continue;
      }
      n.g.classList.add(`status-${ct.status}`);
      const u = Math.max(0, ct.utilization || 0);
      n.load.textContent = `${fmt(ct.input_rps)} rps · ${fmtPct(u, 0)}${ct.backlog > 0.5 ? ` · q ${fmt(ct.backlog)}` : ''}`;
      n.status.textContent = statusGlyph(ct.status) + STATUS_TEXT[ct.status];
      n.bar.setAttribute('width', ((NODE_W - 20) * Math.min(1, u)).toFixed(1));
      const fill = Math.min(1, ct.queue_fill || 0);
      n.backlog.setAttribute('x', NODE_W - 6);
      n.backlog.setAttribute('y', (NODE_H - 4 - (NODE_H - 8) * fill).toFixed(1));
      n.backlog.setAttribute('width', fill > 0 ? 4 : 0);
      n.backlog.setAttribute('height', ((NODE_H - 8) * fill).toFixed(1));
      n.title.textContent = `${id}: ${fmt(ct.input_rps)} rps in, utilisation ${fmtPct(u)}, backlog ${fmt(ct.backlog)}, status ${ct.status}${struck.has(id) ? `; chaos: ${struck.get(id).join(', ')}` : ''}`;
    }
    if (this.usersLoad) {
      this.usersLoad.textContent = tick ? `${fmt(tick.offered_rps)} rps` : '';
      this.usersLabel.setAttribute('y', tick ? 22 : 30);
    }
    const cut = new Set();
    const slow = new Set();
    for (const e of this.chaos) {
      if (!active.has(chaosId(e))) continue;
      if (e.kind === 'network_partition') cut.add(`${e.from}\u0000${e.to}`);
      if (e.kind === 'latency_injection') slow.add(`${e.from}\u0000${e.to}`);
    }
    for (const e of this.edges) {
      const key = `${e.from}\u0000${e.to}`;
      e.path.classList.toggle('cut', cut.has(key));
      e.path.classList.toggle('slow', slow.has(key));
      const to = order ? order.findIndex((c) => c.id === e.to) : -1;
      const flow = tick && to >= 0 ? tick.components[to].input_rps : 0;
      e.path.classList.toggle('flowing', flow > 0.5);
      e.path.style.strokeWidth = flow > 0 ? String(1.5 + Math.min(4, Math.log10(1 + flow))) : '';
    }
  }

  // highlight marks one box (the bottleneck, or the one being edited).
  highlight(id, cls = 'selected') {
    if (cls === 'bottleneck') this.highlighted = [id, cls];
    for (const [nid, n] of this.nodes) n.g.classList.toggle(cls, nid === id);
  }

  setPlaying(on) {
    this.playing = on;
    this.svg?.classList.toggle('playing', on);
  }
}

function statusGlyph(s) {
  return { ok: '● ', busy: '▲ ', saturated: '■ ', failed: '✖ ', idle: '○ ' }[s] || '';
}

function truncate(s, n) {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

// summary is what a box says before any run: its most telling parameter.
function summary(c) {
  const p = c.params || {};
  switch (c.type) {
    case 'app_service': return `${p.replicas ?? 1} replica${(p.replicas ?? 1) === 1 ? '' : 's'}`;
    case 'container_pool': return `${p.min_replicas ?? 2}–${p.max_replicas ?? 10} replicas`;
    case 'database': return `${p.read_replicas ?? 0} read replica${(p.read_replicas ?? 0) === 1 ? '' : 's'}`;
    case 'queue': return `${p.workers ?? 4} workers`;
    case 'load_balancer':
    case 'api_gateway': return `${p.instances ?? 1} instance${(p.instances ?? 1) === 1 ? '' : 's'}`;
    case 'serverless': return `≤ ${p.max_concurrency ?? 1000} concurrent`;
    default: return p.instance_type || kindLabel(c.type);
  }
}
