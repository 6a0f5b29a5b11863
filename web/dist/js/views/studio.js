// The authors' studio (#/studio), for players with the author or admin role: write a level
// as its JSON document, checked on every keystroke against the level schema (every problem at
// once, each marked at its line in the document and summed up in a list) with its traffic curve and chaos timeline drawn as the player will
// see them; publish it (the server checks it again, runs its starting design, and stores a
// new version); then schedule an event on it, with a hidden chaos schedule drawn on the same
// timeline. The browser checks only what the schema says; "Check on the server" runs the
// server's checks (the starting design fails, a reference design passes, the cost bound)
// without publishing, and publishing runs them again; the server's problems and its lesson
// search's warnings are marked at their lines of the level or the reference design.
import { h, clear, uid, toast } from '../util.js';
import * as api from '../api.js';
import { loadPlayer } from '../store.js';
import { Validator } from '../../vendor/json-schema/index.js';
import { trafficChart, chaosList } from '../traffic.js';
import { nameForm } from './duel-common.js';
import { renderLevelCheck } from './studio-check.js';
import { CodeLens } from './studio-lens.js';

const AUTHORS = new Set(['author', 'admin']);
let schemaPromise = null;

// levelValidator checks a level document against web/dist/level.schema.json (a copy of
// challenges/level.schema.json that web_test.go keeps identical).
function levelValidator() {
  schemaPromise ||= fetch('level.schema.json').then((r) => r.json()).then((s) => new Validator(s, '2020-12', false));
  return schemaPromise;
}

