// End-to-end: a player plays the tutorial level in a real browser (Debian's Chromium,
// headless, driven by playwright-core) against the server on loopback. run.sh starts the
// server and sets BASE_URL; screenshots go to ARTIFACTS (artifacts/e2e).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

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

async function snap(name, p = page) {
  shot += 1;
  await p.screenshot({ path: join(ART, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
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
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('dialog', (d) => d.accept());
});

after(async () => {
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

test('levels are listed with their targets', async () => {
  await page.goto(`${BASE}/`);
  const rows = page.locator('table.levels tbody tr');
  await rows.first().waitFor();
  assert.ok((await rows.count()) >= 1, 'no levels listed');
  await page.locator('table.levels tbody td', { hasText: '≤' }).first().waitFor();
  await snap('levels');
});

test('a design built from the catalog fails, showing the failing condition and the bottleneck', async () => {
  const tutorial = page.locator('table.levels tbody tr', { has: page.locator('.diff-tutorial') }).first();
  await tutorial.getByRole('link').click();
  await page.locator('#run').waitFor();
  await page.locator('.diagram-svg').waitFor();

  // Build from scratch: remove every component, then add an app and a database and
  // connect them.
  const removers = page.getByRole('button', { name: /^Remove (?!connection)/ });
  while (await removers.count()) await removers.first().click();
  assert.equal(await page.locator('fieldset.comp').count(), 0);
  const add = page.getByLabel('Component type to add');
  await add.selectOption('app_service');
  await page.getByRole('button', { name: 'Add component' }).click();
  await add.selectOption('database');
  await page.getByRole('button', { name: 'Add component' }).click();
  await page.getByLabel('Caller').selectOption('app');
  await page.getByLabel('Callee').selectOption('db');
  await page.getByRole('button', { name: 'Connect' }).click();
  assert.equal(await page.locator('.diagram-svg .node').count(), 2);
  assert.match(await page.locator('.edge-list').innerText(), /app\s*→\s*db/);

  // A value the level forbids is reported next to its field.
  const replicas = page.locator('fieldset.comp[data-id="app"]').getByLabel('Replicas');
  await replicas.fill('99');
  await page.locator('#run').click();
  const fieldError = page.locator('fieldset.comp[data-id="app"] .field.has-error .server-error');
  await fieldError.waitFor();
  assert.match(await fieldError.innerText(), /allows 1 to \d+/);
  assert.equal(await replicas.getAttribute('aria-invalid'), 'true');
  await snap('field-error');
  await replicas.fill('1');

  await page.locator('#run').click();
  const verdict = page.locator('#verdict');
  await verdict.waitFor();
  assert.match(await verdict.innerText(), /FAILED/);
  const failing = page.locator('#conditions tbody tr.bad');
  assert.ok((await failing.count()) >= 1, 'no failing condition shown');
  assert.match(await failing.first().innerText(), /✗ fail/);
  assert.match(await page.locator('#bottleneck').innerText(), /\bapp\b.*saturated first/s);

  // Playback: the diagram shows each component's load and status as the ticks go by.
  await page.waitForTimeout(1500);
  const status = await page.locator('.diagram-svg .node[data-id="app"] .status').textContent();
  assert.match(status, /ok|busy|saturated|failed|idle/);
  await snap('failing-run-playing');
  // The scrubber jumps to any tick.
  await page.locator('.playback .scrubber').evaluate((el) => {
    el.value = String(Math.floor(Number(el.max) / 2));
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  assert.equal(await page.locator('.playback .play').textContent(), 'Play');
  assert.match(await page.locator('.playback .clock').textContent(), /^\d+(\.\d+)? s \/ \d+ s$/);
  await page.locator('details.step-table summary').click();
  await page.locator('#steps tbody tr').nth(10).waitFor();
  assert.equal(await page.locator('#steps tbody tr.current').count(), 1);
  await snap('failing-run-scrubbed');
});

test('the fix hint shows its patch, and applying it makes the design pass', async () => {
  await page.locator('#hint').click();
  const apply = page.locator('#apply-hint');
  await apply.waitFor({ timeout: 60_000 });
  assert.match(await page.locator('pre.patch').innerText(), /"op":\s*"(replace|add)"/);
  await snap('hint');
  await apply.click();
  await page.locator('#verdict.pass').waitFor();
  assert.match(await page.locator('#verdict').innerText(), /PASSED — score \d+/);
  assert.equal(await page.locator('#conditions tbody tr.bad').count(), 0);
  await snap('passing-run');
});

test('the design survives a reload', async () => {
  const before = await page.evaluate(() => JSON.stringify([...document.querySelectorAll('fieldset.comp')].map((f) => f.dataset.id)));
  await page.reload();
  await page.locator('fieldset.comp').first().waitFor();
  const afterIds = await page.evaluate(() => JSON.stringify([...document.querySelectorAll('fieldset.comp')].map((f) => f.dataset.id)));
  assert.equal(afterIds, before);
});

test('a new player submits and sees their rank on the leaderboard', async () => {
  const name = `e2e-${Date.now().toString(36)}`;
  await page.getByLabel('Player name').fill(name);
  await page.getByRole('button', { name: 'Save name' }).click();
  await page.locator('#submit').click();
  const receipt = page.locator('#receipt');
  await receipt.waitFor();
  const text = await receipt.innerText();
  assert.match(text, /Passed — score \d+, rank \d+/);
  await snap('submitted');
  await page.locator('#open-board').click();
  const mine = page.locator('table.board tr.me');
  await mine.waitFor();
  assert.match(await mine.innerText(), new RegExp(`${name}`));
  assert.match(await mine.locator('td').first().innerText(), /^\d+$/);
  await snap('leaderboard');
});

test('the level is usable on a phone-sized screen', async () => {
  const phone = await context.newPage();
  try {
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${BASE}/#/`);
    await phone.locator('table.levels tbody tr').first().waitFor();
    await phone.locator('table.levels tbody tr', { has: phone.locator('.diff-tutorial') }).first().getByRole('link').click();
    await phone.locator('#run').click();
    await phone.locator('#verdict').waitFor();
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `the page is ${overflow}px wider than the screen`);
    await snap('phone', phone);
  } finally {
    await phone.close();
  }
});

test('no script errors', () => {
  assert.deepEqual(problems, []);
});
