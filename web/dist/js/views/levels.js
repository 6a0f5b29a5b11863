// The level list: title, difficulty, targets, budget, and this player's progress. Stars and
// best scores are the server's for the signed-in player (player_stars, campaign_stars); the
// chapters of the built-in campaign open by them. Levels that authors publish are not the
// campaign's: they are listed apart, under "More levels", open to everyone.
import { h, clear, fmtMs, fmtPct, fmtCost } from '../util.js';
import * as api from '../api.js';
import { loadPlayer, loadProgress, loadDesign, saveProgress } from '../store.js';
import { MAX_STARS, parText, starText } from '../stars.js';

// levelTable is a table of levels whose rows go in tbody.
function levelTable(caption, tbody) {
  return h('table', { class: 'levels' },
    h('caption', { class: 'sr-only' }, caption),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col', class: 'num' }, '#'),
      h('th', { scope: 'col' }, 'Level'),
      h('th', { scope: 'col' }, 'Difficulty'),
      h('th', { scope: 'col', class: 'num' }, 'p99 target'),
      h('th', { scope: 'col', class: 'num' }, 'Error target'),
      h('th', { scope: 'col', class: 'num' }, 'Budget'),
      h('th', { scope: 'col' }, 'Status'),
      h('th', { scope: 'col', class: 'num' }, 'Best score'),
      h('th', { scope: 'col' }, 'Stars'),
    )),
    tbody);
}

export async function levelsView(main) {
  const { challenges: list, campaignStars } = await api.levelList();
  const player = loadPlayer();
  const tbody = h('tbody');
  const table = levelTable('The campaign\u2019s levels, in order', tbody);
  const moreBody = h('tbody');
  const campaign = list.filter((l) => l.builtin);
  const more = list.filter((l) => !l.builtin);
  const totalLine = h('p', { id: 'campaign-stars' });
  const chapters = []; // the built-in campaign's chapters: one per difficulty, in order
  const rows = [...campaign, ...more].map((l) => {
    const cells = {
      p99: h('td', { class: 'num', dataset: { label: 'p99 target' } }, '…'),
      err: h('td', { class: 'num', dataset: { label: 'Error target' } }, '…'),
      budget: h('td', { class: 'num', dataset: { label: 'Budget' } }, '…'),
      status: h('td', { dataset: { label: 'Status' } }, ''),
      best: h('td', { class: 'num', dataset: { label: 'Best score' } }, ''),
      stars: h('td', { class: 'stars', dataset: { label: 'Stars' } }, ''),
    };
    if (l.builtin && chapters.at(-1)?.difficulty !== l.difficulty) {
      const head = h('th', { colspan: 9, scope: 'rowgroup' });
      tbody.append(h('tr', { class: 'chapter', id: `chapter-${l.difficulty}` }, head));
      chapters.push({ difficulty: l.difficulty, head, rows: [] });
    }
    const link = h('a', { href: `#/levels/${encodeURIComponent(l.slug)}` }, l.title);
    const tr = h('tr', { dataset: { slug: l.slug } },
      h('td', { class: 'num' }, String((l.builtin ? campaign : more).indexOf(l) + 1)),
      h('th', { scope: 'row' }, link),
      h('td', { dataset: { label: 'Difficulty' } }, h('span', { class: `diff diff-${l.difficulty}` }, l.difficulty)),
      cells.p99, cells.err, cells.budget, cells.status, cells.best, cells.stars);
    (l.builtin ? tbody : moreBody).append(tr);
    // The server's stars on this level: none for an anonymous reader, who cannot score.
    const row = { l, cells, tr, link, par: undefined, mine: l.player_stars || null };
    showProgress(row);
    if (l.builtin) chapters.at(-1).rows.push(row);
    return row;
  });
  clear(main,
    h('section', { class: 'panel intro' },
      h('h1', {}, 'Levels'),
      h('p', {}, 'Each level is a system under load. Build a design from the level\u2019s catalog, run it, and watch it hold or collapse. ',
        'Pass all four conditions \u2014 latency, errors, cost and resilience \u2014 to score; cheaper and faster scores higher.'),
      h('p', { id: 'campaign' }, `Campaign progress: ${rows.filter((r) => r.l.builtin && passed(r)).length} of ${chapters.reduce((n, c) => n + c.rows.length, 0)} levels passed.`,
        campaignStars ? '' : ' Submit a passing design under a player name to earn stars: they open the chapters after the first.'),
      totalLine,
      player ? h('p', {}, 'Playing as ', h('strong', {}, player.name), '.') : h('p', { class: 'muted' }, 'Pick a player name on any level to submit scores.')),
    h('section', { class: 'panel', id: 'campaign-levels', 'aria-labelledby': 'campaign-levels-h' },
      h('h2', { id: 'campaign-levels-h' }, 'The campaign'), h('div', { class: 'table-wrap' }, table)),
    more.length ? h('section', { class: 'panel', id: 'more-levels', 'aria-labelledby': 'more-levels-h' },
      h('h2', { id: 'more-levels-h' }, 'More levels'),
      h('p', { class: 'help' }, 'Published by level authors, outside the campaign: open to everyone, whatever your stars, and their stars do not count towards the campaign\u2019s chapters.'),
      h('div', { class: 'table-wrap' }, levelTable('More levels, by their authors', moreBody))) : null);

  // Targets and budgets are in each level's document; fetch them side by side.
  await Promise.all(rows.map(async (row) => {
    const { l, cells } = row;
    try {
      const lv = await api.level(l.slug);
      const def = lv.definition;
      cells.p99.textContent = `≤ ${fmtMs(def.sla.p99_latency_ms)}`;
      cells.err.textContent = `≤ ${fmtPct(def.sla.error_rate)}`;
      cells.budget.textContent = `≤ ${fmtCost(def.budget_per_hour)}`;
      row.par = def.stars || null;
      cells.stars.title = parText(row.par);
    } catch {
      cells.p99.textContent = cells.err.textContent = cells.budget.textContent = '–';
    }
    if (player && row.mine?.stars && row.mine.version === l.version) {
      // The rank on the current board: others may have overtaken the player since.
      try {
        const page = await api.board(l.slug, { aroundMe: true, limit: 1 });
        const entry = page.entries.find((e) => e.player_id === player.id);
        if (entry) {
          saveProgress(l.slug, { passed: true, best: entry.score, rank: entry.rank });
          showProgress(row);
        }
      } catch {
        /* the board is a nicety here */
      }
    }
    showStars(row);
  }));
  // The campaign total is the server's; without a player there are no stars to count.
  totalLine.textContent = campaignStars ? `Stars: ${campaignStars.earned} of ${campaignStars.max}.` : '';
  showChapters(chapters);
  return () => {};
}

