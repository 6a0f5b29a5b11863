// The design as an editable diagram, drawn by Cytoscape.js: components are boxes the player
// drags (and drops from the palette), connections are drawn by dragging from a box's
// handle to another box (cytoscape-edgehandles), the canvas pans and zooms, and dagre lays
// the graph out on request (requests flow from the users on the left to the data stores on
// the right). During playback each box shows its load and status. The diagram never edits
// the design itself: it reports gestures, and the level view applies them and redraws.
import cytoscape from '../vendor/cytoscape/cytoscape.esm.min.mjs';
import dagre from '../vendor/dagre/dagre.esm.js';
import { h, fmt, fmtPct, kindLabel, KIND_SHORT } from './util.js';

// edgehandles is a UMD bundle loaded by index.html as a classic script.
if (window.cytoscapeEdgehandles && !cytoscape.bpEdgehandles) {
  cytoscape.use(window.cytoscapeEdgehandles);
  cytoscape.bpEdgehandles = true;
}

const NODE_W = 156;
const NODE_H = 76;
const FONT_PX = 12;
// MIN_TEXT_PX: no label is ever drawn smaller than this, so the zoom has a floor.
export const MIN_TEXT_PX = 11;
const USERS = '__users';
const HANDLE = '__handle';

export const STATUS_TEXT = { idle: 'idle', ok: 'ok', busy: 'busy', saturated: 'saturated', failed: 'failed' };

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

const STYLE = [
  {
    selector: 'node.comp',
    style: {
      shape: 'round-rectangle', width: NODE_W, height: NODE_H, 'background-color': '#ffffff',
      'border-width': 1.5, 'border-color': '#6b7280', label: 'data(label)', 'text-wrap': 'wrap',
      'text-max-width': NODE_W - 14, 'font-size': FONT_PX, 'font-family': 'system-ui, sans-serif',
      color: '#1a1a1a', 'text-valign': 'center', 'text-halign': 'center', 'line-height': 1.35,
    },
  },
  { selector: 'node.comp.status-idle', style: { 'background-color': '#f3f4f6', 'border-color': '#8a919e' } },
  { selector: 'node.comp.status-ok', style: { 'background-color': '#e6f4ea', 'border-color': '#1e7b34' } },
  { selector: 'node.comp.status-busy', style: { 'background-color': '#fff4d6', 'border-color': '#b26b00' } },
  { selector: 'node.comp.status-saturated', style: { 'background-color': '#fde7dd', 'border-color': '#c2410c', 'border-width': 3 } },
  { selector: 'node.comp.status-failed', style: { 'background-color': '#f7d4d8', 'border-color': '#b00020', 'border-width': 3, 'border-style': 'dashed' } },
  { selector: 'node.comp.struck', style: { 'underlay-color': '#f59e0b', 'underlay-opacity': 0.45, 'underlay-padding': 6 } },
  { selector: 'node.comp.culprit', style: { 'border-color': '#c2410c', 'border-width': 4 } },
  { selector: 'node.comp:selected', style: { 'border-color': '#1f4e8c', 'border-width': 4, 'overlay-opacity': 0 } },
  {
    selector: 'node.users',
    style: {
      shape: 'round-rectangle', width: 84, height: 48, 'background-color': '#eef3fb', 'border-color': '#1f4e8c',
      'border-width': 1.5, label: 'data(label)', 'text-wrap': 'wrap', 'font-size': FONT_PX, 'font-weight': 700,
      color: '#1f4e8c', 'text-valign': 'center', 'text-halign': 'center',
    },
  },
  {
    selector: `node#${HANDLE}`,
    style: {
      shape: 'ellipse', width: 18, height: 18, 'background-color': '#1f4e8c', 'border-width': 3,
      'border-color': '#ffffff', 'border-opacity': 0.9, label: '', 'overlay-opacity': 0,
    },
  },
  {
    selector: 'edge',
    style: {
      width: 2, 'curve-style': 'bezier', 'line-color': '#5b6472', 'target-arrow-color': '#5b6472',
      'target-arrow-shape': 'triangle', 'arrow-scale': 1.1,
    },
  },
  { selector: 'edge.async', style: { 'line-color': '#7b3294', 'target-arrow-color': '#7b3294', 'line-style': 'dashed' } },
  { selector: 'edge.ingress', style: { 'line-color': '#9aa3b2', 'target-arrow-color': '#9aa3b2', 'line-style': 'dotted' } },
  { selector: 'edge.cut', style: { 'line-color': '#b00020', 'target-arrow-color': '#b00020', 'line-style': 'dashed' } },
  { selector: 'edge.slow', style: { 'line-color': '#b26b00', 'target-arrow-color': '#b26b00', width: 4 } },
  { selector: 'edge:selected', style: { 'line-color': '#1f4e8c', 'target-arrow-color': '#1f4e8c', width: 4, 'overlay-opacity': 0 } },
  { selector: '.eh-preview, .eh-ghost-edge', style: { 'line-color': '#1f4e8c', 'target-arrow-color': '#1f4e8c', width: 3, 'line-style': 'solid' } },
  { selector: '.eh-ghost-edge.eh-preview-active', style: { opacity: 0 } },
  { selector: '.eh-ghost-node', style: { width: 1, height: 1, opacity: 0 } },
  { selector: 'node.eh-hover', style: { 'border-color': '#1f4e8c', 'border-width': 4 } },
];

