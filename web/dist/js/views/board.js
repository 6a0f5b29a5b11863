// A level's leaderboard: the page around the player (their row highlighted) when they are
// on it, else the top; previous and next pages by cursor. It follows the board's live
// stream: each change (a player's new best) reloads the page in view, whose ranks the
// server computes exactly, and says who moved.
import { h, clear, fmtWhen } from '../util.js';
import * as api from '../api.js';
import { loadPlayer, saveProgress } from '../store.js';
import { follow } from '../live.js';

const LIMIT = 10;

const LIVE_WORDS = {
  connecting: 'Connecting to the live board…',
  live: 'Live: the board updates as players score.',
  reconnecting: 'Reconnecting to the live board… (what you see may be behind)',
};

// entriesTable draws a page of a board (a level's, the global one or a season's): rank,
// player (linked to their page), score, when.
export function entriesTable(page, player, { id = 'board', caption } = {}) {
  return h('table', { class: 'board', id },
    h('caption', {}, caption || `${page.total} player${page.total === 1 ? '' : 's'} ranked`),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col', class: 'num' }, 'Rank'),
      h('th', { scope: 'col' }, 'Player'),
      h('th', { scope: 'col', class: 'num' }, 'Score'),
      h('th', { scope: 'col' }, 'When'))),
    h('tbody', {}, page.entries.map((e) => {
      const me = player && e.player_id === player.id;
      return h('tr', { class: me ? 'me' : '', 'aria-current': me ? 'true' : false, dataset: { player: e.player_id } },
        h('td', { class: 'num' }, String(e.rank)),
        h('th', { scope: 'row' }, h('a', { href: `#/players/${encodeURIComponent(e.player_id)}` }, e.player_name), me ? h('span', { class: 'you' }, ' (you)') : ''),
        h('td', { class: 'num' }, String(e.score)),
        h('td', {}, fmtWhen(e.achieved_at)));
    })));
}

// pager is the previous / top / around me / next row under a board page.
export function pager(page, player, show, label) {
  return h('nav', { class: 'pager', 'aria-label': label },
    h('button', { type: 'button', class: 'secondary', disabled: !page.prev, onclick: () => show({ cursor: page.prev }) }, '← Higher'),
    h('button', { type: 'button', class: 'secondary', onclick: () => show({}) }, 'Top'),
    player ? h('button', { type: 'button', class: 'secondary', onclick: () => show({ aroundMe: true }) }, 'Around me') : null,
    h('button', { type: 'button', class: 'secondary', disabled: !page.next, onclick: () => show({ cursor: page.next }) }, 'Lower →'));
}

export async function boardView(main, slug) {
  const lv = await api.level(slug);
  document.title = `Leaderboard · ${lv.title} · Backpressure`;
  const player = loadPlayer();
  const body = h('div', { class: 'board-body' });
  const status = h('p', { class: 'muted', role: 'status' });
  const liveState = h('p', { class: 'live-state', id: 'live-state', dataset: { state: 'connecting' } });
  const news = h('p', { class: 'live-news', id: 'live-news', 'aria-live': 'polite' });
  clear(main,
    h('header', { class: 'level-head' },
      h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Levels'), ' / ', h('a', { href: `#/levels/${encodeURIComponent(slug)}` }, lv.title)),
      h('h1', {}, `Leaderboard: ${lv.title}`),
      h('p', {}, `Version ${lv.version}. Best passing score per player; ties go to whoever got there first.`)),
    h('section', { class: 'panel', 'aria-labelledby': 'board-h' },
      h('h2', { id: 'board-h', class: 'sr-only' }, 'Entries'), liveState, status, body, news));

  let shown = {};
  let seq = 0; // a load answers for every change up to the moment it was asked for
  async function show(opts, moved) {
    shown = opts;
    const mySeq = ++seq;
    let page;
    try {
      page = await api.board(slug, { limit: LIMIT, ...opts });
    } catch (err) {
      if (mySeq !== seq) return;
      if (opts.aroundMe && (err.status === 404 || err.status === 401)) {
        status.textContent = player ? `${player.name} is not on this board yet: submit a passing design to rank.` : '';
        return show({}, moved);
      }
      clear(body, h('p', {}, err.message));
      return;
    }
    if (mySeq !== seq) return; // a later load is on its way
    const mine = player ? page.entries.find((e) => e.player_id === player.id) : null;
    if (mine) {
      saveProgress(slug, { passed: true, best: mine.score, rank: mine.rank });
      status.textContent = `${player.name} is ranked ${mine.rank} of ${page.total}.`;
    }
    clear(body, page.entries.length ? h('div', { class: 'table-wrap' }, entriesTable(page, player)) : h('p', {}, 'Nobody has passed this level yet. Be the first.'),
      pager(page, player, (o) => show(o), 'Leaderboard pages'));
    if (moved) body.querySelector(`tr[data-player="${moved}"]`)?.classList.add('moved');
  }
  await show(player ? { aroundMe: true } : {});

  let timer = null;
  const stream = follow(api.boardStreamURL(slug, lv.version), {
    change: (c) => {
      news.textContent = `${c.player_name} scored ${c.score}${c.previous_rank ? `, up from rank ${c.previous_rank}` : ''} to rank ${c.rank}.`;
      clearTimeout(timer);
      timer = setTimeout(() => show(shown, c.player_id), 150);
    },
  }, (state) => {
    liveState.dataset.state = state;
    liveState.textContent = LIVE_WORDS[state];
  });
  return () => {
    clearTimeout(timer);
    stream.close();
  };
}
