// The canvas's geometry without a browser (layout.js is plain code): for designs of up to
// twenty-four components drawn at random from a fixed seed, the phone's rows never put a box
// on a box or a line through a box, keep the width they promise, and run every line down the
// page; grouping alike components keeps every component and every line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rowsLayout, conflicts, groupAlike, designEdges, entries, BOX, NARROW_BOX, USERS } from '../web/dist/js/layout.js';

const KINDS = ['load_balancer', 'api_gateway', 'cdn', 'app_service', 'container_pool', 'serverless', 'cache', 'database', 'queue'];

// designs are random designs: components in order, each calling a few of the later ones (so
// the design has no cycle), now and then two alike ones.
function designs(count, seed = 7) {
  let s = seed;
  const rand = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const out = [];
  for (let d = 0; d < count; d++) {
    const n = 2 + Math.floor(rand() * 23);
    const components = Array.from({ length: n }, (_, i) => ({ id: `c${i}`, type: KINDS[Math.floor(rand() * KINDS.length)] }));
    const edges = [];
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) if (rand() < 2.2 / n) edges.push({ from: `c${i}`, to: `c${j}` });
    }
    // A twin of a random component: same kind, same callers, same callees.
    const twin = components[Math.floor(rand() * n)];
    components.push({ id: `${twin.id}b`, type: twin.type });
    for (const e of [...edges]) {
      if (e.from === twin.id) edges.push({ from: `${twin.id}b`, to: e.to });
      if (e.to === twin.id) edges.push({ from: e.from, to: `${twin.id}b` });
    }
    out.push({ components, edges });
  }
  return out;
}

test('rows on a phone: no box on a box, no line through a box, every line down the page, the width promised', () => {
  for (const [i, design] of designs(300).entries()) {
    for (const [box, most] of [[BOX, 3], [NARROW_BOX, 4], [NARROW_BOX, 2]]) {
      const laid = rowsLayout(design, { most, box });
      assert.deepEqual(conflicts(design, laid.pos, laid.routes, box), [], `design ${i}, ${most} boxes of ${box.w}`);
      for (const e of [...entries(design).map((id) => ({ from: USERS, to: id })), ...designEdges(design)]) {
        assert.ok(laid.pos[e.to].y > laid.pos[e.from].y, `design ${i}: ${e.from} → ${e.to} runs up the page`);
      }
      const xs = Object.values(laid.pos).map((p) => p.x);
      assert.ok(Math.max(...xs) - Math.min(...xs) + box.w <= laid.width + 0.5, `design ${i}: boxes wider than the layout says`);
      const rows = new Map();
      for (const id of design.components.map((c) => c.id)) rows.set(laid.pos[id].y, (rows.get(laid.pos[id].y) || 0) + 1);
      assert.ok(Math.max(...rows.values()) <= most, `design ${i}: a row of more than ${most} boxes`);
    }
  }
});

test('grouping alike components keeps every component and every line', () => {
  let grouped = 0;
  for (const [i, design] of designs(300).entries()) {
    const { design: drawn, groups, groupOf } = groupAlike(design);
    grouped += Object.keys(groups).length;
    const shown = drawn.components.flatMap((c) => c.members || [c.id]).sort();
    assert.deepEqual(shown, design.components.map((c) => c.id).sort(), `design ${i}`);
    const as = (id) => groupOf[id] || id;
    const want = [...new Set(designEdges(design).map((e) => `${as(e.from)}>${as(e.to)}`))].sort();
    assert.deepEqual(drawn.edges.map((e) => `${e.from}>${e.to}`).sort(), want, `design ${i}`);
    for (const members of Object.values(groups)) {
      const kinds = new Set(members.map((id) => design.components.find((c) => c.id === id).type));
      assert.equal(kinds.size, 1, `design ${i}: a group of different kinds`);
    }
  }
  assert.ok(grouped > 100, `only ${grouped} groups in 300 designs with twins`);
});
