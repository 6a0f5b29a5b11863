// Events: the list (live, upcoming with their briefing and a countdown to the start,
// finished) and one event's page. During an event its page holds the level (the level
// view's canvas, runs and submit flow, submitting to the event) and the live standings over
// Server-Sent Events; after it, the hidden chaos that was revealed, the final standings, and
// for each entrant a re-run of their final design that shows it gives the same evaluation.
import { h, clear, fmt, fmtSec, fmtPct, fmtDuration, fmtSpan, whenText, problemText } from '../util.js';
import * as api from '../api.js';
import { loadPlayer } from '../store.js';
import { markdown } from '../md.js';
import { describeChaos, chaosId } from '../diagram.js';
import { follow, STATE_WORDS } from '../live.js';
import { levelView, failingWords } from './level.js';
import { renderVerdict, renderCharts } from './results.js';
import { nameForm } from './duel-common.js';

const PHASE_WORDS = { upcoming: 'Upcoming', live: 'Live', finishing: 'Finishing', finished: 'Finished' };

const eventHref = (id) => `#/events/${encodeURIComponent(id)}`;
export const playerHref = (id) => `#/players/${encodeURIComponent(id)}`;

// ticker calls f every second (and once now) until stopped.
function ticker(f) {
  f();
  const t = setInterval(f, 1000);
  return () => clearInterval(t);
}

function rules(e) {
  const items = [
    e.attempt_limit ? `${e.attempt_limit} attempt${e.attempt_limit === 1 ? '' : 's'} per entrant` : 'no limit on attempts',
    e.join_required ? 'join before you submit' : 'your first submission enters you',
    e.max_entrants ? `at most ${fmt(e.max_entrants)} entrants` : 'no cap on entrants',
    e.final === 'last' ? 'your last design is the one that counts' : 'your best passing design is the one that counts',
    'after the end, every final design runs again with chaos nobody sees until then',
  ];
  return h('ul', { class: 'rules' }, items.map((t) => h('li', {}, t)));
}

function phaseBadge(phase) {
  return h('span', { class: `phase phase-${phase}` }, PHASE_WORDS[phase] || phase);
}

// countdownText says what the clock says about e at now.
function countdownText(e, now) {
  const start = Date.parse(e.starts_at);
  const end = Date.parse(e.ends_at);
  if (e.phase === 'finished') return `Finished ${whenText(e.finished_at || e.ends_at)}`;
  if (now < start) return `Starts in ${fmtDuration(start - now)}`;
  if (now < end) return `Ends in ${fmtDuration(end - now)}`;
  return 'Ended: the final runs with the hidden chaos are under way';
}

// --- The list -------------------------------------------------------------------------------

export async function eventsView(main) {
  document.title = 'Events · Backpressure';
  const list = await api.events();
  const groups = { live: [], upcoming: [], finishing: [], finished: [] };
  for (const e of list) (groups[e.phase] || groups.finished).push(e);
  groups.finished.reverse(); // the latest first
  const clocks = [];
  const card = (e) => {
    const clock = h('p', { class: 'countdown', dataset: { id: e.id } });
    clocks.push({ e, clock });
    return h('li', { class: 'event-card', dataset: { id: e.id, phase: e.phase } },
      h('h3', {}, h('a', { href: eventHref(e.id) }, e.title), ' ', phaseBadge(e.phase)),
      clock,
      h('p', { class: 'muted' }, fmtSpan(e.starts_at, e.ends_at),
        ` · ${e.entrants} entrant${e.entrants === 1 ? '' : 's'}`, e.level ? ` · level ${e.level}` : ''),
      e.phase === 'upcoming' && e.briefing ? markdown(e.briefing, 'md briefing') : null);
  };
  const section = (key, title, empty) => h('section', { class: 'panel', 'aria-labelledby': `ev-${key}` },
    h('h2', { id: `ev-${key}` }, title),
    groups[key].length ? h('ul', { class: 'event-list', id: `events-${key}` }, groups[key].map(card)) : h('p', { class: 'muted' }, empty));
  clear(main,
    h('section', { class: 'panel intro' },
      h('h1', {}, 'Events'),
      h('p', {}, 'An event is a competition on one level for a set time. Submit designs while it is live; when it ends, ',
        'every entrant\u2019s final design runs again with chaos that nobody sees until then. Robust designs win.')),
    groups.live.length || groups.finishing.length
      ? h('section', { class: 'panel', 'aria-labelledby': 'ev-live' },
        h('h2', { id: 'ev-live' }, 'Live now'),
        h('ul', { class: 'event-list', id: 'events-live' }, [...groups.live, ...groups.finishing].map(card)))
      : section('live', 'Live now', 'Nothing is live right now.'),
    section('upcoming', 'Upcoming', 'No event is scheduled yet.'),
    section('finished', 'Finished', 'No event has finished yet.'));
  // An event that starts or ends moves to another group: the list is read again.
  let reload = null;
  const stop = ticker(() => {
    const now = Date.now();
    for (const { e, clock } of clocks) {
      clock.textContent = countdownText(e, now);
      const crossed = (e.phase === 'upcoming' && now >= Date.parse(e.starts_at)) || (e.phase === 'live' && now >= Date.parse(e.ends_at));
      if (crossed && !reload) reload = setTimeout(() => window.dispatchEvent(new HashChangeEvent('hashchange')), 500);
    }
  });
  return () => {
    stop();
    clearTimeout(reload);
  };
}

