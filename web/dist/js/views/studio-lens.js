// The studio's JSON fields with their problems drawn where they are: each problem's line is
// marked inside the text and its reason written at the line's right, every problem at once,
// while the list under the field sums them up. A problem names a path (run.chaos[0].at_sec,
// as the schema check and the server say it); jsonLines finds the line where that path's key
// or item starts, and a path the text does not have (a required field missing) is shown at
// the nearest enclosing one that it does.
import { h, clear } from '../util.js';

// jsonLines maps every path of a JSON text to the line (from 1) where its key, or for an
// array's item its value, starts. The text is JSON already (JSON.parse accepted it).
export function jsonLines(text) {
  const lines = new Map();
  let i = 0;
  let line = 1;
  const space = () => {
    while (i < text.length && /\s/.test(text[i])) {
      if (text[i] === '\n') line++;
      i++;
    }
  };
  const string = () => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const value = (path) => {
    space();
    if (!lines.has(path)) lines.set(path, line);
    if (text[i] === '{') {
      i++;
      space();
      while (text[i] !== '}' && i < text.length) {
        space();
        const at = line;
        const key = string();
        const p = path ? `${path}.${key}` : key;
        lines.set(p, at);
        space();
        i++; // the colon
        value(p);
        space();
        if (text[i] === ',') i++;
      }
      i++;
    } else if (text[i] === '[') {
      i++;
      space();
      for (let n = 0; text[i] !== ']' && i < text.length; n++) {
        value(`${path}[${n}]`);
        space();
        if (text[i] === ',') i++;
        space();
      }
      i++;
    } else if (text[i] === '"') {
      string();
    } else {
      while (i < text.length && !/[\s,\]}]/.test(text[i])) i++;
    }
  };
  value('');
  return lines;
}

// lineOf is the line of a path, or of the nearest enclosing path the text has.
export function lineOf(lines, field) {
  for (let p = field; ; p = p.replace(/(\.[^.[\]]*|\[\d+\])$/, '')) {
    if (lines.has(p)) return lines.get(p);
    if (!p || !/(\.[^.[\]]*|\[\d+\])$/.test(p)) return lines.get('') || 1;
  }
}

// CodeLens wraps a textarea holding JSON: show(problems) marks each problem's line and writes
// its reason there; clear() takes them away (the text changed: what was said may no longer
// hold). The marks follow the text as it scrolls.
export class CodeLens {
  constructor(textarea) {
    this.input = textarea;
    textarea.setAttribute('wrap', 'off');
    this.layer = h('div', { class: 'code-lens-layer', 'aria-hidden': 'true' });
    this.lens = h('div', { class: 'code-lens' }, this.layer);
    this.el = h('div', { class: 'code-wrap' }, textarea, this.lens);
    textarea.addEventListener('scroll', () => this.follow());
  }

  // show marks the problems ({field, reason}) of the text now in the field; a problem with
  // warning set is advice, marked apart (a line of warnings only is a warning's colour).
  show(problems) {
    const cs = getComputedStyle(this.input);
    const lineH = parseFloat(cs.lineHeight) || 1.4 * parseFloat(cs.fontSize);
    const top = parseFloat(cs.paddingTop) + parseFloat(cs.borderTopWidth);
    let lines = new Map();
    try {
      lines = jsonLines(this.input.value);
    } catch {
      /* not JSON: its problem names a line */
    }
    const byLine = new Map();
    for (const p of problems) {
      const l = p.line || lineOf(lines, p.field);
      if (!byLine.has(l)) byLine.set(l, []);
      byLine.get(l).push(p);
    }
    this.lines = lines;
    this.byLine = byLine;
    clear(this.layer, [...byLine.entries()].map(([l, ps]) => h('div', {
      class: ['code-lens-line', ps.every((p) => p.warning) && 'warning'], style: { top: `${top + (l - 1) * lineH}px`, height: `${lineH}px` },
      dataset: { line: String(l), fields: ps.map((p) => p.field).join(' ') },
    }, h('span', { class: 'code-lens-says' }, ps.map((p) => (p.warning ? `warning: ${p.reason}` : p.reason)).join('; ')))));
    // The marks cover the text, not the scroll bar.
    this.lens.style.width = `${this.input.clientWidth + parseFloat(cs.borderLeftWidth)}px`;
    this.lens.style.height = `${this.input.clientHeight + parseFloat(cs.borderTopWidth)}px`;
    this.follow();
  }

  // lineOf is the line a problem of field is marked at.
  lineOf(field) {
    return lineOf(this.lines || new Map(), field);
  }

  clear() {
    clear(this.layer);
    this.byLine = new Map();
  }

  // reveal puts the caret at the start of a problem's line and scrolls it into view.
  reveal(field) {
    const l = this.lineOf(field);
    const text = this.input.value;
    let at = 0;
    for (let k = 1; k < l; k++) at = text.indexOf('\n', at) + 1;
    this.input.focus();
    this.input.setSelectionRange(at, at);
    const lineH = parseFloat(getComputedStyle(this.input).lineHeight) || 18;
    this.input.scrollTop = Math.max(0, (l - 3) * lineH);
    this.follow();
    // The caret may scroll the text again on the next frame.
    requestAnimationFrame(() => this.follow());
  }

  follow() {
    this.layer.style.transform = `translateY(${-this.input.scrollTop}px)`;
  }
}