export class Diagram {
  // container: the element to draw in. Callbacks: onSelect(id|null, {edge}), onConnect(from, to),
  // onDelete({node}|{edge: {from, to}}), onMove(id, {x, y}), onDropKind(kind, {x, y}).
  constructor(container, opts = {}) {
    this.opts = opts;
    this.container = container;
    this.host = h('div', { class: 'cy-host', role: 'application', 'aria-label': opts.caption || 'Design diagram', tabindex: 0 });
    this.hint = h('p', { class: 'canvas-hint' }, '');
    this.tools = h('div', { class: 'canvas-tools', role: 'toolbar', 'aria-label': 'Diagram view' },
      h('button', { type: 'button', class: 'secondary small', onclick: () => this.zoomBy(1.25), 'aria-label': 'Zoom in' }, '+'),
      h('button', { type: 'button', class: 'secondary small', onclick: () => this.zoomBy(0.8), 'aria-label': 'Zoom out' }, '−'),
      h('button', { type: 'button', class: 'secondary small', onclick: () => this.fit() }, 'Fit'),
      h('button', { type: 'button', class: 'secondary small', id: 'auto-layout', onclick: () => this.autoLayout(true) }, 'Auto layout'));
    container.replaceChildren(h('div', { class: 'canvas-wrap' }, this.host, this.tools), this.hint);
    this.cy = cytoscape({
      container: this.host,
      style: STYLE,
      minZoom: MIN_TEXT_PX / FONT_PX,
      maxZoom: 2.5,
      boxSelectionEnabled: false,
      selectionType: 'single',
      autoungrabify: !opts.editable,
    });
    this.host.dataset.minZoom = String(this.cy.minZoom());
    // The end-to-end test finds boxes on the canvas through the element.
    this.host.bpDiagram = this;
    this.design = { components: [], edges: [] };
    this.positions = {};
    this.chaos = [];
    this.eh = this.cy.edgehandles ? this.cy.edgehandles({
      canConnect: (src, dst) => dst.hasClass('comp') && !src.same(dst),
      edgeParams: () => ({ classes: 'pending' }),
      snap: true,
      snapThreshold: 24,
      hoverDelay: 60,
    }) : null;
    this.wire();
    this.ro = new ResizeObserver(() => {
      this.cy.resize();
      this.placeHandle();
    });
    this.ro.observe(this.host);
  }