// schemaProblems turns the validator's output into {field, reason}, paths as the server and
// the CLI print them (run.chaos[0].at_sec): the errors that say what is wrong, not the
// "a subschema had errors" that lead to them.
export function schemaProblems(result) {
  const out = [];
  const seen = new Set();
  for (const e of result.errors || []) {
    if (['properties', '$ref', 'allOf', 'items', 'prefixItems', 'if', 'then', 'else', 'anyOf', 'oneOf', 'propertyNames', 'additionalProperties', 'unevaluatedProperties'].includes(e.keyword)) continue;
    const field = pointerToPath(e.instanceLocation);
    let reason = e.error;
    if (e.keyword === 'false') reason = 'is not a field here';
    const key = `${field}\u0000${reason}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, reason });
  }
  return out;
}

function pointerToPath(loc) {
  const parts = String(loc || '#').replace(/^#\/?/, '').split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  return parts.reduce((path, p) => (/^\d+$/.test(p) ? `${path}[${p}]` : path ? `${path}.${p}` : p), '');
}

// syntaxProblem says where a JSON text stops being JSON: {field: 'line L, column C', reason}.
function syntaxProblem(text, err) {
  const m = /position (\d+)/.exec(err.message);
  if (!m) return { field: '', reason: err.message };
  const upto = text.slice(0, Number(m[1]));
  const line = upto.split('\n').length;
  const col = upto.length - upto.lastIndexOf('\n');
  return { field: `line ${line}, column ${col}`, line, reason: err.message.replace(/ in JSON at position \d+.*$/, '').replace(/^JSON\.parse: /, '') };
}

// parseField parses a text field's JSON; when it is not JSON it marks the field, says where
// in out, and returns NOT_JSON.
const NOT_JSON = Symbol('not JSON');
function parseField(input, out, title, lens) {
  try {
    return JSON.parse(input.value);
  } catch (err) {
    const p = syntaxProblem(input.value, err);
    input.setAttribute('aria-invalid', 'true');
    lens?.show([{ ...p, line: p.line || 1 }]);
    clear(out, h('p', { class: 'receipt fail' }, h('strong', {}, title), ' — ', p.field ? `${p.field}: ` : '', p.reason));
    return NOT_JSON;
  }
}

// problemList sums problems up under their field; with a lens, each says its line, and
// pressing that puts the caret there.
function problemList(id, problems, lens, kind = '') {
  const inOrder = lens ? [...problems].sort((a, b) => lens.lineOf(a.field) - lens.lineOf(b.field)) : problems;
  return h('ul', { class: ['problem-list', kind], id }, inOrder.map((p) => h('li', { dataset: { field: p.field } },
    p.field ? h('code', {}, p.field) : '', p.field ? ': ' : '', p.reason,
    lens && p.field ? [' (', h('button', { type: 'button', class: 'line-link', onclick: () => lens.reveal(p.field) }, `line ${lens.lineOf(p.field)}`), ')'] : null)));
}

// byDocument sorts the check's fields by the text they are about: "level.…" are the level
// document's, "reference_design.…" the reference design's (the check's body holds both),
// each path then relative to its own text.
function byDocument(fields) {
  const out = { level: [], reference: [] };
  for (const f of fields) {
    const m = /^(level|reference_design)(?:\.(.+))?$/.exec(f.field || '');
    if (!m) out.level.push(f);
    else out[m[1] === 'level' ? 'level' : 'reference'].push({ ...f, field: m[2] || '' });
  }
  return out;
}

// warningsBlock says what the server advises about a level it accepts (the lesson search's
// findings: a declared mechanic a passing design can leave out, a search its bound stopped),
// each at its field, with each design the search found passing without a mechanic. done says
// what happens to the level all the same.
function warningsBlock(id, warnings, lesson, lens, done) {
  if (!warnings?.length) return null;
  const skips = (lesson?.skips || []).filter((sk) => sk.passed);
  const shown = warnings.map((w) => ({ ...w, reason: w.reason.replace(/ \(lesson\.skips\[\d+\]\.design\)/, ' (the design is below)') }));
  return h('div', { class: 'receipt warn', id },
    h('p', {}, h('strong', {}, `${warnings.length} warning${warnings.length === 1 ? '' : 's'} about the lesson`), ` — ${done}. Each is marked at its line:`),
    problemList(`${id}-list`, shown, lens, 'warnings'),
    skips.map((sk) => h('details', { class: 'lesson-skip', dataset: { mechanic: sk.mechanic } },
      h('summary', {}, `A design that passes without ${String(sk.mechanic).replace(/_/g, ' ')} (found in ${sk.tried} run${sk.tried === 1 ? '' : 's'})`),
      h('pre', {}, JSON.stringify(sk.design, null, 2)))));
}

// asWarnings marks the server's warnings as advice for a lens.
const asWarnings = (ws) => (ws || []).map((w) => ({ ...w, warning: true }));

// datetimeLocal is a time as an <input type="datetime-local"> shows it, in the browser's zone.
function datetimeLocal(ms) {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

export async function studioView(main) {
  document.title = 'Studio · Backpressure';
  const head = h('header', { class: 'level-head' },
    h('h1', {}, 'Studio'),
    h('p', {}, 'Write a level, see its traffic and chaos as players will, publish it, and schedule an event on it.'));
  const who = loadPlayer();
  if (!who) {
    clear(main, head, h('section', { class: 'panel' }, nameForm(() => { location.reload(); }, {
      label: 'The studio is for authors. Pick a player name first; an admin then makes you an author.',
    })));
    return () => {};
  }
  const me = await api.me();
  if (!me || !AUTHORS.has(me.role)) {
    clear(main, head, h('section', { class: 'panel', id: 'studio-role' },
      h('p', {}, `You play as ${who.name}, with the role `, h('strong', {}, me?.role || 'player'), '. Publishing levels and scheduling events takes the author role.'),
      h('p', {}, 'Ask an admin to make you an author; they need your player id: ', h('code', {}, who.id), '.')));
    return () => {};
  }
  const levels = await api.levels();
  const validator = await levelValidator();
  const cleanups = [];

  // --- The level ------------------------------------------------------------------------
  const startSel = h('select', { id: 'studio-start' },
    h('option', { value: '' }, 'Choose a level to start from…'),
    levels.map((l) => h('option', { value: l.slug }, `${l.title} (${l.slug})`)));
  const editor = h('textarea', {
    id: 'level-json', class: 'code-editor', rows: 24, spellcheck: 'false', autocomplete: 'off',
    'aria-describedby': 'level-check',
  });
  const lens = new CodeLens(editor);
  const check = h('div', { id: 'level-check', 'aria-live': 'polite' });
  const trafficBox = h('div', { class: 'chart-box', id: 'studio-traffic' });
  const chaosBox = h('div', { id: 'studio-chaos' });
  const publishBtn = h('button', { type: 'button', class: 'primary', id: 'publish', disabled: true }, 'Publish a new version');
  const publishOut = h('div', { id: 'publish-result', 'aria-live': 'polite' });
  const reference = h('textarea', {
    id: 'reference-json', class: 'code-editor', rows: 8, spellcheck: 'false', autocomplete: 'off',
    placeholder: '{"components": [...], "edges": [...]}',
  });
  const refLens = new CodeLens(reference);
  reference.addEventListener('input', () => refLens.clear());
  const serverCheckBtn = h('button', { type: 'button', class: 'secondary', id: 'server-check', disabled: true }, 'Check on the server');
  const serverCheckOut = h('div', { id: 'server-check-result', 'aria-live': 'polite' });
  let chart = null;
  let doc = null;

  const draw = (def) => {
    chart?.destroy();
    chart = null;
    clear(trafficBox);
    clear(chaosBox);
    if (!def?.run?.traffic || !(def.run.duration_sec > 0)) {
      trafficBox.append(h('p', { class: 'muted' }, 'Drawn once run.duration_sec is a number of seconds and run.traffic a traffic curve.'));
      return;
    }
    try {
      chart = trafficChart(trafficBox, def);
      chaosBox.append(chaosList(def.run.chaos || []));
    } catch {
      clear(trafficBox, h('p', { class: 'muted' }, 'The traffic cannot be drawn until its fields are numbers.'));
    }
  };
  cleanups.push(() => chart?.destroy());

  const checkNow = () => {
    doc = null;
    publishBtn.disabled = true;
    serverCheckBtn.disabled = true;
    const parsed = parseField(editor, check, 'Not JSON', lens);
    if (parsed === NOT_JSON) return;
    const problems = schemaProblems(validator.validate(parsed));
    draw(parsed);
    if (problems.length) {
      editor.setAttribute('aria-invalid', 'true');
      lens.show(problems);
      clear(check, h('p', { class: 'receipt fail' }, h('strong', {}, `${problems.length} problem${problems.length === 1 ? '' : 's'}`), ' against the level schema, each marked at its line:'),
        problemList('level-problems', problems, lens));
      return;
    }
    editor.removeAttribute('aria-invalid');
    lens.clear();
    doc = parsed;
    publishBtn.disabled = false;
    serverCheckBtn.disabled = false;
    clear(check, h('p', { class: 'receipt pass', id: 'level-ok' }, h('strong', {}, 'The level matches the schema.'),
      ' The server checks the rest (its starting design must fail, the cost bound must hold): check it there before publishing.'));
  };
  let timer = null;
  editor.addEventListener('input', () => {
    // What was checked is no longer what is written: nothing is publishable until it is.
    doc = null;
    publishBtn.disabled = true;
    serverCheckBtn.disabled = true;
    clear(serverCheckOut);
    clear(publishOut);
    lens.clear();
    clear(check, h('p', { class: 'muted' }, 'Checking…'));
    clearTimeout(timer);
    timer = setTimeout(checkNow, 250);
  });
  cleanups.push(() => clearTimeout(timer));
  startSel.addEventListener('change', async () => {
    if (!startSel.value) return;
    const lv = await api.level(startSel.value);
    editor.value = `${JSON.stringify(lv.definition, null, 2)}\n`;
    checkNow();
  });

  // The server check: the reference design is optional; what is not JSON is said here.
  serverCheckBtn.addEventListener('click', async () => {
    if (!doc) return;
    const ref = reference.value.trim() ? parseField(reference, serverCheckOut, 'The reference design is not JSON', refLens) : undefined;
    if (ref === NOT_JSON) return;
    reference.removeAttribute('aria-invalid');
    serverCheckBtn.disabled = true;
    serverCheckBtn.textContent = 'Checking on the server…';
    clear(serverCheckOut);
    clear(publishOut);
    refLens.clear();
    const checked = doc;
    try {
      const res = await api.checkLevel(checked, ref);
      const warnings = byDocument(res.warnings || []);
      lens.show(asWarnings(warnings.level));
      refLens.show(asWarnings(warnings.reference));
      clear(serverCheckOut, renderLevelCheck(res, checked, warningsBlock('check-warnings', [...warnings.level, ...warnings.reference], res.lesson, lens,
        'the level can be published all the same')));
    } catch (err) {
      const fields = byDocument(err.fields || []);
      lens.show(fields.level);
      refLens.show(fields.reference);
      clear(serverCheckOut, h('p', { class: 'receipt fail', id: 'server-check-failed' }, h('strong', {}, 'The server refuses this level'), ' — ', err.message),
        fields.level.length ? problemList('server-check-problems', fields.level, lens) : null,
        fields.reference.length ? [h('p', {}, 'In the reference design:'), problemList('server-check-reference-problems', fields.reference, refLens)] : null);
    } finally {
      serverCheckBtn.disabled = !doc;
      serverCheckBtn.textContent = 'Check on the server';
    }
  });

  publishBtn.addEventListener('click', async () => {
    if (!doc) return;
    publishBtn.disabled = true;
    publishBtn.textContent = 'Publishing…';
    clear(publishOut);
    try {
      const res = await api.publishLevel(doc);
      const c = res.challenge;
      const words = { created: 'Published as a new level', new_version: 'Published as a new version', unchanged: 'Unchanged: this content is already the current version' }[res.outcome] || res.outcome;
      lens.show(asWarnings(res.warnings));
      clear(publishOut, h('p', { class: 'receipt pass', id: 'publish-ok' }, h('strong', {}, words), ': ',
        h('a', { href: `#/levels/${encodeURIComponent(c.slug)}` }, `${c.title} (${c.slug}), version ${c.version}`), '.'),
        warningsBlock('publish-warnings', res.warnings, res.lesson, lens, 'it is published all the same'));
      await fillEventLevels(c.slug);
    } catch (err) {
      lens.show(err.fields || []);
      clear(publishOut, h('p', { class: 'receipt fail' }, h('strong', {}, 'Not published'), ' — ', err.message),
        err.fields?.length ? problemList('publish-problems', err.fields, lens) : null);
    } finally {
      publishBtn.disabled = !doc;
      publishBtn.textContent = 'Publish a new version';
    }
  });

  const levelPanel = h('section', { class: 'panel', 'aria-labelledby': 'studio-level-h' },
    h('h2', { id: 'studio-level-h' }, 'A level'),
    h('p', { class: 'help' }, 'The level document, in the format of challenges/*.json. Start from a published level and change its slug to make a new one; keep the slug to publish a new version of a level you own.'),
    h('div', { class: 'field' }, h('label', { for: startSel.id }, 'Start from'), startSel),
    h('div', { class: 'studio-grid' },
      h('div', { class: 'field' }, h('label', { for: editor.id }, 'Level document (JSON)'), lens.el, check),
      h('div', {}, h('h3', {}, 'Traffic and chaos, as players see them'), trafficBox, chaosBox)),
    h('div', { class: 'field' }, h('label', { for: reference.id }, 'Reference design (JSON, optional)'), refLens.el,
      h('p', { class: 'help' }, 'A design you expect to pass. The server runs it with the starting design, charged to your simulation budget, and stores nothing.')),
    h('div', { class: 'toolbar' }, serverCheckBtn, publishBtn), serverCheckOut, publishOut);

  // --- An event -------------------------------------------------------------------------
  const id = (p) => uid(p);
  const evLevel = h('select', { id: 'event-level' });
  const evTitle = h('input', { id: id('ev-title'), type: 'text', maxlength: 100, required: true });
  const evBrief = h('textarea', { id: id('ev-brief'), rows: 4, maxlength: 4000 });
  const now = Date.now();
  const evStart = h('input', { id: id('ev-start'), type: 'datetime-local', value: datetimeLocal(now + 3600_000) });
  const evEnd = h('input', { id: id('ev-end'), type: 'datetime-local', value: datetimeLocal(now + 25 * 3600_000) });
  const evAttempts = h('input', { id: id('ev-attempts'), type: 'number', min: 0, max: 1000, value: 0 });
  const evJoin = h('input', { id: id('ev-join'), type: 'checkbox' });
  const evCap = h('input', { id: id('ev-cap'), type: 'number', min: 0, max: 100000, value: 0 });
  const evFinal = h('select', { id: id('ev-final') }, h('option', { value: 'best' }, 'their best passing design'), h('option', { value: 'last' }, 'their last design'));
  const hidden = h('textarea', { id: 'hidden-chaos', class: 'code-editor', rows: 8, spellcheck: 'false' });
  hidden.value = '[]';
  const hiddenLens = new CodeLens(hidden);
  const hiddenCheck = h('div', { id: 'hidden-check', 'aria-live': 'polite' });
  const hiddenTraffic = h('div', { class: 'chart-box', id: 'hidden-traffic' });
  const hiddenWords = h('div');
  const evCeiling = h('input', { id: id('ev-ceiling'), type: 'number', min: 0, max: 1, step: 0.01, placeholder: 'the level’s' });
  const evRecovery = h('input', { id: id('ev-recovery'), type: 'number', min: 1, step: 1, placeholder: 'the level’s' });
  const scheduleBtn = h('button', { type: 'button', class: 'primary', id: 'schedule' }, 'Schedule the event');
  const scheduleOut = h('div', { id: 'schedule-result', 'aria-live': 'polite' });
  let hiddenChart = null;
  cleanups.push(() => hiddenChart?.destroy());
  let levelDef = null;

  async function fillEventLevels(select) {
    const list = await api.levels();
    clear(evLevel, list.map((l) => h('option', { value: l.slug, selected: l.slug === select }, `${l.title} (${l.slug})`)));
    await loadEventLevel();
  }
  async function loadEventLevel() {
    levelDef = evLevel.value ? (await api.level(evLevel.value)).definition : null;
    drawHidden();
  }
  // hiddenProblems are the problems of the level with the hidden chaos that are the hidden
  // chaos's, at their paths in the hidden list: the hidden events follow the level's own in
  // run.chaos, where the schema and the server find them.
  const hiddenProblems = (problems) => {
    const own = levelDef?.run?.chaos?.length || 0;
    return problems.flatMap((p) => {
      const m = /^run\.chaos\[(\d+)\](.*)$/.exec(p.field);
      return m && Number(m[1]) >= own ? [{ field: `[${Number(m[1]) - own}]${m[2]}`, reason: p.reason }] : [];
    });
  };
  // drawHidden checks the hidden chaos as the level's chaos list would be checked (the
  // schema's) and draws it after the level's own on the level's traffic.
  function drawHidden() {
    hiddenChart?.destroy();
    hiddenChart = null;
    clear(hiddenTraffic);
    clear(hiddenWords);
    hiddenLens.clear();
    let list;
    try {
      list = JSON.parse(hidden.value || '[]');
    } catch (err) {
      const p = syntaxProblem(hidden.value, err);
      hiddenLens.show([{ ...p, line: p.line || 1 }]);
      clear(hiddenCheck, h('p', { class: 'receipt fail' }, h('strong', {}, 'Not JSON'), ' — ', p.field ? `${p.field}: ` : '', p.reason));
      return null;
    }
    if (!Array.isArray(list)) {
      clear(hiddenCheck, h('p', { class: 'receipt fail' }, 'The hidden chaos is a list of chaos events, like a level\u2019s run.chaos.'));
      return null;
    }
    if (!levelDef) return list;
    const withHidden = { ...levelDef, run: { ...levelDef.run, chaos: [...(levelDef.run.chaos || []), ...list] } };
    if (!withHidden.resilience && list.length) withHidden.resilience = { error_ceiling: 0.05, recovery_deadline_sec: 30 };
    const problems = hiddenProblems(schemaProblems(validator.validate(withHidden)));
    hiddenLens.show(problems);
    clear(hiddenCheck, problems.length
      ? [h('p', { class: 'receipt fail' }, h('strong', {}, `${problems.length} problem${problems.length === 1 ? '' : 's'}`), ', each marked at its line:'), problemList('hidden-problems', problems, hiddenLens)]
      : h('p', { class: 'muted' }, list.length ? `${list.length} hidden event${list.length === 1 ? '' : 's'}, drawn after the level\u2019s own.` : 'No hidden chaos: the final runs meet the level as published.'));
    try {
      hiddenChart = trafficChart(hiddenTraffic, withHidden);
      hiddenWords.append(chaosList(withHidden.run.chaos));
    } catch {
      /* drawn once the events' fields are numbers */
    }
    return list;
  }
  evLevel.addEventListener('change', loadEventLevel);
  hidden.addEventListener('input', drawHidden);

  scheduleBtn.addEventListener('click', async () => {
    const list = drawHidden();
    if (!list) return;
    const body = {
      level: evLevel.value, version: 0, title: evTitle.value.trim(), briefing: evBrief.value,
      starts_at: new Date(evStart.value).toISOString(), ends_at: new Date(evEnd.value).toISOString(),
      attempt_limit: Number(evAttempts.value) || 0, join_required: evJoin.checked,
      max_entrants: Number(evCap.value) || 0, final: evFinal.value, hidden_chaos: list,
    };
    if (evCeiling.value !== '' || evRecovery.value !== '') {
      body.resilience = {
        error_ceiling: Number(evCeiling.value || levelDef?.resilience?.error_ceiling || 0.05),
        recovery_deadline_sec: Number(evRecovery.value || levelDef?.resilience?.recovery_deadline_sec || 30),
      };
    }
    scheduleBtn.disabled = true;
    clear(scheduleOut);
    showFieldErrors([]);
    try {
      const e = await api.createEvent(body);
      clear(scheduleOut, h('p', { class: 'receipt pass', id: 'schedule-ok' }, h('strong', {}, 'Scheduled'), ': ',
        h('a', { href: `#/events/${encodeURIComponent(e.id)}` }, e.title), '. Its hidden chaos stays hidden from players until it ends.'));
      toast(`Scheduled ${e.title}.`);
    } catch (err) {
      const fields = err.fields || [];
      showFieldErrors(fields);
      const inHidden = hiddenProblems(fields);
      if (inHidden.length) {
        hiddenBox.open = true;
        hiddenLens.show(inHidden);
      }
      clear(scheduleOut, h('p', { class: 'receipt fail' }, h('strong', {}, 'Not scheduled'), ' — ', err.message, fields.length ? ', each problem at its field:' : ''),
        fields.length ? problemList('schedule-problems', fields) : null);
    } finally {
      scheduleBtn.disabled = false;
    }
  });

  const field = (input, label, help) => h('div', { class: 'field' }, h('label', { for: input.id }, label), input, help ? h('p', { class: 'help' }, help) : null);
  // The event's fields as the server names them, each with its problem under it.
  const eventInputs = {
    level: evLevel, title: evTitle, briefing: evBrief, starts_at: evStart, ends_at: evEnd, attempt_limit: evAttempts,
    max_entrants: evCap, final: evFinal, join_required: evJoin, hidden_chaos: hidden,
    'resilience.error_ceiling': evCeiling, 'resilience.recovery_deadline_sec': evRecovery, resilience: evCeiling,
  };
  const clearFieldError = (input) => {
    input.removeAttribute('aria-invalid');
    input.removeAttribute('aria-describedby');
    input.closest('.field')?.querySelectorAll(':scope > .field-error').forEach((e) => e.remove());
  };
  // A field's problem goes when its value changes: what the server said was of the old one.
  for (const input of new Set(Object.values(eventInputs))) {
    for (const type of ['input', 'change']) input.addEventListener(type, () => clearFieldError(input));
  }
  function showFieldErrors(problems) {
    for (const input of new Set(Object.values(eventInputs))) clearFieldError(input);
    for (const p of problems) {
      const input = eventInputs[p.field];
      const at = input?.closest('.field');
      if (!at) continue;
      const note = h('p', { class: 'field-error', id: `${input.id}-error`, dataset: { field: p.field } }, p.reason);
      at.append(note);
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-describedby', note.id);
    }
  }
  let hiddenBox = null;
  const eventPanel = h('section', { class: 'panel', 'aria-labelledby': 'studio-event-h' },
    h('h2', { id: 'studio-event-h' }, 'An event'),
    h('div', { class: 'fields event-fields' },
      field(evLevel, 'Level', 'Its current version, fixed when the event is scheduled.'),
      field(evTitle, 'Title'),
      field(evStart, 'Starts'),
      field(evEnd, 'Ends'),
      field(evAttempts, 'Attempts per entrant', '0: no limit.'),
      field(evCap, 'Entrants at most', '0: the server’s default, 100,000.'),
      field(evFinal, 'What counts'),
      h('div', { class: 'field check' }, evJoin, h('label', { for: evJoin.id }, 'Entrants join before they submit'))),
    field(evBrief, 'Briefing (Markdown)'),
    hiddenBox = h('details', { class: 'hidden-chaos', id: 'hidden-chaos-box' },
      h('summary', {}, 'Hidden chaos (only you and admins see it until the event ends)'),
      h('p', { class: 'help' }, 'A list of chaos events in the format of a level\u2019s run.chaos; after the end every final design runs again with them.'),
      h('div', { class: 'studio-grid' },
        h('div', {}, h('div', { class: 'field' }, h('label', { for: hidden.id }, 'Hidden chaos (JSON)'), hiddenLens.el), hiddenCheck,
          h('div', { class: 'fields' },
            field(evCeiling, 'Error ceiling during each event', 'A share: 0.05 is 5%. Empty: the level\u2019s rule.'),
            field(evRecovery, 'Back to normal within (s)'))),
        h('div', {}, h('h3', {}, 'With the hidden chaos'), hiddenTraffic, hiddenWords))),
    h('div', { class: 'toolbar' }, scheduleBtn), scheduleOut);

  clear(main, head, levelPanel, eventPanel);
  await fillEventLevels(levels[0]?.slug);
  return () => {
    for (const f of cleanups) f();
  };
}
