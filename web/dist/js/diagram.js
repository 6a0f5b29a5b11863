// The design as an editable diagram, drawn by Cytoscape.js: components are boxes the player
// drags (and drops from the palette), connections are drawn by dragging from a box's
// handle to another box (cytoscape-edgehandles), the canvas pans and zooms, and dagre lays
// the graph out on request (requests flow from the users on the left to the data stores on
// the right). During playback each box shows its load and status. The diagram never edits
// the design itself: it reports gestures, and the level view applies them and redraws.
//
// Until the player moves a box the whole drawing is dagre's (layout.js), laid out again on
// every change, its lines bent around the boxes; once they move one, their places are kept
// and a new box goes where no line runs through a box. Fit always shows the whole design:
// where the zoom would take the labels below 11 px the canvas grows taller instead.
import cytoscape from '../vendor/cytoscape/cytoscape.esm.min.mjs';
import { h, fmt, fmtPct, KIND_SHORT } from './util.js';
import { BOX, NARROW_BOX, USERS, USERS_BOX, layoutDesign, rowsLayout, placeNew, usersSpot, entries, designEdges, groupAlike, GROUP_FROM } from './layout.js';

// edgehandles is a UMD bundle loaded by index.html as a classic script.
if (window.cytoscapeEdgehandles && !cytoscape.bpEdgehandles) {
  cytoscape.use(window.cytoscapeEdgehandles);
  cytoscape.bpEdgehandles = true;
}

