// End-to-end: an upcoming event joined by two players in two browser contexts (player 1 on
// replica A, player 2 on replica B). At every step each page agrees with itself — the entrant
// count, the board's caption and rows, the join button and "You are in" — and, once a look
// has come round, with the other page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, BASE_B, ADMIN_TOKEN, launch, watch, snapper } from './lib.js';

const STEP = 15_000;
const problems = [];
const snap = snapper('event-join');
let browser;
let event;
let p1;
let p2;
let page1;
let page2;

async function call(base, method, path, { token, body } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

async function playerPage(base, p, viewport = { width: 1280, height: 800 }) {
  const ctx = await browser.newContext({ viewport });
  if (p) await ctx.addInitScript((pl) => localStorage.setItem('bp.player', JSON.stringify(pl)), p);
  const page = await ctx.newPage();
  page.setDefaultTimeout(STEP);
  watch(page, problems);
  await page.goto(`${base}/#/events/${event.id}`);
  await page.locator('#live-state[data-state="live"]').waitFor();
  return page;
}

// seen is what one page says about the entrants and about its player.
function seen(p) {
  return p.evaluate(() => {
    const count = Number(/(\d+) entrant/.exec(document.querySelector('#entrant-count')?.textContent || '')?.[1] ?? NaN);
    const caption = document.querySelector('#event-board caption')?.textContent || '';
    const rows = [...document.querySelectorAll('#event-board tbody tr')].map((r) => r.dataset.player);
    const join = document.querySelector('#join');
    const joinShown = Boolean(join && join.offsetParent);
    const standing = document.querySelector('#my-standing');
    const saysIn = Boolean(standing && !standing.hidden && /You are in/.test(standing.textContent));
    const empty = Boolean(document.querySelector('#event-board-empty'));
    return { count, captionCount: caption ? Number(/^(\d+)/.exec(caption)?.[1]) : 0, rows, joinShown, saysIn, empty };
  });
}

// agrees checks that a page does not contradict itself, and returns what it says. An entrant
// who has only joined is counted in the header but is in no standings (the board lists
// entrants once they submit a design), so the player's own state comes from the server's
// word that they joined: "You are in" and the join button are never both shown.
async function agrees(p, pid, label) {
  const s = await seen(p);
  assert.equal(s.captionCount, s.rows.length, `${label}: the board's caption says ${s.captionCount}, it lists ${s.rows.length}`);
  assert.ok(s.count >= s.rows.length, `${label}: the header says ${s.count} entrants, the board lists ${s.rows.length}`);
  assert.equal(s.empty, s.rows.length === 0, `${label}: the empty-board note and ${s.rows.length} rows`);
  assert.notEqual(s.saysIn, s.joinShown, `${label}: "You are in" ${s.saysIn ? 'shown' : 'missing'} and the join button ${s.joinShown ? 'shown' : 'hidden'}`);
  return s;
}

// until polls a page until it agrees with itself and shows want: {count, in}.
async function until(p, pid, want, label) {
  const deadline = Date.now() + STEP;
  for (;;) {
    const s = await agrees(p, pid, label);
    if (s.count === want.count && s.saysIn === want.in) return s;
    if (Date.now() > deadline) assert.fail(`${label}: ${s.count} entrants and in: ${s.saysIn}, want ${want.count} and ${want.in}`);
    await p.waitForTimeout(250);
  }
}

before(async () => {
  assert.ok(ADMIN_TOKEN, 'ADMIN_TOKEN is not set: run the e2e through e2e/run.sh');
  browser = await launch();
  const tag = Date.now().toString(36);
  const now = Date.now();
  event = await call(BASE, 'POST', '/v1/events', {
    token: ADMIN_TOKEN,
    body: {
      level: 'first-request', title: `Join night ${tag}`, briefing: 'Join first.',
      starts_at: new Date(now + 3600_000).toISOString(), ends_at: new Date(now + 7200_000).toISOString(),
      join_required: true,
    },
  });
  const a = await call(BASE, 'POST', '/v1/players', { body: { name: `first-${tag}` } });
  p1 = { id: a.player.id, name: a.player.name, token: a.token };
});

after(async () => {
  await browser?.close();
});

test('a player without a name picks one on the event page and joins there', async () => {
  page2 = await playerPage(BASE_B, null);
  assert.match(await page2.locator('main').innerText(), /Pick a player name to join with/);
  await page2.getByLabel('Player name').fill(`second-${Date.now().toString(36)}`);
  await page2.getByRole('button', { name: 'Save name' }).click();
  await page2.locator('#join').waitFor();
  p2 = await page2.evaluate(() => JSON.parse(localStorage.getItem('bp.player')));
  await page2.locator('#live-state[data-state="live"]').waitFor();
  await until(page2, p2.id, { count: 0, in: false }, 'player 2 before anyone joins');
  await snap('before', page2);
});

test('two players join in turn: each page agrees with itself at every step, then with the other', async () => {
  page1 = await playerPage(BASE, p1);
  await until(page1, p1.id, { count: 0, in: false }, 'player 1 before anyone joins');

  await page1.locator('#join').click();
  await page1.locator('#join-status.pass').waitFor();
  await until(page1, p1.id, { count: 1, in: true }, 'player 1 after joining');
  await until(page2, p2.id, { count: 1, in: false }, 'player 2 after player 1 joined');
  await snap('one-joined', page1);

  await page2.locator('#join').click();
  await page2.locator('#join-status.pass').waitFor();
  await until(page2, p2.id, { count: 2, in: true }, 'player 2 after joining');
  await until(page1, p1.id, { count: 2, in: true }, 'player 1 after player 2 joined');
  await snap('both-joined', page2);
});

test('the joined event on a phone', async () => {
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
  await phone.addInitScript((pl) => localStorage.setItem('bp.player', JSON.stringify(pl)), p1);
  const p = await phone.newPage();
  watch(p, problems);
  await p.goto(`${BASE}/#/events/${event.id}`);
  await p.locator('#live-state[data-state="live"]').waitFor();
  await until(p, p1.id, { count: 2, in: true }, 'player 1 on a phone, after a fresh load');
  await snap('phone', p);
  await phone.close();
});

test('no script errors in any context', () => {
  assert.deepEqual(problems, []);
});
