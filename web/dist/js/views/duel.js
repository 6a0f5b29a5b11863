// One duel (#/duels/{id}), for its players and, once it is finished, for anyone with the
// link. While it is pending: its state, who has handed in, the countdown and the actions,
// all following the duel's stream. Once finished: the winner and why, both verdicts and
// scores, the surprise chaos revealed, and the replay, both designs side by side (stacked
// on a phone) played by one scrubber, then each side's verdict, why it happened and charts.
import { h, clear, fmt, fmtPct, toast } from '../util.js';
import * as api from '../api.js';
import { catalogOf } from '../catalog.js';
import { idleSummary } from '../words.js';
import { Diagram, chaosId, describeChaos } from '../diagram.js';
import { Playback } from '../playback.js';
import { renderVerdict, renderCharts, whyOf } from './results.js';
import { FINAL, sides, deadline, Countdown, watchDuel, stateBadge, problemText, fillStatus, playerName } from './duel-common.js';

// REASONS: how the server's decision reads (game.Reason*).
const REASONS = {
  higher_score: 'both designs passed, and the winner\u2019s scored higher',
  passed: 'only the winner\u2019s design passed',
  failed_later: 'neither design passed; the winner\u2019s held out longer before failing',
  fewer_errors: 'neither design passed, both failed at the same moment; the winner\u2019s had fewer errors',
  draw: 'the two designs came out exactly even',
  forfeit: 'the other player handed in no design before the deadline',
  no_submissions: 'neither player handed in a design before the deadline',
  unanswered: 'the challenge was not accepted in time',
  unmatched: 'no opponent was found in time',
  declined: 'the challenge was declined',
};
const reasonWords = (r) => (r ? REASONS[r] || String(r).replace(/_/g, ' ') : '');

// PRIVATE_POLL_MS: how often a spectator's page asks again whether a duel still being
// played (whose stream is its players' only) has ended.
const PRIVATE_POLL_MS = 5000;

export async function duelView(main, id) {
  let d;
  try {
    d = await api.duel(id);
  } catch (err) {
    if (err.status === 403 && err.code === 'duel_private') return waitForEnd(main, id);
    throw err;
  }
  const lv = await api.levelAt(d.level, d.version).catch(() => api.level(d.level));
  const title = lv.title;
  document.title = `Duel on ${title} · Backpressure`;
  const cleanups = [];
  const countdown = new Countdown();
  cleanups.push(() => countdown.destroy());
  const headLine = h('p', { class: 'head-links', id: 'duel-head' });
  const stateBox = h('section', { class: 'panel duel-status', 'aria-labelledby': 'duel-status-h', id: 'duel-status' });
  const resultBox = h('div', { class: 'duel-result', id: 'duel-result' });
  // Says so when the result arrives while the page is open (the state panel then hides).
  const announce = h('p', { class: 'sr-only', role: 'status', 'aria-live': 'polite' });
  clear(main, announce,
    h('header', { class: 'level-head' },
      h('p', { class: 'crumbs' }, h('a', { href: '#/duels' }, 'Duels'), ' / ', h('a', { href: `#/levels/${encodeURIComponent(d.level)}` }, title)),
      h('h1', {}, `Duel on ${title}`),
      headLine),
    stateBox, resultBox);

  let shown = null; // the id of the result on screen: a result is drawn once
  let replay = null;

  function render() {
    const names = (d.players || []).map((p) => p.name);
    clear(headLine, names.length > 1 ? `${names[0]} vs ${names[1]}` : names[0] ? `${names[0]}, opponent to be found` : '', ' · ', stateBadge(d.state),
      d.version ? ` · level version ${d.version}` : '');
    countdown.set(deadline(d));
    renderState();
    if (hasResult(d) && shown !== d.id) {
      const live = shown === null && opened;
      shown = d.id;
      replay = renderResult(resultBox, d, lv);
      cleanups.push(() => replay.destroy());
      if (live) {
        const r = d.result;
        announce.textContent = `The duel is over: ${r.winner && !r.draw ? `${playerName(d, r.winner)} wins` : 'a draw'}.`;
      }
    }
  }

  function renderState() {
    const { me, them, challenged } = sides(d);
    const parts = [h('h2', { id: 'duel-status-h' }, d.state === 'finished' ? 'Result' : 'State')];
    const status = h('p', { class: 'run-status', role: 'status', 'aria-live': 'polite' });
    const act = (label, cls, f) => {
      const b = h('button', { type: 'button', class: cls, dataset: { action: label.toLowerCase() } }, label);
      b.addEventListener('click', async () => {
        b.disabled = true;
        try {
          d = await f();
          render();
        } catch (err) {
          b.disabled = false;
          fillStatus(status, problemText(err), true);
        }
      });
      return b;
    };
    parts.push(h('p', { class: 'duel-state-line', role: 'status', 'aria-live': 'polite', id: 'duel-state' }, stateLine(d, me, them)));
    if (d.state === 'active' || d.state === 'challenged') {
      parts.push(h('ul', { class: 'duel-players' }, (d.players || []).map((p) => h('li', { dataset: { player: p.id } },
        h('strong', {}, p.id === me?.id ? `${p.name} (you)` : p.name),
        p.rating != null ? ` · rating ${fmt(Math.round(p.rating))}` : '',
        d.state === 'active' ? ` · ${p.submitted ? 'design in' : 'no design yet'}` : ''))));
    }
    if (deadline(d)) parts.push(h('p', { class: 'countdown-line' }, countdown.el));
    const actions = h('div', { class: 'toolbar duel-actions' });
    if (challenged) actions.append(act('Accept', 'primary', () => api.acceptDuel(d.id)), act('Decline', 'secondary', () => api.declineDuel(d.id)));
    if (d.state === 'active' && me && !me.submitted) {
      actions.append(h('a', { class: 'button primary', href: `#/duels/${encodeURIComponent(d.id)}/design`, dataset: { action: 'design' } }, 'Hand in a design'));
    }
    if (actions.childElementCount) parts.push(actions);
    parts.push(status);
    clear(stateBox, parts);
    stateBox.hidden = hasResult(d);
  }

  let opened = false; // the first drawing is not news
  render();
  opened = true;
  if (!FINAL.has(d.state)) {
    const stop = watchDuel(id, (next) => {
      d = next;
      render();
    });
    cleanups.push(stop);
  }
  return () => {
    for (const f of cleanups) f();
    document.title = 'Backpressure';
  };
}