// --- One event ------------------------------------------------------------------------------

export async function eventView(main, id) {
  let cleanups = [];
  let gone = false;
  const cleanup = () => {
    for (const f of cleanups.splice(0)) {
      try {
        f();
      } catch {
        /* go on cleaning */
      }
    }
  };

  async function mount() {
    cleanup();
    if (gone) return;
    const e = await api.event(id);
    if (gone) return;
    document.title = `${e.title} · Events · Backpressure`;
    const player = loadPlayer();
    const state = new EventState(e);
    const clock = h('p', { class: 'countdown', id: 'countdown', role: 'timer', 'aria-live': 'off' });
    const count = h('span', { id: 'entrant-count' });
    state.on((s) => {
      count.textContent = ` · ${s.entrants} entrant${s.entrants === 1 ? '' : 's'}`;
    });
    const head = h('header', { class: 'level-head' },
      h('p', { class: 'crumbs' }, h('a', { href: '#/events' }, 'Events'), ' / ', phaseBadge(e.phase)),
      h('h1', {}, e.title),
      clock,
      h('p', { class: 'muted' }, fmtSpan(e.starts_at, e.ends_at),
        count,
        e.level ? [' · level ', h('a', { href: `#/levels/${encodeURIComponent(e.level)}` }, e.level), ` version ${e.version}`] : ''));
    const about = h('section', { class: 'panel', 'aria-labelledby': 'ev-brief-h' },
      h('h2', { id: 'ev-brief-h' }, 'Briefing'),
      e.briefing ? markdown(e.briefing) : h('p', { class: 'muted' }, 'No briefing.'),
      h('h3', {}, 'Rules'), rules(e),
      e.phase === 'upcoming' ? h('p', {}, 'The level is revealed when the event starts.') : null);
    const boardBox = h('section', { class: 'panel', 'aria-labelledby': 'ev-board-h', id: 'event-standings' });
    const playBox = h('div', { class: 'event-play' });
    const joinBox = h('div', { class: 'join-box' });
    clear(main, head, about, e.phase === 'upcoming' ? joinPanel(state, joinBox, () => mount().catch(showFailure)) : null, boardBox, playBox);

    // The clock: a phase that ends re-mounts the page.
    let remounting = false;
    cleanups.push(ticker(() => {
      const now = Date.now();
      clock.textContent = countdownText(e, now);
      const crossed = (e.phase === 'upcoming' && now >= Date.parse(e.starts_at)) || (e.phase === 'live' && now >= Date.parse(e.ends_at));
      if (crossed && !remounting) {
        remounting = true;
        setTimeout(() => mount().catch(showFailure), 400);
      }
    }));

    if (e.phase === 'finished') {
      await finishedBoard(e, boardBox, player);
      return;
    }
    const board = liveBoard(state, boardBox, player, {
      onFinal: () => {
        if (!remounting) {
          remounting = true;
          mount().catch(showFailure);
        }
      },
    });
    cleanups.push(board.close);
    // A join sends no change down the stream: a fresh look now and then brings others' joins.
    if (e.phase === 'upcoming' || e.phase === 'live') {
      const t = setInterval(() => state.refresh().catch(() => {}), 10_000);
      cleanups.push(() => clearInterval(t));
    }
    if (e.phase === 'finishing') {
      // The stream says when the final standings are frozen; a look now and then covers a
      // stream that cannot be opened.
      const t = setInterval(async () => {
        try {
          const now = await api.event(id);
          if (now.phase === 'finished') board.onFinal();
        } catch {
          /* the stream or the next look */
        }
      }, 5000);
      cleanups.push(() => clearInterval(t));
    }
    if (e.phase === 'live' && e.level) {
      const play = h('div');
      clear(playBox, h('section', { class: 'panel', 'aria-labelledby': 'ev-play-h' },
        h('h2', { id: 'ev-play-h' }, 'Play the level'),
        h('p', {}, 'Build and run your design as on the level\u2019s own page; submitting here enters it in the event. ',
          'Your verdict is on the level as published: the hidden chaos waits for the end.')), play);
      const stopLevel = await levelView(play, e.level, {
        version: e.version,
        event: e,
        submitPanel: (ctx) => submitPanel(state, ctx),
      });
      if (gone) stopLevel();
      else cleanups.push(stopLevel);
    }
  }

  function showFailure(err) {
    clear(main, h('section', { class: 'panel error-panel' },
      h('h1', {}, 'Something went wrong'), h('p', {}, problemText(err)),
      h('p', {}, h('a', { href: '#/events' }, 'Back to the events'))));
  }

  await mount();
  return () => {
    gone = true;
    cleanup();
  };
}