  wire() {
    const cy = this.cy;
    cy.on('tap', 'node.comp', (e) => this.opts.onSelect?.(e.target.id()));
    cy.on('tap', 'edge.link', (e) => this.opts.onSelect?.(null, { edge: { from: e.target.data('source'), to: e.target.data('target') } }));
    cy.on('tap', (e) => {
      if (e.target === cy) this.opts.onSelect?.(null);
    });
    cy.on('dragfree', 'node.comp', (e) => {
      const n = e.target;
      this.positions[n.id()] = { ...n.position() };
      this.opts.onMove?.(n.id(), { ...n.position() });
      this.placeUsers();
      this.placeHandle();
    });
    cy.on('drag', 'node.comp', () => this.placeHandle());
    cy.on('mouseover', 'node.comp', (e) => {
      this.hovered = e.target.id();
      this.placeHandle();
    });
    cy.on('pan zoom', () => this.placeHandle());
    cy.on('tapstart', `node#${HANDLE}`, () => {
      const src = this.handleFor && cy.getElementById(this.handleFor);
      if (!src || !src.nonempty() || !this.eh) return;
      this.connecting = true;
      cy.getElementById(HANDLE).style('display', 'none');
      this.eh.start(src);
    });
    cy.on('ehcomplete', (ev, src, dst, added) => {
      added.remove();
      this.connecting = false;
      this.opts.onConnect?.(src.id(), dst.id());
    });
    cy.on('ehstop', () => {
      this.connecting = false;
      setTimeout(() => this.placeHandle(), 0);
    });
    this.host.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Delete' && ev.key !== 'Backspace') return;
      const sel = cy.$(':selected');
      if (!sel.nonempty()) return;
      ev.preventDefault();
      const el = sel[0];
      if (el.isNode()) this.opts.onDelete?.({ node: el.id() });
      else this.opts.onDelete?.({ edge: { from: el.data('source'), to: el.data('target') } });
    });
    // Delete also works when the canvas itself does not have focus but nothing else
    // editable does (a click on the canvas leaves focus on the page).
    this.docKey = (ev) => {
      if (ev.key !== 'Delete' || ev.defaultPrevented) return;
      const t = ev.target;
      if (t && (t.closest?.('input, select, textarea, [contenteditable]') || this.host.contains(t))) return;
      const sel = cy.$(':selected');
      if (!sel.nonempty()) return;
      const el = sel[0];
      ev.preventDefault();
      if (el.isNode()) this.opts.onDelete?.({ node: el.id() });
      else this.opts.onDelete?.({ edge: { from: el.data('source'), to: el.data('target') } });
    };
    document.addEventListener('keydown', this.docKey);
  }

  destroy() {
    this.ro.disconnect();
    document.removeEventListener('keydown', this.docKey);
    this.eh?.destroy();
    this.cy.destroy();
  }

  // direction is the canvas's orientation: top to bottom on a narrow canvas (a phone).
  direction() {
    const w = this.host.clientWidth;
    return w > 0 && w < 560 ? 'TB' : 'LR';
  }

  // setDesign draws a design; positions ({id: {x, y}}) places the boxes, and those without
  // one are placed by dagre. chaos is the level's schedule (to mark cut and slowed edges).
  setDesign(design, positions = {}, chaos = this.chaos) {
    this.design = design;
    this.chaos = chaos;
    this.positions = { ...positions };
    const comps = design.components || [];
    const ids = new Set(comps.map((c) => c.id));
    const edges = (design.edges || []).filter((e) => ids.has(e.from) && ids.has(e.to));
    const missing = comps.filter((c) => !this.positions[c.id]);
    if (missing.length) {
      const laid = this.layout(design);
      for (const c of missing) this.positions[c.id] = laid[c.id];
      this.nudgeApart(missing.map((c) => c.id));
    }
    const cy = this.cy;
    const selected = cy.$(':selected').map((e) => e.id());
    cy.batch(() => {
      cy.elements().remove();
      const called = new Set(edges.map((e) => e.to));
      if (comps.length) cy.add({ group: 'nodes', data: { id: USERS, label: 'users' }, classes: 'users', grabbable: false, selectable: false });
      for (const c of comps) {
        cy.add({ group: 'nodes', data: { id: c.id, label: this.idleLabel(c) }, classes: 'comp status-none', position: { ...this.positions[c.id] } });
      }
      for (const c of comps) {
        if (!called.has(c.id)) cy.add({ group: 'edges', data: { id: `in:${c.id}`, source: USERS, target: c.id }, classes: 'ingress', selectable: false });
      }
      for (const e of edges) {
        const to = comps.find((c) => c.id === e.to);
        cy.add({ group: 'edges', data: { id: `e:${e.from}>${e.to}`, source: e.from, target: e.to }, classes: ['link', to?.type === 'queue' ? 'async' : ''].join(' ') });
      }
      if (this.opts.editable && comps.length) {
        cy.add({ group: 'nodes', data: { id: HANDLE }, grabbable: false, selectable: false, position: { x: 0, y: 0 } });
        cy.getElementById(HANDLE).style('display', 'none');
      }
    });
    this.placeUsers();
    for (const id of selected) cy.getElementById(id).select();
    if (!this.viewSet && comps.length) {
      this.fit();
      this.viewSet = true;
    } else {
      this.keepInView();
    }
    this.hint.textContent = !comps.length
      ? 'The canvas is empty: drag a component from the palette, or press its button.'
      : this.opts.editable
        ? 'Drag a box to move it; drag the blue dot on its right edge to another box to connect them; select and press Delete to remove. Scroll or pinch to zoom, drag the background to pan.'
        : '';
    this.placeHandle();
    if (this.lastTick) this.showTick(this.lastTick, this.lastOrder);
  }

  // layout is dagre's placement of every component: {id: {x, y}} (box centres), left to
  // right when that fits the canvas at the smallest zoom, else top to bottom.
  layout(design) {
    let dir = this.direction();
    let out = this.layoutIn(design, dir);
    if (dir === 'LR' && out.width * this.cy.minZoom() > this.host.clientWidth - 16) {
      const tb = this.layoutIn(design, 'TB');
      if (tb.width < out.width) {
        out = tb;
        dir = 'TB';
      }
    }
    this.dir = dir;
    return out.pos;
  }

  layoutIn(design, dir) {
    const comps = design.components || [];
    const g = new dagre.graphlib.Graph();
    g.setGraph({ rankdir: dir, nodesep: 26, ranksep: dir === 'TB' ? 44 : 52, marginx: 16, marginy: 16 });
    g.setDefaultEdgeLabel(() => ({}));
    const ids = new Set(comps.map((c) => c.id));
    const edges = (design.edges || []).filter((e) => ids.has(e.from) && ids.has(e.to));
    const called = new Set(edges.map((e) => e.to));
    g.setNode(USERS, { width: 84, height: 48 });
    for (const c of comps) g.setNode(c.id, { width: NODE_W, height: NODE_H });
    for (const c of comps) if (!called.has(c.id)) g.setEdge(USERS, c.id);
    for (const e of edges) g.setEdge(e.from, e.to);
    dagre.layout(g);
    const pos = {};
    for (const c of comps) {
      const n = g.node(c.id);
      pos[c.id] = { x: n.x, y: n.y };
    }
    return { pos, width: g.graph().width || 0 };
  }

  // autoLayout places every box by dagre and reports the new positions.
  autoLayout(report) {
    this.positions = this.layout(this.design);
    for (const [id, p] of Object.entries(this.positions)) this.cy.getElementById(id).position({ ...p });
    this.placeUsers();
    this.fit();
    if (report) this.opts.onLayout?.({ ...this.positions });
  }

  // nudgeApart moves newly placed boxes off boxes that already stand there.
  nudgeApart(ids) {
    for (const id of ids) {
      const p = this.positions[id];
      for (let tries = 0; tries < 30; tries++) {
        const clash = Object.entries(this.positions).some(([o, q]) => o !== id && Math.abs(q.x - p.x) < NODE_W && Math.abs(q.y - p.y) < NODE_H + 8);
        if (!clash) break;
        p.y += NODE_H + 24;
      }
    }
  }

  // orientation is how the boxes run, read from where they stand: top to bottom when the
  // components users call sit above the rest rather than to their left.
  orientation() {
    const entries = this.cy.edges('.ingress').targets();
    const rest = this.cy.nodes('.comp').difference(entries);
    if (!entries.nonempty() || !rest.nonempty()) return this.dir || this.direction();
    const mean = (els, axis) => els.reduce((sum, n) => sum + n.position(axis), 0) / els.length;
    const down = mean(rest, 'y') - mean(entries, 'y');
    const right = mean(rest, 'x') - mean(entries, 'x');
    return down > right ? 'TB' : 'LR';
  }

  // placeUsers keeps the users box to the left of (or above) the components nobody calls.
  placeUsers() {
    const users = this.cy.getElementById(USERS);
    if (!users.nonempty()) return;
    const entries = this.cy.edges('.ingress').targets();
    const all = this.cy.nodes('.comp');
    if (!all.nonempty()) return;
    const bb = all.boundingBox();
    const src = entries.nonempty() ? entries : all;
    const ys = src.map((n) => n.position('y'));
    const xs = src.map((n) => n.position('x'));
    if (this.orientation() === 'TB') users.position({ x: xs.reduce((a, b) => a + b, 0) / xs.length, y: bb.y1 - 70 });
    else users.position({ x: bb.x1 - 90, y: ys.reduce((a, b) => a + b, 0) / ys.length });
  }

  // placeHandle shows the connect handle on the right edge of the hovered or selected box.
  placeHandle() {
    const handle = this.cy.getElementById(HANDLE);
    if (!handle.nonempty() || this.connecting) return;
    const sel = this.cy.$('node.comp:selected');
    const id = this.hovered && this.cy.getElementById(this.hovered).nonempty() ? this.hovered : sel.nonempty() ? sel[0].id() : null;
    if (!id) {
      handle.style('display', 'none');
      return;
    }
    const n = this.cy.getElementById(id);
    this.handleFor = id;
    handle.position({ x: n.position('x') + NODE_W / 2, y: n.position('y') });
    handle.style('display', 'element');
  }

  select(id) {
    this.cy.$(':selected').unselect();
    if (id) {
      const n = this.cy.getElementById(id);
      n.select();
      this.hovered = null;
      this.placeHandle();
      this.reveal(n);
    }
  }

  selectEdge(from, to) {
    this.cy.$(':selected').unselect();
    this.cy.getElementById(`e:${from}>${to}`).select();
  }

  // reveal pans just enough to bring an element into view.
  reveal(el) {
    const bb = el.renderedBoundingBox();
    const w = this.host.clientWidth;
    const hh = this.host.clientHeight;
    let dx = 0;
    let dy = 0;
    if (bb.x1 < 8) dx = 8 - bb.x1;
    else if (bb.x2 > w - 8) dx = w - 8 - bb.x2;
    if (bb.y1 < 8) dy = 8 - bb.y1;
    else if (bb.y2 > hh - 8) dy = hh - 8 - bb.y2;
    if (dx || dy) this.cy.panBy({ x: dx, y: dy });
  }

  // keepInView pans (never zooms) so that the whole design shows when it fits at this zoom.
  keepInView() {
    const els = this.cy.nodes().not(`#${HANDLE}`);
    if (!els.nonempty()) return;
    const bb = els.renderedBoundingBox();
    const w = this.host.clientWidth;
    const hh = this.host.clientHeight;
    const m = 12;
    let dx = 0;
    let dy = 0;
    if (bb.w + 2 * m <= w) dx = bb.x1 < m ? m - bb.x1 : bb.x2 > w - m ? w - m - bb.x2 : 0;
    if (bb.h + 2 * m <= hh) dy = bb.y1 < m ? m - bb.y1 : bb.y2 > hh - m ? hh - m - bb.y2 : 0;
    if (dx || dy) this.cy.panBy({ x: dx, y: dy });
  }

  fit() {
    const els = this.cy.nodes().not(`#${HANDLE}`);
    if (els.nonempty()) this.cy.fit(els, 24);
    if (this.cy.zoom() > 1.2) {
      this.cy.zoom(1.2);
      this.cy.center(els);
    }
  }

  zoomBy(f) {
    const z = Math.min(this.cy.maxZoom(), Math.max(this.cy.minZoom(), this.cy.zoom() * f));
    this.cy.zoom({ level: z, renderedPosition: { x: this.host.clientWidth / 2, y: this.host.clientHeight / 2 } });
  }

  // modelPoint turns a point on the page (clientX, clientY) into diagram coordinates, or
  // null when it is outside the canvas.
  modelPoint(clientX, clientY) {
    const r = this.host.getBoundingClientRect();
    if (clientX < r.left || clientX > r.right || clientY < r.top || clientY > r.bottom) return null;
    const pan = this.cy.pan();
    const z = this.cy.zoom();
    return { x: (clientX - r.left - pan.x) / z, y: (clientY - r.top - pan.y) / z };
  }

  // freeSpot is a place for a new box: right of everything, level with the first row.
  freeSpot() {
    const all = this.cy.nodes('.comp');
    if (!all.nonempty()) {
      const ext = this.cy.extent();
      return { x: (ext.x1 + ext.x2) / 2, y: (ext.y1 + ext.y2) / 2 };
    }
    const bb = all.boundingBox();
    return this.orientation() === 'TB' ? { x: (bb.x1 + bb.x2) / 2, y: bb.y2 + NODE_H } : { x: bb.x2 + NODE_W / 2 + 50, y: bb.y1 + NODE_H / 2 };
  }

  idleLabel(c) {
    return `${KIND_SHORT[c.type] || c.type} · ${truncate(c.id, 18)}\n${this.opts.summary ? this.opts.summary(c) : kindLabel(c.type)}`;
  }

  // showTick paints one tick of a run whose components are listed in order (the run's
  // result.components) onto the boxes; null restores the idle drawing.
  showTick(tick, order) {
    this.lastTick = tick;
    this.lastOrder = order;
    const active = new Set(tick?.events || []);
    const struck = new Set();
    const cut = new Set();
    const slow = new Set();
    for (const e of this.chaos) {
      if (!active.has(chaosId(e))) continue;
      for (const id of [e.target, e.from, e.to].filter(Boolean)) struck.add(id);
      if (e.kind === 'network_partition') cut.add(`e:${e.from}>${e.to}`);
      if (e.kind === 'latency_injection') slow.add(`e:${e.from}>${e.to}`);
    }
    this.cy.batch(() => {
      for (const c of this.design.components || []) {
        const n = this.cy.getElementById(c.id);
        if (!n.nonempty()) continue;
        const i = order ? order.findIndex((o) => o.id === c.id) : -1;
        const ct = tick && i >= 0 ? tick.components[i] : null;
        n.removeClass('status-none status-idle status-ok status-busy status-saturated status-failed');
        n.toggleClass('struck', struck.has(c.id));
        if (!ct) {
          n.addClass('status-none');
          n.data('label', this.idleLabel(c));
          continue;
        }
        n.addClass(`status-${ct.status}`);
        const u = Math.max(0, ct.utilization || 0);
        n.data('label', `${KIND_SHORT[c.type] || c.type} · ${truncate(c.id, 14)}  ${statusGlyph(ct.status)}${STATUS_TEXT[ct.status] || ''}${struck.has(c.id) ? ' ⚡' : ''}\n${fmt(ct.input_rps)} rps · ${fmtPct(u, 0)} busy${ct.backlog > 0.5 ? `\nqueue ${fmt(ct.backlog)}` : ''}`);
      }
      const users = this.cy.getElementById(USERS);
      if (users.nonempty()) users.data('label', tick ? `users\n${fmt(tick.offered_rps)} rps` : 'users');
      this.cy.edges('.link').forEach((e) => {
        e.toggleClass('cut', cut.has(e.id()));
        e.toggleClass('slow', slow.has(e.id()));
      });
    });
  }

  // highlight marks the components a run blames (the why timeline's), or none.
  highlight(ids) {
    const set = new Set(ids || []);
    this.cy.nodes('.comp').forEach((n) => n.toggleClass('culprit', set.has(n.id())));
  }

  // textScale is the smallest label size on screen, in CSS pixels (checked by the e2e test).
  smallestTextPx() {
    return FONT_PX * this.cy.zoom();
  }
}

function statusGlyph(s) {
  return { ok: '● ', busy: '▲ ', saturated: '■ ', failed: '✖ ', idle: '○ ' }[s] || '';
}

function truncate(s, n) {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
