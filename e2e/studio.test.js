// End-to-end: an author writes a level in the studio, sees every schema problem at once while
// typing (each marked at its line in the document, with its reason there, and summed up in a
// list whose line links put the caret on it), gets the server's own check when publishing (a chaos target the design lacks),
// checks it on the server with a reference design (the starting design fails, the reference
// passes once the budget allows it), publishes, then schedules an event on the new level with a hidden chaos schedule, all in
// the UI: the event form's problems appear under their fields, every one at once. A level whose
// lesson can be skipped is checked and published with the lesson search's warning at its line.
// Published levels are listed under More levels, never inside a chapter of the campaign. The admin makes the player an author through the API first, as docs/api.md says.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, ADMIN_TOKEN, launch, watch, snapper } from './lib.js';

const STEP = 15_000;
const problems = [];
const snap = snapper('studio');
const tag = Date.now().toString(36);
const SLUG = `studio-herd-${tag}`;
// REFERENCE passes thundering-herd at its own budget ($0.85/h), not at $0.50/h.
const REFERENCE = {
  components: [
    { id: 'app', type: 'app_service', params: { replicas: 8 } },
    { id: 'cache', type: 'cache' },
    { id: 'db', type: 'database', params: { instance_type: 'db.large' } },
  ],
  edges: [{ from: 'app', to: 'cache' }, { from: 'app', to: 'db' }],
};
let browser;
let author;
let page;

// marks reads the problems marked in a JSON field: {field: line} and the line each field's
// key starts at in the text, found here by searching the text.
function marks(p, id) {
  return p.evaluate((id) => {
    const out = {};
    const box = document.getElementById(id).closest('.code-wrap');
    for (const m of box.querySelectorAll('.code-lens-line')) for (const f of m.dataset.fields.split(' ')) out[f] = Number(m.dataset.line);
    return out;
  }, id);
}
function lineOfKey(text, key, from = 0) {
  const at = text.indexOf(`"${key}":`, from);
  assert.ok(at >= 0, `"${key}" is not in the text`);
  return text.slice(0, at).split('\n').length;
}

