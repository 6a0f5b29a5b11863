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

// ROW_GAP is the space between two boxes of a row, LANE the distance between two lines
// running side by side (in a gap between rows, or down the side of the rows).
const ROW_GAP = 14;
const LANE = 7;

// rowsLayout places the boxes in rows from the users (top) down, at most `most` boxes a row,
// each row ordered after the row above so that lines run as straight as they can. Lines are
// drawn square: down from their box into the gap below its row, across that gap on a track
// of their own, and down into the box they call; a line that skips rows (or runs back up)
// goes across to a lane beside the rows, along it, and across the gap above its target.
// Boxes stand only in rows and lines run only in gaps and lanes, so no line crosses a box,
// and the width is known beforehand: `most` boxes and the lanes. It costs one pass over the
// design, where dagre's placement of a design that does not fit a phone costs many.
export function rowsLayout(design, { most = 4, box = NARROW_BOX, storesLast = true } = {}) {
  const comps = design.components || [];
  const edges = designEdges(design);
  const ent = entries(design);
  const linkedIds = new Set([...ent, ...edges.flatMap((e) => [e.from, e.to])]);
  const linked = comps.filter((c) => linkedIds.has(c.id));
  const col = wrapColumns({ components: linked, edges }, columns({ components: linked, edges }, storesLast), most);
  const row = { [USERS]: 0 };
  for (const c of linked) row[c.id] = col[c.id];
  const lastLinked = Math.max(0, ...Object.values(row));
  comps.filter((c) => !linkedIds.has(c.id)).forEach((c, i) => {
    row[c.id] = lastLinked + 1 + Math.floor(i / most);
  });
  const rowCount = Math.max(0, ...Object.values(row)) + 1;
  const rows = Array.from({ length: rowCount }, () => []);
  rows[0].push(USERS);
  for (const c of comps) rows[row[c.id]].push(c.id);
  const callers = new Map(comps.map((c) => [c.id, []]));
  for (const id of ent) callers.get(id).push(USERS);
  for (const e of edges) callers.get(e.to).push(e.from);

  // Across: each row after the rows above it, every box as near the middle of its callers as
  // the row's order and spacing allow, within the width of `most` boxes.
  const step = box.w + ROW_GAP;
  const half = ((most - 1) * step) / 2;
  const x = { [USERS]: 0 };
  for (let r = 1; r < rowCount; r++) {
    const want = (id) => {
      const xs = callers.get(id).filter((c) => row[c] < r).map((c) => x[c]);
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
    };
    const ids = rows[r];
    const wanted = ids.map((id, i) => ({ id, i, at: want(id) }));
    // Boxes without callers above keep the design's order after the others.
    wanted.sort((a, b) => (a.at ?? Infinity) - (b.at ?? Infinity) || a.i - b.i);
    const n = wanted.length;
    const xs = wanted.map((w, i) => w.at ?? (i - (n - 1) / 2) * step);
    for (let i = 0; i < n; i++) xs[i] = Math.max(xs[i], -half + i * step, i ? xs[i - 1] + step : -Infinity);
    for (let i = n - 1; i >= 0; i--) xs[i] = Math.min(xs[i], half - (n - 1 - i) * step, i < n - 1 ? xs[i + 1] - step : Infinity);
    rows[r] = wanted.map((w) => w.id);
    wanted.forEach((w, i) => {
      x[w.id] = Math.round(xs[i]);
    });
  }
  const ins = rows[1] ? ent.filter((id) => row[id] === 1) : [];
  x[USERS] = ins.length ? ins.reduce((s, id) => s + x[id], 0) / ins.length : 0;

  // The lines: each horizontal run takes a track of its gap (gap r lies below row r), each
  // run along the side a lane, left or right of the rows, whichever is nearer.
  const size = (id) => (id === USERS ? USERS_BOX : box);
  const tracks = Array.from({ length: rowCount }, () => 0);
  const lanes = { left: [], right: [] };
  const laneFor = (side, lo, hi) => {
    let k = lanes[side].findIndex((taken) => taken.every(([a, b]) => hi < a || b < lo));
    if (k < 0) k = lanes[side].push([]) - 1;
    lanes[side][k].push([lo, hi]);
    return k;
  };
  const plans = [];
  for (const [from, to] of [...ent.map((id) => [USERS, id]), ...edges.map((e) => [e.from, e.to])]) {
    const a = row[from];
    const b = row[to];
    if (b === a + 1) {
      plans.push({ from, to, gap: a, track: x[from] === x[to] ? -1 : tracks[a]++ });
    } else {
      const side = (x[from] + x[to]) / 2 < 0 ? 'left' : 'right';
      const lo = Math.min(a, b - 1);
      const hi = Math.max(a, b - 1);
      plans.push({ from, to, out: a, outTrack: tracks[a]++, into: b - 1, intoTrack: tracks[b - 1]++, side, lane: laneFor(side, lo, hi) });
    }
  }

  // Down: each gap as deep as its tracks need.
  const y = {};
  const gapTop = [];
  let top = 0;
  for (let r = 0; r < rowCount; r++) {
    const tall = Math.max(...rows[r].map((id) => size(id).h), box.h);
    for (const id of rows[r]) y[id] = top + tall / 2;
    gapTop[r] = top + tall;
    top += tall + Math.max(30, 2 * CLEARANCE + 10 + (tracks[r] + 1) * LANE);
  }
  const trackY = (gap, k) => gapTop[gap] + CLEARANCE + 5 + (k + 1) * LANE;
  const laneX = (side, k) => (side === 'left' ? -half - box.w / 2 - CLEARANCE - 6 - k * LANE : half + box.w / 2 + CLEARANCE + 6 + k * LANE);
  const routes = {};
  for (const p of plans) {
    const key = `${p.from}>${p.to}`;
    if (p.track === -1) continue;
    if (p.gap !== undefined) {
      const ty = trackY(p.gap, p.track);
      routes[key] = [{ x: x[p.from], y: ty }, { x: x[p.to], y: ty }];
      continue;
    }
    const lx = laneX(p.side, p.lane);
    const y1 = trackY(p.out, p.outTrack);
    const y2 = trackY(p.into, p.intoTrack);
    routes[key] = [{ x: x[p.from], y: y1 }, { x: lx, y: y1 }, { x: lx, y: y2 }, { x: x[p.to], y: y2 }];
  }
  const pos = Object.fromEntries(Object.keys(row).map((id) => [id, { x: x[id], y: y[id] }]));
  const left = -half - box.w / 2 - (lanes.left.length ? CLEARANCE + 6 + lanes.left.length * LANE : 0);
  const right = half + box.w / 2 + (lanes.right.length ? CLEARANCE + 6 + lanes.right.length * LANE : 0);
  const bottom = Math.max(...Object.keys(row).map((id) => y[id] + size(id).h / 2));
  return { pos, routes, width: right - left, height: bottom };
}

