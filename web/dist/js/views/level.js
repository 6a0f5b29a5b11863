// One level: briefing, targets, the clients' retries, traffic and chaos; the design (a
// palette, the canvas and the side panel, with a live cost estimate); runs with playback,
// charts, the verdict and why it happened; the fix hint; submitting a score.
//
// An event plays a level through the same view (opts.event, see events.js): the page's
// header is the event's, the level version is the event's, and opts.submitPanel fills the
// submit section (joining, attempts, the verdict on the public part of the level).
import { h, clear, uid, fmt, fmtMs, fmtPct, fmtCost, fmtSec, kindLabel, toast, download, clone, HEALTHY_UTILIZATION, BUSY_UTILIZATION, HINT_HEADROOM } from '../util.js';
import * as api from '../api.js';
import { loadDesign, saveDesign, forgetDesign, loadPlayer, loadProgress, saveProgress, loadLayout, saveLayout } from '../store.js';
import { markdown } from '../md.js';
import { catalogOf, connectProblem, designProblems } from '../catalog.js';
import { Editor } from '../editor.js';
import { Palette } from '../palette.js';
import { meanRate } from '../cost.js';
import { renderEstimate } from '../estimate.js';
import { clientWords, idleSummary, plainReason } from '../words.js';
import { parText, starText } from '../stars.js';
import { Diagram, chaosId, describeChaos } from '../diagram.js';
import { curve, trafficChart, chaosList } from '../traffic.js';
import { Playback } from '../playback.js';
import { applyPatch } from '../patch.js';
import { renderVerdict, renderCharts, renderStepTable, whyOf, failureWords } from './results.js';
import { Guide, shouldGuide } from '../guide.js';

const ID_BASE = {
  load_balancer: 'lb', api_gateway: 'gateway', app_service: 'app', container_pool: 'pool',
  serverless: 'fn', cache: 'cache', cdn: 'cdn', database: 'db', queue: 'queue',
};

