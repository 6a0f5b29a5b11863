// End-to-end: a duel played through the web client by two players in two browser contexts
// (two separate browsers' worth of storage: two players), then watched by a third,
// anonymous context through the spectator link, on a desktop and on a phone. run.sh starts
// the server and sets BASE_URL (and BASE_URL_B when a second replica runs: player B then
// plays on it, so every live change crosses replicas); screenshots go to ARTIFACTS
// (artifacts/e2e), named duel-*.
//
// Everything goes through the UI: each player picks a name on the duels page, A challenges
// B by the player id B's page shows, B sees the challenge arrive and accepts, each builds a
// design on the level's canvas page (the side panel) and hands it in; both see the same
// winner and scores and the surprise chaos, and the one scrubber moves both canvases.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { screenProblems } from './lib.js';

const BASE = process.env.BASE_URL || 'http://127.0.0.1:8080';
const BASE_B = process.env.BASE_URL_B || BASE;
const ART = process.env.ARTIFACTS || 'artifacts/e2e';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const STEP = 15_000; // the longest wait for any one thing
const RUN = 90_000; // a duel's two runs on a busy machine
// A level with chaos, so that the duel has a surprise (another of the level's events at a
// time nobody knows); its starting design fails, and db.large passes (the fix hint's change).
const LEVEL = 'thundering-herd';

mkdirSync(ART, { recursive: true });
let browser;
const contexts = [];
const problems = [];
let shot = 0;
const tag = Date.now().toString(36);
const names = { a: `duel-a-${tag}`, b: `duel-b-${tag}` };
let pa;
let pb;
let early; // a spectator who opened the duel's page before it ended
let duelId;

