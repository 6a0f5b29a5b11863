// Stars: a passing run earns one, a second and a third at the scores a level sets as its
// par (definition.stars: {two, three}); a level without a par gives one for passing.
export const MAX_STARS = 3;

export function starsFor(score, par) {
  if (score == null) return 0;
  if (!par) return 1;
  return score >= par.three ? 3 : score >= par.two ? 2 : 1;
}

export const starText = (n) => '★'.repeat(n) + '☆'.repeat(MAX_STARS - n);

export const parText = (par) => (par ? `★★ at ${par.two}, ★★★ at ${par.three}` : '★ for passing');
