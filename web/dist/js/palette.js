// The palette: one button per component kind the level offers, with its count limit, the
// price of its instance types and what they buy. Drag a button onto the canvas to place
// the component there (pointer events, so mouse, pen and touch alike); press it (click,
// Enter or Space) to add it beside the others.
import { h, clear, kindLabel } from './util.js';
import { priceWords, buys } from './cost.js';

export class Palette {
  // opts: catalog; onAdd(kind, point|null) with point a page position {clientX, clientY}.
  constructor(container, opts) {
    this.el = container;
    this.opts = opts;
  }

  render(design) {
    const counts = {};
    for (const c of design.components) counts[c.type] = (counts[c.type] || 0) + 1;
    const items = this.opts.catalog.map((k) => {
      const n = counts[k.kind] || 0;
      const full = n >= k.maxCount;
      const types = k.instanceTypes.map((t) => h('li', {},
        h('strong', {}, t), ': ', priceWords(k.kind, k.prices[t]),
        buys(k, { type: k.kind, params: { instance_type: t } }, t) ? h('span', { class: 'muted' }, ` — ${buys(k, { type: k.kind, params: { instance_type: t } }, t)}`) : ''));
      const btn = h('button', {
        type: 'button', class: 'pal-item', disabled: full, dataset: { kind: k.kind },
        'aria-label': `Add ${kindLabel(k.kind)} (${n} of ${k.maxCount} used)`,
      }, h('span', { class: 'pal-name' }, kindLabel(k.kind)), h('span', { class: 'pal-count' }, `${n}/${k.maxCount}`));
      this.dragSource(btn, k.kind);
      return h('li', { class: 'pal-entry' }, btn, h('ul', { class: 'pal-types' }, types));
    });
    clear(this.el,
      h('h3', { id: 'palette-h' }, 'Palette'),
      h('p', { class: 'help' }, 'Drag onto the canvas, or press to add.'),
      h('ul', { class: 'palette', 'aria-labelledby': 'palette-h' }, items));
  }

  // dragSource makes a button draggable onto the canvas; a press without a drag adds.
  dragSource(btn, kind) {
    let start = null;
    let ghost = null;
    let dragged = false;
    btn.addEventListener('pointerdown', (ev) => {
      if (btn.disabled || ev.button !== 0) return;
      start = { x: ev.clientX, y: ev.clientY };
      dragged = false;
      btn.setPointerCapture?.(ev.pointerId);
    });
    btn.addEventListener('pointermove', (ev) => {
      if (!start) return;
      if (!dragged && Math.hypot(ev.clientX - start.x, ev.clientY - start.y) > 6) {
        dragged = true;
        ghost = h('div', { class: 'drag-ghost', 'aria-hidden': 'true' }, kindLabel(kind));
        document.body.append(ghost);
      }
      if (ghost) {
        ghost.style.left = `${ev.clientX + 8}px`;
        ghost.style.top = `${ev.clientY + 8}px`;
        ev.preventDefault();
      }
    });
    const end = (ev, cancelled) => {
      if (!start) return;
      start = null;
      ghost?.remove();
      ghost = null;
      if (dragged && !cancelled) this.opts.onAdd?.(kind, { clientX: ev.clientX, clientY: ev.clientY });
    };
    btn.addEventListener('pointerup', (ev) => end(ev, false));
    btn.addEventListener('pointercancel', (ev) => end(ev, true));
    btn.addEventListener('click', (ev) => {
      if (dragged) {
        dragged = false;
        ev.preventDefault();
        return;
      }
      this.opts.onAdd?.(kind, null);
    });
  }
}
