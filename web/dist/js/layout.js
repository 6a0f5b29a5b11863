// Where the boxes of a design stand on the canvas, as plain geometry (no drawing): columns
// from the users on the left to the data stores on the right, dagre's placement of every box
// and the bends of the lines that would otherwise cross a box, and a free place for a box
// added to a design the player arranged by hand. A line never runs through a box it does
// not join: a line through a box reads as a call that is not there.
import dagre from '../vendor/dagre/dagre.esm.js';

export const USERS = '__users';
// A component's box and the users' box, in canvas units (the zoom scales both).
export const BOX = { w: 108, h: 54 };
// NARROW_BOX is a box for a phone's canvas when four of the usual ones do not fit a row.
export const NARROW_BOX = { w: 80, h: 54 };
export const USERS_BOX = { w: 64, h: 40 };
// Data stores answer and call nobody: they stand in the last column, whoever calls them.
const STORES = new Set(['database', 'cache']);
// CLEARANCE keeps a line this far from any box it passes.
const CLEARANCE = 4;

// designEdges are the design's connections between components it has.
export function designEdges(design) {
  const ids = new Set((design.components || []).map((c) => c.id));
  return (design.edges || []).filter((e) => ids.has(e.from) && ids.has(e.to) && e.from !== e.to);
}

// ENTRY_KINDS may take traffic from outside (the engine's entryKinds): a cache, database or
// queue nobody calls is unreachable, not called by the users.
const ENTRY_KINDS = new Set(['load_balancer', 'api_gateway', 'cdn', 'app_service', 'container_pool', 'serverless']);

// entries are the components the users call: those of an entry kind nobody calls.
export function entries(design) {
  const called = new Set(designEdges(design).map((e) => e.to));
  return (design.components || []).filter((c) => !called.has(c.id) && ENTRY_KINDS.has(c.type)).map((c) => c.id);
}

// columns numbers each component's column: 1 for the entries, one more than its furthest
// caller otherwise, and (storesLast) the last one for a called data store.
export function columns(design, storesLast = true) {
  const comps = design.components || [];
  const edges = designEdges(design);
  const col = Object.fromEntries(comps.map((c) => [c.id, 1]));
  // Longest path; a cycle stops growing after as many rounds as there are components.
  for (let round = 0; round < comps.length; round++) {
    let changed = false;
    for (const e of edges) {
      if (col[e.to] < col[e.from] + 1 && col[e.from] < comps.length) {
        col[e.to] = col[e.from] + 1;
        changed = true;
      }
    }
    if (!changed) break;
  }
  const called = new Set(edges.map((e) => e.to));
  const calling = new Set(edges.map((e) => e.from));
  const last = Math.max(1, ...Object.values(col));
  if (storesLast) for (const c of comps) if (STORES.has(c.type) && called.has(c.id) && !calling.has(c.id)) col[c.id] = last;
  return col;
}

// wrapColumns splits every column of more than most boxes into columns of at most that
// many, pushing what follows further along: a phone's canvas is three boxes wide.
export function wrapColumns(design, col, most) {
  const out = { ...col };
  const edges = designEdges(design);
  const order = (design.components || []).map((c) => c.id);
  for (let c = 1; c <= Math.max(0, ...Object.values(out)) && c < 4 * order.length; c++) {
    const here = order.filter((id) => out[id] === c);
    if (here.length <= most) continue;
    for (const id of here.slice(most)) out[id] = c + 1;
    for (let round = 0; round < order.length; round++) {
      let changed = false;
      for (const e of edges) {
        if (out[e.to] <= out[e.from] && out[e.from] < 4 * order.length) {
          out[e.to] = out[e.from] + 1;
          changed = true;
        }
      }
      if (!changed) break;
    }
  }
  return out;
}

