// End-to-end: a player plays in a real browser (Debian's Chromium, headless, driven by
// playwright-core) against the server on loopback. run.sh starts the server and sets
// BASE_URL; screenshots go to ARTIFACTS (artifacts/e2e).
//
// The design is built on the canvas only: components dragged from the palette, connected
// by dragging from a box's handle to another box, removed with the Delete key. Every
// screen it visits is checked for text smaller than 11 px and for elements wider than the
// viewport, at 1280×800 and again at 390×844.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { MIN_TEXT_PX, screenProblems } from './lib.js';

const BASE = process.env.BASE_URL || 'http://127.0.0.1:8080';
const ART = process.env.ARTIFACTS || 'artifacts/e2e';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const STEP = 15_000; // the longest wait for any one thing

mkdirSync(ART, { recursive: true });
let context;
let page;
let userDataDir;
const problems = [];
let shot = 0;

// snap keeps a screenshot and checks the screen: no text below 11 px (the canvas's labels
// included), no element wider than the viewport.
async function snap(name, p = page) {
  shot += 1;
  await p.screenshot({ path: join(ART, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  const bad = await screenProblems(p);
  assert.deepEqual(bad, [], `${name}: ${bad.join('; ')}`);
}

before(async () => {
  userDataDir = mkdtempSync(join(tmpdir(), 'bp-e2e-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run', '--disable-quic', '--disable-sync',
    ],
    viewport: { width: 1280, height: 800 },
  });
  page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(STEP);
  watch(page);
});

function watch(p) {
  p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  p.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  p.on('dialog', (d) => d.accept());
}

after(async () => {
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

// --- The canvas, as a player's mouse sees it ---------------------------------------------

// showCanvas scrolls the canvas into view and waits a frame or two: Cytoscape learns where
// its container moved from the scroll event.
async function showCanvas(p) {
  await p.locator('.cy-host').scrollIntoViewIfNeeded();
  await p.waitForTimeout(120);
}

// boxAt is the page position of a component's box on the canvas (null if absent), with the
// canvas scrolled into view.
async function boxAt(p, id) {
  await showCanvas(p);
  return p.evaluate((cid) => {
    const host = document.querySelector('.cy-host');
    const n = host.bpDiagram.cy.getElementById(cid);
    if (!n.nonempty()) return null;
    const r = host.getBoundingClientRect();
    const rp = n.renderedPosition();
    const w = n.renderedWidth();
    return { x: r.left + rp.x, y: r.top + rp.y, right: r.left + rp.x + w / 2 };
  }, id);
}

function canvasBoxes(p) {
  return p.evaluate(() => document.querySelector('.cy-host').bpDiagram.cy.nodes('.comp').map((n) => n.id()).sort());
}

function canvasEdges(p) {
  return p.evaluate(() => document.querySelector('.cy-host').bpDiagram.cy.edges('.link').map((e) => `${e.data('source')}>${e.data('target')}`).sort());
}

async function canvasPoint(p, fx, fy) {
  const r = await p.locator('.cy-host').boundingBox();
  return { x: r.x + r.width * fx, y: r.y + r.height * fy };
}

// dragFromPalette drags a palette entry onto the canvas at a share of its width and height.
async function dragFromPalette(p, kind, fx, fy) {
  await showCanvas(p);
  const src = await p.locator(`.pal-item[data-kind="${kind}"]`).boundingBox();
  const to = await canvasPoint(p, fx, fy);
  await p.mouse.move(src.x + src.width / 2, src.y + src.height / 2);
  await p.mouse.down();
  await p.mouse.move(src.x + src.width / 2 + 20, src.y + src.height / 2 + 5, { steps: 3 });
  await p.mouse.move(to.x, to.y, { steps: 12 });
  await p.mouse.up();
}

// connectOnCanvas hovers the source box, grabs its handle and drops it on the target box.
async function connectOnCanvas(p, from, to) {
  const a = await boxAt(p, from);
  await p.mouse.move(a.x, a.y, { steps: 3 });
  await p.waitForTimeout(100);
  const b = await boxAt(p, to);
  await p.mouse.move(a.right, a.y, { steps: 3 });
  await p.mouse.down();
  await p.mouse.move((a.right + b.x) / 2, (a.y + b.y) / 2 + 10, { steps: 8 });
  await p.mouse.move(b.x, b.y, { steps: 8 });
  await p.waitForTimeout(200);
  await p.mouse.up();
}

async function deleteOnCanvas(p, id) {
  const a = await boxAt(p, id);
  await p.mouse.click(a.x, a.y);
  await p.keyboard.press('Delete');
}

async function openLevel(p, slug) {
  await p.goto(`${BASE}/#/levels/${slug}`);
  await p.locator('#run').waitFor();
  await p.locator('.cy-host canvas').first().waitFor();
}

// --- The tests ------------------------------------------------------------------------------

test('the screen check catches small text and elements wider than the viewport', async () => {
  await page.goto(`${BASE}/`);
  await page.locator('table.levels tbody tr').first().waitFor();
  assert.deepEqual(await screenProblems(page), []);
  await page.evaluate(() => {
    document.querySelector('main').append(Object.assign(document.createElement('p'), { id: 'tiny', textContent: 'tiny', style: 'font-size: 10px' }));
    document.querySelector('main').append(Object.assign(document.createElement('div'), { id: 'wide', textContent: 'wide', style: 'width: 2000px' }));
  });
  const found = (await screenProblems(page)).join('\n');
  assert.match(found, /p#tiny "tiny" is 10px/);
  assert.match(found, /div#wide spans/);
  await page.evaluate(() => document.querySelectorAll('#tiny, #wide').forEach((e) => e.remove()));
});

test('levels are listed with their targets', async () => {
  await page.goto(`${BASE}/`);
  const rows = page.locator('table.levels tbody tr');
  await rows.first().waitFor();
  assert.ok((await rows.count()) >= 1, 'no levels listed');
  await page.locator('table.levels tbody td', { hasText: '≤' }).first().waitFor();
  await snap('levels');
});

test('a design built on the canvas shows its prices and cost before it runs, then fails and says why', async () => {
  const tutorial = page.locator('table.levels tbody tr', { has: page.locator('.diff-tutorial') }).first();
  await tutorial.getByRole('link').click();
  await page.locator('#run').waitFor();
  await page.locator('.cy-host canvas').first().waitFor();

  // The clients' behaviour is on the level page before any run.
  assert.match(await page.locator('#client').innerText(), /give up on a request after 1,000 ms and retry a failed or timed-out request up to 1 time, immediately \(no backoff\), with no retry budget/);
  // Sent at once, a retry meets what refused it: the level says so.
  assert.match(await page.locator('#client').innerText(), /A retry sent at once to a component that has just refused it, with no other way in .* is refused again\./);

  // Every instance type shows its price and what it buys.
  const palette = await page.locator('.palette').innerText();
  assert.match(palette, /app\.small: \$0\.055\/h per replica/);
  assert.match(palette, /6 workers per replica/);
  assert.match(palette, /db\.standard: \$0\.164\/h per node/);
  assert.match(palette, /10 connections per node/);

  // Start from an empty canvas: select each box and press Delete.
  for (const id of await canvasBoxes(page)) await deleteOnCanvas(page, id);
  assert.deepEqual(await canvasBoxes(page), []);
  assert.match(await page.locator('#cost-estimate').innerText(), /\$0\.000\/h of a \$0\.350\/h budget/);

  // Drag an app and a database from the palette; connect them by dragging.
  await dragFromPalette(page, 'app_service', 0.35, 0.5);
  await dragFromPalette(page, 'database', 0.75, 0.5);
  assert.deepEqual(await canvasBoxes(page), ['app', 'db']);
  await snap('canvas-dropped');
  await connectOnCanvas(page, 'app', 'db');
  assert.deepEqual(await canvasEdges(page), ['app>db']);

  // A connection is selected on the canvas and deleted with the key, then drawn again.
  const mid = await page.evaluate(() => {
    const host = document.querySelector('.cy-host');
    const r = host.getBoundingClientRect();
    const m = host.bpDiagram.cy.getElementById('e:app>db').renderedMidpoint();
    return { x: r.left + m.x, y: r.top + m.y };
  });
  await page.mouse.click(mid.x, mid.y);
  assert.match(await page.locator('.side-box').innerText(), /Connection app → db/);
  await page.keyboard.press('Delete');
  assert.deepEqual(await canvasEdges(page), []);
  await connectOnCanvas(page, 'app', 'db');
  assert.deepEqual(await canvasEdges(page), ['app>db']);

  // Zooming out stops before the labels get smaller than 11 px.
  for (let i = 0; i < 8; i++) await page.getByRole('button', { name: 'Zoom out' }).click();
  const px = await page.evaluate(() => document.querySelector('.cy-host').bpDiagram.smallestTextPx());
  assert.ok(px >= 11 - 0.01, `labels at ${px}px`);
  await page.getByRole('button', { name: 'Fit' }).click();

  // The live estimate: one app.small replica and one db.standard node.
  const cost = await page.locator('#cost-estimate').innerText();
  assert.match(cost, /Estimated cost: \$0\.219\/h of a \$0\.350\/h budget — within budget/);
  assert.match(cost, /app \$0\.055\/h · db \$0\.164\/h/);

  // Selecting a box opens its side panel with its price.
  const a = await boxAt(page, 'app');
  await page.mouse.click(a.x, a.y);
  assert.match(await page.locator('#comp-cost').innerText(), /\$0\.055\/h · app\.small: \$0\.055\/h per replica/);
  await snap('canvas-connected');

  await page.locator('#run').click();
  const verdict = page.locator('#verdict');
  await verdict.waitFor();
  assert.match(await verdict.innerText(), /FAILED/);
  const failing = page.locator('#conditions tbody tr.bad');
  assert.ok((await failing.count()) >= 1, 'no failing condition shown');
  assert.match(await page.locator('#conditions tr[data-condition="resilience"]').innerText(), /no chaos in this level/);
  assert.match(await page.locator('#resilience').innerText(), /No chaos in this level\./);
  const why = page.locator('#why .why-item').first();
  const whyText = await why.innerText();
  assert.match(whyText, /^\d+(\.\d+)?–\d+(\.\d+)? s app \(App service\) — saturated/);
  assert.match(whyText, /app was offered [\d,]+ req\/s against a capacity of [\d,]+ req\/s/);
  assert.match(whyText, /What to change: try app: replicas 1 → 2/); // a change the level allows

  // Retries are drawn: the load chart stacks fresh requests and retries.
  assert.match(await page.locator('section.results figure.chart figcaption').first().innerText(), /fresh requests and retries stacked/);
  const legend = await page.locator('section.results figure.chart').first().locator('.u-legend').innerText();
  assert.match(legend, /fresh requests/);
  assert.match(legend, /fresh \+ retries/);

  // Playback: the boxes show each component's load and status as the ticks go by.
  await page.waitForTimeout(1500);
  const label = await page.evaluate(() => document.querySelector('.cy-host').bpDiagram.cy.getElementById('app').data('label'));
  assert.match(label, /ok|busy|saturated|failed|idle/);
  await snap('failing-run-playing');
  await page.locator('.playback .scrubber').evaluate((el) => {
    el.value = String(Math.floor(Number(el.max) / 2));
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  assert.equal(await page.locator('.playback .play').textContent(), 'Play');
  assert.match(await page.locator('.playback .clock').textContent(), /^\d+(\.\d+)? s \/ \d+ s$/);
  await page.locator('details.step-table summary').click();
  await page.locator('#steps tbody tr').nth(10).waitFor();
  assert.equal(await page.locator('#steps tbody tr.current').count(), 1);
  assert.match(await page.locator('#steps thead').innerText(), /fresh\s+retries\s+offered/);
  await page.locator('details.step-table summary').click();
});

test('a value the level forbids is refused with the level\'s own limits, and the stale run is cleared', async () => {
  const a = await boxAt(page, 'app');
  await page.mouse.click(a.x, a.y);
  const replicas = page.locator('fieldset.comp[data-id="app"]').getByLabel('Replicas');
  assert.match(await page.locator('fieldset.comp[data-id="app"]').innerText(), /This level allows 1–6/);
  await replicas.fill('99');
  await page.locator('#run').click();
  const fieldError = page.locator('fieldset.comp[data-id="app"] .field-error').first();
  await fieldError.waitFor();
  assert.match(await fieldError.innerText(), /this level allows 1 to 6/);
  assert.equal(await replicas.getAttribute('aria-invalid'), 'true');
  assert.ok(await page.locator('section.results').isHidden(), 'the previous run is still shown');
  await snap('field-error');
  await replicas.fill('');
  await page.locator('#run').click();
  assert.match(await page.locator('.run-status').innerText(), /Not run: .*enter a number from 1 to 6/);
  await replicas.fill('1');
  assert.doesNotMatch(await page.locator('.run-status').innerText(), /Not run/);
  // The panel's price follows each edit, and says what the estimate says.
  await replicas.fill('2');
  assert.match(await page.locator('#comp-cost').innerText(), /^\$0\.110\/h · app\.small/);
  assert.match(await page.locator('#cost-estimate').innerText(), /app \$0\.110\/h/);
  await replicas.fill('1');
  assert.match(await page.locator('#comp-cost').innerText(), /^\$0\.055\/h · app\.small/);
});

test('the fix hint shows its patch, and applying it passes and offers the next level', async () => {
  await page.locator('#hint').click();
  const apply = page.locator('#apply-hint');
  await apply.waitFor({ timeout: 60_000 });
  assert.match(await page.locator('pre.patch').innerText(), /"op":\s*"(replace|add)"/);
  await snap('hint');
  await apply.click();
  await page.locator('#verdict.pass').waitFor();
  assert.match(await page.locator('#verdict').innerText(), /PASSED — score \d+/);
  assert.equal(await page.locator('#conditions tbody tr.bad').count(), 0);
  assert.match(await page.locator('#next-level').innerText(), /Next level: Cache me if you can/);
  assert.match(await page.locator('#campaign').innerText(), /level 1 of \d+ · 1 passed/);
  assert.match(await page.locator('#why').innerText(), /Nothing failed/);
  await snap('passing-run');
});

test('the design and its layout survive a reload', async () => {
  const before = await canvasBoxes(page);
  const pos = await boxAt(page, 'db');
  await page.reload();
  await page.locator('.cy-host canvas').first().waitFor();
  assert.deepEqual(await canvasBoxes(page), before);
  assert.deepEqual(await canvasEdges(page), ['app>db']);
  assert.ok(pos);
});

test('a new player submits and sees their rank on the leaderboard', async () => {
  const name = `e2e-${Date.now().toString(36)}`;
  await page.getByLabel('Player name').fill(name);
  await page.getByRole('button', { name: 'Save name' }).click();
  await page.locator('#submit').click();
  const receipt = page.locator('#receipt');
  await receipt.waitFor();
  assert.match(await receipt.innerText(), /Passed — score \d+ [★☆]{3}, rank \d+/);
  await snap('submitted');
  await page.locator('#open-board').click();
  const mine = page.locator('table.board tr.me');
  await mine.waitFor();
  assert.match(await mine.innerText(), new RegExp(`${name}`));
  assert.match(await mine.locator('td').first().innerText(), /^\d+$/);
  await snap('leaderboard');
});

test('everything the canvas does can be done from the keyboard', async () => {
  await openLevel(page, 'cache-me-if-you-can');
  // Remove every component with its focusable delete button.
  for (const id of await canvasBoxes(page)) {
    await page.locator(`.comp-chips [data-select="${id}"]`).focus();
    await page.keyboard.press('Enter');
    await page.locator('#delete-comp').focus();
    await page.keyboard.press('Enter');
  }
  assert.deepEqual(await canvasBoxes(page), []);
  // Add from the palette with Enter, connect with the side panel's "calls" choice.
  for (const kind of ['app_service', 'cache', 'database']) {
    await page.locator(`.pal-item[data-kind="${kind}"]`).focus();
    await page.keyboard.press('Enter');
  }
  assert.deepEqual(await canvasBoxes(page), ['app', 'cache', 'db']);
  await page.locator('.comp-chips [data-select="app"]').focus();
  await page.keyboard.press('Enter');
  const calls = page.getByLabel('Connect app to');
  await calls.selectOption('cache');
  await page.locator('#connect-btn').focus();
  await page.keyboard.press('Enter');
  await page.getByLabel('Connect app to').selectOption('db');
  await page.locator('#connect-btn').focus();
  await page.keyboard.press('Enter');
  assert.deepEqual(await canvasEdges(page), ['app>cache', 'app>db']);
  // A cache calls nothing: the panel says so instead of offering a choice.
  await page.locator('.comp-chips [data-select="cache"]').focus();
  await page.keyboard.press('Enter');
  assert.match(await page.locator('fieldset.comp[data-id="cache"] .connections').innerText(), /makes none/);
  await snap('keyboard-built');
});

test('an imported design is checked as soon as it loads, every problem at once', async () => {
  await openLevel(page, 'cache-me-if-you-can');
  const design = {
    components: [
      { id: 'app', type: 'app_service', params: { replicas: 99, colour: 'blue' } },
      { id: 'db', type: 'database' },
    ],
    edges: [{ from: 'app', to: 'db' }, { from: 'app', to: 'nowhere' }],
    notes: 'hello',
  };
  await page.locator('input[type="file"]').setInputFiles({ name: 'mine.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(design)) });
  const status = page.locator('.run-status');
  await status.filter({ hasText: 'Imported mine.json with 4 problems, listed beside the design: fix them, then run.' }).waitFor();
  // Every problem at once, beside the design.
  const said = await page.locator('.form-errors').innerText();
  assert.match(said, /notes: is not a field of a design/);
  assert.match(said, /app\s*: replicas: this level allows 1 to \d+/);
  assert.match(said, /app\s*: colour: is not a parameter of an app service/);
  assert.match(said, /edges\[1\]\.to: "nowhere" is not a component of the design/);
  assert.deepEqual(await canvasBoxes(page), ['app', 'db']);
  await snap('import-problems');
});

test('a level with chaos: instance types priced, each event against its allowance, and why', async () => {
  await openLevel(page, 'thundering-herd');
  const d = await boxAt(page, 'db');
  await page.mouse.click(d.x, d.y);
  const type = page.locator('fieldset.comp[data-id="db"]').getByLabel('Instance type', { exact: true });
  const options = await type.locator('option').allInnerTexts();
  assert.ok(options.some((o) => /db\.large — \$0\.329\/h per node/.test(o)), options.join(', '));
  assert.ok(options.some((o) => /db\.standard — \$0\.164\/h per node/.test(o)), options.join(', '));
  assert.match(await page.locator('fieldset.comp[data-id="db"]').innerText(), /Buys: 10 connections per node at 1× speed/);
  assert.deepEqual(await page.locator('fieldset.comp[data-id="db"]').getByLabel('Replica instance type').locator('option').allInnerTexts(),
    ['same as the primary', 'db.large — $0.329/h per node', 'db.standard — $0.164/h per node']);
  // The estimate follows the choice: db.large costs $0.164/h more than db.standard.
  const estimate = async () => Number(/Estimated cost: \$([\d.]+)\/h/.exec(await page.locator('#cost-estimate').innerText())[1]);
  const before = await estimate();
  await type.selectOption('db.large');
  assert.equal((await estimate() - before).toFixed(3), '0.164');
  assert.match(await page.locator('fieldset.comp[data-id="db"]').innerText(), /Buys: 10 connections per node at 2× speed/);
  await type.selectOption('db.standard');
  assert.equal(await estimate(), before);
  const c = await boxAt(page, 'cache');
  await page.mouse.click(c.x, c.y);
  assert.match(await page.locator('fieldset.comp[data-id="cache"]').innerText(), /Memory \(GB\)\s*1 GB \(cache\.small's memory\)/);
  assert.match(await page.locator('#cost-estimate').innerText(), /Estimated cost: \$0\.\d{3}\/h of a \$0\.\d{3}\/h budget/);

  await page.locator('#run').click();
  await page.locator('#verdict').waitFor();
  const row = page.locator('#events tr[data-event="flush"]');
  const text = await row.innerText();
  assert.match(text, /cache is flushed/);
  assert.match(text, /of requests failed \(ceiling 5\.0%\)/);
  assert.match(text, /allowed 20 s/);
  assert.match(await page.locator('#conditions tr[data-condition="resilience"]').innerText(), /event/);
  const why = await page.locator('#why .why-item').first().innerText();
  assert.match(why, /db \(Database\) — saturated/);
  assert.match(why, /retries multiplied the load/);
  assert.match(why, /What to change: try db: .*instance_type db\.standard → db\.large/);
  await snap('chaos-run');
});

test('where a backend crashes, the clients\' box says where a retry sent at once goes', async () => {
  await openLevel(page, 'lose-a-node');
  const client = await page.locator('#client').innerText();
  assert.match(client, /A retry sent at once after a crashed component failed it is sent on again straight away: a balancer still sending to the crashed component may pass it to a live one\./);
  await openLevel(page, 'cache-me-if-you-can'); // no crash in this level: nothing said of one
  assert.doesNotMatch(await page.locator('#client').innerText(), /crashed component/);
  await openLevel(page, 'lose-a-node');
  await page.locator('#client').scrollIntoViewIfNeeded();
  await snap('crash-clients');
  const phone = await context.newPage();
  watch(phone);
  try {
    await phone.setViewportSize({ width: 390, height: 844 });
    await openLevel(phone, 'lose-a-node');
    await phone.locator('#client').scrollIntoViewIfNeeded();
    assert.deepEqual(await screenProblems(phone), []);
    await snap('phone-crash-clients', phone);
  } finally {
    await phone.close();
  }
});

test('a structural failure is a condition of its own', async () => {
  await openLevel(page, 'the-queue-remembers');
  const q = await boxAt(page, 'jobs');
  await page.mouse.click(q.x, q.y);
  await page.locator('fieldset.comp[data-id="jobs"]').getByLabel('Workers').fill('1');
  await page.locator('#run').click();
  await page.locator('#verdict').waitFor();
  const row = page.locator('#conditions tr[data-condition="lost_data"]');
  assert.match(await row.innerText(), /Every acknowledged write is stored\s+jobs acknowledged writes it never stored.*✗ fail/s);
  assert.match(await page.locator('#verdict').innerText(), /every acknowledged write is stored/);
  assert.match(await page.locator('#why').innerText(), /jobs .*— writes lost/);
  await snap('structural-failure');
});

test('the key screens on a phone: nothing cut off, the verdict in view after Run', async () => {
  const phone = await context.newPage();
  watch(phone);
  try {
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${BASE}/#/`);
    await phone.locator('table.levels tbody tr').first().waitFor();
    await snap('phone-levels', phone);
    await phone.locator('table.levels tbody tr', { has: phone.locator('.diff-tutorial') }).first().getByRole('link').click();
    await phone.locator('.cy-host canvas').first().waitFor();
    await snap('phone-level', phone);
    await phone.locator('#run').click();
    await phone.locator('#verdict').waitFor();
    await phone.waitForTimeout(1200); // the smooth scroll
    const top = await phone.locator('#verdict').evaluate((el) => el.getBoundingClientRect().top);
    assert.ok(top >= -20 && top < 844 - 40, `the verdict is at ${top}px, not in view`);
    await snap('phone-run', phone);
    await openLevel(phone, 'thundering-herd');
    await phone.locator('#run').click();
    await phone.locator('#events').waitFor();
    await phone.waitForTimeout(800);
    await snap('phone-chaos-run', phone);
  } finally {
    await phone.close();
  }
});

test('no script errors', () => {
  assert.deepEqual(problems, []);
});
