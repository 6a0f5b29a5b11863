// What the duel views share: a duel's state in words, who is who, the live stream of a
// duel's changes (Server-Sent Events), the countdown to its next deadline, and the form
// that gives this browser a player name.
import { h, clear, uid, fmtDuration } from '../util.js';
import * as api from '../api.js';
import { loadPlayer } from '../store.js';

// FINAL are the states a duel never leaves.
export const FINAL = new Set(['finished', 'declined', 'expired', 'forfeited']);

const STATE_WORDS = {
  challenged: 'waiting for the challenge to be accepted',
  matching: 'looking for an opponent',
  active: 'designs being handed in',
  finished: 'finished',
  declined: 'declined',
  expired: 'expired',
  forfeited: 'forfeited',
};
export const stateWords = (s) => STATE_WORDS[s] || String(s).replace(/_/g, ' ');

// sides names the players of a duel from this browser's player's point of view: me (or
// null for a spectator), them, and whether me is the one challenged (who may accept).
export function sides(d) {
  const p = loadPlayer();
  const players = d.players || [];
  const me = p ? players.find((x) => x.id === p.id) || null : null;
  const them = me ? players.find((x) => x.id !== me.id) || null : null;
  const challenger = d.challenger_id ? players.find((x) => x.id === d.challenger_id) : players[0];
  const challenged = !!me && d.state === 'challenged' && challenger && challenger.id !== me.id;
  return { me, them, challenged, challenger };
}

export const playerName = (d, id) => (d.players || []).find((x) => x.id === id)?.name || 'someone';

// deadline is the duel's next deadline and what it is for, or null.
export function deadline(d) {
  if (d.state === 'challenged' && d.accept_by) return { at: d.accept_by, what: 'to accept' };
  if (d.state === 'active' && d.submit_by) return { at: d.submit_by, what: 'to hand in a design' };
  return null;
}

// Countdown is a live "23 h 59 min left" for a deadline (an RFC 3339 time). It announces only
// the whole minutes to screen readers, not every second.
export class Countdown {
  constructor() {
    this.el = h('span', { class: 'countdown', role: 'timer', 'aria-live': 'off' });
    this.timer = null;
  }

  set(dl) {
    clearInterval(this.timer);
    if (!dl) {
      this.el.textContent = '';
      return;
    }
    const end = Date.parse(dl.at);
    const tick = () => {
      const left = Math.max(0, Math.round((end - Date.now()) / 1000));
      this.el.textContent = left > 0 ? `${fmtDuration(left * 1000)} left ${dl.what}` : `time is up ${dl.what}`;
      this.el.dataset.left = String(left);
      if (left <= 0) clearInterval(this.timer);
    };
    tick();
    this.timer = setInterval(tick, 1000);
  }

  destroy() {
    clearInterval(this.timer);
  }
}

// watchDuel follows a duel's changes over its stream and calls onDuel with each new
// state. A dropped connection is opened again after a pause (growing to 15 s, or as long
// as the server's Retry-After says), resuming after the last event seen. It stops once
// the duel has ended, or when the stream is refused (a pending duel of other players).
// Returns the function that stops it.
export function watchDuel(id, onDuel) {
  const ctrl = new AbortController();
  let stopped = false;
  let last = null;
  let pause = RETRY_MS;
  (async () => {
    while (!stopped) {
      let ended = false;
      try {
        await api.duelStream(id, {
          signal: ctrl.signal,
          lastEventId: last,
          onEvent: (ev) => {
            if (ev.event !== 'duel') return;
            let d;
            try {
              d = JSON.parse(ev.data);
            } catch {
              return;
            }
            last = ev.id ?? last;
            pause = RETRY_MS;
            if (FINAL.has(d.state)) ended = true;
            if (!stopped) onDuel(d);
          },
        });
      } catch (err) {
        if (err.name === 'AbortError' || [401, 403, 404].includes(err.status)) return;
        const after = Number(err.retryAfter);
        if (after > 0) pause = Math.max(pause, after * 1000);
      }
      if (ended || stopped) return;
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, MAX_RETRY_MS);
    }
  })();
  return () => {
    stopped = true;
    ctrl.abort();
  };
}
const RETRY_MS = 1000;
const MAX_RETRY_MS = 15000;

// nameForm asks for a player name and creates the player; onDone runs once it exists.
export function nameForm(onDone, { label = 'Pick a name to duel with. Your token stays in this browser.' } = {}) {
  const input = h('input', { id: uid('name'), type: 'text', maxlength: 32, required: true, autocomplete: 'nickname', spellcheck: 'false' });
  const err = h('p', { class: 'field-error', id: uid('nerr'), hidden: true });
  const form = h('form', { class: 'name-form' },
    h('div', { class: 'field' }, h('label', { for: input.id }, 'Player name'), input, err),
    h('button', { type: 'submit', class: 'secondary' }, 'Save name'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.hidden = true;
    try {
      await api.createPlayer(input.value.trim());
      window.dispatchEvent(new Event('bp:player'));
      onDone();
    } catch (e) {
      err.hidden = false;
      err.textContent = e.fields?.[0]?.reason ? `Name ${e.fields[0].reason}.` : e.message;
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-describedby', err.id);
    }
  });
  return h('div', { class: 'name-box' }, h('p', {}, label), form);
}

// stateBadge is a duel's state as a word with its own colour (the word carries it).
export function stateBadge(state) {
  return h('span', { class: ['duel-state', `duel-state-${state}`], dataset: { state } }, stateWords(state));
}

// problemText is an API error in words, with a server busy signal's advice.
export function problemText(err) {
  if (err.status === 429 || err.status === 503) return `The server is busy (${err.message}). Try again in ${err.retryAfter || 'a few'} seconds.`;
  const f = err.fields?.[0];
  return f ? `${err.message}: ${f.field} ${f.reason}` : err.message || String(err);
}

export function fillStatus(el, text, bad = false) {
  el.classList.toggle('bad', bad);
  clear(el, text);
}

// levelPicker is a level choice for a duel whose options say which levels have a surprise:
// only a level with chaos has one (the server draws it from the level's own chaos events).
// The levels' chaos arrives one level at a time, until stopped() says the page is gone.
export function levelPicker(levels, stopped, { id = 'duel-level' } = {}) {
  const help = h('p', { class: 'help', id: `${id}-help` });
  const select = h('select', { id, 'aria-describedby': help.id }, levels.map((l) => h('option', { value: l.slug }, l.title)));
  const surprise = new Map();
  const say = () => {
    const has = surprise.get(select.value);
    help.textContent = has === undefined ? ''
      : has ? 'This level has chaos: one surprise chaos event, drawn from its own, hits both designs.'
        : 'This level has no chaos, so no surprise: the same traffic decides.';
  };
  select.addEventListener('change', say);
  (async () => {
    for (const l of levels) {
      if (stopped()) return;
      try {
        const lv = await api.level(l.slug);
        const has = (lv.definition?.run?.chaos || []).length > 0;
        surprise.set(l.slug, has);
        const opt = [...select.options].find((o) => o.value === l.slug);
        if (opt) opt.textContent = `${l.title}${has ? ' · surprise chaos' : ' · no chaos'}`;
        if (l.slug === select.value) say();
      } catch {
        /* the option keeps its plain title */
      }
    }
  })();
  return { select, help };
}
