// End-to-end: the canvas holds a real architecture. A level that allows twelve components is
// published through the API (the admin's token); a player adds seven components to its five
// by pressing the palette's buttons (no drop point: the canvas places them) and connects them
// from the side panel, at 1280×800 (all seven first, then the connections) and again on a
// phone (390×844, each connected as soon as it can be). After every step and after
// Fit, the canvas model must show every box on screen, no text under 11 px, no box on another
// and no line through a box it does not join; every line runs from its caller's column to a
// later one. Columns run from the users (left) to the data stores (right) on a desktop, top
// to bottom on a phone. A twenty-component design (two tiers of alike app servers) is opened
// at both sizes, then its last component is added and connected: the same checks hold with
// alike components drawn as one double box, after showing every box, after opening one group
// by pressing it, and after a box is dragged (each box then the player's own, its place and
// the bends of its lines kept across a reload); the time each layout took is printed, not asserted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ADMIN_TOKEN, ART, BASE, launch, snapper, watch } from './lib.js';

const SLUG = `canvas-twelve-${Date.now().toString(36)}`;
const SLUG20 = `canvas-twenty-${Date.now().toString(36)}`;
// TWENTY is a shop of twenty components less one app server, which the test adds (the level
// view names it "app"): a CDN before two load balancers, a tier of three alike app servers
// (app-a among them, which the level's chaos strikes), one of two, two alike writers through a
// queue, one more writer, and the data stores; a design the level accepts and runs.
const TWENTY = (() => {
  const kinds = {
    cdn: 'cdn', lb: 'load_balancer', 'lb-2': 'load_balancer', cache: 'cache', 'cache-2': 'cache', 'cache-3': 'cache',
    db: 'database', 'db-2': 'database', 'db-3': 'database', queue: 'queue', 'queue-2': 'queue',
  };
  for (const id of ['app-a', 'app-2', 'app-3', 'app-4', 'app-5', 'app-6', 'app-7', 'app-8']) kinds[id] = 'app_service';
  const edges = [
    ['cdn', 'lb'], ['cdn', 'lb-2'], ['lb', 'app-a'], ['lb', 'app-2'], ['lb', 'app-3'], ['lb-2', 'app-4'], ['lb-2', 'app-5'],
    ['lb-2', 'app-6'], ['app-a', 'cache'], ['app-2', 'cache'], ['app-3', 'cache'], ['app-a', 'db'], ['app-2', 'db'], ['app-3', 'db'],
    ['app-4', 'cache-2'], ['app-5', 'cache-2'], ['app-4', 'db-2'], ['app-5', 'db-2'], ['app-6', 'queue-2'], ['app-6', 'cache-3'],
    ['lb', 'app-7'], ['lb', 'app-8'], ['app-7', 'queue'], ['app-8', 'queue'], ['app-7', 'cache-3'], ['app-8', 'cache-3'],
    ['queue', 'db-3'], ['queue-2', 'db-3'],
  ];
  return {
    components: Object.entries(kinds).map(([id, type]) => ({ id, type })),
    edges: edges.map(([from, to]) => ({ from, to })),
  };
})();
const ADDED = ['cdn', 'load_balancer', 'app_service', 'app_service', 'cache', 'database', 'queue'];
// The ids the level view gives those components, and the connections drawn from the panel.
const CONNECTIONS = [
  ['cdn', 'lb'], ['lb', 'app'], ['lb-2', 'app-2'], ['app', 'queue'], ['app', 'cache-2'],
  ['app-2', 'db-2'], ['queue', 'db'], ['app-2', 'cache'],
];

let browser;
const problems = [];

before(async () => {
  assert.ok(ADMIN_TOKEN, 'ADMIN_TOKEN is needed to publish the test level');
  const level = await (await fetch(`${BASE}/v1/challenges/black-friday`)).json();
  const def = structuredClone(level.definition);
  def.slug = SLUG;
  def.title = 'Twelve boxes';
  const c = def.catalog.components;
  c.load_balancer.max_count = 2;
  c.app_service.max_count = 4;
  c.cache.max_count = 2;
  c.database.max_count = 2;
  const res = await fetch(`${BASE}/v1/challenges`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify(def),
  });
  assert.equal(res.status, 201, await res.text());
  def.slug = SLUG20;
  def.title = 'Twenty boxes';
  Object.assign(c.load_balancer, { max_count: 2 });
  Object.assign(c.app_service, { max_count: 9 });
  Object.assign(c.cache, { max_count: 3 });
  Object.assign(c.database, { max_count: 3 });
  Object.assign(c.queue, { max_count: 2 });
  const res20 = await fetch(`${BASE}/v1/challenges`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify(def),
  });
  assert.equal(res20.status, 201, await res20.text());
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