// EventState is the one source of an event page's entrants, join state and the player's
// standing: the event, then its standings (the stream's snapshot and changes, and a fresh
// look after the player's own join and now and then, since a join sends no change). Every
// part of the page draws from it, so no two parts can disagree.
class EventState {
  constructor(e) {
    this.event = e;
    this.board = null;
    // The server says whether the signed-in player has entered: an entrant who has only
    // joined is in no standings.
    this.joined = e.joined === true;
    this.subs = [];
  }

  on(f) {
    this.subs.push(f);
    f(this);
  }

  emit() {
    for (const f of this.subs) f(this);
  }

  // total is how many entrants have a design in the standings; entrants is everyone who
  // entered, designs or not (joins send no change, so the event is re-read now and then),
  // and never fewer than those with a design and the player, if they joined without one:
  // a board that grows by a stranger's design counts them before the next re-read.
  get total() {
    return this.board ? this.board.total : 0;
  }

  get entrants() {
    const pid = loadPlayer()?.id;
    return Math.max(this.event.entrants ?? 0, this.total + (this.joined && !this.mine(pid) ? 1 : 0));
  }

  mine(pid) {
    return (pid && this.board?.entries.find((x) => x.player_id === pid)) || null;
  }

  // isIn says whether the player is an entrant: on the board, or told so by the server.
  isIn(pid) {
    return Boolean(pid) && (this.joined || Boolean(this.mine(pid)));
  }

  setBoard(b) {
    this.board = b;
    this.emit();
  }

  async refresh() {
    const [e, b] = await Promise.all([api.event(this.event.id), api.eventStandings(this.event.id)]);
    this.event = { ...this.event, entrants: e.entrants };
    if (e.joined === true) this.joined = true;
    // A fresher board from the stream wins over an older look.
    if (!this.board || (b.seq ?? 0) >= (this.board.seq ?? 0)) this.setBoard(b);
  }

  async join() {
    const e = await api.joinEvent(this.event.id);
    this.event = { ...this.event, entrants: e.entrants };
    this.joined = true;
    this.emit();
    await this.refresh().catch(() => {});
  }
}

// standingWords is the player's own place: rank, score and attempts, or that they are not in.
function standingWords(s, pid) {
  const me = s.mine(pid);
  if (me) {
    return `You are in: ${me.passed ? `rank ${me.rank} of ${s.total}, score ${me.score}` : me.attempts ? `no passing design yet (${me.attempts} attempt${me.attempts === 1 ? '' : 's'})` : 'joined, no design submitted yet'}.`;
  }
  if (s.isIn(pid)) return 'You are in: joined, no design submitted yet.';
  return '';
}

