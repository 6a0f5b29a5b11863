// End-to-end: a newcomer's first minutes. The first-run guide on the campaign's first level
// (palette → connect → run → read the verdict), played at 1280×800 and at 390×844, each
// then earning stars on two levels under a player name: the server's stars on the level
// list, a chapter opening by them, and the player's page with their stars. Skipped in a
// third browser; never shown again once done or skipped. Screenshots:
// artifacts/e2e/guide-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { BASE, launch, watch, snapper } from './lib.js';

const STEP = 15_000;
const snap = snapper('guide');
const problems = [];
let browser;

// solution is the campaign's reference solution of a level (what its tests hold to pass).
const solution = (slug) => JSON.parse(readFileSync(new URL(`../internal/challenges/testdata/solutions/${slug}.json`, import.meta.url)));

before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

async function newPage(width, height) {
  const context = await browser.newContext({ viewport: { width, height } });
  const p = await context.newPage();
  p.setDefaultTimeout(STEP);
  watch(p, problems);
  return p;
}

async function openLevel(p, slug) {
  await p.goto(`${BASE}/#/levels/${slug}`);
  await p.locator('#run').waitFor();
  await p.locator('.cy-host canvas').first().waitFor();
}

// openFirstLevel opens the first level of the list, as a newcomer does.
async function openFirstLevel(p) {
  await p.goto(`${BASE}/#/`);
  await p.locator('table.levels tbody tr').first().waitFor();
  await p.locator('table.levels tbody tr[data-slug]').first().getByRole('link').click();
  await p.locator('.cy-host canvas').first().waitFor();
}

