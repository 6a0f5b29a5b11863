// One level: briefing, targets, traffic and chaos; the design (diagram and editor); runs
// with playback, charts and the verdict; the fix hint; submitting a score.
import { h, clear, uid, fmt, fmtMs, fmtPct, fmtCost, fmtSec, kindLabel, toast, download, clone } from '../util.js';
import * as api from '../api.js';
import { loadDesign, saveDesign, forgetDesign, loadPlayer, loadProgress, saveProgress } from '../store.js';
import { markdown } from '../md.js';
import { catalogOf } from '../catalog.js';
import { Editor } from '../editor.js';
import { Diagram, chaosId, describeChaos } from '../diagram.js';
import { TimeChart, PALETTE } from '../charts.js';
import { curve, eventBands } from '../traffic.js';
import { Playback } from '../playback.js';
import { applyPatch } from '../patch.js';
import { renderVerdict, renderCharts, renderStepTable } from './results.js';

export async function levelView(main, slug) {
  const lv = await api.level(slug);
  const def = lv.definition;
  const catalog = catalogOf(lv);
  const chaos = def.run.chaos || [];
  const state = {
    design: validStored(loadDesign(slug)) || clone(def.starting_design),
    run: null, // the last run: {design, response}
    stale: false,
    playback: null,
    charts: [],
    hint: null,
  };
  const cleanups = [];
  document.title = `${lv.title} · Backpressure`;

  // --- Briefing, targets, traffic -------------------------------------------------------
  const targets = h('dl', { class: 'targets' },
    h('div', {}, h('dt', {}, 'p99 latency'), h('dd', {}, `≤ ${fmtMs(def.sla.p99_latency_ms)}`)),
    h('div', {}, h('dt', {}, 'Error rate'), h('dd', {}, `≤ ${fmtPct(def.sla.error_rate)}`)),
    h('div', {}, h('dt', {}, 'Budget'), h('dd', {}, `≤ ${fmtCost(def.budget_per_hour)}`)),
    def.resilience
      ? h('div', { class: 'wide' }, h('dt', {}, 'During chaos'), h('dd', {}, `errors ≤ ${fmtPct(def.resilience.error_ceiling)}, recover in ≤ ${fmtSec(def.resilience.recovery_deadline_sec)}`))
      : h('div', {}, h('dt', {}, 'Chaos'), h('dd', {}, 'none')),
  );
  const trafficBox = h('div', { class: 'chart-box' });
  const warmupSec = 0.2 * def.run.duration_sec;
  const chaosList = chaos.length
    ? h('ul', { class: 'chaos-list' }, chaos.map((e) => h('li', {},
      h('strong', {}, `${fmt(e.at_sec)} s`), e.duration_sec ? `–${fmt(e.at_sec + e.duration_sec)} s` : '',
      ': ', describeChaos(e), ` (${chaosId(e)})`)))
    : h('p', { class: 'muted' }, 'No chaos is scheduled.');
  const brief = h('section', { class: 'panel brief', 'aria-labelledby': 'brief-h' },
    h('h2', { id: 'brief-h' }, 'Briefing'),
    markdown(def.briefing),
    h('h3', {}, 'Targets'),
    targets,
    h('p', { class: 'help' }, `Measured after a ${fmt(warmupSec)} s warm-up, over the rest of the ${fmt(def.run.duration_sec)} s run.`),
    h('h3', {}, 'Traffic and chaos'),
    trafficBox,
    chaosList,
  );

  // --- Design: diagram, toolbar, editor -------------------------------------------------
  const diagramBox = h('div', { class: 'diagram' });
  const liveEvents = h('p', { class: 'live-events', 'aria-live': 'polite' });
  const playbackBox = h('div', { class: 'playback-box' });
  const runStatus = h('p', { class: 'run-status', role: 'status', 'aria-live': 'polite' });
  const runBtn = h('button', { type: 'button', class: 'primary', id: 'run' }, 'Run');
  const hintBtn = h('button', { type: 'button', class: 'secondary', id: 'hint' }, 'Fix hint');
  const exportBtn = h('button', { type: 'button', class: 'secondary' }, 'Export');
  const importInput = h('input', { type: 'file', accept: 'application/json,.json', id: uid('import'), class: 'sr-only', tabindex: -1 });
  const importBtn = h('label', { for: importInput.id, class: 'button secondary', tabindex: 0, role: 'button' }, 'Import');
  const resetBtn = h('button', { type: 'button', class: 'link' }, 'Start over');
  const toolbar = h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Design actions' },
    runBtn, hintBtn, exportBtn, importBtn, importInput, resetBtn);
  const stage = h('section', { class: 'panel stage', 'aria-labelledby': 'stage-h' },
    h('h2', { id: 'stage-h' }, 'Your design'),
    diagramBox,
    h('p', { class: 'legend help' },
      h('span', { class: 'lg ok' }, '● ok'), h('span', { class: 'lg busy' }, '▲ busy (≥ 80%)'),
      h('span', { class: 'lg sat' }, '■ saturated'), h('span', { class: 'lg failed' }, '✖ failed'),
      h('span', {}, 'bar: utilisation'), h('span', {}, 'right edge: backlog'),
      h('span', { class: 'lg async' }, '┈ purple: asynchronous hand-off'), h('span', {}, 'thick orange outline: bottleneck')),
    playbackBox, liveEvents, toolbar, runStatus);
  const editorBox = h('div', { class: 'editor' });
  const editorPanel = h('section', { class: 'panel editor-panel', 'aria-labelledby': 'edit-h' },
    h('h2', { id: 'edit-h' }, 'Build'),
    h('p', { class: 'help' }, 'Catalog: ', catalog.map((k, i) => [i ? ', ' : '', `${kindLabel(k.kind)} (up to ${k.maxCount})`]), '.'),
    editorBox);

  // --- Results, hint, submit ------------------------------------------------------------
  const resultsBox = h('section', { class: 'panel results', 'aria-labelledby': 'res-h', hidden: true },
    h('h2', { id: 'res-h' }, 'Run'));
  const hintBox = h('section', { class: 'panel hint', 'aria-labelledby': 'hint-h', hidden: true });
  const submitBox = h('section', { class: 'panel submit', 'aria-labelledby': 'sub-h' });

  const header = h('header', { class: 'level-head' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Levels'), ' / ', h('span', { class: `diff diff-${lv.difficulty}` }, lv.difficulty)),
    h('h1', {}, lv.title),
    h('p', { class: 'head-links' }, h('a', { href: `#/levels/${encodeURIComponent(slug)}/leaderboard` }, 'Leaderboard'),
      ` · version ${lv.version}`),
  );
  clear(main, header,
    h('div', { class: 'level-grid' },
      h('div', { class: 'col-left' }, brief, editorPanel),
      h('div', { class: 'col-right' }, stage, hintBox, resultsBox, submitBox)));

  // Traffic chart (drawn once the box has a width).
  const tc = curve(def.run);
  const bands = eventBands(chaos, describeChaos);
  const trafficSeries = [{ label: 'offered load', values: tc.base, color: PALETTE[0], width: 2 }];
  if (tc.hasSpike) trafficSeries.push({ label: 'with spikes', values: tc.withChaos, color: PALETTE[1], dash: [5, 4] });
  const trafficChart = new TimeChart(trafficBox, tc.xs, trafficSeries, {
    title: 'Offered load (requests per second)',
    desc: `Offered load over ${fmt(def.run.duration_sec)} seconds; the shaded start is the warm-up; chaos events are marked.`,
    events: bands, warmupSec, height: 150, sync: false,
  });
  cleanups.push(() => trafficChart.destroy());

  // Diagram and editor.
  const diagram = new Diagram(diagramBox, {
    caption: 'Design diagram: requests flow from left to right',
    onSelect: (id) => editor.focusComponent(id),
  });
  cleanups.push(() => diagram.destroy());
  const editor = new Editor(editorBox, {
    catalog,
    onChange: (design, { structural }) => {
      state.design = design;
      saveDesign(slug, design);
      markStale();
      if (structural) redrawDiagram();
      else redrawDiagramSoon();
    },
  });
  let redrawTimer = null;
  function redrawDiagram() {
    clearTimeout(redrawTimer);
    diagram.setDesign(state.design, chaos);
    const b = state.run && !state.stale ? state.run.response.evaluation.bottleneck : null;
    diagram.highlight(b?.component, 'bottleneck');
  }
  function redrawDiagramSoon() {
    clearTimeout(redrawTimer);
    redrawTimer = setTimeout(redrawDiagram, 250);
  }
  function markStale() {
    if (!state.run || state.stale) return;
    state.stale = true;
    state.playback?.pause();
    clear(playbackBox);
    liveEvents.textContent = '';
    diagram.showTick(null);
    runStatus.textContent = 'The design has changed since the last run: run it again to see the new result.';
    resultsBox.classList.add('stale');
  }
  editor.setDesign(state.design);
  redrawDiagram();

  // --- Run ------------------------------------------------------------------------------
  let inflight = null;
  async function run() {
    inflight?.abort();
    const ctrl = new AbortController();
    inflight = ctrl;
    busy(runBtn, true, 'Running…');
    runStatus.classList.remove('bad');
    editor.clearErrors();
    runStatus.textContent = 'Running the simulation…';
    const design = clone(state.design);
    try {
      const response = await api.simulate(slug, lv.version, design, { signal: ctrl.signal });
      state.run = { design, response };
      state.stale = false;
      resultsBox.classList.remove('stale');
      showRun(response);
      const ev = response.evaluation;
      runStatus.textContent = ev.passed
        ? `Passed with a score of ${ev.score}. Playing it back at ${state.playback.speed}×.`
        : `Failed: ${failingWords(ev)}. Playing it back at ${state.playback.speed}×.`;
      state.playback.play();
    } catch (err) {
      if (err.name === 'AbortError') return;
      showError(err);
    } finally {
      if (inflight === ctrl) inflight = null;
      busy(runBtn, false, 'Run');
    }
  }

  function showError(err) {
    if (err.fields?.length) {
      const fields = err.fields.map((f) => ({ field: stripDesign(f.field), reason: f.reason }));
      editor.showErrors(fields);
      runStatus.textContent = `${capitalize(err.message)}: ${fields.length} problem${fields.length === 1 ? '' : 's'}, shown next to the fields they name.`;
      runStatus.classList.add('bad');
      setTimeout(() => runStatus.classList.remove('bad'), 4000);
    } else if (err.status === 429 || err.status === 503) {
      runStatus.textContent = `The server is busy (${err.message}). Try again in ${err.retryAfter || 'a few'} seconds.`;
    } else {
      runStatus.textContent = err.message || String(err);
    }
  }

  function showRun(response) {
    const { evaluation: ev, result } = response;
    state.playback?.destroy();
    for (const c of state.charts) c.destroy();
    state.charts = [];
    resultsBox.hidden = false;
    clear(resultsBox, h('h2', { id: 'res-h' }, 'Run'));
    resultsBox.append(renderVerdict(ev, def, result, { onBottleneck: (id) => editor.focusComponent(id) }));
    const chartsBox = h('div', { class: 'charts' });
    resultsBox.append(h('h3', {}, 'Over time'), chartsBox);
    state.charts = renderCharts(chartsBox, result, def, ev);
    const table = renderStepTable(result, chaos);
    resultsBox.append(table.el);
    diagram.highlight(ev.bottleneck?.component, 'bottleneck');

    const tickSec = result.ticks.length > 1 ? result.ticks[1].t - result.ticks[0].t : result.tick_ms / 1000;
    let prevEvents = new Set();
    state.playback = new Playback({
      ticks: result.ticks,
      tickSec,
      onTick: (i) => {
        const tick = result.ticks[i];
        diagram.showTick(tick, result.components);
        for (const c of state.charts) c.setNow(tick.t, i);
        table.setCurrent(i);
        const active = new Set(tick.events || []);
        const names = chaos.filter((e) => active.has(chaosId(e)));
        const struck = names.filter((e) => !prevEvents.has(chaosId(e)));
        prevEvents = active;
        clear(liveEvents, names.length
          ? [h('span', { class: 'bolt', 'aria-hidden': 'true' }, '⚡'), ' ', names.map((e) => `${chaosId(e)}: ${describeChaos(e)}`).join(' · ')]
          : '');
        liveEvents.classList.toggle('active', names.length > 0);
        if (struck.length) {
          liveEvents.classList.remove('strike');
          void liveEvents.offsetWidth; // restart the animation
          liveEvents.classList.add('strike');
        }
      },
    });
    state.playback.onPlayState = (on) => diagram.setPlaying(on);
    clear(playbackBox, state.playback.el);
    state.playback.seek(0);
  }

  // --- Hint -----------------------------------------------------------------------------
  async function askHint() {
    busy(hintBtn, true, 'Thinking…');
    editor.clearErrors();
    hintBox.hidden = false;
    clear(hintBox, h('h2', { id: 'hint-h' }, 'Fix hint'), h('p', { role: 'status' }, 'Searching for the smallest change that passes (this runs many simulations)…'));
    try {
      const design = clone(state.design);
      const { hint } = await api.hint(slug, lv.version, design);
      state.hint = { design, hint };
      showHint(hint, design);
    } catch (err) {
      hintBox.hidden = true;
      showError(err);
    } finally {
      busy(hintBtn, false, 'Fix hint');
    }
  }

  function showHint(hint, design) {
    const parts = [h('h2', { id: 'hint-h', tabindex: -1 }, 'Fix hint'), h('p', { class: 'hint-msg' }, hint.message)];
    if (hint.found && hint.change) {
      const ch = hint.change;
      parts.push(
        h('h3', {}, 'The patch'),
        h('p', { class: 'help' }, 'A JSON Patch against your design. Nothing is changed until you apply it.'),
        h('pre', { class: 'patch', tabindex: 0 }, JSON.stringify(ch.patch, null, 2)),
      );
      if (hint.before && hint.after) parts.push(compareTable(hint.before, hint.after));
      const apply = h('button', { type: 'button', class: 'primary', id: 'apply-hint' }, 'Apply and re-run');
      apply.addEventListener('click', () => {
        let next;
        try {
          next = applyPatch(design, ch.patch);
        } catch (e) {
          toast(`The patch does not apply: ${e.message}`);
          return;
        }
        state.design = next;
        saveDesign(slug, next);
        editor.setDesign(next);
        redrawDiagram();
        clear(hintBox, h('h2', { id: 'hint-h' }, 'Fix hint'), h('p', {}, `Applied: ${ch.description}.`));
        run();
      });
      const dismiss = h('button', { type: 'button', class: 'link' }, 'Dismiss');
      dismiss.addEventListener('click', () => { hintBox.hidden = true; });
      parts.push(h('div', { class: 'toolbar' }, apply, dismiss));
    } else if (hint.binding_constraint && !hint.message.includes(hint.binding_constraint.detail)) {
      parts.push(h('p', {}, h('strong', {}, 'What stands in the way: '), hint.binding_constraint.detail));
    }
    clear(hintBox, parts);
    hintBox.querySelector('h2').focus?.();
    hintBox.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }

  // --- Submit ---------------------------------------------------------------------------
  function renderSubmit(receipt) {
    const player = loadPlayer();
    const parts = [h('h2', { id: 'sub-h' }, 'Submit')];
    if (!player) {
      const input = h('input', { id: uid('name'), type: 'text', maxlength: 32, required: true, autocomplete: 'nickname', spellcheck: 'false' });
      const err = h('p', { class: 'field-error', id: uid('nerr'), hidden: true });
      const form = h('form', { class: 'name-form' },
        h('div', { class: 'field' }, h('label', { for: input.id }, 'Player name'), input, err),
        h('button', { type: 'submit', class: 'secondary' }, 'Save name'));
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        err.hidden = true;
        try {
          await api.createPlayer(input.value.trim());
          window.dispatchEvent(new Event('bp:player'));
          renderSubmit();
          submitBox.querySelector('#submit')?.focus();
        } catch (e) {
          err.hidden = false;
          err.textContent = e.fields?.[0]?.reason ? `Name ${e.fields[0].reason}.` : e.message;
          input.setAttribute('aria-invalid', 'true');
          input.setAttribute('aria-describedby', err.id);
        }
      });
      parts.push(h('p', {}, 'Pick a name for the leaderboard. Your token stays in this browser.'), form);
    } else {
      const btn = h('button', { type: 'button', class: 'primary', id: 'submit' }, 'Submit for a score');
      btn.addEventListener('click', () => doSubmit(btn));
      const change = h('button', { type: 'button', class: 'link' }, 'Use another name');
      change.addEventListener('click', () => {
        if (!confirm(`Forget ${player.name} in this browser? Scores stay on the leaderboard, but you cannot submit as ${player.name} again.`)) return;
        localStorage.removeItem('bp.player');
        window.dispatchEvent(new Event('bp:player'));
        renderSubmit();
      });
      parts.push(h('p', {}, 'Playing as ', h('strong', {}, player.name), '. ', change),
        h('p', { class: 'help' }, 'The server runs your design again and scores it; only passing designs rank.'),
        h('div', { class: 'toolbar' }, btn));
    }
    if (receipt) parts.push(receipt);
    const progress = loadProgress(slug);
    if (progress?.passed) parts.push(h('p', { class: 'muted' }, `Your best here: ${progress.best}${progress.rank ? `, rank ${progress.rank}` : ''}.`));
    clear(submitBox, parts);
  }

  async function doSubmit(btn) {
    busy(btn, true, 'Submitting…');
    editor.clearErrors();
    try {
      const res = await api.submit(slug, lv.version, clone(state.design));
      const s = res.submission;
      let receipt;
      if (s.passed) {
        saveProgress(slug, { passed: true, best: s.score, rank: res.rank });
        receipt = h('div', { class: 'receipt pass', role: 'status', id: 'receipt' },
          h('p', {}, h('strong', {}, `Passed — score ${s.score}`), res.rank ? `, rank ${res.rank}` : '', res.improved ? ' (a new best)' : ' (not better than your best)', '.'),
          h('p', {}, h('a', { href: `#/levels/${encodeURIComponent(slug)}/leaderboard`, id: 'open-board' }, 'Open the leaderboard')));
      } else {
        receipt = h('div', { class: 'receipt fail', role: 'status', id: 'receipt' },
          h('p', {}, h('strong', {}, 'Not passed'), ` — ${failingWords(s.evaluation)}. Failed submissions do not rank.`));
      }
      renderSubmit(receipt);
    } catch (err) {
      busy(btn, false, 'Submit for a score');
      if (err.status === 401) {
        renderSubmit();
        return;
      }
      showError(err);
      toast(err.message);
    }
  }

  // --- Wiring ---------------------------------------------------------------------------
  runBtn.addEventListener('click', run);
  hintBtn.addEventListener('click', askHint);
  exportBtn.addEventListener('click', () => download(`${slug}.design.json`, `${JSON.stringify(state.design, null, 2)}\n`));
  importBtn.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      importInput.click();
    }
  });
  importInput.addEventListener('change', async () => {
    const file = importInput.files?.[0];
    importInput.value = '';
    if (!file) return;
    try {
      const d = JSON.parse(await file.text());
      const design = d && d.design && !d.components ? d.design : d;
      if (!design || !Array.isArray(design.components)) throw new Error('the file holds no design (a JSON object with "components" and "edges")');
      design.edges ||= [];
      state.design = design;
      saveDesign(slug, design);
      editor.setDesign(design);
      redrawDiagram();
      markStale();
      toast(`Imported ${file.name}.`);
    } catch (e) {
      toast(`Cannot import ${file.name}: ${e.message}`);
    }
  });
  resetBtn.addEventListener('click', () => {
    if (!confirm('Replace your design with the level\u2019s starting design?')) return;
    forgetDesign(slug);
    state.design = clone(def.starting_design);
    editor.setDesign(state.design);
    redrawDiagram();
    markStale();
  });
  const onPlayer = () => renderSubmit();
  window.addEventListener('bp:player', onPlayer);
  cleanups.push(() => window.removeEventListener('bp:player', onPlayer));
  renderSubmit();

  return () => {
    inflight?.abort();
    state.playback?.destroy();
    for (const c of state.charts) c.destroy();
    for (const f of cleanups) f();
    document.title = 'Backpressure';
  };
}