// drawingProblems reads the canvas model: every box (the users' included) inside the canvas,
// no two boxes overlapping, no line through a box other than its ends (the line as drawn:
// its end points and its bends), the labels at 11 px or more.
function drawingProblems(p) {
  return p.evaluate(() => {
    const host = document.querySelector('.cy-host');
    const { cy } = host.bpDiagram;
    const out = [];
    const nodes = cy.nodes('.comp, .group, .users');
    const box = (n) => n.boundingBox({ includeLabels: false, includeOverlays: false });
    const w = host.clientWidth;
    const hh = host.clientHeight;
    nodes.forEach((n) => {
      const r = n.renderedBoundingBox({ includeLabels: false, includeOverlays: false });
      if (r.x1 < -1 || r.y1 < -1 || r.x2 > w + 1 || r.y2 > hh + 1) out.push(`${n.id()} is off screen`);
    });
    for (let i = 0; i < nodes.length; i++) {
      for (let j = i + 1; j < nodes.length; j++) {
        const a = box(nodes[i]);
        const b = box(nodes[j]);
        if (a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2) out.push(`${nodes[i].id()} overlaps ${nodes[j].id()}`);
      }
    }
    const crosses = (p, q, r) => {
      // Liang–Barsky: does the segment p–q enter the rectangle r?
      let t0 = 0;
      let t1 = 1;
      const dx = q.x - p.x;
      const dy = q.y - p.y;
      for (const [pp, qq] of [[-dx, p.x - r.x1], [dx, r.x2 - p.x], [-dy, p.y - r.y1], [dy, r.y2 - p.y]]) {
        if (pp === 0) {
          if (qq < 0) return false;
          continue;
        }
        const t = qq / pp;
        if (pp < 0) t0 = Math.max(t0, t);
        else t1 = Math.min(t1, t);
        if (t0 >= t1) return false;
      }
      return true;
    };
    cy.edges('.link, .ingress').forEach((e) => {
      const pts = [e.sourceEndpoint(), ...(e.hasClass('routed') ? e.segmentPoints() || [] : []), e.targetEndpoint()];
      nodes.forEach((n) => {
        if (n.same(e.source()) || n.same(e.target())) return;
        const r = box(n);
        for (let k = 1; k < pts.length; k++) {
          if (crosses(pts[k - 1], pts[k], r)) {
            out.push(`${e.data('source')} → ${e.data('target')} runs through ${n.id()}`);
            return;
          }
        }
      });
    });
    const px = host.bpDiagram.smallestTextPx();
    if (px < 11 - 0.01) out.push(`labels at ${px.toFixed(1)} px`);
    return out;
  });
}

// canvasBoxes are the components drawn, in a box of their own or in a group's.
function canvasBoxes(p) {
  return p.evaluate(() => {
    const d = document.querySelector('.cy-host').bpDiagram;
    return [...d.cy.nodes('.comp').map((n) => n.id()), ...d.cy.nodes('.group').flatMap((n) => d.view.groups[n.id()])].sort();
  });
}

// flow reads which way the columns run and checks that every line runs that way (from the
// caller's column to a later one: users first, data stores after whatever calls them), and
// whether the data stores stand in the last column.
function flow(p) {
  return p.evaluate(() => {
    const d = document.querySelector('.cy-host').bpDiagram;
    const axis = d.dir === 'TB' ? 'y' : 'x';
    const at = (id) => d.cy.getElementById(d.view.groupOf[id] || id).position(axis);
    const backwards = d.cy.edges('.link, .ingress')
      .filter((e) => e.target().position(axis) <= e.source().position(axis))
      .map((e) => `${e.data('source')} → ${e.data('target')}`);
    const last = Math.max(...d.cy.nodes('.comp, .group').map((n) => n.position(axis)));
    const storesLast = ['db', 'db-2', 'cache', 'cache-2'].every((id) => Math.abs(at(id) - last) < 1);
    return { dir: d.dir, backwards, storesLast };
  });
}

// hideToast takes the last "Added …" message off the canvas before a screenshot.
async function hideToast(page) {
  await page.evaluate(() => document.getElementById('toast')?.classList.remove('show'));
  await page.locator('#toast').waitFor({ state: 'hidden' });
}

async function add(page, kind) {
  await page.locator(`.pal-item[data-kind="${kind}"]`).click();
  assert.deepEqual(await drawingProblems(page), [], `after adding a ${kind}`);
}