async function snap(name, p) {
  shot += 1;
  await p.screenshot({ path: join(ART, `duel-${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  const bad = await screenProblems(p);
  assert.deepEqual(bad, [], `${name}: ${bad.join('; ')}`);
}

function watch(p, who) {
  p.on('pageerror', (e) => problems.push(`${who}: page error: ${e.message}`));
  p.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`${who}: console: ${m.text()}`);
  });
  p.on('dialog', (d) => d.accept());
}

async function newPage(who, viewport = { width: 1280, height: 800 }) {
  const ctx = await browser.newContext({ viewport });
  contexts.push(ctx);
  const p = await ctx.newPage();
  p.setDefaultTimeout(STEP);
  watch(p, who);
  return p;
}

before(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run', '--disable-quic', '--disable-sync',
    ],
  });
  pa = await newPage('A');
  pb = await newPage('B');
});

after(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
});

// card is the player's list entry of this duel.
const card = (p) => p.locator(`.duel-card[data-id="${duelId}"]`);

// buildAndHandIn opens the duel's design page from the player's list, sets one component's
// field in the side panel, runs the design, and hands it in.
async function buildAndHandIn(p, who, { component, label, value }) {
  await card(p).locator('[data-action="design"]').click();
  await p.locator('#duel-banner').waitFor();
  await p.locator('.cy-host canvas').first().waitFor();
  await p.locator(`.comp-chips [data-select="${component}"]`).click();
  const field = p.locator(`fieldset.comp[data-id="${component}"]`).getByLabel(label, { exact: true });
  if (await field.evaluate((el) => el.tagName === 'SELECT')) await field.selectOption(value);
  else await field.fill(value);
  await p.locator('#run').click();
  await p.locator('#verdict').waitFor({ timeout: RUN });
  await snap(`${who}-design`, p);
  await p.locator('#duel-submit').click();
  await p.locator('#duel-submitted').waitFor();
}

test('each player picks a name on the duels page', async () => {
  for (const [p, name, base] of [[pa, names.a, BASE], [pb, names.b, BASE_B]]) {
    await p.goto(`${base}/#/duels`);
    await p.getByLabel('Player name').fill(name);
    await p.getByRole('button', { name: 'Save name' }).click();
    await p.locator('#my-id').waitFor();
    assert.match(await p.locator('#you-h + p').innerText(), new RegExp(`Playing as ${name}`));
    await p.locator('.rating-block .rating-value').waitFor();
  }
  await snap('a-duels', pa);
});

test('A challenges B by name; B sees the challenge arrive and accepts; A sees it start live', async () => {
  await pa.locator('#duel-level').selectOption(LEVEL);
  // A name nobody has is refused on the page; B's name, typed in other case, finds B though B
  // has no rating and no past duel yet.
  await pa.locator('#duel-opponent').fill(`${names.b}-nobody`);
  await pa.locator('#challenge').click();
  await pa.locator('#challenge-status.bad').waitFor();
  assert.match(await pa.locator('#challenge-status').innerText(), /No player is called .*ask them for their player id/);
  await pa.locator('#duel-opponent').fill(names.b.toUpperCase());
  await pa.locator('#challenge').click();
  const sent = pa.locator('#duels-pending .duel-card').first();
  await sent.waitFor();
  duelId = await sent.getAttribute('data-id');
  assert.ok(duelId, 'the challenge has no id');
  assert.match(await sent.innerText(), new RegExp(`vs ${names.b}`));
  assert.match(await pa.locator('#challenge-status').innerText(), /Challenge sent/);

  // B never reloads: the list finds the new challenge by itself.
  const incoming = pb.locator(`#duels-pending .duel-card[data-id="${duelId}"]`);
  await incoming.waitFor();
  assert.match(await incoming.innerText(), new RegExp(`vs ${names.a}.*they challenged you`, 's'));
  assert.match(await incoming.locator('.countdown').innerText(), /^(\d+ h \d\d min|\d+ min \d\d s|\d+ s) left to accept/);
  await snap('b-challenged', pb);
  await incoming.locator('[data-action="accept"]').focus();
  await pb.keyboard.press('Enter');
  await pb.locator(`#duels-active .duel-card[data-id="${duelId}"]`).waitFor();

  // A's page follows the duel's stream: the card moves to "in play" without a reload.
  const started = pa.locator(`#duels-active .duel-card[data-id="${duelId}"]`);
  await started.waitFor();
  assert.match(await started.locator('.countdown').innerText(), /^(\d+ min \d\d s|\d+ s) left to hand in a design/);
  await snap('a-active', pa);
});

test('both build a design on the canvas page and hand it in; each sees the other hand in live', async () => {
  await buildAndHandIn(pa, 'a', { component: 'db', label: 'Instance type', value: 'db.large' });
  assert.match(await pa.locator('#duel-banner').innerText(), new RegExp(`${names.b} has not handed in a design yet`));
  // B's duel page shows A's design is in, without a reload, and never A's design itself.
  await pb.goto(`${BASE_B}/#/duels/${duelId}`);
  await pb.locator(`.duel-players li:has-text("${names.a}")`).filter({ hasText: 'design in' }).waitFor();
  assert.equal(await pb.locator('.duel-canvas').count(), 0, 'a design is shown before the end');
  // Someone without a player opens the duel's page early: it is private until the end.
  early = await newPage('early spectator');
  await early.goto(`${BASE}/#/duels/${duelId}`);
  await early.locator('#duel-private').waitFor();
  assert.equal(await early.locator('.duel-canvas, #duel-winner').count(), 0, 'a pending duel is shown to a spectator');
  await pb.goto(`${BASE_B}/#/duels`);
  await buildAndHandIn(pb, 'b', { component: 'app', label: 'Replicas', value: '6' });
  // A, still on the design page, learns from the stream that the duel is over.
  await pa.locator('#duel-result-link').waitFor({ timeout: RUN });
  await pa.locator('#duel-result-link').click();
  await pb.locator('#duel-result-link').waitFor({ timeout: RUN });
  await pb.locator('#duel-result-link').click();
});

async function outcome(p) {
  await p.locator('#duel-winner').waitFor({ timeout: RUN });
  const rows = await p.locator('#duel-scores tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    player: tr.querySelector('th').textContent.replace(' ★ winner', '').trim(),
    verdict: tr.children[1].textContent.trim(),
    score: tr.querySelector('.duel-score').textContent.trim(),
  })));
  return { winner: (await p.locator('#duel-winner').innerText()).trim(), reason: await p.locator('#duel-reason').innerText().catch(() => ''), rows };
}

