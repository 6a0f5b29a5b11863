// The only module that knows the API's URLs and bodies (the public API under /v1,
// documented in /openapi.json). Every function returns parsed JSON or throws ApiError.
import { loadPlayer, savePlayer } from './store.js';

// ApiError carries an RFC 9457 problem: status, code, detail and the invalid fields
// ({field, reason}, field a JSON path from the request body's root).
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem?.code || 'http_error';
    this.fields = problem?.errors || [];
    this.retryAfter = null;
  }
}

// onAuthLost is called when the server no longer knows the stored token (a server
// started afresh with an in-memory store): the player must pick a name again.
let authLost = () => {};
export function onAuthLost(f) {
  authLost = f;
}

async function call(method, path, { body, auth = false, signal, headers: extra } = {}) {
  const headers = { Accept: 'application/json', ...extra };
  const player = loadPlayer();
  if (auth && player?.token) headers.Authorization = `Bearer ${player.token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, { code: 'network', detail: 'The server cannot be reached. Is it running?' });
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const e = new ApiError(res.status, data);
    e.retryAfter = res.headers.get('Retry-After');
    if (res.status === 401 && auth && player?.token) {
      savePlayer(null);
      authLost();
      // A request that works anonymously too is sent again without the stale token.
      if (auth === 'optional') return call(method, path, { body, auth: false, signal, headers: extra });
    }
    throw e;
  }
  return data;
}

const enc = encodeURIComponent;

// levels lists the current version of every level: [{slug, version, title, difficulty}].
export async function levels() {
  const data = await call('GET', '/v1/challenges');
  return data.challenges || [];
}

// level returns one level: {slug, version, title, difficulty, definition, price_list, knobs}.
export function level(slug) {
  return call('GET', `/v1/challenges/${enc(slug)}`);
}

// simulate is a dry run: {evaluation, result, every, total_ticks}.
// At most maxPoints ticks come back (the server keeps every k-th tick of longer runs).
export function simulate(slug, version, design, { signal, maxPoints = 1200 } = {}) {
  return call('POST', '/v1/simulations', {
    body: { level: slug, version, design, max_points: maxPoints }, auth: 'optional', signal,
  });
}

// hint asks for the smallest single change that makes the design pass: {hint}.
export function hint(slug, version, design, { signal } = {}) {
  return call('POST', `/v1/challenges/${enc(slug)}/hint`, { body: { version, design }, auth: 'optional', signal });
}

// createPlayer registers a name and keeps the token in the browser.
export async function createPlayer(name) {
  const data = await call('POST', '/v1/players', { body: { name } });
  const p = { id: data.player.id, name: data.player.name, token: data.token };
  savePlayer(p);
  return p;
}

// me checks the stored token: the player, or null when there is none (or it is stale).
export async function me() {
  if (!loadPlayer()?.token) return null;
  try {
    return await call('GET', '/v1/players/me', { auth: true });
  } catch (e) {
    if (e.status === 401) return null;
    throw e;
  }
}

// submit scores a design on the level's board: {submission, improved, rank, replayed}.
// key makes a retried click idempotent: the same key replays the first answer.
export function submit(slug, version, design, key) {
  return call('POST', `/v1/challenges/${enc(slug)}/submissions`, {
    body: { version, design },
    auth: true,
    headers: { 'Idempotency-Key': key || randomKey() },
  });
}

// board reads one page of a level's leaderboard: {entries, next, prev, total}.
// opts: {aroundMe} (the page with this player in its middle), {cursor}, {limit}.
export function board(slug, { aroundMe, cursor, limit = 10 } = {}) {
  const q = new URLSearchParams();
  if (limit) q.set('limit', String(limit));
  if (aroundMe) q.set('around', 'me');
  if (cursor) q.set('cursor', cursor);
  return call('GET', `/v1/challenges/${enc(slug)}/leaderboard?${q}`, { auth: aroundMe ? true : 'optional' });
}

function randomKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

// --- Duels and ratings ----------------------------------------------------------------------
// A duel: {id, level, version, state, players: [{id, name, rating, submitted}], accept_by,
// submit_by, created_at, surprise_chaos (once finished), result (once finished): {winner,
// draw, reason, sides: [{player_id, passed, score, evaluation, design, components, ticks}]}}.

// createDuel challenges opponent (a player id or name) on a level; without one the server
// matches the player with someone of a similar rating.
export function createDuel(slug, opponent) {
  const body = { level: slug };
  if (opponent) body.opponent = opponent;
  return call('POST', '/v1/duels', { body, auth: true, headers: { 'Idempotency-Key': randomKey() } });
}

// myDuels lists the player's duels, newest first: {duels: [...]}.
export async function myDuels() {
  const data = await call('GET', '/v1/duels?player=me', { auth: true });
  return data?.duels || [];
}

export function duel(id, { signal } = {}) {
  return call('GET', `/v1/duels/${enc(id)}`, { auth: 'optional', signal });
}

export const acceptDuel = (id) => call('POST', `/v1/duels/${enc(id)}/accept`, { auth: true });
export const declineDuel = (id) => call('POST', `/v1/duels/${enc(id)}/decline`, { auth: true });

// submitDuelDesign hands in the player's design for the duel (once; the opponent's stays
// hidden until both are in or the deadline passes).
export function submitDuelDesign(id, design) {
  return call('POST', `/v1/duels/${enc(id)}/design`, { body: { design }, auth: true });
}

// duelStreamURL is the duel's Server-Sent Events stream (event "duel", data: the duel).
export const duelStreamURL = (id) => `/v1/duels/${enc(id)}/stream`;

// ratings reads one page of the ratings board: {entries: [{rank, player_id, player_name,
// rating, deviation, duels}], next, prev, total}.
export function ratings({ cursor, limit = 20 } = {}) {
  const q = new URLSearchParams();
  if (limit) q.set('limit', String(limit));
  if (cursor) q.set('cursor', cursor);
  return call('GET', `/v1/ratings?${q}`, { auth: 'optional' });
}

// player is a player's public profile, with their rating: {id, name, rating: {rating,
// deviation, duels}}.
export const player = (id) => call('GET', `/v1/players/${enc(id)}`);

// levelAt is one version of a level (a duel is played on the version it was made on).
export const levelAt = (slug, version) => call('GET', `/v1/challenges/${enc(slug)}${version ? `?version=${enc(version)}` : ''}`);