async function connect(page, from, to) {
  await page.locator(`.comp-chips [data-select="${from}"]`).click();
  await page.getByLabel(`Connect ${from} to`).selectOption(to);
  await page.locator('#connect-btn').click();
  await page.waitForTimeout(50);
  assert.deepEqual(await drawingProblems(page), [], `after connecting ${from} → ${to}`);
}

// build adds the seven components, then connects them (oneByOne: each as soon as both its
// ends are on the canvas, as a player on a phone does), checking the drawing at every step.
async function build(page, snap, label, { oneByOne = false } = {}) {
  await page.goto(`${BASE}/#/levels/${SLUG}`);
  await page.locator('.cy-host canvas').first().waitFor();
  assert.deepEqual(await drawingProblems(page), [], 'the starting design');
  const ids = new Set(await canvasBoxes(page));
  const pending = [...CONNECTIONS];
  for (const kind of ADDED) {
    await add(page, kind);
    for (const id of await canvasBoxes(page)) ids.add(id);
    while (oneByOne && pending.some(([f, t]) => ids.has(f) && ids.has(t))) {
      const i = pending.findIndex(([f, t]) => ids.has(f) && ids.has(t));
      const [[from, to]] = pending.splice(i, 1);
      await connect(page, from, to);
    }
  }
  assert.equal((await canvasBoxes(page)).length, 12);
  for (const [from, to] of pending) await connect(page, from, to);
  await page.getByRole('button', { name: 'Fit' }).click();
  assert.deepEqual(await drawingProblems(page), [], 'after Fit');
  const order = await flow(page);
  assert.deepEqual(order.backwards, [], 'lines running against the columns');
  await page.locator('.cy-host').scrollIntoViewIfNeeded();
  await hideToast(page);
  await snap(`${label}-twelve`, page);
  await page.locator('.canvas-wrap').screenshot({ path: join(ART, `canvas-${label}-twelve-canvas-only.png`) });
  // Auto layout keeps all of it.
  await page.getByRole('button', { name: 'Auto layout' }).click();
  assert.deepEqual(await drawingProblems(page), [], 'after Auto layout');
  return order;
}

test('a twelve-component design built and fitted at 1280×800 runs left to right', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  watch(page, problems);
  const order = await build(page, snapper('canvas'), 'desktop');
  assert.equal(order.dir, 'LR');
  assert.ok(order.storesLast, 'the data stores are not in the last column');
  await page.close();
});

test('the same design built and fitted on a phone (390×844)', async () => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  watch(page, problems);
  const order = await build(page, snapper('canvas-phone'), 'phone', { oneByOne: true });
  assert.equal(order.dir, 'TB');
  await page.close();
});

// onScreen scrolls the page to a box of the canvas and gives its centre on the screen.
async function onScreen(page, id) {
  const at = await page.evaluate((id) => {
    const d = document.querySelector('.cy-host').bpDiagram;
    const p = d.cy.getElementById(id).renderedPosition();
    window.scrollTo(0, d.host.getBoundingClientRect().top + window.scrollY + p.y - window.innerHeight / 2);
    const r = d.host.getBoundingClientRect();
    return { x: r.left + p.x, y: r.top + p.y };
  }, id);
  // The canvas learns where it now is on the page from the scroll event, a frame later.
  await page.evaluate(() => new Promise((r) => { requestAnimationFrame(() => requestAnimationFrame(r)); }));
  return at;
}