// passed: the player scored on the level (the server's), or this browser saw a run pass it.
const passed = (row) => Boolean(row.mine?.stars || loadProgress(row.l.slug)?.passed);

function showProgress(row) {
  const { l, cells, mine } = row;
  const started = Boolean(loadDesign(l.slug));
  if (mine?.stars) {
    const rank = mine.version === l.version ? loadProgress(l.slug)?.rank : null;
    clear(cells.status, h('span', { class: 'pass' }, '✓ passed'));
    cells.best.textContent = String(mine.score) + (rank ? ` (#${rank})` : '') + (mine.version !== l.version ? ` (v${mine.version})` : '');
  } else if (passed(row)) {
    clear(cells.status, h('span', { class: 'pass' }, '✓ passed'), h('span', { class: 'muted' }, ' (a run; submit it to score)'));
    cells.best.textContent = '–';
  } else {
    clear(cells.status, started ? h('span', { class: 'muted' }, 'in progress') : h('span', { class: 'muted' }, 'not started'));
    cells.best.textContent = '–';
  }
}

// playerStars: the server's stars for the signed-in player on a row's level (0 when not passed).
const playerStars = (row) => row.mine?.stars ?? 0;

function showStars(row) {
  const n = playerStars(row);
  row.cells.stars.textContent = starText(n);
  row.cells.stars.setAttribute('aria-label', `${n} of ${MAX_STARS} stars; ${parText(row.par)}`);
}

// CHAPTER_SHARE: a chapter opens once the player holds this many stars per level of the
// chapters before it: every level passed and half of them with a second star.
const CHAPTER_SHARE = 1.5;

// showChapters heads each chapter with its stars and opens it by the stars earned before it;
// a locked chapter's levels are listed but not linked.
function showChapters(chapters) {
  let before = 0;
  let levelsBefore = 0;
  chapters.forEach((c, k) => {
    const earned = c.rows.reduce((sum, r) => sum + playerStars(r), 0);
    const need = Math.ceil(CHAPTER_SHARE * levelsBefore);
    const open = before >= need;
    const name = c.difficulty[0].toUpperCase() + c.difficulty.slice(1);
    clear(c.head, `Chapter ${k + 1}: ${name} · ${earned} of ${MAX_STARS * c.rows.length} ★`,
      open ? '' : h('span', { class: 'lock' }, ` — locked: ${need - before} more ★ in the chapters before it opens it`));
    c.head.parentElement.classList.toggle('locked', !open);
    for (const r of c.rows) {
      r.tr.classList.toggle('locked', !open);
      if (open) {
        r.link.setAttribute('href', `#/levels/${encodeURIComponent(r.l.slug)}`);
        r.link.removeAttribute('aria-disabled');
      } else {
        r.link.removeAttribute('href');
        r.link.setAttribute('aria-disabled', 'true');
        r.link.title = `Earn ${need} stars in the chapters before it to open this chapter`;
      }
    }
    before += earned;
    levelsBefore += c.rows.length;
  });
}
