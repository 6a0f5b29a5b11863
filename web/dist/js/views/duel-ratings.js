// Duel ratings: the line that shows one player's rating (for any page that shows a player:
// ratingBlock(id or profile)), the same as a section of a player's page (ratingSection(
// profile)), and the ratings board (#/ratings), best first.
import { h, clear, fmt } from '../util.js';
import * as api from '../api.js';
import { loadPlayer } from '../store.js';
import { nameForm, levelPicker, fillStatus, problemText } from './duel-common.js';

const LIMIT = 20;

// ratingWords is a rating as people read it: "1,512 ± 80 after 7 duels (4 won, 2 lost,
// 1 drawn)".
export function ratingWords(r) {
  if (!r || r.rating == null) return 'no rating yet';
  const n = r.duels ?? 0;
  const record = n ? ` (${r.wins ?? 0} won, ${r.losses ?? 0} lost, ${r.draws ?? 0} drawn)` : '';
  return `${fmt(Math.round(r.rating))} ± ${fmt(Math.round(r.deviation ?? 0))} after ${n} duel${n === 1 ? '' : 's'}${record}`;
}

// ratingBlock is a player's duel rating, read from their profile. player is an id or a
// profile already fetched (with its "rating").
export function ratingBlock(player) {
  const out = h('p', { class: 'rating-block', dataset: { rating: '' } }, h('span', { class: 'muted' }, 'Duel rating: …'));
  const show = (p) => {
    out.dataset.rating = p?.rating?.rating != null ? String(Math.round(p.rating.rating)) : '';
    clear(out, h('strong', {}, 'Duel rating: '), h('span', { class: 'rating-value' }, ratingWords(p?.rating)),
      p?.rating?.duels ? '' : h('span', { class: 'muted' }, ' — a first duel settles it'),
      ' · ', h('a', { href: '#/ratings' }, 'ratings board'));
  };
  if (typeof player === 'object' && player) show(player);
  else api.playerProfile(player).then(show, () => clear(out, h('span', { class: 'muted' }, 'Duel rating: unavailable right now.')));
  return out;
}

// ratingSection is a player's page's duel block: the rating, and a way to duel them.
export function ratingSection(p) {
  const me = loadPlayer();
  const section = h('section', { class: 'panel', 'aria-labelledby': 'player-rating-h', id: 'player-rating' },
    h('h2', { id: 'player-rating-h' }, 'Duels'),
    ratingBlock(p));
  if (!me) {
    const box = h('div');
    clear(box, nameForm(() => clear(box, challengeForm(p)),
      { label: `Pick a player name to challenge ${p.name} to a duel. Your token stays in this browser.` }));
    section.append(box);
  } else if (me.id !== p.id) {
    section.append(challengeForm(p));
  }
  return section;
}

// challengeForm challenges the player of this page on a level, then opens the duel.
function challengeForm(p) {
  const box = h('div', { class: 'player-challenge' }, h('p', { class: 'muted' }, 'Loading the levels…'));
  api.levels().then((levels) => {
    const { select, help } = levelPicker(levels, () => !box.isConnected, { id: 'challenge-level' });
    const status = h('p', { class: 'run-status', role: 'status', 'aria-live': 'polite', id: 'player-challenge-status' });
    const send = h('button', { type: 'submit', class: 'primary', id: 'player-challenge' }, `Challenge ${p.name}`);
    const form = h('form', { class: 'challenge-form' },
      h('div', { class: 'field' }, h('label', { for: select.id }, 'Level'), select, help),
      h('div', { class: 'toolbar' }, send), status);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      send.disabled = true;
      fillStatus(status, `Challenging ${p.name}…`);
      try {
        const d = await api.createDuel(select.value, p.id);
        location.hash = `#/duels/${encodeURIComponent(d.id)}`;
      } catch (err) {
        fillStatus(status, problemText(err), true);
      } finally {
        send.disabled = false;
      }
    });
    clear(box, form);
  }, (err) => clear(box, h('p', { class: 'muted' }, problemText(err))));
  return box;
}

export async function ratingsView(main) {
  document.title = 'Ratings · Backpressure';
  const me = loadPlayer();
  const body = h('div', { class: 'board-body' });
  const status = h('p', { class: 'muted', role: 'status' });
  clear(main,
    h('header', { class: 'level-head' },
      h('p', { class: 'crumbs' }, h('a', { href: '#/duels' }, 'Duels'), ' / ratings'),
      h('h1', {}, 'Ratings'),
      h('p', {}, 'A finished duel moves both players\u2019 ratings, more for a win against a stronger player, once each has played 5 different opponents: until then a player is provisional, and a duel against a provisional player moves nobody. One opponent moves a rating at most once a day. The board lists players rated against at least 5 opponents. The ± is how sure the rating is; it narrows with every rated duel.')),
    h('section', { class: 'panel', 'aria-labelledby': 'ratings-h' },
      h('h2', { id: 'ratings-h', class: 'sr-only' }, 'Ratings board'), status, body));

  // show reads the page after cursor ('' for the top); above holds the cursors of the
  // pages above it, so that Higher goes back one page.
  async function show(cursor, above) {
    let page;
    try {
      page = await api.ratings({ limit: LIMIT, cursor });
    } catch (err) {
      clear(body, h('p', {}, err.message));
      return;
    }
    const entries = page.entries || [];
    const mine = me ? entries.find((e) => e.player_id === me.id) : null;
    status.textContent = mine ? `${me.name} is ranked ${mine.rank} of ${page.total}.` : '';
    const table = h('table', { class: 'board', id: 'ratings' },
      h('caption', {}, `${page.total ?? entries.length} rated player${(page.total ?? entries.length) === 1 ? '' : 's'}`),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col', class: 'num' }, 'Rank'),
        h('th', { scope: 'col' }, 'Player'),
        h('th', { scope: 'col', class: 'num' }, 'Rating ± how sure'),
        h('th', { scope: 'col', class: 'num' }, 'Duels: won–lost–drawn'))),
      h('tbody', {}, entries.map((e) => {
        const you = me && e.player_id === me.id;
        return h('tr', { class: you ? 'me' : '', 'aria-current': you ? 'true' : false, dataset: { player: e.player_id } },
          h('td', { class: 'num' }, String(e.rank)),
          h('th', { scope: 'row' }, e.player_name ?? e.name, you ? h('span', { class: 'you' }, ' (you)') : ''),
          h('td', { class: 'num' }, fmt(Math.round(e.rating)), h('span', { class: 'muted' }, ` ± ${fmt(Math.round(e.deviation ?? 0))}`)),
          h('td', { class: 'num' }, `${e.duels ?? 0}: ${e.wins ?? 0}–${e.losses ?? 0}–${e.draws ?? 0}`));
      })));
    const nav = h('nav', { class: 'pager', 'aria-label': 'Ratings pages' },
      h('button', { type: 'button', class: 'secondary', disabled: !above.length, onclick: () => show(above.at(-1), above.slice(0, -1)) }, '← Higher'),
      h('button', { type: 'button', class: 'secondary', onclick: () => show('', []) }, 'Top'),
      h('button', { type: 'button', class: 'secondary', disabled: !page.next, onclick: () => show(page.next, [...above, cursor]) }, 'Lower →'));
    // An empty board has no pages to turn.
    clear(body, entries.length ? h('div', { class: 'table-wrap' }, table) : h('p', { id: 'ratings-empty' }, 'Nobody is on the board yet: a player joins it once rated against 5 different opponents.'), page.total ? nav : null);
  }
  await show('', []);
  return () => {};
}