// twenty opens the twenty-component design, adds its twentieth component and connects it,
// shows every box, then groups alike ones again and opens one group by pressing it, checking
// the drawing at every step.
async function twenty(page, snap, label, t) {
  // The nineteen components are the page's first design; a reload keeps the player's.
  await page.addInitScript(([slug, design]) => {
    if (!localStorage.getItem(`bp.design.${slug}`)) localStorage.setItem(`bp.design.${slug}`, JSON.stringify(design));
  }, [SLUG20, TWENTY]);
  await page.goto(`${BASE}/#/levels/${SLUG20}`);
  await page.locator('.cy-host canvas').first().waitFor();
  const took = () => page.evaluate(() => document.querySelector('.cy-host').bpDiagram.arrangeMs.toFixed(1));
  t.diagnostic(`${label}: 19 components laid out in ${await took()} ms`);
  assert.deepEqual(await drawingProblems(page), [], 'the nineteen components');
  await add(page, 'app_service');
  await connect(page, 'lb-2', 'app');
  await connect(page, 'app', 'queue-2');
  t.diagnostic(`${label}: 20 components laid out in ${await took()} ms`);
  assert.equal((await canvasBoxes(page)).length, 20);
  const groups = () => page.evaluate(() => Object.values(document.querySelector('.cy-host').bpDiagram.view.groups).map((m) => m.join(' ')).sort());
  assert.deepEqual(await groups(), ['app-4 app-5', 'app-7 app-8', 'app-a app-2 app-3']);
  await page.getByRole('button', { name: 'Fit' }).click();
  assert.deepEqual(await drawingProblems(page), [], 'after Fit');
  assert.deepEqual((await flow(page)).backwards, [], 'lines running against the columns');
  // A run plays back on the groups too: each shows its busiest member's load and status.
  await page.locator('#run').click();
  await page.locator('#verdict').waitFor({ timeout: 60_000 });
  await page.waitForTimeout(1500);
  const played = await page.evaluate(() => document.querySelector('.cy-host').bpDiagram.cy.getElementById('group:app-a+app-2+app-3').data('label'));
  assert.match(played, /^\S+ APP ×3( ⚡)?\n\d[\d,]*% (ok|busy|saturated|failed|idle)/);
  await page.locator('.cy-host').scrollIntoViewIfNeeded();
  await hideToast(page);
  await snap(`${label}-twenty-grouped`, page);
  await page.getByRole('button', { name: 'Show each' }).click();
  assert.deepEqual(await groups(), []);
  assert.deepEqual(await drawingProblems(page), [], 'every box shown');
  assert.deepEqual((await flow(page)).backwards, [], 'lines running against the columns, every box shown');
  await snap(`${label}-twenty-every-box`, page);
  await page.getByRole('button', { name: 'Group alike' }).click();
  assert.equal((await groups()).length, 3);
  // Pressing a group's box shows its members; choosing a member in the side panel does too.
  const at = await onScreen(page, 'group:app-7+app-8');
  await page.mouse.click(at.x, at.y);
  assert.deepEqual(await groups(), ['app-4 app-5', 'app-a app-2 app-3']);
  assert.deepEqual(await drawingProblems(page), [], 'a group opened');
  await page.locator('.comp-chips [data-select="app-4"]').click();
  assert.deepEqual(await groups(), ['app-a app-2 app-3']);
  assert.deepEqual(await drawingProblems(page), [], 'a member chosen in the side panel');
  // Dragging a box arranges the design by hand: every component a box of its own, kept
  // across a reload.
  const cdn = await onScreen(page, 'cdn');
  await page.mouse.move(cdn.x, cdn.y);
  await page.mouse.down();
  await page.mouse.move(cdn.x - 20, cdn.y + 4, { steps: 5 });
  await page.mouse.up();
  assert.deepEqual(await groups(), []);
  assert.equal(await page.evaluate(() => document.querySelector('.cy-host').bpDiagram.auto), false);
  assert.equal(await page.evaluate(() => document.querySelector('.cy-host').bpDiagram.cy.nodes('.comp').length), 20);
  assert.deepEqual(await drawingProblems(page), [], 'a box dragged while alike ones were grouped');
  const drawn = await bentLines(page);
  assert.ok(Object.keys(drawn).length > 0, 'some lines bend around boxes');
  await page.reload();
  await page.locator('.cy-host canvas').first().waitFor();
  assert.deepEqual(await groups(), []);
  assert.equal(await page.evaluate(() => document.querySelector('.cy-host').bpDiagram.cy.nodes('.comp').length), 20);
  // A reload keeps the places and the bends of the lines between them (a phone's narrower
  // boxes kept).
  assert.deepEqual(await drawingProblems(page), [], 'the arrangement by hand after a reload');
  assert.deepEqual(await bentLines(page), drawn, 'the bends after a reload');
}

// bentLines are the lines drawn with bends, each with its bends (canvas units, rounded).
function bentLines(p) {
  return p.evaluate(() => {
    const { cy } = document.querySelector('.cy-host').bpDiagram;
    const out = {};
    cy.edges('.routed').forEach((e) => {
      out[e.id()] = (e.segmentPoints() || []).map((q) => [Math.round(q.x), Math.round(q.y)]);
    });
    return out;
  });
}

test('a twenty-component design at 1280×800, alike components grouped', async (t) => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  watch(page, problems);
  await twenty(page, snapper('canvas-twenty'), 'desktop', t);
  await page.close();
});

test('the twenty-component design on a phone (390×844)', async (t) => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  watch(page, problems);
  await twenty(page, snapper('canvas-twenty-phone'), 'phone', t);
  assert.equal(await page.evaluate(() => document.querySelector('.cy-host').bpDiagram.dir), 'TB');
  await page.close();
});

test('no script errors', () => {
  assert.deepEqual(problems, []);
});