// hasResult: the duel ended in a contest (finished, or forfeited by one side) and has
// sides to show.
const hasResult = (d) => (d.state === 'finished' || d.state === 'forfeited') && !!d.result?.sides?.length;

// waitForEnd is a spectator's page while the duel is still being played: it says so, and
// shows the duel once it has ended.
function waitForEnd(main, id) {
  document.title = 'Duel · Backpressure';
  clear(main,
    h('header', { class: 'level-head' }, h('p', { class: 'crumbs' }, h('a', { href: '#/duels' }, 'Duels')), h('h1', {}, 'Duel')),
    h('section', { class: 'panel', id: 'duel-private' },
      h('p', { role: 'status' }, 'This duel is still being played: only its two players can follow it until it ends. This page shows the result and the replay as soon as it is over.')));
  let stopped = false;
  let inner = null;
  let timer = null;
  const poll = async () => {
    try {
      await api.duel(id);
    } catch {
      if (!stopped) timer = setTimeout(poll, PRIVATE_POLL_MS);
      return;
    }
    if (stopped) return;
    inner = await duelView(main, id);
    if (stopped) inner();
  };
  timer = setTimeout(poll, PRIVATE_POLL_MS);
  return () => {
    stopped = true;
    clearTimeout(timer);
    inner?.();
  };
}

function stateLine(d, me, them) {
  const other = them?.name || 'your opponent';
  switch (d.state) {
    case 'challenged':
      return me && sides(d).challenged ? `${other} challenges you. Accept to play, or decline.` : `Waiting for ${me ? other : 'the challenged player'} to accept.`;
    case 'matching':
      return 'Looking for an opponent of a similar rating.';
    case 'active':
      if (!me) return 'Both players are handing in their designs.';
      return me.submitted
        ? `Your design is in. ${them?.submitted ? 'Both designs are in: the run is on.' : `Waiting for ${other}.`}`
        : `Hand in your design before the deadline. ${them?.submitted ? `${other} has handed in.` : `${other} has not handed in yet.`}`;
    case 'declined':
      return 'The challenge was declined.';
    case 'expired':
      return `The duel expired: ${reasonWords(d.result?.reason) || 'a deadline passed'}.`;
    case 'forfeited':
      return 'The duel was forfeited: a player handed in no design in time.';
    case 'finished':
      return 'Finished.';
    default:
      return d.state;
  }
}

