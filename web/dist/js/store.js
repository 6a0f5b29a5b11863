// What the browser keeps between visits: the player's identity (name and token), the
// last design per level and its boxes' places and lines' bends on the canvas, the best
// result seen per level, and whether the first-run guide is over. Everything is in
// localStorage under "bp." keys; a browser that refuses storage simply forgets.

const get = (key) => {
  try {
    const v = localStorage.getItem(`bp.${key}`);
    return v === null ? null : JSON.parse(v);
  } catch {
    return null;
  }
};
const set = (key, value) => {
  try {
    if (value === null || value === undefined) localStorage.removeItem(`bp.${key}`);
    else localStorage.setItem(`bp.${key}`, JSON.stringify(value));
  } catch {
    /* storage full or refused: nothing to do */
  }
};

// player is {id, name, token} or null.
export const loadPlayer = () => get('player');
export const savePlayer = (p) => set('player', p);

export const loadDesign = (slug) => get(`design.${slug}`);
export const saveDesign = (slug, design) => set(`design.${slug}`, design);
export const forgetDesign = (slug) => set(`design.${slug}`, null);

// progress is {passed, best, rank} as last seen for this player on this level.
export const loadProgress = (slug) => get(`progress.${slug}`);
export function saveProgress(slug, update) {
  const cur = get(`progress.${slug}`) || {};
  const next = { ...cur, ...update };
  if (cur.best != null && update.best != null) next.best = Math.max(cur.best, update.best);
  next.passed = Boolean(cur.passed || update.passed);
  set(`progress.${slug}`, next);
  return next;
}
// layout is the player's arrangement of the canvas: {pos, bends}, where they put each box
// ({id: {x, y}}) and how the lines between them bend ({'from>to': {points, ends}}, the
// diagram's bends()). It is kept apart from the design, which the server takes exactly as
// the level format defines it. A layout kept as places alone ({id: {x, y}}) has no bends.
export function loadLayout(slug) {
  const v = get(`layout.${slug}`);
  if (!v || typeof v !== 'object') return { pos: {}, bends: {} };
  if (v.pos && typeof v.pos === 'object') return { pos: v.pos, bends: v.bends || {} };
  return { pos: v, bends: {} };
}
export const saveLayout = (slug, pos, bends = {}) => set(`layout.${slug}`, { pos, bends });

// guide is how the first-run guide ended in this browser: 'done', 'skipped', or null if it
// has not (it is shown until it has).
export const loadGuide = () => get('guide');
export const saveGuide = (how) => set('guide', how);

export const loadSpeed = () => get('speed');
export const saveSpeed = (s) => set('speed', s);

// forgetProgress drops every level's progress (the server no longer knows the player).
export function forgetProgress() {
  try {
    for (const k of Object.keys(localStorage)) if (k.startsWith('bp.progress.')) localStorage.removeItem(k);
  } catch {
    /* nothing kept, nothing to forget */
  }
}
