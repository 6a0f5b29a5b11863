// A level's leaderboard: the page around the player (their row highlighted) when they are
// on it, else the top; previous and next pages by cursor.
import { h, clear } from '../util.js';
import * as api from '../api.js';
import { loadPlayer, saveProgress } from '../store.js';

const LIMIT = 10;

export async function boardView(main, slug) {
  const lv = await api.level(slug);
  document.title = `Leaderboard · ${lv.title} · Backpressure`;
  const player = loadPlayer();
  const body = h('div', { class: 'board-body' });
  const status = h('p', { class: 'muted', role: 'status' });
  clear(main,
    h('header', { class: 'level-head' },
      h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Levels'), ' / ', h('a', { href: `#/levels/${encodeURIComponent(slug)}` }, lv.title)),
      h('h1', {}, `Leaderboard: ${lv.title}`),
      h('p', {}, `Version ${lv.version}. Best passing score per player; ties go to whoever got there first.`)),
    h('section', { class: 'panel', 'aria-labelledby': 'board-h' },
      h('h2', { id: 'board-h', class: 'sr-only' }, 'Entries'), status, body));

  async function show(opts) {
    let page;
    try {
      page = await api.board(slug, { limit: LIMIT, ...opts });
    } catch (err) {
      if (opts.aroundMe && (err.status === 404 || err.status === 401)) {
        status.textContent = player ? `${player.name} is not on this board yet: submit a passing design to rank.` : '';
        return show({});
      }
      clear(body, h('p', {}, err.message));
      return;
    }
    const mine = player ? page.entries.find((e) => e.player_id === player.id) : null;
    if (mine) {
      saveProgress(slug, { passed: true, best: mine.score, rank: mine.rank });
      status.textContent = `${player.name} is ranked ${mine.rank} of ${page.total}.`;
    }
    const table = h('table', { class: 'board', id: 'board' },
      h('caption', {}, `${page.total} player${page.total === 1 ? '' : 's'} ranked`),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col', class: 'num' }, 'Rank'),
        h('th', { scope: 'col' }, 'Player'),
        h('th', { scope: 'col', class: 'num' }, 'Score'),
        h('th', { scope: 'col' }, 'When'))),
      h('tbody', {}, page.entries.map((e) => {
        const me = player && e.player_id === player.id;
        return h('tr', { class: me ? 'me' : '', 'aria-current': me ? 'true' : false },
          h('td', { class: 'num' }, String(e.rank)),
          h('th', { scope: 'row' }, e.player_name, me ? h('span', { class: 'you' }, ' (you)') : ''),
          h('td', { class: 'num' }, String(e.score)),
          h('td', {}, h('time', { datetime: e.achieved_at }, new Date(e.achieved_at).toLocaleString())));
      })));
    const nav = h('nav', { class: 'pager', 'aria-label': 'Leaderboard pages' },
      h('button', { type: 'button', class: 'secondary', disabled: !page.prev, onclick: () => show({ cursor: page.prev }) }, '← Higher'),
      h('button', { type: 'button', class: 'secondary', onclick: () => show({}) }, 'Top'),
      player ? h('button', { type: 'button', class: 'secondary', onclick: () => show({ aroundMe: true }) }, 'Around me') : null,
      h('button', { type: 'button', class: 'secondary', disabled: !page.next, onclick: () => show({ cursor: page.next }) }, 'Lower →'));
    clear(body, page.entries.length ? h('div', { class: 'table-wrap' }, table) : h('p', {}, 'Nobody has passed this level yet. Be the first.'), nav);
  }
  await show(player ? { aroundMe: true } : {});
  return () => {};
}