// layoutDesign places every box with dagre, columns running dir ('LR': left to right, 'TB':
// top to bottom): {pos: {id: {x, y}} (box centres, the users' box under USERS), routes:
// {'from>to': [{x, y}, …]} (the bends of each line, users' lines as '__users>id'), width, height}.
export function layoutDesign(design, dir, { storesLast = true, most = 0, align, box = BOX } = {}) {
  const comps = design.components || [];
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: dir, align, nodesep: dir === 'TB' ? 10 : 18, ranksep: dir === 'TB' ? 36 : 44, edgesep: 8, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  let col = columns(design, storesLast);
  if (most) col = wrapColumns(design, col, most);
  g.setNode(USERS, { width: USERS_BOX.w, height: USERS_BOX.h });
  // A component nothing reaches yet waits beyond the last column, off every line.
  const linked = new Set([...entries(design), ...designEdges(design).flatMap((e) => [e.from, e.to])]);
  const waiting = comps.filter((c) => !linked.has(c.id)).map((c) => c.id);
  for (const c of comps) if (linked.has(c.id)) g.setNode(c.id, { width: box.w, height: box.h });
  for (const id of entries(design)) g.setEdge(USERS, id, { minlen: 1 });
  for (const e of designEdges(design)) g.setEdge(e.from, e.to, { minlen: Math.max(1, col[e.to] - col[e.from]) });
  dagre.layout(g);
  const pos = {};
  for (const id of [USERS, ...comps.map((c) => c.id).filter((id) => linked.has(id))]) {
    const n = g.node(id);
    pos[id] = { x: n.x, y: n.y };
  }
  const main0 = dir === 'TB' ? 'y' : 'x';
  const cross0 = dir === 'TB' ? 'x' : 'y';
  const far = Math.max(...Object.values(pos).map((p) => p[main0])) + (dir === 'TB' ? box.h + 36 : box.w + 44);
  const step = dir === 'TB' ? box.w + 10 : box.h + 18;
  waiting.forEach((id, i) => {
    pos[id] = { [main0]: far, [cross0]: (dir === 'TB' ? box.w : box.h) / 2 + i * step };
  });
  // A line leaves its box and enters the next straight across the column's edge, and it
  // crosses a column only where dagre kept a gap for it: only in the space between columns
  // does it run at a slant, where there is no box to run through.
  const main = dir === 'TB' ? 'y' : 'x';
  const cross = dir === 'TB' ? 'x' : 'y';
  const half = (id) => ((id === USERS ? USERS_BOX : box)[dir === 'TB' ? 'h' : 'w']) / 2;
  const columnHalf = new Map();
  for (const id of Object.keys(pos)) {
    const at = Math.round(pos[id][main]);
    columnHalf.set(at, Math.max(columnHalf.get(at) || 0, half(id)));
  }
  const pt = (m, c) => ({ [main]: m, [cross]: c });
  const routes = {};
  for (const { v, w } of g.edges()) {
    const a = pos[v];
    const b = pos[w];
    const bends = [pt(a[main] + half(v) + 6, a[cross])];
    for (const p of (g.edge(v, w).points || []).slice(1, -1)) {
      const colHalf = columnHalf.get(Math.round(p[main]));
      if (colHalf === undefined) bends.push(pt(p[main], p[cross]));
      else bends.push(pt(p[main] - colHalf - 6, p[cross]), pt(p[main] + colHalf + 6, p[cross]));
    }
    bends.push(pt(b[main] - half(w) - 6, b[cross]));
    routes[`${v}>${w}`] = bends;
  }
  const sz = (id) => (id === USERS ? USERS_BOX : box);
  const xs = Object.entries(pos).map(([id, p]) => [p.x - sz(id).w / 2, p.x + sz(id).w / 2]);
  const ys = Object.entries(pos).map(([id, p]) => [p.y - sz(id).h / 2, p.y + sz(id).h / 2]);
  const span = (r) => Math.max(...r.map((q) => q[1])) - Math.min(...r.map((q) => q[0]));
  return { pos, routes, width: span(xs), height: span(ys) };
}

// usersSpot is the users' box beside the entries: left of (or above) every box, level with
// the entries' middle.
export function usersSpot(design, pos, dir, box = BOX) {
  const ids = (design.components || []).map((c) => c.id).filter((id) => pos[id]);
  if (!ids.length) return { x: 0, y: 0 };
  const ent = entries(design).filter((id) => pos[id]);
  const src = ent.length ? ent : ids;
  const mean = (axis) => src.reduce((s, id) => s + pos[id][axis], 0) / src.length;
  if (dir === 'TB') return { x: mean('x'), y: Math.min(...ids.map((id) => pos[id].y)) - box.h / 2 - 36 - USERS_BOX.h / 2 };
  return { x: Math.min(...ids.map((id) => pos[id].x)) - box.w / 2 - 44 - USERS_BOX.w / 2, y: mean('y') };
}

// boxAt is the rectangle of a box centred on p.
export function boxAt(p, size = BOX, pad = 0) {
  return { x1: p.x - size.w / 2 - pad, y1: p.y - size.h / 2 - pad, x2: p.x + size.w / 2 + pad, y2: p.y + size.h / 2 + pad };
}

export function boxesOverlap(a, b) {
  return a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
}

// segmentCrossesBox says whether the segment a–b passes through the rectangle (Liang–Barsky).
export function segmentCrossesBox(a, b, r) {
  let t0 = 0;
  let t1 = 1;
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const clip = (p, q) => {
    if (p === 0) return q >= 0;
    const t = q / p;
    if (p < 0) {
      if (t > t1) return false;
      if (t > t0) t0 = t;
    } else {
      if (t < t0) return false;
      if (t < t1) t1 = t;
    }
    return true;
  };
  return clip(-dx, a.x - r.x1) && clip(dx, r.x2 - a.x) && clip(-dy, a.y - r.y1) && clip(dy, r.y2 - a.y) && t0 < t1;
}