// indexAt is the last tick at or before t seconds (ticks sorted by t).
function indexAt(ticks, t) {
  let lo = 0;
  let hi = ticks.length - 1;
  if (hi < 0) return -1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ticks[mid].t <= t + 1e-9) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// renderResult draws a finished duel into box; the returned object stops its playback.
function renderResult(box, d, lv) {
  const r = d.result;
  const def = lv.definition;
  const catalog = catalogOf(lv);
  const surprise = d.surprise_chaos || r.surprise_chaos || [];
  const chaos = [...(def.run.chaos || []), ...surprise];
  // The level as the duel ran it: its own chaos and the surprise, so both are named.
  const duelDef = { ...def, run: { ...def.run, chaos } };
  const players = d.players || [];
  // Sides in the duel's player order, the same for both players and for spectators.
  const order = players.map((p) => (r.sides || []).find((s) => s.player_id === p.id)).filter(Boolean);
  for (const s of r.sides || []) if (!order.includes(s)) order.push(s);
  const name = (s) => playerName(d, s.player_id);
  const winner = r.draw || !r.winner ? null : r.winner;

  // --- Outcome ----------------------------------------------------------------------------
  const link = `${location.origin}${location.pathname}#/duels/${encodeURIComponent(d.id)}`;
  const linkInput = h('input', { type: 'text', readonly: true, value: link, id: 'spectator-link', class: 'spectator-input', 'aria-label': 'Spectator link' });
  const copyBtn = h('button', { type: 'button', class: 'secondary', id: 'copy-spectator' }, 'Copy spectator link');
  copyBtn.addEventListener('click', async () => {
    linkInput.select();
    try {
      await navigator.clipboard.writeText(link);
      toast('Spectator link copied: anyone with it can watch this duel.');
    } catch {
      toast('Press Ctrl+C (⌘C) to copy the selected link.');
    }
  });
  const scoreRows = order.map((s) => {
    const won = winner && s.player_id === winner;
    return h('tr', { class: won ? 'winner' : '', dataset: { player: s.player_id } },
      h('th', { scope: 'row' }, name(s), won ? h('span', { class: 'win-mark' }, ' ★ winner') : ''),
      h('td', {}, verdictWords(s)),
      h('td', { class: 'num duel-score' }, s.passed && s.score != null ? String(s.score) : '–'),
      h('td', { class: 'num' }, ratingChange(d, s.player_id)));
  });
  const outcome = h('section', { class: 'panel duel-outcome', id: 'duel-outcome', 'aria-labelledby': 'duel-winner' },
    h('h2', { class: ['duel-winner', winner ? 'pass' : ''], id: 'duel-winner', tabindex: -1 },
      winner ? `${playerName(d, winner)} wins` : 'A draw'),
    reasonWords(r.reason) ? h('p', { id: 'duel-reason' }, `Why: ${reasonWords(r.reason)}.`) : null,
    h('div', { class: 'table-wrap' }, h('table', { class: 'duel-scores', id: 'duel-scores' },
      h('caption', { class: 'sr-only' }, 'Both verdicts and scores'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Player'), h('th', { scope: 'col' }, 'Verdict'),
        h('th', { scope: 'col', class: 'num' }, 'Score'), h('th', { scope: 'col', class: 'num' }, 'Rating'))),
      h('tbody', {}, scoreRows))),
    unratedWords(d),
    h('div', { class: 'spectate' },
      h('p', { class: 'help' }, 'Anyone with this link can watch the replay, without a player name.'),
      h('div', { class: 'spectate-row' }, linkInput, copyBtn)));

  // --- The surprise -----------------------------------------------------------------------
  const surpriseBox = h('section', { class: 'panel duel-surprise', id: 'duel-surprise', 'aria-labelledby': 'surprise-h' },
    h('h2', { id: 'surprise-h' }, 'The surprise chaos, revealed'),
    surprise.length
      ? [h('p', { class: 'help' }, 'Neither player knew of it before the end: it struck both designs at the same moment.'),
        h('ul', { class: 'chaos-list' }, surprise.map((e) => h('li', { dataset: { event: chaosId(e) } },
          h('span', { 'aria-hidden': 'true' }, '⚡ '), h('strong', {}, `${fmt(e.at_sec)} s`),
          e.duration_sec ? `–${fmt(e.at_sec + e.duration_sec)} s` : '', ': ', describeChaos(e), ` (${chaosId(e)})`)))]
      : h('p', {}, (def.run.chaos || []).length
        ? 'This duel had no surprise beyond the level\u2019s own chaos.'
        : 'This level has no chaos, so a duel on it has no surprise: both designs met the same traffic.'));

  // --- Replay: both canvases, one scrubber -----------------------------------------------
  const stage = h('div', { class: 'duel-stage' });
  const playbackBox = h('div', { class: 'duel-playback' });
  const replay = h('section', { class: 'panel duel-replay', id: 'duel-replay', 'aria-labelledby': 'replay-h' },
    h('h2', { id: 'replay-h' }, 'Replay'),
    h('p', { class: 'help' }, 'Both runs, tick by tick: one scrubber moves both designs.'),
    stage, playbackBox);
  const columns = h('div', { class: 'duel-columns' });
  const details = h('section', { class: 'panel duel-details', 'aria-labelledby': 'details-h' },
    h('h2', { id: 'details-h' }, 'Both verdicts and timelines'), columns);
  clear(box, outcome, surpriseBox, replay, details);

  const views = order.map((s, k) => {
    const result = {
      components: s.components || [],
      ticks: s.ticks || [],
      summary: s.summary,
    };
    const ev = s.evaluation || { passed: s.passed, score: s.score, conditions: [] };
    const won = winner && s.player_id === winner;
    const canvasBox = h('div', { class: 'duel-canvas' });
    const live = h('p', { class: 'live-events', 'aria-live': 'off' });
    const side = h('div', { class: 'duel-side', dataset: { side: String(k), player: s.player_id } },
      h('h3', {}, name(s), ' ', s.passed
        ? h('span', { class: 'pass' }, `✓ ${s.score ?? ''}`)
        : h('span', { class: 'fail' }, s.submitted === false ? '✗ no design' : '✗ failed'), won ? h('span', { class: 'win-mark' }, ' ★') : ''),
      s.design ? canvasBox : h('p', { class: 'muted no-design' }, 'No design was handed in.'), live);
    stage.append(side);
    let diagram = null;
    if (s.design) {
      diagram = new Diagram(canvasBox, {
        editable: false,
        caption: `${name(s)}'s design (read only)`,
        summary: (c) => idleSummary(c, catalog),
      });
      // A design shown read only keeps dagre's layout: no "Auto layout" (whose id must stay
      // unique on the page), and the view tools stay clear of the users box.
      canvasBox.querySelector('#auto-layout')?.remove();
      diagram.setDesign(s.design, {}, chaos);
      diagram.highlight(whyOf(ev).map((w) => w.component));
    }

    const col = h('div', { class: 'duel-col', dataset: { side: String(k) } }, h('h3', {}, name(s)));
    columns.append(col);
    if (!s.evaluation && !s.design) {
      col.append(h('p', {}, 'No design was handed in, so nothing ran.'));
    } else if (!s.evaluation) {
      col.append(h('p', {}, 'The other player handed in no design, so neither design ran.'));
    } else if (ev.conditions?.length) {
      const v = renderVerdict(ev, duelDef, result, { onComponent: (cid) => diagram?.select(cid) });
      v.querySelector('.next')?.remove();
      for (const el of v.querySelectorAll('[id]')) el.id = `side${k}-${el.id}`;
      col.append(v);
    } else {
      col.append(h('p', {}, s.passed ? `Passed with a score of ${s.score}.` : 'Failed.'));
    }
    const chartsBox = h('div', { class: 'charts' });
    col.append(h('h4', {}, 'Over time'), chartsBox);
    const charts = result.ticks.length ? renderCharts(chartsBox, result, duelDef, ev) : [];
    return { s, result, diagram, live, charts, prev: new Set() };
  });

  // The scrubber walks the longer run; the other side shows its tick at the same time.
  const master = views.reduce((a, v) => (v.result.ticks.length > (a?.length || 0) ? v.result.ticks : a), null) || [];
  const tickSec = master.length > 1 ? master[1].t - master[0].t : 1;
  const playback = new Playback({
    ticks: master,
    tickSec,
    onTick: (i) => {
      const t = master[i]?.t ?? 0;
      for (const v of views) {
        const j = indexAt(v.result.ticks, t);
        const tick = j >= 0 ? v.result.ticks[j] : null;
        v.diagram?.showTick(tick, v.result.components);
        for (const c of v.charts) c.setNow(t, j);
        const active = new Set(tick?.events || []);
        const names = chaos.filter((e) => active.has(chaosId(e)));
        clear(v.live, names.length
          ? [h('span', { class: 'bolt', 'aria-hidden': 'true' }, '⚡'), ' ', names.map((e) => `${chaosId(e)}: ${describeChaos(e)}`).join(' · ')]
          : '');
        v.live.classList.toggle('active', names.length > 0);
      }
    },
  });
  playback.el.setAttribute('aria-label', 'Playback of both runs');
  playback.el.id = 'duel-scrubber';
  clear(playbackBox, master.length ? playback.el : h('p', { class: 'muted' }, 'This duel kept no ticks to play back.'));
  if (master.length) playback.seek(0);
  return {
    playback,
    destroy() {
      playback.destroy();
      for (const v of views) {
        for (const c of v.charts) c.destroy();
        v.diagram?.destroy();
      }
    },
  };
}

