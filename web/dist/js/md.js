// Level briefings are Markdown: marked renders them, DOMPurify keeps only safe HTML.
import { marked } from '../vendor/marked/marked.esm.js';
import DOMPurify from '../vendor/dompurify/purify.es.mjs';

// markdown returns an element holding the rendered, sanitised Markdown. Headings are
// shifted down two levels so that a briefing's "# Title" sits under the page's h1 and h2.
export function markdown(text, className = 'md') {
  const html = marked.parse(String(text || ''), { gfm: true, breaks: false, async: false });
  const div = document.createElement('div');
  div.className = className;
  div.innerHTML = DOMPurify.sanitize(html, { USE_PROFILES: { html: true } });
  for (const hd of [...div.querySelectorAll('h1,h2,h3,h4')].reverse()) {
    const level = Math.min(6, Number(hd.tagName[1]) + 2);
    const n = document.createElement(`h${level}`);
    n.append(...hd.childNodes);
    hd.replaceWith(n);
  }
  for (const a of div.querySelectorAll('a[href]')) {
    a.rel = 'noopener noreferrer';
  }
  return div;
}