// scrubBoth moves the one scrubber to a share of the run and returns what each canvas shows.
async function scrubBoth(p, share) {
  await p.locator('#duel-scrubber .scrubber').evaluate((el, f) => {
    el.value = String(Math.round(Number(el.max) * f));
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, share);
  return p.evaluate(() => [...document.querySelectorAll('.duel-canvas .cy-host')].map((host) => {
    const d = host.bpDiagram;
    return { t: d.lastTick?.t ?? null, app: d.cy.getElementById('app').data('label') };
  }));
}

let seen;
test('both players see the same result, and one scrubber moves both designs', async () => {
  const a = await outcome(pa);
  const b = await outcome(pb);
  assert.deepEqual(b, a, 'the two players see different results');
  assert.equal(a.rows.length, 2);
  assert.deepEqual(a.rows.map((r) => r.player).sort(), [names.a, names.b].sort());
  assert.match(a.winner, new RegExp(`^(${names.a} wins|${names.b} wins|A draw)$`));
  for (const r of a.rows) assert.match(r.score, /^(\d+|–)$/);
  // The winner is the side with the better verdict: only one passed, or the higher score.
  if (a.winner !== 'A draw') {
    const w = a.rows.find((r) => a.winner.startsWith(r.player));
    const l = a.rows.find((r) => r !== w);
    const wp = /passed/.test(w.verdict);
    const lp = /passed/.test(l.verdict);
    assert.ok(wp || !lp, `${w.player} wins with a failed design against a passing one`);
    if (wp && lp) assert.ok(Number(w.score) >= Number(l.score), `${w.player} wins with the lower score`);
  }
  seen = a;
  // Both designs, both verdicts, both timelines.
  assert.equal(await pa.locator('.duel-canvas .cy-host').count(), 2);
  assert.equal(await pa.locator('.duel-col .verdict').count(), 2);
  assert.equal(await pa.locator('.duel-col .why').count(), 2);
  assert.ok(await pa.locator('.duel-col figure.chart').count() >= 2);
  // The surprise is revealed, and each side's verdict judges it as one of the events.
  const surprise = pa.locator('#duel-surprise li');
  assert.equal(await surprise.count(), 1);
  assert.match(await surprise.innerText(), /cache is flushed \(surprise\)/);
  for (const k of [0, 1]) await pa.locator(`#side${k}-events tr[data-event="surprise"]`).waitFor();

  const start = await scrubBoth(pa, 0);
  const mid = await scrubBoth(pa, 0.5);
  assert.equal(mid.length, 2);
  for (const [i, side] of mid.entries()) {
    assert.ok(side.t > start[i].t, `canvas ${i} did not move with the scrubber (${start[i].t} → ${side.t})`);
    assert.match(side.app, /rps/);
  }
  assert.ok(Math.abs(mid[0].t - mid[1].t) <= 1, `the canvases show different times: ${mid[0].t} and ${mid[1].t}`);
  // Two new players: the duel moves neither rating, and the page says why.
  assert.match(await pa.locator('#duel-scores').innerText(), /1,500 \(unrated\)[\s\S]*1,500 \(unrated\)/);
  assert.equal(await pa.locator('#duel-unrated').innerText(), 'Ratings unchanged: both players are still new, and a player\u2019s results move ratings only once they have met 5 opponents.');
  await snap('a-result', pa);
  await snap('b-result', pb);
  // Play runs both from the one button.
  await pb.locator('#duel-scrubber .play').click();
  await pb.waitForTimeout(800);
  await pb.locator('#duel-scrubber .play').click();
  const played = await pb.evaluate(() => [...document.querySelectorAll('.duel-canvas .cy-host')].map((h) => h.bpDiagram.lastTick?.t ?? null));
  assert.ok(played.every((t) => t > 0), `play did not move both canvases: ${played}`);
});

test('a spectator with the link sees the same result, on a desktop and on a phone', async () => {
  // "Copy spectator link" puts the page's link on the clipboard.
  await pa.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(BASE).origin });
  await pa.locator('#copy-spectator').click();
  await pa.locator('#toast.show').waitFor();
  const link = await pa.evaluate(() => navigator.clipboard.readText());
  assert.equal(link, await pa.locator('#spectator-link').inputValue());
  assert.match(link, new RegExp(`#/duels/${duelId}$`));
  const pc = await newPage('spectator');
  await pc.goto(link);
  const c = await outcome(pc);
  assert.deepEqual(c, seen, 'the spectator sees a different result');
  assert.equal(await pc.evaluate(() => localStorage.getItem('bp.player')), null, 'the spectator has a player');
  await snap('spectator', pc);

  // The page opened before the end shows the result by itself once the duel has ended.
  assert.deepEqual(await outcome(early), seen, 'the early spectator sees a different result');

  const phone = await newPage('phone', { width: 390, height: 844 });
  await phone.goto(link);
  assert.deepEqual(await outcome(phone), seen);
  const boxes = await phone.locator('.duel-canvas .cy-host').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()));
  assert.equal(boxes.length, 2);
  assert.ok(boxes[1].top >= boxes[0].bottom, 'the canvases do not stack on a phone');
  const mid = await scrubBoth(phone, 0.5);
  assert.ok(mid.every((s) => s.t > 0), 'the scrubber does not drive both canvases on a phone');
  await phone.locator('#duel-replay').scrollIntoViewIfNeeded();
  await snap('phone-spectator', phone);
});

