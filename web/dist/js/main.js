// Entry point: a hash router over the views (the levels, one level, a leaderboard; the
// duels, one duel and its replay, handing in a duel's design, the ratings board) and
// the header's player badge.
import { h, clear, toast } from './util.js';
import { loadPlayer, forgetProgress } from './store.js';
import { onAuthLost, me } from './api.js';
import { levelsView } from './views/levels.js';
import { levelView } from './views/level.js';
import { boardView } from './views/board.js';
import { duelsView } from './views/duels.js';
import { duelView } from './views/duel.js';
import { duelDesignView } from './views/duel-design.js';
import { ratingsView } from './views/duel-ratings.js';

const main = document.getElementById('main');
let current = null; // the mounted view's cleanup

export function renderWho() {
  const who = document.getElementById('who');
  const p = loadPlayer();
  clear(who, p ? [h('span', { class: 'sr-only' }, 'Playing as '), h('span', { class: 'badge', title: 'Your player name' }, p.name)] : h('span', { class: 'muted' }, 'No player name yet'));
}

onAuthLost(() => {
  forgetProgress();
  renderWho();
  toast('This server does not know your player any more: pick a name again to submit.');
});
window.addEventListener('bp:player', renderWho);

function parse(hash) {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'levels' && parts[1] && parts[2] === 'leaderboard') return { view: 'board', slug: parts[1] };
  if (parts[0] === 'levels' && parts[1]) return { view: 'level', slug: parts[1] };
  if (parts[0] === 'duels' && parts[1] && parts[2] === 'design') return { view: 'duel-design', id: parts[1], nav: '#/duels' };
  if (parts[0] === 'duels' && parts[1]) return { view: 'duel', id: parts[1], nav: '#/duels' };
  if (parts[0] === 'duels') return { view: 'duels', nav: '#/duels' };
  if (parts[0] === 'ratings') return { view: 'ratings', nav: '#/ratings' };
  return { view: 'levels' };
}

async function route() {
  const r = parse(location.hash);
  if (current) {
    try {
      current();
    } catch {
      /* a view that fails to clean up must not block the next */
    }
  }
  current = null;
  clear(main, h('p', { class: 'loading' }, 'Loading…'));
  for (const a of document.querySelectorAll('header nav a')) {
    a.toggleAttribute('aria-current', (r.view === 'levels' && a.getAttribute('href') === '#/') || (!!r.nav && a.getAttribute('href') === r.nav));
  }
  try {
    if (r.view === 'level') current = await levelView(main, r.slug);
    else if (r.view === 'board') current = await boardView(main, r.slug);
    else if (r.view === 'duels') current = await duelsView(main);
    else if (r.view === 'duel') current = await duelView(main, r.id);
    else if (r.view === 'duel-design') current = await duelDesignView(main, r.id);
    else if (r.view === 'ratings') current = await ratingsView(main);
    else current = await levelsView(main);
  } catch (err) {
    clear(main, h('section', { class: 'panel error-panel' },
      h('h1', {}, 'Something went wrong'),
      h('p', {}, err.message || String(err)),
      h('p', {}, h('a', { href: '#/' }, 'Back to the levels'))));
  }
  main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', () => {
  route();
  window.scrollTo(0, 0);
});
renderWho();
route();
// A server started afresh (in-memory store) no longer knows a stored token: find out now.
me().catch(() => {});