function capitalize(s) {
  return s ? s.charAt(0).toUpperCase() + s.slice(1) : s;
}

function validStored(d) {
  return d && Array.isArray(d.components) ? { components: d.components, edges: d.edges || [] } : null;
}

function stripDesign(path) {
  if (path === 'design') return '';
  return path.startsWith('design.') ? path.slice(7) : path.startsWith('design[') ? path.slice(6) : path;
}

function busy(btn, on, label) {
  btn.disabled = on;
  btn.setAttribute('aria-busy', on ? 'true' : 'false');
  btn.textContent = label;
}

const COND_WORDS = { latency: 'p99 latency', errors: 'error rate', cost: 'cost', resilience: 'resilience' };

export function failingWords(ev) {
  if (!ev) return 'no verdict';
  const names = (ev.conditions || []).filter((c) => !c.passed).map((c) => `${COND_WORDS[c.name] || c.name} over target`);
  for (const f of ev.failures || []) names.push(f.replace(/_/g, ' '));
  return names.length ? names.join(', ') : 'not every condition holds';
}

function compareTable(before, after) {
  const row = (b) => {
    const a = after.conditions.find((c) => c.name === b.name);
    return h('tr', {},
      h('th', { scope: 'row' }, COND_WORDS[b.name] || b.name),
      h('td', { class: 'num' }, unitFmt(b), ' ', b.passed ? '✓' : '✗'),
      h('td', { class: 'num' }, a ? unitFmt(a) : '–', ' ', a?.passed ? '✓' : '✗'),
      h('td', { class: 'num' }, unitFmt({ ...b, measured: b.target })));
  };
  return h('table', { class: 'compare' },
    h('caption', {}, 'Before and after the change'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Condition'), h('th', { scope: 'col' }, 'Now'), h('th', { scope: 'col' }, 'With the fix'), h('th', { scope: 'col' }, 'Target'))),
    h('tbody', {}, before.conditions.map(row)));
}

function unitFmt(c) {
  switch (c.unit) {
    case 'ms': return fmtMs(c.measured);
    case 'ratio': return fmtPct(c.measured);
    case '$/h': return fmtCost(c.measured);
    case 'usage': return fmtPct(c.measured);
    default: return fmt(c.measured);
  }
}