// joinPanel offers to join an upcoming event that asks for it, to a player who has a name
// (or picks one here) and is not in yet.
function joinPanel(state, box, onName) {
  const e = state.event;
  if (!e.join_required) return null;
  const player = loadPlayer();
  const status = h('p', { role: 'status', id: 'join-status' });
  const btn = h('button', { type: 'button', class: 'primary', id: 'join' }, 'Join the event');
  const lead = h('p', { id: 'join-lead' });
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    try {
      await state.join();
      status.className = 'receipt pass';
      status.textContent = 'Joined.';
    } catch (err) {
      status.className = 'receipt fail';
      status.textContent = problemText(err);
    } finally {
      btn.disabled = false;
    }
  });
  if (!player) {
    clear(box, h('h2', {}, 'Join'), nameForm(onName, { label: 'This event takes entrants who join first. Pick a player name to join with; your token stays in this browser.' }));
  } else {
    const toolbar = h('div', { class: 'toolbar' }, btn);
    state.on((s) => {
      const inNow = s.isIn(player.id);
      toolbar.hidden = inNow;
      lead.textContent = inNow ? `Playing as ${player.name}: you are in. Come back when it starts.` : `This event takes entrants who join first. Playing as ${player.name}.`;
    });
    clear(box, h('h2', {}, 'Join'), lead, toolbar, status);
  }
  return h('section', { class: 'panel', 'aria-label': 'Join' }, box);
}

// submitPanel is the event's part of the level view's submit section.
function submitPanel(state, ctx) {
  const e = state.event;
  const player = loadPlayer();
  const receipt = h('div', { id: 'event-receipt' });
  const attemptsLine = h('p', { class: 'muted', id: 'attempts' });
  const submit = h('button', { type: 'button', class: 'primary', id: 'event-submit' }, 'Submit to the event');
  const join = h('button', { type: 'button', class: 'secondary', id: 'join' }, 'Join the event');
  let lastAttempts = null;
  state.on((s) => {
    const mine = s.mine(player.id);
    if (mine) lastAttempts = Math.max(lastAttempts ?? 0, mine.attempts);
    attemptsLine.textContent = attemptsWords(e, lastAttempts);
    join.hidden = !e.join_required || s.isIn(player.id);
  });
  const refused = (err) => {
    if (err.fields?.length) ctx.showError(err);
    clear(receipt, h('div', { class: 'receipt fail', role: 'alert' }, h('p', {}, h('strong', {}, 'Refused'), ' — ', problemText(err))));
  };
  submit.addEventListener('click', async () => {
    submit.disabled = true;
    submit.setAttribute('aria-busy', 'true');
    submit.textContent = 'Submitting…';
    clear(receipt);
    try {
      const res = await api.submitEvent(e.id, ctx.design());
      lastAttempts = res.attempts;
      state.joined = true;
      state.emit();
      clear(receipt, res.passed
        ? h('div', { class: 'receipt pass', role: 'status' }, h('p', {}, h('strong', {}, `Passed — score ${res.score}`), ` on the level as published (attempt ${res.attempts}).`))
        : h('div', { class: 'receipt fail', role: 'status' }, h('p', {}, h('strong', {}, 'Not passed'), ` — ${failingWords(res.evaluation)} (attempt ${res.attempts}).`)));
    } catch (err) {
      refused(err);
    } finally {
      submit.disabled = false;
      submit.setAttribute('aria-busy', 'false');
      submit.textContent = 'Submit to the event';
    }
  });
  join.addEventListener('click', async () => {
    join.disabled = true;
    try {
      await state.join();
      clear(receipt, h('div', { class: 'receipt pass', role: 'status' }, h('p', {}, 'You are in: submit when your design is ready.')));
    } catch (err) {
      refused(err);
    } finally {
      join.disabled = false;
    }
  });
  return [
    h('p', {}, 'Playing as ', h('strong', {}, player.name), ` in ${e.title}.`),
    h('p', { class: 'help' }, 'The server runs your design on the level as published and stores it as an attempt; the live standings rank each entrant\u2019s best passing score.'),
    attemptsLine,
    h('div', { class: 'toolbar' }, join, submit),
    receipt,
  ];
}

function attemptsWords(e, used) {
  const limit = e.attempt_limit ? ` of ${e.attempt_limit}` : '';
  if (used === null) return e.attempt_limit ? `You have ${e.attempt_limit} attempt${e.attempt_limit === 1 ? '' : 's'}.` : 'Attempts are not limited.';
  return `Attempts used: ${used}${limit}.`;
}