// GROUP_FROM is the size of design from which alike components are drawn as one box: below
// it every box fits the canvas readably, and a box that merges with another as soon as it is
// connected would only surprise.
export const GROUP_FROM = 10;

// groupKey names a group by its members.
export function groupKey(members) {
  return `group:${members.join('+')}`;
}

// groupAlike draws the components that are alike as one box: of one type, called by the same
// components (or the users) and calling the same ones, at least two of them, so the group's
// lines are exactly each member's lines. apart holds the keys of groups to draw as separate
// boxes. It answers {design, groups: {key: [member ids]}, groupOf: {member id: key}}: the
// design as drawn (a group is a component {id: key, type, members}) and who is in which box.
export function groupAlike(design, apart = new Set()) {
  const comps = design.components || [];
  const edges = designEdges(design);
  const ent = new Set(entries(design));
  const linked = new Set([...ent, ...edges.flatMap((e) => [e.from, e.to])]);
  const sig = (c) => {
    const callers = edges.filter((e) => e.to === c.id).map((e) => e.from).sort();
    const callees = edges.filter((e) => e.from === c.id).map((e) => e.to).sort();
    if (callers.includes(c.id) || callees.includes(c.id)) return null;
    return JSON.stringify([c.type, ent.has(c.id), callers, callees]);
  };
  const bySig = new Map();
  for (const c of comps) {
    const k = linked.has(c.id) ? sig(c) : null;
    if (k === null) continue;
    if (!bySig.has(k)) bySig.set(k, []);
    bySig.get(k).push(c.id);
  }
  const groups = {};
  const groupOf = {};
  for (const members of bySig.values()) {
    const key = groupKey(members);
    if (members.length < 2 || apart.has(key)) continue;
    groups[key] = members;
    for (const id of members) groupOf[id] = key;
  }
  if (!Object.keys(groups).length) return { design, groups, groupOf };
  const drawn = (id) => groupOf[id] || id;
  const seen = new Set();
  const out = { ...design, components: [], edges: [] };
  for (const c of comps) {
    const id = drawn(c.id);
    if (seen.has(id)) continue;
    seen.add(id);
    out.components.push(groups[id] ? { id, type: c.type, members: groups[id] } : c);
  }
  const links = new Set();
  for (const e of edges) {
    const from = drawn(e.from);
    const to = drawn(e.to);
    if (links.has(`${from}>${to}`)) continue;
    links.add(`${from}>${to}`);
    out.edges.push({ ...e, from, to });
  }
  return { design: out, groups, groupOf };
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
