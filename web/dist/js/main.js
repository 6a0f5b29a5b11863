// Entry point: a hash router over the views (the levels, one level, a level's leaderboard,
// the events and one event, the season board, a player's page; the duels, one duel and its
// replay, handing in a duel's design, the ratings board) and the header's player badge.
import { h, clear, toast, dismissToast } from './util.js';
import { loadPlayer, forgetProgress } from './store.js';
import { onAuthLost, me } from './api.js';
import { levelsView } from './views/levels.js';
import { levelView } from './views/level.js';
import { boardView } from './views/board.js';
import { eventsView, eventView } from './views/events.js';
import { seasonView } from './views/seasons.js';
import { playerView } from './views/player.js';
import { duelsView } from './views/duels.js';
import { duelView } from './views/duel.js';
import { duelDesignView } from './views/duel-design.js';
import { ratingsView } from './views/duel-ratings.js';
import { studioView } from './views/studio.js';

const main = document.getElementById('main');
let current = null; // the mounted view's cleanup

export function renderWho() {
  const who = document.getElementById('who');
  const p = loadPlayer();
  clear(who, p ? [h('span', { class: 'sr-only' }, 'Playing as '), h('a', { class: 'badge', href: `#/players/${encodeURIComponent(p.id)}`, title: 'Your player page' }, p.name)] : h('span', { class: 'muted' }, 'No player name yet'));
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
  if (parts[0] === 'events' && parts[1]) return { view: 'event', id: parts[1], section: 'events' };
  if (parts[0] === 'events') return { view: 'events', section: 'events' };
  if (parts[0] === 'seasons') return { view: 'season', id: parts[1], section: 'seasons' };
  if (parts[0] === 'players' && parts[1]) return { view: 'player', id: parts[1] };
  if (parts[0] === 'duels' && parts[1] && parts[2] === 'design') return { view: 'duel-design', id: parts[1], section: 'duels' };
  if (parts[0] === 'duels' && parts[1]) return { view: 'duel', id: parts[1], section: 'duels' };
  if (parts[0] === 'duels') return { view: 'duels', section: 'duels' };
  if (parts[0] === 'ratings') return { view: 'ratings', section: 'ratings' };
  if (parts[0] === 'studio') return { view: 'studio', section: 'studio' };
  return { view: 'levels', section: 'levels' };
}

let routeSeq = 0;
async function route() {
  const r = parse(location.hash);
  const seq = ++routeSeq;
  dismissToast();
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
    a.toggleAttribute('aria-current', Boolean(r.section) && a.dataset.section === r.section);
  }
  let done = null;
  try {
    if (r.view === 'level') done = await levelView(main, r.slug);
    else if (r.view === 'board') done = await boardView(main, r.slug);
    else if (r.view === 'events') done = await eventsView(main);
    else if (r.view === 'event') done = await eventView(main, r.id);
    else if (r.view === 'season') done = await seasonView(main, r.id);
    else if (r.view === 'player') done = await playerView(main, r.id);
    else if (r.view === 'duels') done = await duelsView(main);
    else if (r.view === 'duel') done = await duelView(main, r.id);
    else if (r.view === 'duel-design') done = await duelDesignView(main, r.id);
    else if (r.view === 'ratings') done = await ratingsView(main);
    else if (r.view === 'studio') done = await studioView(main);
    else done = await levelsView(main);
  } catch (err) {
    if (seq !== routeSeq) return;
    clear(main, h('section', { class: 'panel error-panel' },
      h('h1', {}, 'Something went wrong'),
      h('p', {}, err.message || String(err)),
      h('p', {}, h('a', { href: '#/' }, 'Back to the levels'))));
  }
  if (seq !== routeSeq) {
    // The address changed while this view was loading: it must not stay mounted (or keep
    // its streams open) behind the next one.
    done?.();
    return;
  }
  current = done;
  main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', () => {
  route();
  window.scrollTo(0, 0);
});
renderWho();
route();
// A server started afresh (in-memory store) no longer knows a stored token: find out now.
// Authors (and admins) get the studio in the menu.
function showStudioLink(p) {
  const link = document.querySelector('header nav a[data-section="studio"]');
  if (link) link.hidden = !(p && (p.role === 'author' || p.role === 'admin'));
}
me().then(showStudioLink, () => {});
window.addEventListener('bp:player', () => me().then(showStudioLink, () => {}));