// standingsTable draws an event's standings; extra(entry) adds cells of a final board.
function standingsTable(entries, total, player, { final = false, extra = null } = {}) {
  return h('table', { class: 'board cards', id: 'event-board' },
    h('caption', {}, final ? `${total} with a final design` : `${total} with a design`),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col', class: 'num' }, 'Rank'),
      h('th', { scope: 'col' }, 'Player'),
      h('th', { scope: 'col', class: 'num' }, 'Score'),
      h('th', { scope: 'col' }, final ? 'Final run' : 'Status'),
      h('th', { scope: 'col', class: 'num' }, 'Attempts'),
      extra ? h('th', { scope: 'col' }, 'Re-run') : null)),
    h('tbody', {}, entries.map((s) => {
      const me = player && s.player_id === player.id;
      return h('tr', { class: me ? 'me' : '', 'aria-current': me ? 'true' : false, dataset: { player: s.player_id } },
        h('td', { class: 'num rank' }, String(s.rank)),
        h('th', { scope: 'row' }, h('a', { href: playerHref(s.player_id) }, s.player_name), me ? h('span', { class: 'you' }, ' (you)') : ''),
        h('td', { class: 'num', dataset: { label: 'Score' } }, s.passed ? String(s.score) : '–'),
        h('td', { dataset: { label: final ? 'Final run' : 'Status' } }, statusWords(s, final)),
        h('td', { class: 'num', dataset: { label: 'Attempts' } }, String(s.attempts)),
        extra ? extra(s) : null);
    })));
}

function statusWords(s, final) {
  if (final) {
    if (s.passed) return h('span', { class: 'pass' }, '✓ passed');
    const r = s.result;
    return h('span', { class: 'fail-word' }, '✗ ', r?.error ? `refused: ${r.error}` : r ? failingWords(r) : 'failed');
  }
  if (s.passed) return h('span', { class: 'pass' }, '✓ passing');
  return h('span', { class: 'muted' }, s.submission_id ? 'no pass yet' : 'joined');
}

// liveBoard follows an event's standings into state: a snapshot, then each change applied
// in place; it draws the board and the player's own standing from state.
function liveBoard(state, box, player, { onFinal }) {
  const e = state.event;
  const status = h('p', { class: 'live-state', role: 'status', id: 'live-state', dataset: { state: 'connecting' } });
  const body = h('div', { class: 'table-wrap' });
  const mineLine = h('p', { id: 'my-standing' });
  const news = h('p', { class: 'sr-only', 'aria-live': 'polite' });
  const title = { upcoming: 'Entrants so far', finishing: 'Standings (final runs under way)' }[e.phase] || 'Live standings';
  clear(box, h('h2', { id: 'ev-board-h' }, title), status, mineLine, body, news);
  let moved = null;
  state.on((s) => {
    const board = s.board;
    mineLine.textContent = player ? standingWords(s, player.id) : '';
    mineLine.hidden = !mineLine.textContent;
    if (!board) return;
    const joinedOnly = s.entrants ? `${s.entrants} joined; the standings list entrants once they submit a design.` : 'Nobody has joined yet.';
    clear(body, board.entries.length ? standingsTable(board.entries, board.total, player)
      : h('p', { id: 'event-board-empty' }, e.phase === 'upcoming' ? joinedOnly : 'Nobody has submitted yet. Be the first.'));
    if (moved) body.querySelector(`tr[data-player="${moved}"]`)?.classList.add('moved');
  });
  const stream = follow(api.eventStreamURL(e.id), {
    standings: (b) => {
      moved = null;
      state.setBoard(b);
      if (b.final) onFinal();
    },
    change: (c) => {
      if (c.kind === 'final') {
        onFinal();
        return;
      }
      const board = state.board;
      if (!board || !c.standing) return;
      const list = board.entries.filter((x) => x.player_id !== c.standing.player_id);
      const shown = board.entries.length >= board.total || list.length >= c.standing.rank - 1;
      if (shown && c.standing.rank <= list.length + 1) list.splice(c.standing.rank - 1, 0, c.standing);
      list.forEach((x, i) => { x.rank = i + 1; });
      moved = c.standing.player_id;
      state.setBoard({ ...board, entries: list, total: c.total, seq: c.seq });
      news.textContent = `${c.standing.player_name} is now ranked ${c.standing.rank}.`;
    },
  }, (st) => {
    status.dataset.state = st;
    status.textContent = STATE_WORDS[st];
  });
  return { close: stream.close, onFinal };
}