// verdictWords is one side's verdict in the scores table.
function verdictWords(s) {
  if (s.submitted === false) return h('span', { class: 'fail' }, '✗ no design');
  if (s.passed) return h('span', { class: 'pass' }, '✓ passed');
  if (!s.evaluation) return h('span', { class: 'muted' }, 'not run');
  return [h('span', { class: 'fail' }, '✗ failed'), s.failed_at_sec != null ? ` at ${fmt(s.failed_at_sec)} s` : '',
    s.error_rate != null ? `, ${fmtPct(s.error_rate)} errors` : ''];
}

// UNRATED says why a duel left a player's rating where it was (game.RatingChange.Unrated):
// of both players when both are left for one reason, else of one, whose opponent is other.
const UNRATED = {
  provisional_opponent: {
    both: 'both players are still new, and a player\u2019s results move ratings only once they have met 5 opponents',
    one: (other) => `${other} is still new, and a player\u2019s results move ratings only once they have met 5 opponents`,
  },
  repeat_opponent: {
    both: 'these two players\u2019 ratings already moved against each other in the last day, and they move once a day at most',
    one: (other) => `a rating moves once a day at most against one opponent, and it already moved against ${other}`,
  },
};

// unratedWords says why the duel moved a player's rating by nothing, or null when it moved
// every rating.
function unratedWords(d) {
  const changes = d.result?.ratings || [];
  const unrated = changes.filter((ch) => ch.unrated);
  if (!unrated.length) return null;
  const words = (ch) => UNRATED[ch.unrated] || { both: ch.unrated.replace(/_/g, ' '), one: () => ch.unrated.replace(/_/g, ' ') };
  const text = unrated.length === changes.length && unrated.every((ch) => ch.unrated === unrated[0].unrated)
    ? words(unrated[0]).both
    : unrated.map((ch) => {
      const other = (d.players || []).find((x) => x.id !== ch.player_id);
      return `${playerName(d, ch.player_id)}: ${words(ch).one(other ? playerName(d, other.id) : 'the opponent')}`;
    }).join('; ');
  return h('p', { class: 'help', id: 'duel-unrated' }, `Ratings unchanged: ${text}.`);
}

// ratingChange is how the duel moved a player's rating, when the duel says.
function ratingChange(d, pid) {
  const p = (d.players || []).find((x) => x.id === pid);
  const ch = (d.result?.ratings || []).find((x) => x.player_id === pid);
  const before = ch?.before;
  const after = ch?.after;
  if (ch?.unrated && after != null) return `${fmt(Math.round(after))} (unrated)`;
  if (before != null && after != null) {
    const delta = Math.round(after - before);
    return `${fmt(Math.round(after))} (${delta >= 0 ? '+' : '−'}${Math.abs(delta)})`;
  }
  return p?.rating != null ? fmt(Math.round(p.rating)) : '–';
}
