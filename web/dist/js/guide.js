// The first-run guide: on the campaign's first level, four short steps that point at the
// palette, the canvas's connections, the Run button and the verdict. It is a card in the
// page's flow (never over what it points at, so nothing underneath stops working), with the
// thing it talks about outlined. Running the design moves it to the verdict whatever step it
// was at. Done or skipped, it is never shown again in this browser (localStorage bp.guide).
import { h, clear } from './util.js';
import { loadGuide, saveGuide } from './store.js';

const STEPS = [
  {
    key: 'palette',
    title: 'Build from the palette',
    text: 'These are the parts this level lets you use, each with its price and what it buys. Drag one onto the canvas, or press it to add it. A part shown greyed out is one you already have as many of as the level allows.',
  },
  {
    key: 'connect',
    title: 'Connect the boxes',
    text: 'Requests travel along the lines, from a caller to what it calls. To connect two boxes, drag the blue dot on a box\u2019s right edge onto the other box. Select a box to change its settings, like the app\u2019s replicas, in the panel beside the canvas.',
  },
  {
    key: 'run',
    title: 'Run it',
    text: 'Press Run, just below: the server plays this level\u2019s traffic through your design, and the run plays back on the canvas. The guide goes on when the run is done.',
  },
  {
    key: 'verdict',
    title: 'Read the verdict',
    text: 'Each condition is measured against its target, and \u201cWhy it happened\u201d names the component to look at.',
    // After the text, by the verdict: what to do next.
    passed: 'It passes. A run earns nothing yet: submit the design below under a player name to score it and keep its stars. Stars open the next chapters.',
    failed: 'Change the design and run again, or press Fix hint for the smallest change that passes. Once it passes, submit it below under a player name to earn stars; stars open the next chapters.',
  },
];

// shouldGuide: the guide has neither been finished nor skipped in this browser.
export const shouldGuide = () => !loadGuide();

// Guide runs the steps. targets maps a step's key to {el, place}: the element outlined and
// a function that puts the card in the page (the verdict's exists only after a run, so a
// target may be a function, called when its step starts). The run step goes on by running.
export class Guide {
  constructor(targets) {
    this.targets = targets;
    this.step = -1;
    this.card = h('section', { class: 'guide', id: 'guide', role: 'region', 'aria-labelledby': 'guide-h', 'aria-live': 'polite' });
  }

  start() {
    this.show(0);
  }

  // ran is told of every finished run and its verdict: the guide goes to the verdict.
  ran(ev) {
    this.passed = Boolean(ev?.passed);
    if (this.step >= 0 && this.step < STEPS.length - 1) this.show(STEPS.length - 1);
    else if (this.step === STEPS.length - 1) this.show(this.step); // the verdict was drawn anew
  }

  show(i) {
    this.unmark();
    this.step = i;
    const s = STEPS[i];
    const t = this.target(s.key);
    const last = i === STEPS.length - 1;
    // The run step goes on by running: its only button is Run itself, outlined.
    const next = s.key === 'run' ? '' : h('button', { type: 'button', class: 'primary', id: 'guide-next' }, last ? 'Done' : 'Next');
    if (next) next.addEventListener('click', () => (last ? this.end('done') : this.show(i + 1)));
    const skip = h('button', { type: 'button', class: 'link', id: 'guide-skip' }, 'Skip the guide');
    skip.addEventListener('click', () => this.end('skipped'));
    clear(this.card,
      h('p', { class: 'guide-step' }, `First run · step ${i + 1} of ${STEPS.length}`),
      h('h2', { id: 'guide-h' }, s.title),
      h('p', {}, s.text),
      last ? h('p', { id: 'guide-then' }, this.passed ? s.passed : s.failed) : '',
      h('div', { class: 'toolbar' }, next, skip));
    t.place(this.card);
    t.el.classList.add('guide-target');
    this.marked = t.el;
    this.card.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }

  target(key) {
    const t = this.targets[key];
    return typeof t === 'function' ? t() : t;
  }

  unmark() {
    this.marked?.classList.remove('guide-target');
    this.marked = null;
  }

  end(how) {
    this.unmark();
    this.card.remove();
    this.step = STEPS.length;
    saveGuide(how);
  }

  destroy() {
    this.unmark();
    this.card.remove();
  }
}