async function importDesign(p, design) {
  await p.locator('input[type="file"]').setInputFiles({ name: 'mine.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(design)) });
  await p.waitForFunction(() => document.getElementById('toast')?.textContent === 'Imported mine.json.');
}

// playGuide walks the guide from its first step to the verdict; the design in place when
// Run is pressed is the level's starting design unless design is given.
async function playGuide(p, device, design) {
  const guide = p.locator('#guide');
  await guide.waitFor();
  assert.match(await guide.innerText(), /step 1 of 4[\s\S]*Build from the palette/i);
  assert.equal(await p.locator('.palette-box.guide-target').count(), 1, 'the palette is outlined');
  await snap(`${device}-palette`, p);
  await p.locator('#guide-next').click();
  assert.match(await guide.innerText(), /step 2 of 4[\s\S]*Connect the boxes/i);
  assert.equal(await p.locator('.canvas-box.guide-target').count(), 1, 'the canvas is outlined');
  await snap(`${device}-connect`, p);
  await p.locator('#guide-next').click();
  assert.match(await guide.innerText(), /step 3 of 4[\s\S]*Run it/i);
  assert.equal(await p.locator('#run.guide-target').count(), 1, 'Run is outlined');
  assert.equal(await p.locator('#guide-next').count(), 0, 'the run step goes on by running');
  await snap(`${device}-run`, p);
  if (design) await importDesign(p, design);
  await p.locator('#run').click();
  await p.locator('#verdict').waitFor();
  await guide.filter({ hasText: 'step 4 of 4' }).waitFor();
  assert.match(await guide.innerText(), /Read the verdict/);
  const passed = /PASSED/.test(await p.locator('#verdict').innerText());
  assert.match(await p.locator('#guide-then').innerText(), passed ? /submit the design below under a player name/ : /press Fix hint/);
  assert.equal(await p.locator('.verdict-box.guide-target').count(), 1, 'the verdict is outlined');
  await p.waitForTimeout(800); // the smooth scroll to the verdict
  await snap(`${device}-verdict`, p);
  await p.locator('#guide-next').click(); // Done
  assert.equal(await guide.count(), 0, 'the guide is gone once done');
  await p.reload();
  await p.locator('#run').waitFor();
  await p.locator('.cy-host canvas').first().waitFor();
  assert.equal(await p.locator('#guide').count(), 0, 'the guide is not shown again');
}

// chapters reads the level list's chapter heads: [{text, locked}].
async function chapters(p) {
  await p.goto(`${BASE}/#/`);
  await p.locator('#campaign-stars').waitFor();
  await p.locator('tr.chapter th').first().filter({ hasText: 'Chapter 1' }).waitFor();
  await p.waitForFunction(() => document.querySelector('#campaign-stars')?.textContent !== '' || !localStorage.getItem('bp.player'));
  return p.locator('tr.chapter').evaluateAll((rows) => rows.map((r) => ({ text: r.innerText, locked: r.classList.contains('locked') })));
}

async function submit(p) {
  await p.locator('#submit').click();
  const receipt = p.locator('#receipt');
  await receipt.waitFor();
  const text = await receipt.innerText();
  assert.match(text, /Passed — score \d+ [★☆]{3}/);
  return (text.match(/★/g) || []).length;
}

// roomy is a sound design for a level with a replica more than it needs: it passes short of
// the third star, so the first chapter still lacks a star to open the second.
function roomy(slug) {
  const d = solution(slug);
  for (const c of d.components) if (c.type === 'app_service') c.params = { ...c.params, replicas: (c.params?.replicas ?? 1) + 1 };
  return d;
}

// starsOpenAChapter plays on from the first level with its roomy design in place: under a
// new player name, its score earns two stars (the server's), which leave the second chapter
// locked; the second level's reference solution opens it; the level list, the campaign
// total and the player's page show the server's stars.
async function starsOpenAChapter(p, device, first) {
  await p.getByLabel('Player name').fill(`guide-${device}-${Date.now().toString(36)}`);
  await p.getByRole('button', { name: 'Save name' }).click();
  const firstStars = await submit(p);
  assert.equal(firstStars, 2);
  await p.locator('#best-stars').waitFor();
  assert.equal((await p.locator('#best-stars').innerText()).match(/★/g).length, firstStars);

  let heads = await chapters(p);
  assert.ok(heads.length >= 2, `chapters: ${JSON.stringify(heads)}`);
  assert.equal(heads[0].locked, false);
  assert.equal(heads[1].locked, true, `the second chapter opens with one level of the first (${firstStars} stars): ${JSON.stringify(heads)}`);
  await snap(`${device}-levels-locked`, p);

  // The second level of the first chapter: its stars open the second chapter.
  const rows = await p.locator('table.levels tbody tr[data-slug]').evaluateAll((trs) => trs.map((tr) => tr.dataset.slug));
  // The list comes by pages of at most 100 (20 by default): the map reads them all.
  const campaign = readdirSync(new URL('../challenges/', import.meta.url)).filter((f) => /^\d+-.+\.json$/.test(f))
    .map((f) => f.replace(/^\d+-/, '').replace(/\.json$/, ''));
  assert.deepEqual(rows.slice(0, campaign.length).sort(), [...campaign].sort(), 'the campaign map shows every campaign level');
  const second = rows[1];
  await openLevel(p, second);
  assert.equal(await p.locator('#guide').count(), 0, 'the guide is on the first level only');
  await importDesign(p, solution(second));
  const secondStars = await submit(p);

  heads = await chapters(p);
  assert.equal(heads[1].locked, false, `the second chapter is open: ${heads[1].text}`);
  const token = await p.evaluate(() => JSON.parse(localStorage.getItem('bp.player')).token);
  const server = await p.evaluate(async (t) => (await (await fetch('/v1/challenges', { headers: { Authorization: `Bearer ${t}` } })).json()).campaign_stars, token);
  assert.equal(server.earned, firstStars + secondStars);
  assert.equal(await p.locator('#campaign-stars').innerText(), `Stars: ${server.earned} of ${server.max}.`);
  const cell = await p.locator(`tr[data-slug="${second}"] td.stars`).innerText();
  assert.equal(cell.match(/★/g).length, secondStars);
  await snap(`${device}-levels-open`, p);

  // The player's page: stars by level and the campaign total.
  const id = await p.evaluate(() => JSON.parse(localStorage.getItem('bp.player')).id);
  await p.goto(`${BASE}/#/players/${id}`);
  await p.locator('#player-stars').waitFor();
  assert.equal(await p.locator('#player-campaign-stars').innerText(), `Campaign: ${server.earned} of ${server.max} ★`);
  assert.deepEqual(await p.locator('#player-stars tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.slug)), [first, second]);
  await snap(`${device}-player`, p);
}

test('desktop: the guide plays through, then stars on two levels open the next chapter', async () => {
  const p = await newPage(1280, 800);
  await p.goto(`${BASE}/#/`);
  await p.locator('table.levels tbody tr').first().waitFor();
  const first = await p.locator('table.levels tbody tr[data-slug]').first().getAttribute('data-slug');
  await openLevel(p, first);
  await playGuide(p, 'desktop', roomy(first));
  await starsOpenAChapter(p, 'desktop', first);
  await p.context().close();
});

test('phone: the guide plays through at 390×844, then stars on two levels open the next chapter', async () => {
  const p = await newPage(390, 844);
  await openFirstLevel(p);
  await playGuide(p, 'phone');
  const first = (await p.evaluate(() => location.hash)).replace('#/levels/', '');
  await importDesign(p, roomy(first));
  await starsOpenAChapter(p, 'phone', first);
  await p.context().close();
});

test('a skipped guide is never shown again', async () => {
  const p = await newPage(1280, 800);
  await openFirstLevel(p);
  await p.locator('#guide').waitFor();
  await p.locator('#guide-skip').click();
  assert.equal(await p.locator('#guide').count(), 0);
  await p.reload();
  await p.locator('.cy-host canvas').first().waitFor();
  assert.equal(await p.locator('#guide').count(), 0, 'a skipped guide stays skipped');
  await p.context().close();
});

test('no script errors', () => {
  assert.deepEqual(problems, []);
});