// lines are every line of the design as polylines from centre to centre: {from, to, points}.
export function lines(design, pos, routes = {}) {
  const out = [];
  const add = (from, to) => {
    if (!pos[from] || !pos[to]) return;
    out.push({ from, to, points: [pos[from], ...(routes[`${from}>${to}`] || []), pos[to]] });
  };
  if (pos[USERS]) for (const id of entries(design)) add(USERS, id);
  for (const e of designEdges(design)) add(e.from, e.to);
  return out;
}

// conflicts lists what is wrong with a drawing: boxes on boxes, lines through boxes.
export function conflicts(design, pos, routes = {}, size = BOX) {
  const ids = [USERS, ...(design.components || []).map((c) => c.id)].filter((id) => pos[id]);
  const box = (id, pad) => boxAt(pos[id], id === USERS ? USERS_BOX : size, pad);
  const out = [];
  for (let i = 0; i < ids.length; i++) {
    for (let j = i + 1; j < ids.length; j++) if (boxesOverlap(box(ids[i], 2), box(ids[j], 2))) out.push(`${ids[i]} overlaps ${ids[j]}`);
  }
  for (const l of lines(design, pos, routes)) {
    for (const id of ids) {
      if (id === l.from || id === l.to) continue;
      const r = box(id, CLEARANCE);
      for (let k = 1; k < l.points.length; k++) {
        if (segmentCrossesBox(l.points[k - 1], l.points[k], r)) {
          out.push(`${l.from} → ${l.to} runs through ${id}`);
          break;
        }
      }
    }
  }
  return out;
}

// placeNew finds a place for the box id, which has none in pos yet, among boxes the player
// arranged: next to what it calls or what calls it (in the columns' direction dir), else
// below the column it belongs to, on the nearest spot where it overlaps no box, none of the
// lines (the users' included, which follow the entries) runs through a box, and the users'
// box stays clear. routes are the bends still valid for lines between unmoved boxes.
export function placeNew(design, id, pos, dir, routes = {}, box = BOX) {
  const comp = (design.components || []).find((c) => c.id === id);
  const placed = (design.components || []).filter((c) => c.id !== id && pos[c.id]).map((c) => c.id);
  if (!comp || !placed.length) return { x: 0, y: 0 };
  const main = dir === 'TB' ? 'y' : 'x';
  const cross = dir === 'TB' ? 'x' : 'y';
  const size = dir === 'TB' ? { main: box.h, cross: box.w } : { main: box.w, cross: box.h };
  const mainStep = size.main + (dir === 'TB' ? 36 : 40);
  const crossStep = size.cross + 18;
  const edges = designEdges(design);
  const callers = edges.filter((e) => e.to === id && pos[e.from]).map((e) => pos[e.from]);
  const callees = edges.filter((e) => e.from === id && pos[e.to]).map((e) => pos[e.to]);
  const mean = (ps, axis) => ps.reduce((s, p) => s + p[axis], 0) / ps.length;
  const all = placed.map((k) => pos[k]);
  const want = {};
  if (callers.length) {
    want[main] = Math.max(...callers.map((p) => p[main])) + mainStep;
    want[cross] = mean(callers, cross);
  } else if (callees.length) {
    want[main] = Math.min(...callees.map((p) => p[main])) - mainStep;
    want[cross] = mean(callees, cross);
  } else {
    want[main] = STORES.has(comp.type) ? Math.max(...all.map((p) => p[main])) : Math.min(...all.map((p) => p[main]));
    want[cross] = Math.max(...all.map((p) => p[cross])) + crossStep;
  }
  const candidates = [];
  for (let i = -4; i <= 4; i++) {
    for (let j = -10; j <= 10; j++) {
      const p = { [main]: want[main] + (i * mainStep) / 2, [cross]: want[cross] + (j * crossStep) / 2 };
      candidates.push({ p, cost: 2 * Math.abs(i) + Math.abs(j) + (i < 0 && callers.length ? 3 : 0) });
    }
  }
  candidates.sort((a, b) => a.cost - b.cost);
  const kept = Object.fromEntries(Object.entries(routes).filter(([k]) => !k.startsWith(`${USERS}>`) && !k.split('>').includes(id)));
  // What the player's own arrangement already has is not the new box's fault.
  const before = Object.fromEntries(placed.map((k) => [k, pos[k]]));
  before[USERS] = usersSpot(design, before, dir, box);
  const known = new Set(conflicts(design, before, kept, box));
  for (const { p } of candidates) {
    const trial = { ...before, [id]: p };
    trial[USERS] = usersSpot(design, trial, dir, box);
    if (conflicts(design, trial, kept, box).every((c) => known.has(c))) return p;
  }
  // Nothing near is free: beyond everything, across the columns.
  return { [main]: want[main], [cross]: Math.max(...all.map((q) => q[cross])) + 3 * crossStep };
}
