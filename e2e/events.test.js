// End-to-end: a live event across two replicas. run.sh starts replicas A and B on one
// PostgreSQL database (BASE_URL, BASE_URL_B) with an admin token (ADMIN_TOKEN). The admin
// schedules, through the API, an event on the tutorial level that starts now and ends
// soon, with hidden chaos. Player 1 watches the event's page served by B; player 2 plays it
// in the browser on A (refused before joining, joins, submits, is refused past the attempt
// limit); B's live board shows player 2 within seconds. When the event ends, the server's
// finish job runs the final designs with the hidden chaos, and both replicas' pages show
// the revealed chaos and the final board; re-running a final design gives the same
// evaluation. The list shows the event live, an upcoming one with its briefing and
// countdown, then the finished one; the key screens are repeated at 390×844.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BASE, BASE_B, ADMIN_TOKEN, launch, watch, snapper } from './lib.js';

const STEP = 15_000;
const LIVE_SEC = 40; // how long the event is live: time enough for the steps below on a slow machine
const problems = [];
const snap = snapper('events');
let browser;
let event; // the live one
let upcoming;
let soon; // starts a few seconds into the run
let p1;
let p2;
let p3; // scores on a level, so is on the season's board

async function api(base, method, path, { token, body } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

async function newPlayer(base, name) {
  const out = await api(base, 'POST', '/v1/players', { body: { name } });
  return { id: out.player.id, name: out.player.name, token: out.token };
}

// playerPage is a browser context of its own, signed in as p on base.
async function playerPage(p, viewport = { width: 1280, height: 800 }) {
  const ctx = await browser.newContext({ viewport });
  await ctx.addInitScript((pl) => localStorage.setItem('bp.player', JSON.stringify(pl)), p);
  const page = await ctx.newPage();
  page.setDefaultTimeout(STEP);
  watch(page, problems);
  return page;
}

before(async () => {
  assert.ok(ADMIN_TOKEN, 'ADMIN_TOKEN is not set: run the e2e through e2e/run.sh');
  browser = await launch();
  const tag = Date.now().toString(36);
  p1 = await newPlayer(BASE, `watcher-${tag}`);
  p2 = await newPlayer(BASE_B, `builder-${tag}`);
  const now = Date.now();
  event = await api(BASE, 'POST', '/v1/events', {
    token: ADMIN_TOKEN,
    body: {
      level: 'first-request', title: `Spike night ${tag}`, briefing: 'Serve the **tutorial** traffic. Something will happen.',
      starts_at: new Date(now).toISOString(), ends_at: new Date(now + LIVE_SEC * 1000).toISOString(),
      attempt_limit: 1, join_required: true,
      hidden_chaos: [{ id: 'surprise', kind: 'traffic_spike', at_sec: 30, duration_sec: 40, params: { multiplier: 3 } }],
      resilience: { error_ceiling: 0.05, recovery_deadline_sec: 30 },
    },
  });
  upcoming = await api(BASE_B, 'POST', '/v1/events', {
    token: ADMIN_TOKEN,
    body: {
      level: 'cache-me-if-you-can', title: `Cache week ${tag}`, briefing: 'A week of **reads**. Bring a cache.',
      starts_at: new Date(now + 3 * 3600_000).toISOString(), ends_at: new Date(now + 10 * 24 * 3600_000).toISOString(),
      join_required: true,
    },
  });
  soon = await api(BASE, 'POST', '/v1/events', {
    token: ADMIN_TOKEN,
    body: {
      level: 'first-request', title: `Opening bell ${tag}`, briefing: 'It starts in a moment.',
      starts_at: new Date(now + 6000).toISOString(), ends_at: new Date(now + 24 * 3600_000).toISOString(),
    },
  });
  await api(BASE_B, 'POST', `/v1/events/${event.id}/join`, { token: p1.token });
});

after(async () => {
  await browser?.close();
});

let watcher; // player 1, on B
let builder; // player 2, on A

test('the events list: the live event with its end countdown, an upcoming one with its briefing and start countdown', async () => {
  watcher = await playerPage(p1);
  await watcher.goto(`${BASE_B}/#/events`);
  const live = watcher.locator(`#events-live li[data-id="${event.id}"]`);
  await live.waitFor();
  assert.match(await live.locator('.countdown').innerText(), /^Ends in (\d+ s|\d+ min \d\d s)$/);
  const next = watcher.locator(`#events-upcoming li[data-id="${upcoming.id}"]`);
  assert.match(await next.locator('.countdown').innerText(), /^Starts in (2|3) h \d\d min$/);
  assert.match(await next.innerText(), /A week of reads\. Bring a cache\./);
  assert.doesNotMatch(await next.innerText(), /cache-me-if-you-can/, 'the level of an upcoming event is not shown');
  await snap('list', watcher);
  // Keyboard: the upcoming event's page, and joining it.
  await next.getByRole('link').focus();
  await watcher.keyboard.press('Enter');
  await watcher.locator('#join').waitFor();
  assert.match(await watcher.locator('main').innerText(), /The level is revealed when the event starts/);
  await watcher.locator('#join').focus();
  await watcher.keyboard.press('Enter');
  await watcher.locator('#join-status.pass').waitFor();
  await snap('upcoming', watcher);
});

test('an upcoming event\'s page turns live at its start, without a reload, and shows the level', async () => {
  await watcher.goto(`${BASE_B}/#/events/${soon.id}`);
  await watcher.locator('#countdown').waitFor();
  if (Date.now() < Date.parse(soon.starts_at) - 1500) {
    assert.match(await watcher.locator('#countdown').innerText(), /^Starts in \d+ s$/);
    assert.equal(await watcher.locator('#event-submit').count(), 0);
  }
  await watcher.locator('#event-submit').waitFor({ timeout: Date.parse(soon.starts_at) - Date.now() + STEP });
  assert.match(await watcher.locator('#countdown').innerText(), /^Ends in/);
  assert.match(await watcher.locator('#ev-play-h').innerText(), /Play the level/);
});

test('player 1 watches the live board on replica B', async () => {
  await watcher.goto(`${BASE_B}/#/events/${event.id}`);
  await watcher.locator('#live-state[data-state="live"]').waitFor();
  // Player 1 has joined but not submitted: counted among the entrants, told so by the
  // server, and in no standings until a design is in.
  await watcher.locator('#my-standing', { hasText: 'You are in: joined, no design submitted yet' }).waitFor();
  assert.match(await watcher.locator('#countdown').innerText(), /^Ends in/);
  assert.match(await watcher.locator('#entrant-count').innerText(), /[1-9]\d* entrants?/);
  assert.equal(await watcher.locator(`#event-board tr[data-player="${p1.id}"]`).count(), 0);
});

test('player 2 plays on replica A: every rule error is the server\'s message; a passing submission appears on B\'s board within seconds', async () => {
  builder = await playerPage(p2);
  await builder.goto(`${BASE}/#/events/${event.id}`);
  await builder.locator('#event-submit').waitFor();
  await builder.locator('.cy-host canvas').first().waitFor();
  // The tutorial's starting design has one app replica; two pass. From the keyboard.
  await builder.locator('.comp-chips [data-select="app"]').focus();
  await builder.keyboard.press('Enter');
  await builder.locator('fieldset.comp[data-id="app"]').getByLabel('Replicas').fill('2');
  await builder.locator('#run').click();
  await builder.locator('#verdict.pass').waitFor();
  assert.match(await builder.locator('#next-level').innerText(), /submit it below to enter it in the event/);

  // Not joined yet: the server's problem, word for word.
  await builder.locator('#event-submit').click();
  const receipt = builder.locator('#event-receipt .receipt');
  await receipt.filter({ hasText: 'Refused' }).waitFor();
  assert.match(await receipt.innerText(), /Refused — Not joined: .*join/i);
  await builder.locator('#join').click();
  await receipt.filter({ hasText: 'You are in' }).waitFor();

  await builder.locator('#event-submit').click();
  await receipt.filter({ hasText: 'Passed' }).waitFor();
  assert.match(await receipt.innerText(), /Passed — score \d+ on the level as published \(attempt 1\)/);
  // On replica B, without a reload: the stream brings player 2's attempt.
  const row = watcher.locator(`#event-board tr[data-player="${p2.id}"]`);
  await row.waitFor({ timeout: 3000 });
  assert.match(await row.innerText(), new RegExp(`1\\s+${p2.name}[\\s\\S]*\\d+[\\s\\S]*passing`));
  // The same moment, the header counts both: player 1 (joined) and player 2 (on the board).
  assert.match(await watcher.locator('#entrant-count').innerText(), /\b2 entrants/);
  await snap('live-board-b', watcher);
  await builder.locator(`#event-board tr[data-player="${p2.id}"].me`).waitFor();

  // One attempt each: the second is refused with the server's words.
  await builder.locator('#event-submit').click();
  await receipt.filter({ hasText: 'Attempt limit' }).waitFor();
  assert.match(await receipt.innerText(), /Refused — Attempt limit reached: /);
  // The level's own chaos is all a player sees; the page says the final runs may meet more.
  assert.match(await builder.locator('#event-hidden-chaos').innerText(), /the event’s hidden chaos, if it has any/);
  await snap('live-a', builder);
});

test('the live event on a phone', async () => {
  const phone = await playerPage(p1, { width: 390, height: 844 });
  try {
    await phone.goto(`${BASE_B}/#/events`);
    await phone.locator(`#events-live li[data-id="${event.id}"]`).waitFor();
    await snap('phone-list', phone);
    await phone.goto(`${BASE_B}/#/events/${event.id}`);
    await phone.locator(`#event-board tr[data-player="${p2.id}"]`).waitFor();
    await phone.locator('.cy-host canvas').first().waitFor();
    await snap('phone-live', phone);
  } finally {
    await phone.context().close();
  }
});

test('a level\'s leaderboard on replica B follows a score stored through A, and says when its stream reconnects', async () => {
  await watcher.goto(`${BASE_B}/#/levels/cache-me-if-you-can/leaderboard`);
  await watcher.locator('#live-state[data-state="live"]').waitFor();
  p3 = await newPlayer(BASE, `scorer-${Date.now().toString(36)}`);
  const design = JSON.parse(readFileSync(new URL('../internal/challenges/testdata/solutions/cache-me-if-you-can.json', import.meta.url), 'utf8'));
  await api(BASE, 'POST', '/v1/challenges/cache-me-if-you-can/submissions', { token: p3.token, body: { design } });
  await watcher.locator(`#board tr[data-player="${p3.id}"]`).waitFor({ timeout: 3000 });
  assert.match(await watcher.locator('#live-news').innerText(), new RegExp(`${p3.name} scored \\d+ to rank \\d+\\.`));
  await snap('leaderboard-live-b', watcher);
  // A replica that refuses the stream (503: full): the page says it is reconnecting, and
  // is live again once a retry is let through.
  const stream = '**/v1/challenges/cache-me-if-you-can/leaderboard/stream*';
  await watcher.route(stream, (r) => r.fulfill({ status: 503, contentType: 'application/problem+json', headers: { 'Retry-After': '1' }, body: '{"code":"unavailable"}' }));
  await watcher.reload();
  await watcher.locator('#live-state[data-state="reconnecting"]').waitFor();
  assert.match(await watcher.locator('#live-state').innerText(), /Reconnecting/);
  await snap('leaderboard-reconnecting', watcher);
  await watcher.unroute(stream);
  await watcher.locator('#live-state[data-state="live"]').waitFor();
  // The refusal is the one console error the browser reports here, by design.
  for (let i = problems.length - 1; i >= 0; i--) if (/EventSource's response has a status 503|status of 503/.test(problems[i])) problems.splice(i, 1);
  await watcher.goto(`${BASE_B}/#/events/${event.id}`);
});

test('after the end: the revealed chaos and the final board on both replicas; a re-run gives the same evaluation', async () => {
  const wait = Date.parse(event.ends_at) - Date.now() + 60_000; // the end, the finish job, the final runs
  for (const p of [watcher, builder]) {
    await p.locator('#hidden-chaos').waitFor({ timeout: wait });
    assert.match(await p.locator('#hidden-chaos').innerText(), /30 s–70 s: traffic ×3 \(surprise\)/);
    assert.match(await p.locator('#hidden-chaos').innerText(), /errors at most 5\.0%/);
    assert.match(await p.locator('#countdown').innerText(), /^Finished/);
    // Two entered (the watcher joined without a design): the header counts both, the board
    // the one with a final design.
    assert.match(await p.locator('#event-board caption').innerText(), /^1 with a final design$/);
    assert.match(await p.locator('#entrant-count').innerText(), /2 entrants/);
  }
  const row = watcher.locator(`#event-board tr[data-player="${p2.id}"]`);
  assert.match(await row.innerText(), /^1\s/);
  await snap('finished-b', watcher);
  // The determinism proof, from the keyboard.
  await row.getByRole('button', { name: `Re-run ${p2.name}'s final design` }).focus();
  await watcher.keyboard.press('Enter');
  await row.locator('.rerun-out.pass').waitFor({ timeout: 30_000 });
  assert.match(await row.locator('.rerun-out').innerText(), /^✓ Same evaluation as the final run: (passed, score \d+|not passed)/);
  // The re-run shows its verdict, why it happened and its charts under the board.
  const detail = watcher.locator('#rerun-detail');
  await detail.locator('#verdict').waitFor();
  assert.match(await detail.locator('#rerun-h').innerText(), new RegExp(`${p2.name}’s final run, re-run`));
  assert.match(await detail.locator('#verdict').innerText(), /^(PASSED — score \d+|FAILED — )/);
  assert.ok(await detail.locator('.uplot').count() >= 1, 'no chart for the re-run');
  await snap('finished-rerun', watcher);
  await snap('finished-a', builder);
  const phone = await playerPage(p2, { width: 390, height: 844 });
  try {
    await phone.goto(`${BASE}/#/events/${event.id}`);
    await phone.locator('#hidden-chaos').waitFor();
    await snap('phone-finished', phone);
  } finally {
    await phone.context().close();
  }
  await watcher.goto(`${BASE_B}/#/events`);
  await watcher.locator(`#events-finished li[data-id="${event.id}"]`).waitFor();
  assert.match(await watcher.locator(`#events-finished li[data-id="${event.id}"] .countdown`).innerText(), /^Finished/);
});

test('the season board and the players\' history, served by either replica', async () => {
  await watcher.goto(`${BASE_B}/#/seasons`);
  const row = watcher.locator(`#season-board tr[data-player="${p3.id}"]`);
  await row.waitFor();
  assert.match(await watcher.locator('h1').innerText(), /^Season: /);
  assert.match(await row.innerText(), new RegExp(`^\\d+\\s+${p3.name}\\s+\\d+`));
  await snap('season-board', watcher);
  // From the board to the player's page, by keyboard.
  await row.getByRole('link', { name: p3.name }).focus();
  await watcher.keyboard.press('Enter');
  const season = watcher.locator('#player-seasons tbody tr').first();
  await season.waitFor();
  assert.match(await season.innerText(), /\d+ of \d+\s+\d+/);
  assert.match(await watcher.locator('#player-events').innerText(), /No finished events yet/);
  // Player 2's page on A: the event, ranked.
  await builder.goto(`${BASE}/#/players/${p2.id}`);
  const ev = builder.locator(`#player-events tr[data-event="${event.id}"]`);
  await ev.waitFor();
  assert.match(await ev.innerText(), new RegExp(`${event.title}\\s+1 of 1`));
  // The duel rating is on the page too: nobody has duelled yet.
  assert.match(await builder.locator('#player-rating').innerText(), /Duel rating: 1,500 ± 350 after 0 duels/);
  await snap('player', builder);
  const phone = await playerPage(p1, { width: 390, height: 844 });
  try {
    await phone.goto(`${BASE_B}/#/seasons`);
    await phone.locator(`#season-board tr[data-player="${p3.id}"]`).waitFor();
    await snap('phone-season-board', phone);
    await phone.goto(`${BASE_B}/#/players/${p2.id}`);
    await phone.locator(`#player-events tr[data-event="${event.id}"]`).waitFor();
    await snap('phone-player', phone);
  } finally {
    await phone.context().close();
  }
});

test('no script errors', () => {
  assert.deepEqual(problems, []);
});
