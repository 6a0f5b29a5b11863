// The screen check shared by the end-to-end tests: every visible text of at least 11 px
// (the canvases' labels included) and no element reaching beyond the viewport. It is the
// same check play.test.js makes; its own self-test there proves that it catches both.
export const MIN_TEXT_PX = 11;

// screenProblems lists every visible text smaller than MIN_TEXT_PX and every visible element
// reaching beyond the viewport (elements inside a scrolling container count as well).
export function screenProblems(p) {
  return p.evaluate((minPx) => {
    const out = [];
    const vw = document.documentElement.clientWidth;
    const visible = (el) => {
      if (el.closest('.sr-only, .skip, [hidden], .toast:not(.show)')) return false;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return false;
      const cs = getComputedStyle(el);
      return cs.visibility !== 'hidden' && cs.display !== 'none' && Number(cs.opacity) > 0;
    };
    const name = (el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`;
    for (const el of document.body.querySelectorAll('*')) {
      if (el.closest('details:not([open]) > :not(summary)')) continue;
      if (!visible(el)) continue;
      const ownText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (ownText) {
        const px = parseFloat(getComputedStyle(el).fontSize);
        if (px < minPx) out.push(`${name(el)} "${el.textContent.trim().slice(0, 30)}" is ${px}px`);
      }
      const r = el.getBoundingClientRect();
      if (r.right > vw + 1 || r.left < -1) out.push(`${name(el)} spans ${Math.round(r.left)}–${Math.round(r.right)} px of a ${vw} px viewport`);
    }
    if (document.documentElement.scrollWidth > vw + 1) out.push(`the page is ${document.documentElement.scrollWidth - vw} px wider than the viewport`);
    for (const host of document.querySelectorAll('.cy-host')) {
      if (!host.bpDiagram || !host.offsetParent) continue;
      const px = host.bpDiagram.smallestTextPx();
      if (px < minPx - 0.01) out.push(`canvas labels are ${px.toFixed(1)}px`);
    }
    return out.slice(0, 12);
  }, MIN_TEXT_PX);
}
