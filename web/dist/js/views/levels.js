// The level list: title, difficulty, targets, budget, and this player's progress.
import { h, clear, fmtMs, fmtPct, fmtCost } from '../util.js';
import * as api from '../api.js';
import { loadPlayer, loadProgress, loadDesign, saveProgress, passedCount } from '../store.js';

export async function levelsView(main) {
  const list = await api.levels();
  const player = loadPlayer();
  const tbody = h('tbody');
  const table = h('table', { class: 'levels' },
    h('caption', { class: 'sr-only' }, 'Levels, in campaign order'),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col', class: 'num' }, '#'),
      h('th', { scope: 'col' }, 'Level'),
      h('th', { scope: 'col' }, 'Difficulty'),
      h('th', { scope: 'col', class: 'num' }, 'p99 target'),
      h('th', { scope: 'col', class: 'num' }, 'Error target'),
      h('th', { scope: 'col', class: 'num' }, 'Budget'),
      h('th', { scope: 'col' }, 'Status'),
      h('th', { scope: 'col', class: 'num' }, 'Best score'),
    )),
    tbody);
  const rows = list.map((l, i) => {
    const cells = {
      p99: h('td', { class: 'num', dataset: { label: 'p99 target' } }, '…'),
      err: h('td', { class: 'num', dataset: { label: 'Error target' } }, '…'),
      budget: h('td', { class: 'num', dataset: { label: 'Budget' } }, '…'),
      status: h('td', { dataset: { label: 'Status' } }, ''),
      best: h('td', { class: 'num', dataset: { label: 'Best score' } }, ''),
    };
    const tr = h('tr', { dataset: { slug: l.slug } },
      h('td', { class: 'num' }, String(i + 1)),
      h('th', { scope: 'row' }, h('a', { href: `#/levels/${encodeURIComponent(l.slug)}` }, l.title)),
      h('td', { dataset: { label: 'Difficulty' } }, h('span', { class: `diff diff-${l.difficulty}` }, l.difficulty)),
      cells.p99, cells.err, cells.budget, cells.status, cells.best);
    tbody.append(tr);
    showProgress(l.slug, cells);
    return { l, cells };
  });
  clear(main,
    h('section', { class: 'panel intro' },
      h('h1', {}, 'Levels'),
      h('p', {}, 'Each level is a system under load. Build a design from the level\u2019s catalog, run it, and watch it hold or collapse. ',
        'Pass all four conditions \u2014 latency, errors, cost and resilience \u2014 to score; cheaper and faster scores higher.'),
      h('p', { id: 'campaign' }, `Campaign progress: ${passedCount(list.map((l) => l.slug))} of ${list.length} levels passed in this browser.`),
      player ? h('p', {}, 'Playing as ', h('strong', {}, player.name), '.') : h('p', { class: 'muted' }, 'Pick a player name on any level to submit scores.')),
    h('section', { class: 'panel' }, h('div', { class: 'table-wrap' }, table)));

  // Targets and budgets are in each level's document; fetch them side by side.
  await Promise.all(rows.map(async ({ l, cells }) => {
    try {
      const lv = await api.level(l.slug);
      const def = lv.definition;
      cells.p99.textContent = `≤ ${fmtMs(def.sla.p99_latency_ms)}`;
      cells.err.textContent = `≤ ${fmtPct(def.sla.error_rate)}`;
      cells.budget.textContent = `≤ ${fmtCost(def.budget_per_hour)}`;
    } catch {
      cells.p99.textContent = cells.err.textContent = cells.budget.textContent = '–';
    }
    if (player && loadProgress(l.slug)?.passed) {
      // Refresh the rank: others may have overtaken the player since.
      try {
        const page = await api.board(l.slug, { aroundMe: true, limit: 1 });
        const mine = page.entries.find((e) => e.player_id === player.id);
        if (mine) {
          saveProgress(l.slug, { passed: true, best: mine.score, rank: mine.rank });
          showProgress(l.slug, cells);
        }
      } catch {
        /* the board is a nicety here */
      }
    }
  }));
  return () => {};
}

function showProgress(slug, cells) {
  const p = loadProgress(slug);
  const started = Boolean(loadDesign(slug));
  if (p?.passed) {
    clear(cells.status, h('span', { class: 'pass' }, '✓ passed'));
    cells.best.textContent = p.best != null ? String(p.best) + (p.rank ? ` (#${p.rank})` : '') : '';
  } else {
    clear(cells.status, started ? h('span', { class: 'muted' }, 'in progress') : h('span', { class: 'muted' }, 'not started'));
    cells.best.textContent = '–';
  }
}
