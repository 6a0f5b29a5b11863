// Stars: a passing run earns one, a second and a third at the scores a level sets as its
// par (definition.stars: {two, three}); a level without a par gives one for passing. The
// server counts them (a run's evaluation.stars, a player's player_stars and campaign totals):
// the client only draws them.
import { fmt } from './util.js';

export const MAX_STARS = 3;

export const starText = (n) => '★'.repeat(n) + '☆'.repeat(MAX_STARS - n);

export const parText = (par) => (par ? `★ for passing, ★★ at a score of ${fmt(par.two)}, ★★★ at ${fmt(par.three)}` : '★ for passing');
