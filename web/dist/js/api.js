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
    this.title = problem?.title || '';
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

// allPages reads every page of a list route (pages of 100, following each page's next)
// and returns the first page with key holding the items of them all.
async function allPages(path, key, opts) {
  const sep = path.includes('?') ? '&' : '?';
  let first = null;
  let items = [];
  let cursor = '';
  // A list ends; the bound only stops a server that would page forever.
  for (let page = 0; page < 10000; page++) {
    const data = await call('GET', `${path}${sep}limit=100${cursor ? `&cursor=${enc(cursor)}` : ''}`, opts);
    first ??= data;
    items = items.concat(data?.[key] || []);
    cursor = data?.next || '';
    if (!cursor) break;
  }
  return { ...first, [key]: items };
}

// levelList is the current version of every level, and for a signed-in player their stars:
// {challenges: [{slug, version, title, difficulty, builtin, player_stars}], campaign_stars}
// (player_stars {stars, score, version} and campaign_stars {earned, max} are the server's).
// The list comes by pages; every page is read, so the campaign map has every level.
export async function levelList() {
  const data = await allPages('/v1/challenges', 'challenges', { auth: 'optional' });
  return { challenges: data.challenges || [], campaignStars: data.campaign_stars || null };
}

// levels lists the current version of every level: [{slug, version, title, difficulty}].
export async function levels() {
  return (await levelList()).challenges;
}

// level returns one level: {slug, version, title, difficulty, definition, price_list, knobs,
// player_stars}. version 0 (or none): the current one.
export function level(slug, version) {
  return call('GET', `/v1/challenges/${enc(slug)}${version ? `?version=${version}` : ''}`, { auth: 'optional' });
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

// --- Events ------------------------------------------------------------------------------

// events lists the events of each phase, by start time, the first 100 of each: [Event] ({id,
// title, briefing, phase, starts_at, ends_at, attempt_limit, join_required, max_entrants,
// final, entrants, level, version, finished_at}; level and version are null before the
// start; a list never carries the hidden chaos: event(id) has it once the event is over).
export async function events() {
  const phases = ['live', 'finishing', 'upcoming', 'finished'];
  const pages = await Promise.all(phases.map((phase) =>
    call('GET', `/v1/events?phase=${phase}&limit=100`, { auth: 'optional' })));
  return pages.flatMap((data) => data.events || []);
}

export function event(id) {
  return call('GET', `/v1/events/${enc(id)}`, { auth: 'optional' });
}

// joinEvent enters the player: the Event.
export function joinEvent(id) {
  return call('POST', `/v1/events/${enc(id)}/join`, { auth: true });
}

// submitEvent runs a design on the event's level as published and stores it as an attempt:
// {id, event_id, passed, score, created_at, attempts, evaluation}.
export function submitEvent(id, design) {
  return call('POST', `/v1/events/${enc(id)}/submissions`, { body: { design }, auth: true });
}

// eventStandings: {event_id, seq, final, total, entries: [{rank, player_id, player_name,
// score, passed, attempts, submission_id, achieved_at}]}.
export function eventStandings(id) {
  return call('GET', `/v1/events/${enc(id)}/standings?limit=100`);
}

// eventResult is a finished event's final run of one entrant: {level, version, hidden_chaos,
// resilience, design, passed, score, evaluation}.
export function eventResult(id, playerId) {
  return call('GET', `/v1/events/${enc(id)}/results/${enc(playerId)}`);
}

// rerunFinal runs a final design again against the event's level with its hidden chaos (a
// dry run, nothing stored): {evaluation, result, ...}.
export function rerunFinal(eventId, slug, version, design, { signal, maxPoints = 2 } = {}) {
  return call('POST', '/v1/simulations', {
    body: { level: slug, version, design, event: eventId, max_points: maxPoints }, auth: 'optional', signal,
  });
}

// publishLevel stores a level document as its slug's new version (a new slug: a new level
// the caller owns): {outcome: created | new_version | unchanged, challenge}. The server checks
// it as upload does (every field, then its starting design is run) and answers 422 with
// every problem at its path.
export function publishLevel(doc) {
  return call('PUT', `/v1/challenges/${enc(doc.slug)}`, { body: doc, auth: true });
}

// checkLevel runs every check of publishing on a level document and an optional reference
// design, storing nothing: {slug, starting_design, reference_design, cost, ready}, each design
// {passed, summary, run_cost, evaluation}; 422 with every problem under level.… and
// reference_design.….
export function checkLevel(doc, reference) {
  const body = { level: doc };
  if (reference !== undefined) body.reference_design = reference;
  return call('POST', '/v1/challenges/check', { body, auth: true });
}

// createEvent schedules an event (author of the level, or admin): the Event.
export function createEvent(body) {
  return call('POST', '/v1/events', { body, auth: true });
}

// --- Seasons and players ---------------------------------------------------------------

// seasons: [{id, name, starts_at, ends_at, current}], the latest first, every page of them.
export async function seasons() {
  const data = await allPages('/v1/seasons', 'seasons', {});
  return data.seasons || [];
}

// globalBoard reads one page of the global board (every player with a score).
export function globalBoard({ cursor, limit = 100 } = {}) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (cursor) q.set('cursor', cursor);
  return call('GET', `/v1/leaderboard?${q}`, { auth: 'optional' });
}

// seasonBoard reads one page of a season's board (the leaderboard's page shape).
export function seasonBoard(id, { aroundMe, cursor, limit = 25 } = {}) {
  const q = new URLSearchParams();
  if (limit) q.set('limit', String(limit));
  if (aroundMe) q.set('around', 'me');
  if (cursor) q.set('cursor', cursor);
  return call('GET', `/v1/seasons/${enc(id)}/leaderboard?${q}`, { auth: aroundMe ? true : 'optional' });
}