test('after their first duel two new players are provisional: the ratings board does not list them yet', async () => {
  await pa.goto(`${BASE}/#/ratings`);
  await pa.locator('#ratings, #ratings-empty').first().waitFor();
  const board = await pa.locator('main').innerText();
  assert.doesNotMatch(board, new RegExp(names.a));
  assert.doesNotMatch(board, new RegExp(names.b));
  assert.match(board, /once each has played 5 different opponents/);
  await snap('ratings', pa);
});

test('the duels page, a duel and the ratings board on a phone', async () => {
  await pa.setViewportSize({ width: 390, height: 844 });
  try {
    await pa.goto(`${BASE}/#/duels`);
    await pa.locator(`#duels-finished .duel-card[data-id="${duelId}"]`).waitFor();
    assert.match(await pa.locator(`#duels-finished .duel-card[data-id="${duelId}"]`).innerText(), /you won|won|a draw/);
    await snap('phone-duels', pa);
    await pa.goto(`${BASE}/#/ratings`);
    await pa.locator('#ratings, #ratings-empty').first().waitFor();
    await snap('phone-ratings', pa);
  } finally {
    await pa.setViewportSize({ width: 1280, height: 800 });
  }
});

test('two players who ask to be matched on the same level are paired', async () => {
  const [pc, pd] = [await newPage('C'), await newPage('D')];
  for (const [p, name] of [[pc, `duel-c-${tag}`], [pd, `duel-d-${tag}`]]) {
    await p.goto(`${BASE}/#/duels`);
    await p.getByLabel('Player name').fill(name);
    await p.getByRole('button', { name: 'Save name' }).click();
    await p.locator('#duel-level').waitFor();
    await p.locator('#duel-level').selectOption('first-request');
  }
  await pc.locator('#find-opponent').click();
  await pc.locator('#duels-pending .duel-card[data-state="matching"]').waitFor();
  assert.match(await pc.locator('#challenge-status').innerText(), /in the queue/);
  await pd.locator('#find-opponent').click();
  const paired = pd.locator('#duels-active .duel-card').first();
  await paired.waitFor();
  const id = await paired.getAttribute('data-id');
  assert.match(await paired.innerText(), new RegExp(`vs duel-c-${tag}`));
  // C's page learns of the pairing from the duel's stream.
  await pc.locator(`#duels-active .duel-card[data-id="${id}"]`).waitFor();
  assert.match(await pc.locator(`#duels-active .duel-card[data-id="${id}"]`).innerText(), new RegExp(`vs duel-d-${tag}`));
  await snap('matched', pc);
});

test('A challenges B from B\'s player page on a level without chaos, where the picker says there is no surprise', async () => {
  const b = await pb.evaluate(() => JSON.parse(localStorage.getItem('bp.player')));
  await pa.goto(`${BASE}/#/players/${b.id}`);
  const level = pa.locator('#challenge-level');
  await level.waitFor();
  await pa.locator('#challenge-level option[value="first-request"]', { hasText: 'no chaos' }).waitFor({ state: 'attached' });
  await pa.locator('#challenge-level option[value="thundering-herd"]', { hasText: 'surprise chaos' }).waitFor({ state: 'attached' });
  await level.selectOption('first-request');
  assert.match(await pa.locator('#challenge-level-help').innerText(), /no chaos, so no surprise/);
  await snap('player-page-challenge', pa);
  await pa.locator('#player-challenge').click();
  await pa.waitForURL(/#\/duels\/[0-9a-f-]{36}$/);
  const id = decodeURIComponent(pa.url().split('#/duels/')[1]);
  await pb.goto(`${BASE_B}/#/duels`);
  await pb.locator(`#duels-pending .duel-card[data-id="${id}"]`).waitFor();
  assert.match(await pb.locator(`#duels-pending .duel-card[data-id="${id}"]`).innerText(), new RegExp(names.a));
});

test('no script errors in any context', () => {
  assert.deepEqual(problems, []);
});