async function call(method, path, { token, body } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(BASE + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

// levelSlugs reads every page of the level list.
async function levelSlugs() {
  const slugs = [];
  let cursor = '';
  do {
    const page = await call('GET', `/v1/challenges?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    slugs.push(...page.challenges.map((c) => c.slug));
    cursor = page.next;
  } while (cursor);
  return slugs;
}

// edit rewrites the level document in the editor as a program would: parse, change, type.
async function edit(p, change) {
  const doc = JSON.parse(await p.locator('#level-json').inputValue());
  change(doc);
  await p.locator('#level-json').fill(`${JSON.stringify(doc, null, 2)}\n`);
}

before(async () => {
  assert.ok(ADMIN_TOKEN, 'ADMIN_TOKEN is not set: run the e2e through e2e/run.sh');
  const out = await call('POST', '/v1/players', { body: { name: `author-${tag}` } });
  author = { id: out.player.id, name: out.player.name, token: out.token };
  await call('PUT', `/v1/players/${author.id}/role`, { token: ADMIN_TOKEN, body: { role: 'author' } });
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

async function authorPage(viewport) {
  const ctx = await browser.newContext({ viewport });
  await ctx.addInitScript((pl) => localStorage.setItem('bp.player', JSON.stringify(pl)), author);
  const p = await ctx.newPage();
  p.setDefaultTimeout(STEP);
  watch(p, problems);
  return p;
}

test('a player who is not an author is told what the studio needs', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const out = await call('POST', '/v1/players', { body: { name: `reader-${tag}` } });
  await ctx.addInitScript((pl) => localStorage.setItem('bp.player', JSON.stringify(pl)), { id: out.player.id, name: out.player.name, token: out.token });
  const p = await ctx.newPage();
  watch(p, problems);
  await p.goto(`${BASE}/#/studio`);
  await p.locator('#studio-role').waitFor();
  assert.match(await p.locator('#studio-role').innerText(), /takes the author role/);
  assert.ok(await p.locator('header nav a[data-section="studio"]').isHidden(), 'the studio link is shown to a player');
  await ctx.close();
});

test('an author writes a level with every schema problem shown at once, then publishes it', async () => {
  page = await authorPage({ width: 1280, height: 800 });
  await page.goto(`${BASE}/#/`);
  await page.locator('header nav a[data-section="studio"]').waitFor();
  await page.locator('header nav a[data-section="studio"]').click();
  await page.locator('#studio-start').selectOption('thundering-herd');
  await page.locator('#level-ok').waitFor();
  await page.locator('#studio-traffic .uplot').waitFor();
  assert.match(await page.locator('#studio-chaos').innerText(), /cache is flushed \(flush\)/);

  // Three mistakes at once, each at its path. The new level's world is not the template's,
  // so the template's word on why its starting design fails goes.
  await edit(page, (d) => {
    delete d.starting_fails;
    d.slug = SLUG;
    d.title = `Herd ${tag}`;
    d.budget_per_hour = -1;
    d.colour = 'blue';
    d.run.duration_sec = 'long';
  });
  const list = page.locator('#level-problems');
  await list.waitFor();
  const said = await list.innerText();
  assert.match(said, /budget_per_hour: .*less than/);
  assert.match(said, /colour: is not a field here/);
  assert.match(said, /run\.duration_sec: .*"string" is invalid/);
  assert.ok(await page.locator('#publish').isDisabled(), 'publish is offered for an invalid level');
  // Each is marked at its own line of the document, with its reason there.
  const text = await page.locator('#level-json').inputValue();
  assert.deepEqual(await marks(page, 'level-json'), {
    budget_per_hour: lineOfKey(text, 'budget_per_hour'),
    colour: lineOfKey(text, 'colour'),
    'run.duration_sec': lineOfKey(text, 'duration_sec'),
  });
  assert.match(await page.locator('#level-json ~ .code-lens [data-fields="colour"]').innerText(), /is not a field here/);
  // The list's line link brings a mark far down the document into view.
  await page.locator('#level-problems li[data-field="colour"] button').click();
  await page.evaluate(() => new Promise((r) => { requestAnimationFrame(() => requestAnimationFrame(r)); }));
  const shown = await page.evaluate(() => {
    const lens = document.querySelector('#level-json ~ .code-lens').getBoundingClientRect();
    const mark = document.querySelector('#level-json ~ .code-lens [data-fields="colour"]').getBoundingClientRect();
    return mark.top >= lens.top && mark.bottom <= lens.bottom;
  });
  assert.ok(shown, 'the line link does not bring the mark into view');
  await snap('problems', page);

  // What only the server knows: the chaos strikes a component the design does not have.
  await edit(page, (d) => {
    d.budget_per_hour = 0.5;
    delete d.colour;
    d.run.duration_sec = 200;
    d.run.chaos[0].target = 'nope';
    d.run.chaos.push({ id: 'late-flush', kind: 'cache_flush', at_sec: 100, target: 'cache' });
  });
  await page.locator('#level-ok').waitFor();
  assert.match(await page.locator('#studio-chaos').innerText(), /100 s.*cache is flushed \(late-flush\)/);
  await page.locator('#publish').click();
  await page.locator('#publish-problems').waitFor();
  assert.match(await page.locator('#publish-problems').innerText(), /run\.chaos\[0\]\.target: "nope" is not a component/);
  const published = await page.locator('#level-json').inputValue();
  assert.equal((await marks(page, 'level-json'))['run.chaos[0].target'], lineOfKey(published, 'target', published.indexOf('"chaos"')), 'the server\'s problem is not at its line');

  await edit(page, (d) => {
    d.run.chaos[0].target = 'cache';
  });
  await page.locator('#level-ok').waitFor();

  // Checked on the server before publishing: the reference design costs too much at $0.50/h.
  await page.locator('#reference-json').fill(JSON.stringify(REFERENCE, null, 2));
  await page.locator('#server-check').click();
  await page.locator('#server-check-ok').waitFor({ timeout: 60_000 });
  assert.match(await page.locator('#server-check-verdict').innerText(), /Not ready/);
  assert.match(await page.locator('#check-start').innerText(), /Starting design: fails \(as it must\)\. Fails /);
  assert.match(await page.locator('#check-reference').innerText(), /Reference design: fails — it must pass\. Fails cost/);
  assert.match(await page.locator('#check-reference-conditions tr[data-condition="cost"]').innerText(), /over by \$0\.3/);
  await edit(page, (d) => {
    d.budget_per_hour = 0.85;
  });
  await page.locator('#level-ok').waitFor();
  await page.locator('#server-check').click();
  await page.locator('#server-check-verdict', { hasText: 'Ready to publish' }).waitFor({ timeout: 60_000 });
  assert.match(await page.locator('#check-start').innerText(), /Starting design: fails \(as it must\)/);
  assert.match(await page.locator('#check-reference').innerText(), /Reference design: passes \(as it must\)\. Passes every condition; the tightest is /);
  assert.match(await page.locator('#check-reference-conditions tr[data-condition="latency"]').innerText(), /to spare/);
  // Resilience in the level's terms: the share of its allowance the worst chaos event used.
  assert.match(await page.locator('#check-start-conditions tr[data-condition="resilience"]').innerText(), /\d+% of the allowance, by the worst of 2 chaos events\s+≤ 100%: errors ≤ [\d.]+% during each, recovery ≤ [\d,.]+ s/);
  assert.match(await page.locator('#check-cost').innerText(), /Cost bound holds: the most one run may cost is [\d,]+ path-ticks/);
  assert.equal((await levelSlugs()).includes(SLUG), false, 'checking stored the level');
  await page.locator('#server-check-result').scrollIntoViewIfNeeded();
  await snap('check', page);

  await page.locator('#publish').click();
  await page.locator('#publish-result .receipt').waitFor({ timeout: 60_000 });
  // A level is stored under its document's version (it started from a campaign level's).
  const docVersion = JSON.parse(await page.locator('#level-json').inputValue()).version;
  assert.match(await page.locator('#publish-result').innerText(), new RegExp(`Published as a new level: Herd ${tag} \\(${SLUG}\\), version ${docVersion}\\.`));
  await snap('published', page);
});

test('the author schedules an event on the new level with a hidden chaos schedule', async () => {
  assert.equal(await page.locator('#event-level').inputValue(), SLUG);
  await page.locator('#studio-event-h').scrollIntoViewIfNeeded();
  await page.getByLabel('Title').fill(`Herd night ${tag}`);
  await page.getByLabel('Attempts per entrant').fill('3');
  await page.getByLabel('Entrants join before they submit').check();
  await page.locator('#hidden-chaos-box summary').click();
  await page.locator('#hidden-chaos').fill(JSON.stringify([{ id: 'spike', kind: 'traffic_spike', at_sec: -140, duration_sec: 20, params: { multiplier: 2 } }], null, 2));
  await page.locator('#hidden-problems').waitFor();
  assert.deepEqual(await marks(page, 'hidden-chaos'), { '[0].at_sec': 5 });
  // The server's problems appear under their fields, all at once.
  await page.getByLabel('Title').fill('');
  await page.getByLabel('Attempts per entrant').fill('5000');
  await page.locator('#hidden-chaos').fill('[]');
  await page.locator('#schedule').click();
  await page.locator('#schedule-problems').waitFor();
  const under = (label) => page.locator('.field', { has: page.getByLabel(label, { exact: true }) }).locator('.field-error');
  assert.match(await under('Title').innerText(), /required/);
  assert.match(await under('Attempts per entrant').innerText(), /1000/);
  await snap('event-problems', page);
  await page.getByLabel('Title').fill(`Herd night ${tag}`);
  await page.getByLabel('Attempts per entrant').fill('3');
  assert.equal(await page.locator('.field-error').count(), 0, 'a problem stays beside a field whose value changed');
  await page.locator('#hidden-chaos').fill(JSON.stringify([{ id: 'spike', kind: 'traffic_spike', at_sec: 140, duration_sec: 20, params: { multiplier: 2 } }]));
  await page.locator('#hidden-check').filter({ hasText: '1 hidden event' }).waitFor();
  await page.locator('#hidden-traffic .uplot').waitFor();
  assert.match(await page.locator('#hidden-chaos-box').innerText(), /140 s–160 s: traffic ×2 \(spike\)/);
  await snap('event', page);
  await page.locator('#schedule').click();
  await page.locator('#schedule-ok').waitFor();
  assert.equal(await page.locator('.field-error').count(), 0, 'a problem stays after scheduling');
  await page.locator('#schedule-ok a').click();
  await page.locator('h1', { hasText: `Herd night ${tag}` }).waitFor();
  assert.match(await page.locator('main').innerText(), /3 attempts per entrant/);
  assert.match(await page.locator('main').innerText(), /join before you submit/);
});

test('a published level is listed under More levels, open, outside every chapter of the campaign', async () => {
  const p = await authorPage({ width: 1280, height: 800 });
  await p.goto(`${BASE}/#/`);
  await p.locator('#more-levels table.levels tbody tr[data-slug]').first().waitFor();
  const row = p.locator(`tr[data-slug="${SLUG}"]`);
  assert.equal(await p.locator(`#more-levels tr[data-slug="${SLUG}"]`).count(), 1, 'the published level is not under More levels');
  assert.equal(await p.locator(`#campaign-levels tr[data-slug="${SLUG}"]`).count(), 0, 'the published level is in the campaign');
  // The author has no stars: every chapter after the first is locked, the published level is not.
  await p.locator('#campaign-levels tr.chapter.locked').first().waitFor();
  const locked = await p.locator('#campaign-levels tr.chapter.locked').count();
  assert.ok(locked >= 1, 'no chapter is locked for a player without stars');
  assert.equal(await p.locator('#more-levels tr.chapter, #more-levels tr.locked').count(), 0, 'a chapter or a lock under More levels');
  assert.equal(await row.getByRole('link').getAttribute('href'), `#/levels/${SLUG}`);
  assert.match(await p.locator('#more-levels').innerText(), /open to everyone/);
  await p.locator('#more-levels').scrollIntoViewIfNeeded();
  await snap('more-levels', p);
  // Its page does not count it among the campaign's levels.
  await row.getByRole('link').click();
  await p.locator('#campaign').waitFor();
  assert.doesNotMatch(await p.locator('#campaign').innerText(), /level \d+ of \d+|next:/);
  await p.context().close();
});

test('the lesson search\'s warnings are shown at their lines, on checking and on publishing', async () => {
  const p = await authorPage({ width: 1280, height: 800 });
  await p.goto(`${BASE}/#/studio`);
  await p.locator('#studio-start').selectOption('read-replicas');
  await p.locator('#level-ok').waitFor();
  // Every database type of the price list: a single larger node replaces the replicas.
  await edit(p, (d) => {
    d.slug = `skippable-${tag}`;
    d.title = `Skippable ${tag}`;
    delete d.catalog.components.database.instance_types;
  });
  await p.locator('#level-ok').waitFor();
  // The check's problems with the reference design are marked in it, at their lines.
  await p.locator('#reference-json').fill(JSON.stringify({ components: [{ id: 'app', type: 'app_service' }, { id: 'db', type: 'nope' }], edges: [] }, null, 2));
  await p.locator('#server-check').click();
  await p.locator('#server-check-reference-problems').waitFor({ timeout: 60_000 });
  const refText = await p.locator('#reference-json').inputValue();
  assert.equal((await marks(p, 'reference-json'))['components[1].type'], lineOfKey(refText, 'type', refText.indexOf('"db"')));
  assert.deepEqual(await marks(p, 'level-json'), {}, 'the reference design\'s problem is marked in the level');
  await p.locator('#reference-json').fill('');
  await p.locator('#server-check').click();
  await p.locator('#check-warnings').waitFor({ timeout: 60_000 });
  assert.match(await p.locator('#server-check-verdict').innerText(), /^Ready to publish — .* The lesson search warns about one thing, below\.$/);
  const warning = p.locator('#check-warnings-list li[data-field="lesson.mechanics[0]"]');
  assert.match(await warning.innerText(), /^lesson\.mechanics\[0\]: the lesson can be skipped: a design without database read replicas passes, found from the starting design in \d+ runs? \(the design is below\) \(line \d+\)$/);
  const text = await p.locator('#level-json').inputValue();
  const line = lineOfKey(text, 'mechanics') + 1; // its first item
  assert.deepEqual(await marks(p, 'level-json'), { 'lesson.mechanics[0]': line });
  assert.ok(await p.locator(`#level-json ~ .code-lens .code-lens-line.warning[data-line="${line}"]`).isVisible(), 'the warning is not marked as a warning');
  assert.match(await p.locator('#level-json ~ .code-lens [data-fields="lesson.mechanics[0]"]').innerText(), /^warning: the lesson can be skipped/);
  await p.locator('#check-warnings details.lesson-skip summary').click();
  const skip = JSON.parse(await p.locator('#check-warnings details.lesson-skip pre').innerText());
  assert.ok(skip.components.some((c) => c.type === 'database'), 'the design that skips the lesson is not shown');
  await p.locator('#server-check-result').scrollIntoViewIfNeeded();
  await snap('check-warnings', p);
  await p.locator('#publish').click();
  await p.locator('#publish-warnings').waitFor({ timeout: 60_000 });
  assert.match(await p.locator('#publish-ok').innerText(), /^Published as a new level: Skippable /);
  assert.match(await p.locator('#publish-warnings').innerText(), /^1 warning about the lesson — it is published all the same\./);
  assert.match(await p.locator('#publish-warnings-list li[data-field="lesson.mechanics[0]"]').innerText(), /the lesson can be skipped/);
  assert.deepEqual(await marks(p, 'level-json'), { 'lesson.mechanics[0]': line });
  await p.context().close();
});

test('the studio on a phone', async () => {
  const phone = await authorPage({ width: 390, height: 844 });
  await phone.goto(`${BASE}/#/studio`);
  await phone.locator('#studio-start').selectOption(SLUG);
  await phone.locator('#level-ok').waitFor();
  await phone.locator('#studio-traffic .uplot').waitFor();
  await snap('phone', phone);
  await phone.locator('#reference-json').fill(JSON.stringify(REFERENCE));
  await phone.locator('#server-check').click();
  await phone.locator('#server-check-verdict', { hasText: 'Ready to publish' }).waitFor({ timeout: 60_000 });
  await phone.locator('#server-check-result').scrollIntoViewIfNeeded();
  await snap('phone-check', phone);
  await phone.locator('#hidden-chaos-box summary').click();
  await phone.locator('#hidden-chaos').fill(JSON.stringify([{ id: 'spike', kind: 'traffic_spike', at_sec: 140, duration_sec: 20, params: { multiplier: 2 } }], null, 2));
  await phone.locator('#hidden-traffic .uplot').waitFor();
  await phone.locator('#studio-event-h').scrollIntoViewIfNeeded();
  await snap('phone-event', phone);
  await phone.context().close();
});

test('no script errors in any context', () => {
  assert.deepEqual(problems, []);
});
