// The season board: every player's standing in one season (the current one unless the
// address names another), paged by cursor like a level's board, with the other seasons a
// link away. A season's score is the sum of a player's best passing scores per level
// submitted during it; seasons have no live stream.
import { h, clear, fmtWhen } from '../util.js';
import * as api from '../api.js';
import { loadPlayer } from '../store.js';
import { entriesTable, pager } from './board.js';

const LIMIT = 25;

// seasonState says where a season stands: the list holds the next season, the current one
// and past ones (whose boards are their final ranks).
function seasonState(s) {
  if (s.current) return 'the current season';
  return Date.parse(s.starts_at) > Date.now() ? 'next: not started yet' : 'over: these are its final ranks';
}

export async function seasonView(main, id) {
  const list = await api.seasons();
  const season = id ? list.find((s) => s.id === id) : list.find((s) => s.current) || list[0];
  document.title = `${season ? season.name : 'Seasons'} · Backpressure`;
  if (!season) {
    clear(main, h('section', { class: 'panel intro' },
      h('h1', {}, 'Seasons'),
      id ? h('p', {}, `There is no season ${id}.`) : h('p', {}, 'No season has started yet.')));
    return () => {};
  }
  const player = loadPlayer();
  const body = h('div', { class: 'board-body' });
  const status = h('p', { class: 'muted', role: 'status' });
  const others = list.filter((s) => s.id !== season.id);
  clear(main,
    h('header', { class: 'level-head' },
      h('p', { class: 'crumbs' }, h('a', { href: '#/seasons' }, 'Seasons'), ' / ', season.id),
      h('h1', {}, `Season: ${season.name}`),
      h('p', {}, fmtWhen(season.starts_at), ' – ', fmtWhen(season.ends_at), ` · ${seasonState(season)}`)),
    h('section', { class: 'panel', 'aria-labelledby': 'season-board-h' },
      h('h2', { id: 'season-board-h' }, 'Standings'), status, body),
    others.length ? h('section', { class: 'panel', 'aria-labelledby': 'seasons-h' },
      h('h2', { id: 'seasons-h' }, 'Other seasons'),
      h('ul', { class: 'season-list' }, others.map((s) => h('li', {},
        h('a', { href: `#/seasons/${encodeURIComponent(s.id)}` }, s.name), ` (${seasonState(s)})`)))) : null);

  async function show(opts) {
    let page;
    try {
      page = await api.seasonBoard(season.id, { limit: LIMIT, ...opts });
    } catch (err) {
      if (opts.aroundMe && (err.status === 404 || err.status === 401)) {
        status.textContent = player ? `${player.name} has no score in this season yet.` : '';
        return show({});
      }
      clear(body, h('p', {}, err.message));
      return;
    }
    const mine = player ? page.entries.find((e) => e.player_id === player.id) : null;
    if (mine) status.textContent = `${player.name} is ranked ${mine.rank} of ${page.total}.`;
    clear(body, page.entries.length
      ? h('div', { class: 'table-wrap' }, entriesTable(page, player, { id: 'season-board' }))
      : h('p', {}, Date.parse(season.starts_at) > Date.now() ? 'This season has not started yet.' : 'Nobody has scored in this season yet.'),
    pager(page, player, show, 'Season board pages'));
  }
  await show(player ? { aroundMe: true } : {});
  return () => {};
}
