// The duels page: challenge a player (by name or id) on a level, or ask to be matched;
// the player's duels, pending, active and finished, each following its stream so that its
// state changes as it happens; accept or decline a challenge; the way to hand in a design.
import { h, clear, toast } from '../util.js';
import * as api from '../api.js';
import { loadPlayer } from '../store.js';
import { FINAL, sides, deadline, Countdown, watchDuel, nameForm, stateBadge, problemText, fillStatus, levelPicker } from './duel-common.js';
import { ratingBlock } from './duel-ratings.js';

// LIST_POLL_MS: how often the newest POLL_LIMIT duels are read again, for duels this
// browser has not seen yet (a new challenge); the duels it knows change through their
// streams. An ended duel comes with both runs' ticks (hundreds of kB), so the poll reads
// few, and none while the page is hidden. LIST_LIMIT duels are read when the page opens.
const LIST_POLL_MS = 4000;
const POLL_LIMIT = 5;
const LIST_LIMIT = 50;
// MAX_STREAMS: at most this many duels are followed live at once (browsers allow six
// connections per server over HTTP/1.1; the rest of the page needs some).
const MAX_STREAMS = 3;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function duelsView(main) {
  document.title = 'Duels · Backpressure';
  const levels = await api.levels();
  const titles = Object.fromEntries(levels.map((l) => [l.slug, l.title]));
  const cleanups = [];
  const intro = h('section', { class: 'panel intro' },
    h('h1', {}, 'Duels'),
    h('p', {}, 'Challenge another player on a level. You each hand in a design before the deadline; the same traffic hits both and, on a level with chaos, one surprise chaos event neither of you knows in advance. The better verdict wins. A duel moves ratings once both of you have played five different opponents, and only one duel a day between the same two players does. Your opponent\u2019s design stays hidden until the end.'),
    h('p', {}, h('a', { href: '#/ratings' }, 'The ratings board')));
  const youBox = h('section', { class: 'panel', 'aria-labelledby': 'you-h' });
  const challengeBox = h('section', { class: 'panel', 'aria-labelledby': 'challenge-h' });
  const listBox = h('section', { class: 'panel', 'aria-labelledby': 'mine-h' });
  clear(main, intro, youBox, challengeBox, listBox);

  let stopped = false;
  const streams = new Map(); // duel id → stop
  const cards = new Map(); // duel id → {duel, el, countdown}
  const groups = {
    pending: h('ul', { class: 'duel-list', id: 'duels-pending' }),
    active: h('ul', { class: 'duel-list', id: 'duels-active' }),
    finished: h('ul', { class: 'duel-list', id: 'duels-finished' }),
  };
  const empty = {
    pending: 'No challenges waiting.',
    active: 'No duel in play.',
    finished: 'No finished duels yet.',
  };
  const listStatus = h('p', { class: 'muted', role: 'status' });
  const olderBox = h('p', {});

  function renderYou() {
    const p = loadPlayer();
    if (!p) {
      clear(youBox, h('h2', { id: 'you-h' }, 'You'), nameForm(() => {}));
      clear(challengeBox);
      clear(listBox);
      challengeBox.hidden = true;
      listBox.hidden = true;
      return false;
    }
    challengeBox.hidden = false;
    listBox.hidden = false;
    const copy = h('button', { type: 'button', class: 'link', onclick: () => copyText(p.id, 'Your player id is copied.') }, 'copy');
    clear(youBox, h('h2', { id: 'you-h' }, 'You'),
      h('p', {}, 'Playing as ', h('strong', {}, p.name), '. Others challenge you by your player id, ',
        h('code', { id: 'my-id' }, p.id), ' (', copy, '), or by your name.'),
      ratingBlock(p.id));
    return true;
  }

  function renderChallenge() {
    const { select: levelSel, help: levelHelp } = levelPicker(levels, () => stopped);
    const opponent = h('input', { id: 'duel-opponent', type: 'text', maxlength: 64, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'duel-opponent-help' });
    const status = h('p', { class: 'run-status', role: 'status', 'aria-live': 'polite', id: 'challenge-status' });
    const send = h('button', { type: 'submit', class: 'primary', id: 'challenge' }, 'Challenge');
    const match = h('button', { type: 'button', class: 'secondary', id: 'find-opponent' }, 'Find me an opponent');
    const form = h('form', { class: 'challenge-form' },
      h('div', { class: 'field' }, h('label', { for: levelSel.id }, 'Level'), levelSel, levelHelp),
      h('div', { class: 'field' }, h('label', { for: opponent.id }, 'Opponent'), opponent,
        h('p', { class: 'help', id: 'duel-opponent-help' }, 'Their player name, or their player id. A player\u2019s own page has a Challenge button too.')),
      h('div', { class: 'toolbar' }, send, match));
    const go = async (who, btn) => {
      btn.disabled = true;
      fillStatus(status, who ? `Challenging ${who}…` : 'Looking for an opponent…');
      try {
        const id = who ? await resolveOpponent(who) : '';
        if (who && !id) {
          fillStatus(status, `No player is called ${who}. Check the spelling, or ask them for their player id: it is on their duels page.`, true);
          opponent.setAttribute('aria-invalid', 'true');
          opponent.focus();
          return;
        }
        opponent.removeAttribute('aria-invalid');
        const d = await api.createDuel(levelSel.value, id);
        const { them } = sides(d);
        fillStatus(status, d.state === 'matching'
          ? 'You are in the queue: the duel starts when someone of a similar rating asks too.'
          : `Challenge sent${them ? ` to ${them.name}` : ''}.`);
        opponent.value = '';
        upsert(d);
      } catch (err) {
        fillStatus(status, problemText(err), true);
        if (err.status === 401) renderAll();
      } finally {
        btn.disabled = false;
      }
    };
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const who = opponent.value.trim();
      if (!who) {
        fillStatus(status, 'Name an opponent, or press “Find me an opponent”.', true);
        opponent.focus();
        return;
      }
      go(who, send);
    });
    match.addEventListener('click', () => go('', match));
    clear(challengeBox, h('h2', { id: 'challenge-h' }, 'Challenge'), form, status);
  }

  // resolveOpponent turns what the player typed into a player id: an id as it is, a name
  // by the server's lookup (the name rule's key: case and look-alike letters ignored).
  async function resolveOpponent(text) {
    if (UUID.test(text)) return text.toLowerCase();
    const p = await api.playerByName(text);
    return p?.id || '';
  }

  function renderList() {
    clear(listBox, h('h2', { id: 'mine-h' }, 'Your duels'), listStatus,
      h('h3', {}, 'Pending'), groups.pending,
      h('h3', {}, 'In play'), groups.active,
      h('h3', {}, 'Finished'), groups.finished, olderBox);
    place();
  }

  // showOlder offers the page of duels after cursor ('' when there is none).
  function showOlder(cursor) {
    if (!cursor) {
      olderBox.replaceChildren();
      return;
    }
    const button = h('button', { type: 'button', class: 'secondary', id: 'older-duels' }, 'Older duels');
    button.onclick = async () => {
      button.disabled = true;
      try {
        const { duels: list, next } = await api.myDuels(LIST_LIMIT, cursor);
        for (const d of list) upsert(d);
        showOlder(next);
      } catch (err) {
        button.disabled = false;
        listStatus.textContent = problemText(err);
      }
    };
    olderBox.replaceChildren(button);
  }

  function groupOf(d) {
    if (d.state === 'active') return 'active';
    if (FINAL.has(d.state)) return 'finished';
    return 'pending';
  }

  // place puts every card in its group, newest first.
  function place() {
    const all = [...cards.values()].sort((a, b) => String(b.duel.created_at).localeCompare(String(a.duel.created_at)));
    for (const [g, ul] of Object.entries(groups)) {
      const mine = all.filter((c) => groupOf(c.duel) === g);
      const have = [...ul.children];
      const want = mine.length ? mine.map((c) => c.el) : [h('li', { class: 'muted empty' }, empty[g])];
      if (have.length !== want.length || have.some((el, i) => el !== want[i])) ul.replaceChildren(...want);
    }
  }

  function upsert(d) {
    if (stopped) return;
    const cur = cards.get(d.id);
    // seq counts the duel's changes: the same seq is the same duel.
    if (cur && cur.duel.seq === d.seq && cur.duel.state === d.state) return;
    cur?.countdown.destroy();
    const card = renderCard(d);
    cards.set(d.id, { duel: d, ...card });
    if (cur && cur.el.contains(document.activeElement)) {
      cur.el.replaceWith(card.el);
      card.el.querySelector('button, a')?.focus();
    } else if (cur) {
      cur.el.replaceWith(card.el);
    }
    place();
    follow();
  }

  // follow keeps a stream open for the newest duels that can still change.
  function follow() {
    const live = [...cards.values()].filter((c) => !FINAL.has(c.duel.state))
      .sort((a, b) => String(b.duel.created_at).localeCompare(String(a.duel.created_at)))
      .slice(0, MAX_STREAMS).map((c) => c.duel.id);
    for (const [id, stop] of streams) {
      if (!live.includes(id)) {
        stop();
        streams.delete(id);
      }
    }
    for (const id of live) if (!streams.has(id)) streams.set(id, watchDuel(id, upsert));
  }

  function renderCard(d) {
    const { me, them, challenged } = sides(d);
    const countdown = new Countdown();
    countdown.set(deadline(d));
    const title = titles[d.level] || d.level;
    const actions = h('div', { class: 'toolbar duel-actions' });
    const status = h('p', { class: 'run-status', role: 'status', 'aria-live': 'polite' });
    const act = (label, cls, f) => {
      const b = h('button', { type: 'button', class: cls, dataset: { action: label.toLowerCase() } }, label);
      b.addEventListener('click', async () => {
        b.disabled = true;
        try {
          upsert(await f());
        } catch (err) {
          fillStatus(status, problemText(err), true);
          b.disabled = false;
        }
      });
      return b;
    };
    if (challenged) {
      actions.append(act('Accept', 'primary', () => api.acceptDuel(d.id)), act('Decline', 'secondary', () => api.declineDuel(d.id)));
    }
    if (d.state === 'active' && me && !me.submitted) {
      actions.append(h('a', { class: 'button primary', href: `#/duels/${encodeURIComponent(d.id)}/design`, dataset: { action: 'design' } }, 'Hand in a design'));
    }
    actions.append(h('a', { class: 'button secondary', href: `#/duels/${encodeURIComponent(d.id)}`, dataset: { action: 'open' } },
      d.state === 'finished' || d.state === 'forfeited' ? 'Result and replay' : 'Open'));
    const who = them ? them.name : d.state === 'matching' ? 'an opponent to be found' : 'someone';
    const handed = d.state === 'active'
      ? (d.players || []).map((p) => `${p.id === me?.id ? 'you' : p.name}: ${p.submitted ? 'design in' : 'no design yet'}`).join(' · ')
      : '';
    let outcome = '';
    if ((d.state === 'finished' || d.state === 'forfeited') && d.result) {
      const r = d.result;
      outcome = r.draw || !r.winner ? 'a draw' : r.winner === me?.id ? 'you won' : `${them?.name || 'they'} won`;
    }
    const el = h('li', { class: 'duel-card', dataset: { id: d.id, state: d.state } },
      h('p', { class: 'duel-line' },
        h('strong', {}, `vs ${who}`), ' on ', h('span', {}, title), ' · ', stateBadge(d.state),
        outcome ? [' · ', h('strong', { class: 'duel-outcome-word' }, outcome)] : '',
        challenged ? ' · they challenged you' : ''),
      handed ? h('p', { class: 'help' }, handed) : null,
      h('p', { class: 'help' }, countdown.el),
      actions, status);
    return { el, countdown };
  }

  async function refresh(limit = POLL_LIMIT) {
    if (stopped || !loadPlayer() || (limit === POLL_LIMIT && document.hidden)) return;
    try {
      const { duels: list, next } = await api.myDuels(limit);
      listStatus.textContent = '';
      for (const d of list) upsert(d);
      if (limit === LIST_LIMIT) showOlder(next);
    } catch (err) {
      if (err.status === 401) {
        renderAll();
        return;
      }
      listStatus.textContent = problemText(err);
    }
  }

  function renderAll() {
    if (!renderYou()) return;
    renderChallenge();
    renderList();
  }
  function start() {
    renderAll();
    refresh(LIST_LIMIT);
  }

  start();
  const poll = setInterval(() => refresh(POLL_LIMIT), LIST_POLL_MS);
  const onPlayer = () => {
    for (const stop of streams.values()) stop();
    streams.clear();
    for (const c of cards.values()) c.countdown.destroy();
    cards.clear();
    start();
  };
  window.addEventListener('bp:player', onPlayer);
  cleanups.push(() => window.removeEventListener('bp:player', onPlayer));
  return () => {
    stopped = true;
    clearInterval(poll);
    for (const stop of streams.values()) stop();
    for (const c of cards.values()) c.countdown.destroy();
    for (const f of cleanups) f();
    document.title = 'Backpressure';
  };
}

// copyText puts text on the clipboard (and says so); where the page may not write to the
// clipboard, the text is selected for the player to copy.
export async function copyText(text, done) {
  try {
    await navigator.clipboard.writeText(text);
    toast(done);
  } catch {
    toast(`Copy this: ${text}`);
  }
}
