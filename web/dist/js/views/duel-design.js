// Handing in a design for a duel (#/duels/{id}/design): the level's own page (briefing,
// palette, canvas, side panel, dry runs and the fix hint, on the design this browser keeps
// for the level) under a banner with the opponent, whether they have handed in, and the
// countdown, which follow the duel's stream; its submit panel hands the design in to the
// duel instead of the leaderboard.
import { h, clear } from '../util.js';
import * as api from '../api.js';
import { levelView } from './level.js';
import { FINAL, sides, deadline, Countdown, watchDuel, stateBadge, problemText, fillStatus } from './duel-common.js';

export async function duelDesignView(main, id) {
  let d = await api.duel(id);
  // Only a level with chaos has a surprise: the banner says which this is.
  const hasChaos = await api.level(d.level, d.version).then((lv) => (lv.definition?.run?.chaos || []).length > 0, () => true);
  const href = `#/duels/${encodeURIComponent(id)}`;
  const countdown = new Countdown();
  const bannerText = h('div', { class: 'duel-banner-text' });
  const banner = h('section', { class: 'panel duel-banner', 'aria-labelledby': 'duel-banner-h', id: 'duel-banner' },
    h('h2', { id: 'duel-banner-h' }, 'Duel'), bannerText, h('p', { class: 'countdown-line' }, countdown.el));
  let submitBox = null;
  let design = null;
  let handedIn = false;

  function showBanner() {
    const { me, them } = sides(d);
    countdown.set(deadline(d));
    const theirs = them ? (them.submitted ? `${them.name} has handed in a design.` : `${them.name} has not handed in a design yet.`) : '';
    let lead;
    if (!me) lead = 'You are not playing in this duel.';
    else if (d.state === 'finished') lead = ['The duel is over: ', h('a', { href, id: 'duel-result-link' }, 'see the result and the replay'), '.'];
    else if (FINAL.has(d.state)) lead = ['This duel ended without a result (', stateBadge(d.state), '). ', h('a', { href }, 'Back to the duel')];
    else if (d.state !== 'active') lead = ['The duel is not open for designs yet (', stateBadge(d.state), ').'];
    else if (me.submitted || handedIn) lead = ['Your design is in. ', theirs, ' ', h('a', { href }, 'Follow the duel')];
    else lead = [`Against ${them?.name || 'your opponent'}: build your design on this level, run it as often as you like, then hand it in below. `, theirs];
    const open = me && d.state === 'active' && !me.submitted && !handedIn;
    clear(bannerText, h('p', { class: 'duel-lead', role: 'status', 'aria-live': 'polite' }, lead),
      open ? h('p', { class: 'help' }, hasChaos
        ? 'A run here has the level\u2019s own chaos only: the duel adds one surprise event that neither of you knows until the end.'
        : 'This level has no chaos, so the duel has no surprise: both designs meet the same traffic.') : null,
      open ? h('p', {}, h('button', { type: 'button', class: 'link', onclick: goToSubmit }, 'Go to “Hand in this design”')) : null);
    renderSubmit();
  }

  function goToSubmit() {
    submitBox?.scrollIntoView({ block: 'center', behavior: 'smooth' });
    submitBox?.querySelector('#duel-submit')?.focus({ preventScroll: true });
  }

  function renderSubmit() {
    if (!submitBox) return;
    const { me } = sides(d);
    const parts = [h('h2', { id: 'sub-h' }, 'Hand in for the duel')];
    const status = h('p', { class: 'run-status', role: 'status', 'aria-live': 'polite', id: 'duel-submit-status' });
    if (me && d.state === 'active' && !me.submitted && !handedIn) {
      const btn = h('button', { type: 'button', class: 'primary', id: 'duel-submit' }, 'Hand in this design');
      btn.addEventListener('click', async () => {
        btn.disabled = true;
        btn.setAttribute('aria-busy', 'true');
        fillStatus(status, 'Handing in…');
        try {
          const next = await api.submitDuelDesign(id, design());
          handedIn = true;
          if (next && next.id) d = next;
          showBanner();
        } catch (err) {
          btn.disabled = false;
          btn.setAttribute('aria-busy', 'false');
          fillStatus(status, problemText(err), true);
        }
      });
      parts.push(h('p', { class: 'help' }, 'The design as it stands on the canvas. Once handed in it cannot change, and your opponent sees it only when the duel is over.'),
        h('div', { class: 'toolbar' }, btn), status);
    } else if (me && (me.submitted || handedIn)) {
      parts.push(h('p', { id: 'duel-submitted' }, 'Handed in. ', h('a', { href }, 'Follow the duel'), ' to see the result as soon as it is in.'));
    } else {
      parts.push(h('p', {}, h('a', { href }, 'Back to the duel')));
    }
    clear(submitBox, parts);
  }

  showBanner();
  const stop = watchDuel(id, (next) => {
    d = next;
    showBanner();
  });
  let cleanup;
  try {
    cleanup = await levelView(main, d.level, {
      banner,
      submit: (box, getDesign) => {
        submitBox = box;
        design = getDesign;
        renderSubmit();
      },
    });
  } catch (err) {
    stop();
    countdown.destroy();
    throw err;
  }
  document.title = `Duel design · ${document.title}`;
  return () => {
    stop();
    countdown.destroy();
    cleanup?.();
  };
}