// finishedBoard shows the revealed chaos and the final standings, each with a re-run.
async function finishedBoard(e, box, player) {
  const standings = await api.eventStandings(e.id);
  const chaos = Array.isArray(e.hidden_chaos) ? e.hidden_chaos : [];
  const res = e.resilience;
  const chaosBox = h('section', { class: 'panel', 'aria-labelledby': 'ev-chaos-h', id: 'hidden-chaos' },
    h('h2', { id: 'ev-chaos-h' }, 'The hidden chaos, revealed'),
    chaos.length
      ? h('ul', { class: 'chaos-list' }, chaos.map((c) => h('li', {},
        h('strong', {}, `${fmt(c.at_sec)} s`), c.duration_sec ? `–${fmt(c.at_sec + c.duration_sec)} s` : '',
        ': ', describeChaos(c), ` (${chaosId(c)})`)))
      : h('p', {}, 'This event had no hidden chaos: the final runs met the level as published.'),
    res ? h('p', {}, `During each event: errors at most ${fmtPct(res.error_ceiling)}, back to normal within ${fmtSec(res.recovery_deadline_sec)} after it ends.`) : null,
    h('p', { class: 'help' }, 'Every entrant\u2019s final design ran once more against the level with this chaos added. The engine is deterministic: re-run a design and you get the same evaluation, byte for byte.'));
  // The re-run's verdict, why it happened and its charts, under the board (one at a time).
  const detail = h('section', { class: 'panel', id: 'rerun-detail', 'aria-labelledby': 'rerun-h', hidden: true });
  let detailCharts = [];
  const showDetail = (s, proof) => {
    for (const c of detailCharts) c.destroy();
    detail.hidden = false;
    const chartsBox = h('div', { class: 'charts' });
    clear(detail, h('h2', { id: 'rerun-h' }, `${s.player_name}\u2019s final run, re-run`),
      h('p', { class: 'help' }, 'The level as the final runs met it: its own chaos and the hidden chaos.'),
      renderVerdict(proof.evaluation, proof.def, proof.result, {}), h('h3', {}, 'Over time'), chartsBox);
    detail.querySelector('.next')?.remove();
    detailCharts = proof.result?.ticks?.length ? renderCharts(chartsBox, proof.result, proof.def, proof.evaluation) : [];
  };
  const rerun = (s) => {
    const out = h('span', { class: 'rerun-out', role: 'status' });
    const btn = h('button', { type: 'button', class: 'secondary rerun', 'aria-label': `Re-run ${s.player_name}'s final design` }, 'Re-run');
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      out.textContent = 'Running…';
      out.className = 'rerun-out';
      try {
        const proof = await proveRerun(e, s);
        out.replaceChildren(proof.words);
        out.classList.add(out.textContent.startsWith('✓') ? 'pass' : 'fail-word');
        if (proof.evaluation?.conditions) showDetail(s, proof);
      } catch (err) {
        out.textContent = problemText(err);
        out.classList.add('fail-word');
      } finally {
        btn.disabled = false;
      }
    });
    return h('td', { class: 'rerun-cell', dataset: { label: 'Re-run' } }, btn, ' ', out);
  };
  const parts = [h('h2', { id: 'ev-board-h' }, 'Final standings')];
  if (standings.entries.length) {
    parts.push(h('div', { class: 'table-wrap' }, standingsTable(standings.entries, standings.total, player, { final: true, extra: rerun })));
  } else {
    parts.push(h('p', {}, 'Nobody submitted a design.'));
  }
  clear(box, parts);
  box.before(chaosBox);
  box.after(detail);
}

// proveRerun runs an entrant's final design again (a dry run with the event's hidden chaos):
// {words: whether the evaluation is the stored one, evaluation, result, def: the level as
// the final runs met it}.
async function proveRerun(e, s) {
  const final = await api.eventResult(e.id, s.player_id);
  let again;
  try {
    again = await api.rerunFinal(e.id, final.level, final.version, final.design, { maxPoints: 300 });
  } catch (err) {
    // A design the level with the hidden chaos refuses was refused by the final run too.
    if (err.status === 422 && final.evaluation?.error) return { words: `✓ Refused again, as in the final run: ${err.message}` };
    throw err;
  }
  const lv = await api.level(final.level, final.version);
  const hidden = Array.isArray(final.hidden_chaos) ? final.hidden_chaos : [];
  const def = {
    ...lv.definition,
    resilience: final.resilience || lv.definition.resilience,
    run: { ...lv.definition.run, chaos: [...(lv.definition.run.chaos || []), ...hidden] },
  };
  const same = JSON.stringify(again.evaluation) === JSON.stringify(final.evaluation);
  const verdict = final.passed ? `passed, score ${final.score}` : `not passed (${failingWords(final.evaluation)})`;
  const words = same
    ? `✓ Same evaluation as the final run: ${verdict}`
    : `✗ The re-run differs from the final run (${again.evaluation?.passed ? `passed, score ${again.evaluation.score}` : 'not passed'})`;
  return { words, evaluation: again.evaluation, result: again.result, def };
}