// player is a public profile: {id, name, role, created_at, stars: {levels: [{slug, version,
// score, stars}], campaign: {earned, max}}, seasons: [{season_id, name, rank, score, total}],
// events: [{event_id, title, rank, score, total, finished_at}], ...}.
export function player(id) {
  return call('GET', `/v1/players/${enc(id)}`);
}

// playerByName is the public profile of the player with that name (case and look-alike
// letters ignored), or null if nobody has it.
export async function playerByName(name) {
  try {
    return await call('GET', `/v1/players?${new URLSearchParams({ name })}`);
  } catch (err) {
    if (err.status === 404 || err.status === 422) return null;
    throw err;
  }
}

// --- Live streams ------------------------------------------------------------------------

// boardStreamURL and eventStreamURL are the Server-Sent Events streams of a level version's
// board and of an event's standings.
export const boardStreamURL = (slug, version) => `/v1/challenges/${enc(slug)}/leaderboard/stream${version ? `?version=${version}` : ''}`;
export const eventStreamURL = (id) => `/v1/events/${enc(id)}/stream?limit=100`;

function randomKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

// --- Duels and ratings ----------------------------------------------------------------------
// A duel: {id, level, version, state, players: [{id, name, rating, submitted}] (the
// challenger first), created_at, accept_by, submit_by, ended_at, seq, surprise_chaos and
// result once it has ended: {winner, draw, reason, surprise_chaos, ratings: [{player_id,
// before, after}], sides: [{player_id, passed, score, failed_at_sec, error_rate, submitted,
// design, evaluation, summary, components, ticks, every, total_ticks}]}.

// createDuel challenges opponent (a player id) on a level; without one the server matches
// the player with someone of a similar rating.
export function createDuel(slug, opponent) {
  const body = { level: slug };
  if (opponent) body.opponent = opponent;
  return call('POST', '/v1/duels', { body, auth: true });
}

// myDuels reads one page of the player's duels, newest first: {duels, next}; pass next as
// cursor for the older ones ('' after the last page).
export async function myDuels(limit = 50, cursor = '') {
  const q = new URLSearchParams({ limit: String(limit) });
  if (cursor) q.set('cursor', cursor);
  const data = await call('GET', `/v1/duels?${q}`, { auth: true });
  return { duels: data?.duels || [], next: data?.next || '' };
}

// duel reads one duel: its players see it while it is pending, anyone once it has ended.
export function duel(id, { signal } = {}) {
  return call('GET', `/v1/duels/${enc(id)}`, { auth: 'optional', signal });
}

export const acceptDuel = (id) => call('POST', `/v1/duels/${enc(id)}/accept`, { auth: true });
export const declineDuel = (id) => call('POST', `/v1/duels/${enc(id)}/decline`, { auth: true });

// submitDuelDesign hands in the player's design (once); the second design settles the
// duel in the same request.
export function submitDuelDesign(id, design) {
  return call('POST', `/v1/duels/${enc(id)}/design`, { body: { design }, auth: true });
}

// duelStream reads the duel's Server-Sent Events (event "duel", id: the duel's seq, data:
// the duel) until the server closes the stream, calling onEvent({event, id, data}) for
// each. It is read with fetch rather than EventSource because a pending duel's stream is
// its players' only, and EventSource cannot send the bearer token. lastEventId resumes
// after that event. Throws ApiError when the stream is refused.
export async function duelStream(id, { signal, lastEventId, onEvent }) {
  const headers = { Accept: 'text/event-stream' };
  const player = loadPlayer();
  if (player?.token) headers.Authorization = `Bearer ${player.token}`;
  if (lastEventId) headers['Last-Event-ID'] = lastEventId;
  let res;
  try {
    res = await fetch(`/v1/duels/${enc(id)}/stream`, { headers, signal, cache: 'no-store' });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, { code: 'network', detail: 'The server cannot be reached. Is it running?' });
  }
  if (!res.ok) {
    let problem = null;
    try {
      problem = await res.json();
    } catch {
      problem = null;
    }
    const e = new ApiError(res.status, problem);
    e.retryAfter = res.headers.get('Retry-After');
    throw e;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let ev = { event: 'message', id: null, data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let nl;
    while ((nl = buf.search(/\r\n|\n|\r/)) >= 0) {
      if (buf[nl] === '\r' && nl === buf.length - 1) break; // a CR LF split across reads
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (ev.data.length) onEvent({ event: ev.event, id: ev.id, data: ev.data.join('\n') });
        ev = { event: 'message', id: ev.id, data: [] };
        continue;
      }
      if (line.startsWith(':')) continue; // a heartbeat
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') ev.event = val;
      else if (field === 'data') ev.data.push(val);
      else if (field === 'id') ev.id = val;
    }
  }
}

// ratings reads one page of the ratings board, best first, after the page whose next is
// cursor ('' for the top): {total, next, entries: [{rank, player_id, player_name, rating,
// deviation, duels, wins, losses, draws}]}.
export function ratings({ cursor = '', limit = 20 } = {}) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (cursor) q.set('cursor', cursor);
  return call('GET', `/v1/ratings?${q}`);
}

// playerProfile is a player's public profile, with their duel rating: {id, name, rating:
// {rating, deviation, duels, wins, losses, draws}}.
export const playerProfile = (id) => call('GET', `/v1/players/${enc(id)}`);

// levelAt is one version of a level (a duel is played on the version it was made on).
export const levelAt = (slug, version) => call('GET', `/v1/challenges/${enc(slug)}${version ? `?version=${enc(version)}` : ''}`);
