// A player's page: their name, and their history — each season with their rank and score,
// each finished event with their final rank and score. The page is a list of blocks, each
// built from the player's document (GET /v1/players/{id}); a new block is one more entry
// in BLOCKS below.
import { h, clear, fmtWhen } from '../util.js';
import * as api from '../api.js';
import { loadPlayer } from '../store.js';
import { ratingSection } from './duel-ratings.js';
import { MAX_STARS, starText } from '../stars.js';

// starsBlock: the player's stars on each level they passed and their campaign total, as the
// server counts them.
function starsBlock(p, levels) {
  const st = p.stars || { levels: [], campaign: { earned: 0, max: 0 } };
  // In the level list's order (the campaign's first), with each level's current version.
  const known = new Map(levels.map((l, i) => [l.slug, { ...l, at: i }]));
  const at = (slug) => known.get(slug)?.at ?? Infinity;
  const rows = [...st.levels].sort((a, b) => at(a.slug) - at(b.slug) || a.slug.localeCompare(b.slug));
  return h('section', { class: 'panel', 'aria-labelledby': 'hist-stars-h', id: 'player-stars' },
    h('h2', { id: 'hist-stars-h' }, 'Stars'),
    h('p', { id: 'player-campaign-stars' }, `Campaign: ${st.campaign.earned} of ${st.campaign.max} ★`),
    rows.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'board history cards' },
      h('caption', { class: 'sr-only' }, `${p.name}'s stars by level`),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Level'),
        h('th', { scope: 'col' }, 'Stars'),
        h('th', { scope: 'col', class: 'num' }, 'Best score'))),
      h('tbody', {}, rows.map((l) => h('tr', { dataset: { slug: l.slug } },
        h('th', { scope: 'row' }, h('a', { href: `#/levels/${encodeURIComponent(l.slug)}` }, known.get(l.slug)?.title || l.slug)),
        h('td', { class: 'stars', dataset: { label: 'Stars' }, 'aria-label': `${l.stars} of ${MAX_STARS} stars` }, starText(l.stars)),
        h('td', { class: 'num', dataset: { label: 'Best score' } }, String(l.score),
          known.get(l.slug)?.version === l.version ? '' : h('span', { class: 'muted', title: 'scored on an earlier version of the level' }, ` (v${l.version})`)))))))
      : h('p', { class: 'muted' }, 'No level passed yet.'));
}

function seasonsBlock(p) {
  const rows = p.seasons || [];
  return h('section', { class: 'panel', 'aria-labelledby': 'hist-seasons-h', id: 'player-seasons' },
    h('h2', { id: 'hist-seasons-h' }, 'Seasons'),
    rows.length ? h('p', { class: 'help' }, 'A season\u2019s score adds up the best passing score on each level submitted during the season.') : null,
    rows.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'board history cards' },
      h('caption', { class: 'sr-only' }, `${p.name}'s seasons`),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Season'),
        h('th', { scope: 'col', class: 'num' }, 'Rank'),
        h('th', { scope: 'col', class: 'num' }, 'Score'))),
      h('tbody', {}, rows.map((s) => h('tr', { dataset: { season: s.season_id } },
        h('th', { scope: 'row' }, h('a', { href: `#/seasons/${encodeURIComponent(s.season_id)}` }, s.name || s.season_id)),
        h('td', { class: 'num', dataset: { label: 'Rank' } }, s.rank ? `${s.rank} of ${s.total}` : '–'),
        h('td', { class: 'num', dataset: { label: 'Score' } }, String(s.score)))))))
      : h('p', { class: 'muted' }, 'No season scores yet.'));
}

function eventsBlock(p) {
  const rows = p.events || [];
  return h('section', { class: 'panel', 'aria-labelledby': 'hist-events-h', id: 'player-events' },
    h('h2', { id: 'hist-events-h' }, 'Events'),
    rows.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'board history cards' },
      h('caption', { class: 'sr-only' }, `${p.name}'s events`),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Event'),
        h('th', { scope: 'col', class: 'num' }, 'Final rank'),
        h('th', { scope: 'col', class: 'num' }, 'Score'),
        h('th', { scope: 'col' }, 'Final run'),
        h('th', { scope: 'col' }, 'Finished'))),
      h('tbody', {}, rows.map((e) => h('tr', { dataset: { event: e.event_id } },
        h('th', { scope: 'row' }, h('a', { href: `#/events/${encodeURIComponent(e.event_id)}` }, e.title)),
        h('td', { class: 'num', dataset: { label: 'Final rank' } }, e.rank ? `${e.rank} of ${e.total}` : '–'),
        h('td', { class: 'num', dataset: { label: 'Score' } }, e.passed === false ? '–' : String(e.score)),
        h('td', { dataset: { label: 'Final run' } }, e.passed ? h('span', { class: 'pass' }, '✓ passed') : h('span', { class: 'fail-word' }, '✗ failed')),
        h('td', { dataset: { label: 'Finished' } }, fmtWhen(e.finished_at)))))))
      : h('p', { class: 'muted' }, 'No finished events yet.'));
}

// BLOCKS are the sections under the player's name, in order: each takes the player's
// document (and the level list) and returns an element (or null to show nothing). Append
// further blocks here.
const BLOCKS = [starsBlock, seasonsBlock, eventsBlock, ratingSection];

export async function playerView(main, id) {
  const [p, levels] = await Promise.all([api.player(id), api.levels().catch(() => [])]);
  document.title = `${p.name} · Backpressure`;
  const me = loadPlayer();
  clear(main,
    h('header', { class: 'level-head', id: 'player-head' },
      h('p', { class: 'crumbs' }, 'Players'),
      h('h1', {}, p.name, me && me.id === p.id ? h('span', { class: 'you' }, ' (you)') : ''),
      h('p', { class: 'muted' }, 'Playing since ', fmtWhen(p.created_at), p.role && p.role !== 'player' ? ` · ${p.role}` : '')),
    BLOCKS.map((b) => b(p, levels)));
  return () => {};
}
