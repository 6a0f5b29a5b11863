// Shared by the e2e tests: the screen check every screenshot goes through (no visible text
// below 11 px, no element wider than the viewport, the canvas's labels included), Chromium's
// launch flags, and the console watch that fails a test on any script error.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const BASE = process.env.BASE_URL || 'http://127.0.0.1:8080';
export const BASE_B = process.env.BASE_URL_B || BASE;
export const ADMIN_TOKEN = process.env.ADMIN_TOKEN || '';
export const ART = process.env.ARTIFACTS || 'artifacts/e2e';
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const MIN_TEXT_PX = 11;
mkdirSync(ART, { recursive: true });

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-quic', '--disable-sync',
];

export function launch() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

// watch records the page's script errors (not the 4xx answers the tests ask for) in problems.
export function watch(p, problems) {
  p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  p.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  p.on('dialog', (d) => d.accept());
}

// snapper returns snap(name, page): a full-page screenshot named prefix-NN-name.png, then
// the screen check.
export function snapper(prefix) {
  let shot = 0;
  return async (name, p) => {
    shot += 1;
    await p.screenshot({ path: join(ART, `${prefix}-${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
    const bad = await screenProblems(p);
    assert.deepEqual(bad, [], `${name}: ${bad.join('; ')}`);
  };
}

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