// opts.banner (an element) goes under the level's heading; opts.submit(box, design), when
// given, fills the submit panel instead of the leaderboard's (design() is the design as it
// stands).
export async function levelView(main, slug, opts = {}) {
  const forEvent = Boolean(opts.event);
  const [lv, all] = await Promise.all([api.level(slug, opts.version), forEvent ? [] : api.levels().catch(() => [])]);
  const def = lv.definition;
  const catalog = catalogOf(lv);
  const chaos = def.run.chaos || [];
  const state = {
    design: validStored(loadDesign(slug)) || clone(def.starting_design),
    positions: {},
    // autoPlaced: boxes added without a place to a design the player arranged; they are
    // placed again as their connections change, until the player moves them.
    autoPlaced: new Set(),
    run: null, // the last run: {design, response}
    stale: false,
    playback: null,
    charts: [],
    hint: null,
  };
  state.design.edges ||= [];
  const cleanups = [];
  if (!forEvent) document.title = `${lv.title} · Backpressure`;
  // The built-in campaign's order: a level an author published is not in it.
  const campaign = all.filter((l) => l.builtin);
  const order = campaign.map((l) => l.slug);
  const here = order.indexOf(slug);
  const next = here >= 0 ? campaign[here + 1] : null;

  // --- Briefing, targets, clients, traffic ---------------------------------------------
  const cl = def.run.client || {};
  const targets = h('dl', { class: 'targets' },
    h('div', {}, h('dt', {}, 'p99 latency'), h('dd', {}, `≤ ${fmtMs(def.sla.p99_latency_ms)}`)),
    h('div', {}, h('dt', {}, 'Error rate'), h('dd', {}, `≤ ${fmtPct(def.sla.error_rate)}`)),
    h('div', {}, h('dt', {}, 'Budget'), h('dd', { id: 'budget' }, `≤ ${fmtCost(def.budget_per_hour)}`)),
    def.resilience
      ? h('div', { class: 'wide' }, h('dt', {}, 'During each chaos event'), h('dd', {}, `errors ≤ ${fmtPct(def.resilience.error_ceiling)}, back to normal ≤ ${fmtSec(def.resilience.recovery_deadline_sec)} after it ends`))
      : h('div', {}, h('dt', {}, 'Chaos'), h('dd', {}, forEvent ? 'none you can see' : 'none in this level')),
  );
  const clientBox = h('div', { class: 'client-box', id: 'client' },
    h('h3', {}, 'The clients'),
    h('p', {}, clientWords(cl)),
    h('p', { class: 'help' }, 'So the load your design sees can exceed the traffic below: each failed or late request may come back as a retry.'
      + (cl.max_retries > 0 && !(cl.backoff_ms > 0)
        ? ' A retry sent at once to a component that has just refused it, with no other way in (a throttled function, an empty rate limit, a full waiting room), is refused again.'
          + (chaos.some((e) => e.kind === 'node_failure')
            ? ' A retry sent at once after a crashed component failed it is sent on again straight away: a balancer still sending to the crashed component may pass it to a live one.'
            : '')
        : '')));
  const trafficBox = h('div', { class: 'chart-box' });
  const warmupSec = 0.2 * def.run.duration_sec;
  // An event's hidden chaos strikes only the final runs, after the end: the level as
  // published is all a player sees until then.
  const chaosWords = forEvent
    ? h('div', {}, chaosList(chaos), h('p', { class: 'help', id: 'event-hidden-chaos' }, 'After the end, the final runs meet the level\u2019s chaos and the event\u2019s hidden chaos, if it has any.'))
    : chaosList(chaos);
  const brief = h('section', { class: 'panel brief', 'aria-labelledby': 'brief-h' },
    h('div', { class: 'brief-grid' },
      h('div', {},
        h('h2', { id: 'brief-h' }, forEvent ? `The level: ${lv.title}` : 'Briefing'),
        markdown(def.briefing),
        h('h3', {}, 'Targets'),
        targets,
        h('p', { class: 'help' }, `Measured after a ${fmt(warmupSec)} s warm-up, over the rest of the ${fmt(def.run.duration_sec)} s run.`),
        clientBox),
      h('div', {},
        h('h3', {}, 'Traffic and chaos'),
        trafficBox,
        chaosWords)));

  // --- Design: palette, canvas, side panel, toolbar ------------------------------------
  const tc = curve(def.run);
  const meanRps = meanRate(tc.xs, tc.withChaos);
  // The most attempts a second the clients may send: the curve's peak, retries included.
  const peakAttempts = Math.max(0, ...tc.withChaos) * (1 + Math.max(0, def.run.client?.max_retries ?? 0));
  const paletteBox = h('div', { class: 'palette-box' });
  const canvasBox = h('div', { class: 'canvas-box' });
  const sideBox = h('div', { class: 'side-box', 'aria-live': 'polite' });
  const costBox = h('div', { class: 'cost-estimate', id: 'cost-estimate', 'aria-live': 'polite' });
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
    costBox,
    h('div', { class: 'build-grid' },
      paletteBox,
      h('div', { class: 'canvas-col' }, canvasBox,
        h('p', { class: 'legend help' },
          h('span', { class: 'lg ok' }, '● ok'), h('span', { class: 'lg busy' }, `▲ busy (≥ ${fmtPct(BUSY_UTILIZATION, 0)}: latency starts to climb)`),
          h('span', { class: 'lg sat' }, '■ saturated'), h('span', { class: 'lg failed' }, '✖ failed'),
          h('span', {}, `healthy: below ${fmtPct(HEALTHY_UTILIZATION, 0)} utilisation`),
          h('span', { class: 'lg async' }, '┈ purple dashes: asynchronous hand-off to a queue'),
          h('span', {}, 'double border: alike components drawn as one box'),
          h('span', {}, 'thick orange outline: named in “why it happened”')),
        playbackBox, liveEvents),
      h('div', { class: 'side-col' }, h('h3', {}, 'Selected'), sideBox)),
    toolbar, runStatus);

  // --- Results, hint, submit ------------------------------------------------------------
  const resultsBox = h('section', { class: 'panel results', 'aria-labelledby': 'res-h', hidden: true },
    h('h2', { id: 'res-h' }, 'Run'));
  const hintBox = h('section', { class: 'panel hint', 'aria-labelledby': 'hint-h', hidden: true });
  const submitBox = h('section', { class: 'panel submit', 'aria-labelledby': 'sub-h' });

  const progressLine = h('p', { class: 'head-links', id: 'campaign' });
  // The stars the server counts for the signed-in player on this level (their best passing
  // score's, over the level's versions), if they passed it.
  let mine = lv.player_stars;
  const bestStars = () => {
    if (!mine?.stars) return '';
    return h('span', { class: 'stars', id: 'best-stars', title: `your best: ${mine.score} (version ${mine.version})` }, ` · yours: ${starText(mine.stars)}`);
  };
  const showCampaign = () => {
    if (forEvent) return;
    clear(progressLine,
      h('a', { href: `#/levels/${encodeURIComponent(slug)}/leaderboard` }, 'Leaderboard'),
      ` · version ${lv.version}`,
      h('span', { class: 'par', id: 'par', title: 'One star for passing; more for a higher score' }, ` · ${parText(lv.definition.stars)}`),
      bestStars(),
      here >= 0 ? ` · level ${here + 1} of ${order.length} · ${campaign.filter((l) => l.player_stars?.stars || loadProgress(l.slug)?.passed).length} passed` : '',
      next ? [' · next: ', h('a', { href: `#/levels/${encodeURIComponent(next.slug)}` }, next.title)] : '');
  };
  showCampaign();
  const history = lv.definition.history || [];
  const header = h('header', { class: 'level-head' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Levels'), ' / ', h('span', { class: `diff diff-${lv.difficulty}` }, lv.difficulty)),
    h('h1', {}, lv.title),
    progressLine,
    history.length ? h('details', { class: 'history', id: 'history' },
      h('summary', {}, `What changed in each version (${history.length})`),
      h('ol', {}, history.slice().reverse().map((r) => h('li', { value: r.version }, h('strong', {}, `v${r.version}`), ' ', r.change)))) : null,
  );
  clear(main, forEvent ? null : header, opts.banner, brief, stage, resultsBox, hintBox, submitBox);

  // Traffic chart (drawn once the box has a width).
  const traffic = trafficChart(trafficBox, def, chaos);
  cleanups.push(() => traffic.destroy());

  // --- Canvas, palette and side panel ---------------------------------------------------
  const diagram = new Diagram(canvasBox, {
    editable: true,
    caption: 'Design canvas: requests flow from the users through your components',
    summary: (c) => idleSummary(c, catalog),
    onSelect: (id, { edge } = {}) => select(id, edge),
    onConnect: (from, to) => connect(from, to),
    onDelete: ({ node, edge }) => (node ? removeComponent(node) : disconnect(edge.from, edge.to)),
    onMove: (id, p, all) => {
      state.positions = all;
      state.autoPlaced.delete(id);
      keepLayout();
    },
    onLayout: (pos) => {
      state.positions = pos;
      state.autoPlaced.clear();
      keepLayout();
    },
  });
  cleanups.push(() => diagram.destroy());
  // A phone's canvas runs top to bottom and a wide one left to right: each keeps its own layout.
  const layoutKey = () => (diagram.narrow() ? `${slug}.narrow` : slug);
  const kept = loadLayout(layoutKey());
  state.positions = kept.pos;
  diagram.keepBends(kept.bends);
  // keepLayout keeps the player's places and the bends of the lines between them.
  const keepLayout = () => saveLayout(layoutKey(), state.positions, diagram.bends());
  const palette = new Palette(paletteBox, {
    catalog,
    onAdd: (kind, point) => addComponent(kind, point),
  });
  const editor = new Editor(sideBox, {
    catalog,
    rps: meanRps,
    onChange: (design) => {
      state.design = design;
      saveDesign(slug, design);
      markStale();
      if (runStatus.classList.contains('bad') && !editor.clientProblems().length) {
        // The values that stopped the last run are fixed now.
        runStatus.classList.remove('bad');
        runStatus.textContent = '';
      }
      showCost();
      redrawDiagramSoon();
    },
    onSelect: (id) => select(id),
    onConnect: (from, to) => connect(from, to),
    onDisconnect: (from, to) => disconnect(from, to),
    onDelete: (id) => removeComponent(id),
    onRename: (from, to) => rename(from, to),
  });

  function commit() {
    saveDesign(slug, state.design);
    markStale();
    redrawDiagram();
    keepLayout();
    editor.setDesign(state.design);
    palette.render(state.design);
    showCost();
  }

  function select(id, edge) {
    editor.select(id, { edge });
    if (id) diagram.select(id);
    else if (edge) diagram.selectEdge(edge.from, edge.to);
    else diagram.select(null);
  }

  function addComponent(kind, point) {
    const info = catalog.find((k) => k.kind === kind);
    if (!info) return;
    const n = state.design.components.filter((c) => c.type === kind).length;
    if (n >= info.maxCount) {
      toast(`This level allows at most ${info.maxCount} ${kindLabel(kind).toLowerCase()}${info.maxCount === 1 ? '' : 's'}.`);
      return;
    }
    let pos = point ? diagram.modelPoint(point.clientX, point.clientY) : null;
    if (point && !pos) return; // dropped outside the canvas
    const base = ID_BASE[kind] || kind;
    let id = base;
    for (let k = 2; state.design.components.some((c) => c.id === id); k++) id = `${base}-${k}`;
    state.design.components.push({ id, type: kind });
    if (pos) state.positions = { ...diagram.positions, [id]: pos };
    else if (!diagram.auto) state.autoPlaced.add(id);
    commit();
    select(id);
    toast(`Added ${id}. ${state.design.components.length > 1 ? 'Connect it: drag from its blue dot to another box, or use “calls” in the side panel.' : ''}`);
  }

  function removeComponent(id) {
    const d = state.design;
    const i = d.components.findIndex((c) => c.id === id);
    if (i < 0) return;
    d.components.splice(i, 1);
    d.edges = d.edges.filter((e) => e.from !== id && e.to !== id);
    delete state.positions[id];
    state.autoPlaced.delete(id);
    editor.forgetBlank();
    commit();
    select(null);
    toast(`Deleted ${id}.`);
  }

  function connect(from, to) {
    const problem = connectProblem(state.design, from, to, kindLabel);
    if (problem) {
      toast(problem);
      return;
    }
    state.design.edges.push({ from, to });
    replaceAuto();
    commit();
    select(from);
  }

  function disconnect(from, to) {
    state.design.edges = state.design.edges.filter((e) => !(e.from === from && e.to === to));
    replaceAuto();
    commit();
    select(from);
  }

  // replaceAuto lets dagre place the boxes added from the keyboard again, now that the
  // connections have changed.
  function replaceAuto() {
    for (const id of state.autoPlaced) delete state.positions[id];
  }

  function rename(from, to) {
    const c = state.design.components.find((x) => x.id === from);
    if (!c) return;
    c.id = to;
    for (const e of state.design.edges) {
      if (e.from === from) e.from = to;
      if (e.to === from) e.to = to;
    }
    if (state.positions[from]) {
      state.positions[to] = state.positions[from];
      delete state.positions[from];
    }
    if (state.autoPlaced.delete(from)) state.autoPlaced.add(to);
    commit();
    select(to);
  }

  function showCost() {
    renderEstimate(costBox, catalog, state.design, def.budget_per_hour, meanRps, peakAttempts);
  }

  let redrawTimer = null;
  function redrawDiagram() {
    clearTimeout(redrawTimer);
    diagram.setDesign(state.design, state.positions, chaos);
    state.positions = diagram.auto ? {} : { ...diagram.positions };
    const why = state.run && !state.stale ? whyOf(state.run.response.evaluation) : [];
    diagram.highlight(why.map((w) => w.component));
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
    diagram.highlight([]);
    runStatus.textContent = 'The design has changed since the last run: run it again to see the new result.';
    resultsBox.classList.add('stale');
  }
  // clearRun removes a run's results: a rejected design has none.
  function clearRun() {
    state.run = null;
    state.stale = false;
    state.playback?.destroy();
    state.playback = null;
    for (const c of state.charts) c.destroy();
    state.charts = [];
    clear(playbackBox);
    liveEvents.textContent = '';
    diagram.showTick(null);
    diagram.highlight([]);
    resultsBox.hidden = true;
    resultsBox.classList.remove('stale');
  }
  editor.setDesign(state.design);
  palette.render(state.design);
  redrawDiagram();
  keepLayout();
  showCost();

  // --- Run ------------------------------------------------------------------------------
  let inflight = null;
  async function run() {
    inflight?.abort();
    const ctrl = new AbortController();
    inflight = ctrl;
    busy(runBtn, true, 'Running…');
    runStatus.classList.remove('bad');
    editor.clearErrors();
    const local = editor.clientProblems();
    if (local.length) {
      clearRun();
      editor.showLocal(local);
      runStatus.textContent = `Not run: ${local.length} value${local.length === 1 ? ' is' : 's are'} outside what this level allows — ${local.map((f) => f.reason).join('; ')}.`;
      runStatus.classList.add('bad');
      busy(runBtn, false, 'Run');
      return;
    }
    runStatus.textContent = 'Running the simulation…';
    const design = clone(state.design);
    try {
      const response = await api.simulate(slug, lv.version, design, { signal: ctrl.signal });
      state.run = { design, response };
      state.stale = false;
      resultsBox.classList.remove('stale');
      showRun(response);
      guide?.ran(response.evaluation);
      const ev = response.evaluation;
      if (ev.passed) {
        saveProgress(slug, { passed: true });
        showCampaign();
      }
      runStatus.textContent = ev.passed
        ? `Passed with a score of ${ev.score}. Playing it back at ${state.playback.speed}×.`
        : `Failed: ${failingWords(ev)}. Playing it back at ${state.playback.speed}×.`;
      state.playback.play();
      document.getElementById('verdict')?.scrollIntoView({ block: 'start', behavior: 'smooth' });
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
      clearRun();
      const fields = err.fields.map((f) => ({ field: stripDesign(f.field), reason: plainReason(f.reason) }));
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
    resultsBox.append(renderVerdict(ev, def, result, {
      onComponent: (id) => select(id), next,
      nextWords: forEvent ? 'It passes on the level as published: submit it below to enter it in the event.' : null,
    }));
    if (opts.submit) resultsBox.querySelector('.next')?.remove(); // the page hands in elsewhere
    resultsBox.append(h('p', { class: 'help' }, 'The run plays back on the canvas: ',
      h('button', { type: 'button', class: 'link', id: 'watch', onclick: () => stage.scrollIntoView({ block: 'start', behavior: 'smooth' }) }, 'watch it there'),
      ', or scrub the charts below.'));
    const chartsBox = h('div', { class: 'charts' });
    resultsBox.append(h('h3', {}, 'Over time'), chartsBox);
    state.charts = renderCharts(chartsBox, result, def, ev);
    const table = renderStepTable(result, chaos);
    resultsBox.append(table.el);
    diagram.highlight(whyOf(ev).map((w) => w.component));

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
    const parts = [h('h2', { id: 'hint-h', tabindex: -1 }, 'Fix hint'), h('p', { class: 'hint-msg' }, hint.message),
      h('p', { class: 'help' }, `The hint looks for a change that passes with room to spare: every component at or below ${fmtPct(HINT_HEADROOM, 0)} outside chaos, a margin under the ${fmtPct(HEALTHY_UTILIZATION, 0)} healthy limit.`)];
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
        commit();
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
    if (opts.submit) {
      opts.submit(submitBox, () => clone(state.design));
      return;
    }
    const player = loadPlayer();
    if (player && opts.submitPanel) {
      clear(submitBox, h('h2', { id: 'sub-h' }, 'Submit'), opts.submitPanel({
        design: () => clone(state.design),
        clientProblems: () => editor.clientProblems(),
        showError,
        rerender: renderSubmit,
      }));
      return;
    }
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
    if (progress?.passed && progress.best != null) parts.push(h('p', { class: 'muted' }, `Your best here: ${progress.best}${progress.rank ? `, rank ${progress.rank}` : ''}.`));
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
        const before = loadProgress(slug);
        saveProgress(slug, { passed: true, best: Math.max(s.score, before?.best ?? 0), rank: res.rank });
        mine = (await api.level(slug, lv.version).catch(() => null))?.player_stars || mine;
        const listed = all.find((l) => l.slug === slug);
        if (listed) listed.player_stars = mine;
        showCampaign();
        receipt = h('div', { class: 'receipt pass', role: 'status', id: 'receipt' },
          h('p', {}, h('strong', {}, `Passed — score ${s.score} ${starText(s.evaluation?.stars ?? 1)}`), res.rank ? `, rank ${res.rank}` : '', res.improved ? ' (a new best)' : ' (not better than your best)', '.'),
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
      if (d && (d.starting_design || d.catalog)) throw new Error('it is a level file, not a design: export a design from a level page, or use the level\u2019s starting design');
      const design = d && d.design && !d.components ? d.design : d;
      if (!design || !Array.isArray(design.components)) throw new Error('the file holds no design (a JSON object with "components" and "edges")');
      // Every problem at once, as soon as the file is read: the design loads, and the panel
      // lists what to fix before it can run.
      const problems = designProblems(design, catalog, kindLabel);
      design.edges ||= [];
      state.design = { components: design.components.filter((c) => c && typeof c === 'object'), edges: design.edges.filter((e) => e && typeof e === 'object') };
      state.positions = {};
      diagram.viewSet = false;
      clearRun();
      commit();
      if (problems.length) {
        editor.showErrors(problems);
        runStatus.classList.add('bad');
        runStatus.textContent = `Imported ${file.name} with ${problems.length} problem${problems.length === 1 ? '' : 's'}, listed beside the design: fix ${problems.length === 1 ? 'it' : 'them'}, then run.`;
        toast(`Imported ${file.name}: ${problems.length} problem${problems.length === 1 ? '' : 's'} to fix, listed beside the design.`);
      } else {
        toast(`Imported ${file.name}.`);
      }
    } catch (e) {
      toast(`Cannot import ${file.name}: ${e.message}`);
    }
  });
  resetBtn.addEventListener('click', () => {
    if (!confirm('Replace your design with the level\u2019s starting design?')) return;
    forgetDesign(slug);
    state.design = clone(def.starting_design);
    state.design.edges ||= [];
    state.positions = {};
    diagram.viewSet = false;
    commit();
    select(null);
  });
  const onPlayer = () => renderSubmit();
  window.addEventListener('bp:player', onPlayer);
  cleanups.push(() => window.removeEventListener('bp:player', onPlayer));
  renderSubmit();

  // The first-run guide, on the campaign's first level until it is done or skipped.
  const buildGrid = stage.querySelector('.build-grid');
  const guide = !forEvent && here === 0 && shouldGuide()
    ? new Guide({
      palette: { el: paletteBox, place: (card) => stage.insertBefore(card, buildGrid) },
      connect: { el: canvasBox, place: (card) => stage.insertBefore(card, buildGrid) },
      run: { el: runBtn, place: (card) => stage.insertBefore(card, toolbar) },
      verdict: () => {
        const box = resultsBox.hidden ? null : resultsBox.querySelector('.verdict-box');
        return box && { el: box, place: (card) => box.after(card) };
      },
    })
    : null;
  guide?.start();
  if (guide) cleanups.push(() => guide.destroy());

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

const COND_WORDS = { latency: 'p99 latency', errors: 'error rate', cost: 'cost', resilience: 'resilience during chaos' };

export function failingWords(ev) {
  if (!ev) return 'no verdict';
  const names = (ev.conditions || []).filter((c) => !c.passed).map((c) => `${COND_WORDS[c.name] || c.name} over target`);
  for (const f of ev.failures || []) names.push(failureWords(f));
  return names.length ? names.join(', ') : 'not every condition holds';
}

function compareTable(before, after) {
  const row = (b) => {
    const a = after.conditions.find((c) => c.name === b.name);
    if (b.name === 'resilience' && !before.events?.length) {
      return h('tr', {}, h('th', { scope: 'row' }, COND_WORDS[b.name]), h('td', { colspan: 3 }, 'no chaos in this level'));
    }
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
    case 'usage': return `${fmtPct(c.measured)} of the allowance`;
    case 'ms': return fmtMs(c.measured);
    case 'ratio': return fmtPct(c.measured);
    case '$/h': return fmtCost(c.measured);
    default: return fmt(c.measured);
  }
}