const NODE_W = BOX.w;
const NODE_H = BOX.h;
const FONT_PX = 12;
const FONT = `${FONT_PX}px system-ui, sans-serif`;
// LABEL_PAD is the room a label line leaves inside its box.
const LABEL_PAD = 10;
// MIN_TEXT_PX: no label is ever drawn smaller than this, so the zoom has a floor.
export const MIN_TEXT_PX = 11;
const HANDLE = '__handle';
// FIT_PAD is the margin Fit leaves around the design, in screen pixels.
const FIT_PAD = 8;
// TOOLS_PX is the strip along the top that the view's buttons cover.
const TOOLS_PX = 36;
// MAX_CANVAS_PX bounds how tall Fit may make the canvas.
const MAX_CANVAS_PX = 2400;

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
    selector: 'node.comp, node.group',
    style: {
      shape: 'round-rectangle', width: NODE_W, height: NODE_H, 'background-color': '#ffffff',
      'border-width': 1.5, 'border-color': '#6b7280', label: 'data(label)', 'text-wrap': 'wrap',
      'text-max-width': NODE_W - LABEL_PAD + 4, 'font-size': FONT_PX, 'font-family': 'system-ui, sans-serif',
      color: '#1a1a1a', 'text-valign': 'center', 'text-halign': 'center', 'line-height': 1.25,
    },
  },
  { selector: 'node.narrow', style: { width: NARROW_BOX.w, 'text-max-width': NARROW_BOX.w - LABEL_PAD + 4 } },
  { selector: 'node.group', style: { 'border-style': 'double', 'border-width': 5 } },
  { selector: 'node.comp.status-idle, node.group.status-idle', style: { 'background-color': '#f3f4f6', 'border-color': '#8a919e' } },
  { selector: 'node.comp.status-ok, node.group.status-ok', style: { 'background-color': '#e6f4ea', 'border-color': '#1e7b34' } },
  { selector: 'node.comp.status-busy, node.group.status-busy', style: { 'background-color': '#fff4d6', 'border-color': '#b26b00' } },
  { selector: 'node.comp.status-saturated, node.group.status-saturated', style: { 'background-color': '#fde7dd', 'border-color': '#c2410c', 'border-width': 3 } },
  { selector: 'node.comp.status-failed, node.group.status-failed', style: { 'background-color': '#f7d4d8', 'border-color': '#b00020', 'border-width': 3, 'border-style': 'dashed' } },
  { selector: 'node.comp.struck, node.group.struck', style: { 'underlay-color': '#f59e0b', 'underlay-opacity': 0.45, 'underlay-padding': 6 } },
  { selector: 'node.comp.culprit, node.group.culprit', style: { 'border-color': '#c2410c', 'border-width': 4 } },
  { selector: 'node.comp:selected', style: { 'border-color': '#1f4e8c', 'border-width': 4, 'overlay-opacity': 0 } },
  {
    selector: 'node.users',
    style: {
      shape: 'round-rectangle', width: USERS_BOX.w, height: USERS_BOX.h, 'background-color': '#eef3fb', 'border-color': '#1f4e8c',
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
  { selector: 'edge.routed', style: { 'curve-style': 'round-segments', 'edge-distances': 'node-position', 'segment-radius': 10 } },
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
      h('button', { type: 'button', class: 'secondary small', id: 'auto-layout', onclick: () => this.autoLayout(true) }, 'Auto layout'),
      this.groupButton = h('button', { type: 'button', class: 'secondary small', id: 'group-alike', hidden: true, title: 'Alike components: same kind, called by the same boxes, calling the same ones', onclick: () => this.toggleGroups() }, 'Group alike'));
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
    this.box = BOX;
    // grouping draws alike components as one box (groupAlike); apart holds the groups the
    // viewer opened.
    this.grouping = true;
    this.apart = new Set();
    this.view = { design: this.design, groups: {}, groupOf: {} };
    this.groupPos = {};
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
    cy.on('tap', 'node.group', (e) => this.openGroup(e.target.id()));
    cy.on('tap', 'edge.link', (e) => this.opts.onSelect?.(null, { edge: { from: e.target.data('source'), to: e.target.data('target') } }));
    cy.on('tap', (e) => {
      if (e.target === cy) this.opts.onSelect?.(null);
    });
    cy.on('dragfree', 'node.comp', (e) => {
      const n = e.target;
      if (Object.keys(this.view.groups).length) {
        // Arranged by hand, every component is a box of its own: the design is laid out
        // again with each box shown, and the box moved as far as it was dragged.
        const from = this.positions[n.id()];
        const to = n.position();
        for (const key of this.alikeKeys || []) this.apart.add(key);
        this.setDesign(this.design, {}, this.chaos);
        const at = this.positions[n.id()];
        this.setDesign(this.design, { ...this.positions, [n.id()]: { x: at.x + to.x - from.x, y: at.y + to.y - from.y } }, this.chaos);
        this.fit();
      } else {
        this.auto = false;
        this.positions[n.id()] = { ...n.position() };
      }
      this.placeUsers();
      this.drawRoutes();
      this.opts.onMove?.(n.id(), { ...this.positions[n.id()] }, { ...this.positions });
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

  // narrow says whether this is a phone's canvas, which keeps a layout of its own.
  narrow() {
    const w = this.host.clientWidth;
    return w > 0 && w < 560;
  }

  // arrangement is how this canvas lays the design out: columns left to right when that
  // fits the canvas's width at the smallest zoom; else dagre's top to bottom; else (a phone)
  // rows of at most three boxes or four narrower ones, or fewer, whose width is known before
  // they are placed (rowsLayout). Only its structure and the canvas's width decide, so an edit
  // to a value reuses the last arrangement.
  arrangement(design = this.design) {
    const w = this.host.clientWidth;
    const key = JSON.stringify([w, (design.components || []).map((c) => [c.id, c.type]), design.edges || []]);
    if (this.arranged?.key === key) return this.arranged.value;
    const started = performance.now();
    const value = this.arrange(design, w);
    // The e2e prints how long a layout takes.
    this.arrangeMs = performance.now() - started;
    this.arranged = { key, value };
    return value;
  }

  arrange(design, w) {
    if (!(w > 0)) return { dir: 'LR', laid: layoutDesign(design, 'LR'), box: BOX };
    const room = (w - 2 * FIT_PAD) / this.cy.minZoom() - 8;
    for (const dir of ['LR', 'TB']) {
      const laid = layoutDesign(design, dir);
      if (laid.width <= room) return { dir, laid, box: BOX };
    }
    let laid = null;
    for (const [box, most] of [[BOX, 3], [NARROW_BOX, 4], [NARROW_BOX, 3], [NARROW_BOX, 2], [NARROW_BOX, 1]]) {
      laid = rowsLayout(design, { most, box });
      if (laid.width <= room) return { dir: 'TB', laid, box };
    }
    return { dir: 'TB', laid, box: NARROW_BOX };
  }

  direction(design = this.design) {
    return this.arrangement(design).dir;
  }

  // setDesign draws a design. positions ({id: {x, y}}) are the places the player gave the
  // boxes; with none, the whole design is laid out (and laid out again on every change: the
  // diagram is then "auto"), else boxes without a place get one where no line runs through a
  // box. chaos is the level's schedule (to mark cut and slowed edges).
  setDesign(design, positions = {}, chaos = this.chaos) {
    this.design = design;
    this.chaos = chaos;
    const comps = design.components || [];
    const ids = new Set(comps.map((c) => c.id));
    const given = Object.fromEntries(Object.entries(positions || {}).filter(([id, p]) => ids.has(id) && p));
    const alike = comps.length >= GROUP_FROM ? groupAlike(design) : { groups: {} };
    if (!Object.keys(given).length) {
      // Alike components share a box only while the drawing is laid out: a player who
      // arranges the boxes places each one.
      this.view = this.grouping && comps.length >= GROUP_FROM ? groupAlike(design, this.apart) : { design, groups: {}, groupOf: {} };
      const { dir, laid, box } = this.arrangement(this.view.design);
      this.dir = dir;
      this.box = box;
      this.positions = Object.fromEntries(comps.filter((c) => laid.pos[c.id]).map((c) => [c.id, laid.pos[c.id]]));
      this.groupPos = Object.fromEntries(Object.keys(this.view.groups).map((k) => [k, laid.pos[k]]));
      this.usersPos = laid.pos[USERS];
      this.routes = laid.routes;
      this.routeEnds = this.endsOf(laid.routes, laid.pos);
      this.auto = true;
    } else {
      this.auto = false;
      this.view = { design, groups: {}, groupOf: {} };
      this.groupPos = {};
      // Boxes placed by hand on a fresh canvas (a reload) are as wide as this canvas's own
      // layout makes them: a phone's narrower ones, where it uses them.
      if (!this.arranged) this.box = this.arrangement(design).box;
      this.dir = this.dir || this.orientationOf(design, given);
      this.positions = given;
      for (const c of comps) {
        if (!this.positions[c.id]) this.positions[c.id] = placeNew(design, c.id, this.positions, this.dir, this.validRoutes(), this.box);
      }
      this.usersPos = usersSpot(design, this.positions, this.dir, this.box);
    }
    const cy = this.cy;
    const selected = cy.$(':selected').map((e) => e.id());
    cy.batch(() => {
      cy.elements().remove();
      if (comps.length) cy.add({ group: 'nodes', data: { id: USERS, label: 'users' }, classes: 'users', grabbable: false, selectable: false, position: { ...this.usersPos } });
      const narrow = this.box === BOX ? '' : ' narrow';
      const drawn = this.view.design;
      for (const c of drawn.components) {
        if (c.members) cy.add({ group: 'nodes', data: { id: c.id, label: this.groupLabel(c) }, classes: `group status-none${narrow}`, grabbable: false, selectable: false, position: { ...this.groupPos[c.id] } });
        else cy.add({ group: 'nodes', data: { id: c.id, label: this.idleLabel(c) }, classes: `comp status-none${narrow}`, position: { ...this.positions[c.id] } });
      }
      for (const id of entries(drawn)) {
        cy.add({ group: 'edges', data: { id: `in:${id}`, source: USERS, target: id }, classes: 'ingress', selectable: false });
      }
      for (const e of designEdges(drawn)) {
        const to = drawn.components.find((c) => c.id === e.to);
        cy.add({ group: 'edges', data: { id: `e:${e.from}>${e.to}`, source: e.from, target: e.to }, classes: ['link', to?.type === 'queue' ? 'async' : ''].join(' ') });
      }
      if (this.opts.editable && comps.length) {
        cy.add({ group: 'nodes', data: { id: HANDLE }, grabbable: false, selectable: false, position: { x: 0, y: 0 } });
        cy.getElementById(HANDLE).style('display', 'none');
      }
    });
    this.drawRoutes();
    for (const id of selected) cy.getElementById(id).select();
    if (!this.viewSet && comps.length) {
      this.fit();
      this.viewSet = true;
    } else if (this.auto && !this.showsAll()) {
      this.fit();
    } else {
      this.keepInView();
    }
    const alikeKeys = Object.keys(alike.groups);
    this.groupButton.hidden = !this.auto || !alikeKeys.length;
    this.groupButton.textContent = Object.keys(this.view.groups).length ? 'Show each' : 'Group alike';
    this.alikeKeys = alikeKeys;
    this.hint.textContent = !comps.length
      ? 'The canvas is empty: drag a component from the palette, or press its button.'
      : this.opts.editable
        ? `Drag a box to move it; drag the blue dot on its right edge to another box to connect them; select and press Delete to remove. Scroll or pinch to zoom, drag the background to pan.${Object.keys(this.view.groups).length ? ' A double box stands for alike components (same kind, same lines): press it to show each.' : ''}`
        : Object.keys(this.view.groups).length ? 'A double box stands for alike components (same kind, same lines): press it to show each.' : '';
    this.placeHandle();
    if (this.lastTick) this.showTick(this.lastTick, this.lastOrder);
  }

  // endsOf remembers where both ends of each routed line stood: a bend is only good while
  // neither end has moved.
  endsOf(routes, pos) {
    const out = {};
    for (const key of Object.keys(routes)) {
      const [a, b] = key.split('>');
      if (pos[a] && pos[b]) out[key] = [{ ...pos[a] }, { ...pos[b] }];
    }
    return out;
  }

  // validRoutes are the bends whose lines' ends are where they were laid out.
  validRoutes() {
    const out = {};
    const at = (id) => (id === USERS ? this.usersPos : this.groupPos[id] || this.positions[id]);
    const same = (p, q) => p && q && Math.abs(p.x - q.x) < 0.5 && Math.abs(p.y - q.y) < 0.5;
    for (const [key, pts] of Object.entries(this.routes || {})) {
      const [a, b] = key.split('>');
      const ends = this.routeEnds?.[key];
      if (ends && same(at(a), ends[0]) && same(at(b), ends[1])) out[key] = pts;
    }
    return out;
  }

  // bends are the bends of the lines as drawn, each with where its ends stood, for the
  // player's arrangement to be kept with its places: {'from>to': {points, ends}}. A layout
  // of the canvas's own is laid out again on every change and keeps none.
  bends() {
    if (this.auto) return {};
    return Object.fromEntries(Object.entries(this.validRoutes()).map(([key, points]) => [key, { points, ends: this.routeEnds[key] }]));
  }

  // keepBends takes bends kept with the player's places (bends()), to be drawn by the next
  // setDesign wherever both ends of a line still stand where they stood.
  keepBends(bends = {}) {
    const ok = (p) => p && Number.isFinite(p.x) && Number.isFinite(p.y);
    const kept = Object.entries(bends || {}).filter(([, b]) => Array.isArray(b?.points) && b.points.every(ok) && Array.isArray(b.ends) && b.ends.length === 2 && b.ends.every(ok));
    this.routes = Object.fromEntries(kept.map(([key, b]) => [key, b.points.map((p) => ({ x: p.x, y: p.y }))]));
    this.routeEnds = Object.fromEntries(kept.map(([key, b]) => [key, b.ends.map((p) => ({ x: p.x, y: p.y }))]));
  }

  // drawRoutes bends every line that has a valid route through its points; the others run
  // straight.
  drawRoutes() {
    const routes = this.validRoutes();
    this.cy.edges().forEach((e) => {
      const pts = routes[`${e.data('source')}>${e.data('target')}`];
      const s = e.source().position();
      const t = e.target().position();
      const dx = t.x - s.x;
      const dy = t.y - s.y;
      const len2 = dx * dx + dy * dy;
      if (!pts || !pts.length || len2 < 1) {
        e.removeClass('routed');
        e.removeStyle('segment-weights segment-distances');
        return;
      }
      const len = Math.sqrt(len2);
      // Cytoscape places a bend by its share of the way from source to target and its
      // distance from that line (positive to the right of the direction of travel).
      const weights = pts.map((p) => ((p.x - s.x) * dx + (p.y - s.y) * dy) / len2);
      const distances = pts.map((p) => ((p.y - s.y) * dx - (p.x - s.x) * dy) / len);
      e.addClass('routed');
      e.style({ 'segment-weights': weights.join(' '), 'segment-distances': distances.join(' ') });
    });
  }

  // autoLayout lays the whole design out again and reports that the player's places are
  // gone (onLayout with none).
  autoLayout(report) {
    this.viewSet = false;
    this.setDesign(this.design, {}, this.chaos);
    this.fit();
    if (report) this.opts.onLayout?.({});
  }

  // orientationOf reads how the player's boxes run: top to bottom when the components users
  // call sit above the rest rather than to their left.
  orientationOf(design, pos) {
    const ent = new Set(entries(design));
    const all = Object.keys(pos);
    const first = all.filter((id) => ent.has(id));
    const rest = all.filter((id) => !ent.has(id));
    if (!first.length || !rest.length) return this.direction(design);
    const mean = (ids, axis) => ids.reduce((sum, id) => sum + pos[id][axis], 0) / ids.length;
    return mean(rest, 'y') - mean(first, 'y') > mean(rest, 'x') - mean(first, 'x') ? 'TB' : 'LR';
  }

  // placeUsers keeps the users box beside the components nobody calls, once the player
  // arranges the boxes.
  placeUsers() {
    const users = this.cy.getElementById(USERS);
    if (!users.nonempty() || this.auto) return;
    this.usersPos = usersSpot(this.design, this.positions, this.dir, this.box);
    users.position({ ...this.usersPos });
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
    handle.position({ x: n.position('x') + this.box.w / 2, y: n.position('y') });
    handle.style('display', 'element');
  }

  // openGroup draws the members of a group as boxes of their own.
  openGroup(key) {
    if (!this.view.groups[key]) return;
    this.apart.add(key);
    this.setDesign(this.design, {}, this.chaos);
  }

  // toggleGroups shows every box, or groups alike ones again.
  toggleGroups() {
    if (Object.keys(this.view.groups).length) for (const key of this.alikeKeys || []) this.apart.add(key);
    else this.apart.clear();
    this.setDesign(this.design, {}, this.chaos);
  }

  select(id) {
    this.cy.$(':selected').unselect();
    if (id && this.view.groupOf[id]) this.openGroup(this.view.groupOf[id]);
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

  // showsAll says whether every box is on screen.
  showsAll() {
    const els = this.cy.nodes().not(`#${HANDLE}`);
    if (!els.nonempty()) return true;
    const bb = els.renderedBoundingBox();
    return bb.x1 >= 0 && bb.y1 >= 0 && bb.x2 <= this.host.clientWidth && bb.y2 <= this.host.clientHeight;
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

  // fit shows the whole design: as large as fits (never above 1.2×), and where that would
  // take the labels below MIN_TEXT_PX, at the smallest zoom on a canvas grown tall enough.
  fit() {
    const els = this.cy.nodes().not(`#${HANDLE}`);
    this.host.style.height = '';
    this.cy.resize();
    if (!els.nonempty()) return;
    // The boxes and the bends of the lines: on a phone some lines run in lanes beside the
    // boxes. (Not the edges' own bounding boxes: a line drawn while its ends overlap has none
    // worth the name.)
    const nb = els.boundingBox();
    const bb = { x1: nb.x1, y1: nb.y1, x2: nb.x2, y2: nb.y2 };
    for (const pts of Object.values(this.validRoutes())) {
      for (const p of pts) {
        bb.x1 = Math.min(bb.x1, p.x - 2);
        bb.x2 = Math.max(bb.x2, p.x + 2);
        bb.y1 = Math.min(bb.y1, p.y - 2);
        bb.y2 = Math.max(bb.y2, p.y + 2);
      }
    }
    const bw = bb.x2 - bb.x1;
    const bh = bb.y2 - bb.y1;
    const w = this.host.clientWidth - 2 * FIT_PAD;
    const hh = this.host.clientHeight - 2 * FIT_PAD - TOOLS_PX;
    const byWidth = Math.min(1.2, w / bw);
    let z = Math.max(this.cy.minZoom(), Math.min(byWidth, hh / bh));
    if (bh * z > hh) {
      z = Math.max(this.cy.minZoom(), Math.min(byWidth, (MAX_CANVAS_PX - 2 * FIT_PAD) / bh));
      this.host.style.height = `${Math.min(MAX_CANVAS_PX, Math.ceil(bh * z + 2 * FIT_PAD + TOOLS_PX))}px`;
      this.cy.resize();
    }
    this.cy.zoom(z);
    this.cy.pan({
      x: this.host.clientWidth / 2 - ((bb.x1 + bb.x2) / 2) * z,
      y: (this.host.clientHeight + TOOLS_PX) / 2 - ((bb.y1 + bb.y2) / 2) * z,
    });
    this.placeHandle();
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

  // groupLabel says how many alike components a group's box stands for, and which.
  groupLabel(c) {
    return [`${KIND_SHORT[c.type] || c.type} ×${c.members.length}`, c.members.join(', ')].map((t) => fitLine(t, this.box.w - LABEL_PAD)).join('\n');
  }

  idleLabel(c) {
    // A narrow box keeps the name whole: the instance type below says the kind.
    const name = this.box === BOX ? `${KIND_SHORT[c.type] || c.type} ${c.id}` : c.id;
    return [name, this.opts.summary ? this.opts.summary(c) : ''].map((t) => fitLine(t, this.box.w - LABEL_PAD)).join('\n');
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
      const link = `e:${this.view.groupOf[e.from] || e.from}>${this.view.groupOf[e.to] || e.to}`;
      if (e.kind === 'network_partition') cut.add(link);
      if (e.kind === 'latency_injection') slow.add(link);
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
        n.data('label', [
          `${statusGlyph(ct.status)}${c.id}${struck.has(c.id) ? ' ⚡' : ''}`,
          // The load first: where the box is too narrow, the status word (which the glyph
          // and the colour also say) is what gets cut.
          `${fmtPct(u, 0)} ${STATUS_TEXT[ct.status] || ''}`,
          ct.backlog > 0.5 ? `${fmt(ct.input_rps)} rps · q ${fmtShort(ct.backlog)}` : `${fmt(ct.input_rps)} rps`,
        ].map((t) => fitLine(t, this.box.w - LABEL_PAD)).join('\n'));
      }
      for (const [key, members] of Object.entries(this.view.groups)) {
        const n = this.cy.getElementById(key);
        if (!n.nonempty()) continue;
        const cts = members.map((id) => (order ? order.findIndex((o) => o.id === id) : -1)).filter((i) => tick && i >= 0).map((i) => tick.components[i]);
        const hit = members.some((id) => struck.has(id));
        n.removeClass('status-none status-idle status-ok status-busy status-saturated status-failed');
        n.toggleClass('struck', hit);
        const comp = this.view.design.components.find((c) => c.id === key);
        if (!cts.length) {
          n.addClass('status-none');
          n.data('label', this.groupLabel(comp));
          continue;
        }
        // The group shows its worst member: a failed replica is not hidden by healthy ones.
        const status = cts.map((ct) => ct.status).sort((a, b) => STATUS_RANK.indexOf(b) - STATUS_RANK.indexOf(a))[0];
        const sum = (f) => cts.reduce((t, ct) => t + (ct[f] || 0), 0);
        n.addClass(`status-${status}`);
        n.data('label', [
          `${statusGlyph(status)}${KIND_SHORT[comp.type] || comp.type} ×${members.length}${hit ? ' ⚡' : ''}`,
          // The busiest member's load.
          `${fmtPct(Math.max(0, ...cts.map((ct) => ct.utilization || 0)), 0)} ${STATUS_TEXT[status] || ''}`,
          sum('backlog') > 0.5 ? `${fmt(sum('input_rps'))} rps · q ${fmtShort(sum('backlog'))}` : `${fmt(sum('input_rps'))} rps`,
        ].map((t) => fitLine(t, this.box.w - LABEL_PAD)).join('\n'));
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
    this.cy.nodes('.group').forEach((n) => n.toggleClass('culprit', this.view.groups[n.id()].some((id) => set.has(id))));
  }

  // textScale is the smallest label size on screen, in CSS pixels (checked by the e2e test).
  smallestTextPx() {
    return FONT_PX * this.cy.zoom();
  }
}

// fmtShort writes a queue's length in at most four characters (64, 1.2k, 38k, 2.1M), so that
// a box's line keeps it whole beside the traffic.
function fmtShort(n) {
  const v = Math.round(n);
  if (v < 1000) return String(v);
  if (v < 1e6) return v < 1e4 ? `${(v / 1e3).toFixed(1)}k` : `${Math.round(v / 1e3)}k`;
  return v < 1e7 ? `${(v / 1e6).toFixed(1)}M` : `${Math.round(v / 1e6)}M`;
}

// STATUS_RANK orders the statuses from the best to the worst.
const STATUS_RANK = ['idle', 'ok', 'busy', 'saturated', 'failed'];

function statusGlyph(s) {
  return { ok: '● ', busy: '▲ ', saturated: '■ ', failed: '✖ ', idle: '○ ' }[s] || '';
}

// fitLine shortens a label line with an ellipsis until it fits inside its box at the
// labels' font, measured the way the canvas draws it.
let measure = null;
function fitLine(text, maxPx) {
  if (!measure) {
    measure = document.createElement('canvas').getContext('2d');
    measure.font = FONT;
  }
  if (measure.measureText(text).width <= maxPx) return text;
  let n = text.length - 1;
  while (n > 1 && measure.measureText(`${text.slice(0, n)}…`).width > maxPx) n--;
  return `${text.slice(0, n)}…`;
}
