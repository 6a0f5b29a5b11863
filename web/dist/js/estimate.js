// The design's estimated cost per hour against the budget, redrawn on every edit: the
// fixed charges exactly, the autoscalers' ceilings and per-request charges as a range
// (see cost.js for how each is estimated).
import { h, clear, fmt, fmtCost, fmtMoney } from './util.js';
import { designCost } from './cost.js';

// partWords is one component's share of the estimate, as the estimate and the side panel
// both say it: "$0.110/h", "$0.110/h–$0.550/h", "+ ≈ $0.027/h for requests" (its per-request
// charges an hour).
export function partWords(p) {
  return `${p.fixedMax > p.fixed ? `${fmtCost(p.fixed)}–${fmtCost(p.fixedMax)}` : fmtCost(p.fixed)}${p.perUse > 0.0005 ? ` + ≈ ${fmtCost(p.perUse)} for requests` : ''}`;
}

// componentEstimate is one component's part of the design's estimate (designCost over the
// whole design: a balancer's health checks probe every component it calls), or undefined.
export function componentEstimate(catalog, design, id, rps, peak = rps) {
  return designCost(catalog, design, rps, peak).parts.find((p) => p.id === id);
}

// probeWords says what a part's health checks add to it: "health checks included: 1,440
// probes/h (2 backends, every 5 s) at $0.250 per million, $0.00036/h", or '' without any.
export function probeWords(p, pricePerMillion) {
  const pr = p?.probes;
  if (!pr) return '';
  const cost = pr.cost > 0 && pr.cost < 0.001 ? `$${pr.cost.toPrecision(2)}/h` : fmtCost(pr.cost);
  return `health checks included: ${fmt(pr.perHour)} probes/h (${fmt(pr.backends)} backend${pr.backends === 1 ? '' : 's'}, every ${fmt(pr.everySec)} s) at ${fmtMoney(pricePerMillion || 0)} per million, ${cost}`;
}

export function renderEstimate(box, catalog, design, budget, meanRps, peakAttempts = meanRps) {
  const est = designCost(catalog, design, meanRps, peakAttempts);
  const over = est.low > budget;
  const maybe = !over && est.high > budget;
  const share = Math.min(1.5, est.high / budget);
  clear(box,
    h('p', { class: ['cost-line', over ? 'bad' : maybe ? 'warn' : 'ok'] },
      h('strong', {}, 'Estimated cost: '),
      est.high - est.low > 0.0005 ? `${fmtCost(est.low)} – ${fmtCost(est.high)}` : fmtCost(est.low),
      ` of a ${fmtCost(budget)} budget`,
      over ? ' — over budget before any traffic' : maybe ? ' — may go over budget' : ' — within budget'),
    h('div', { class: 'cost-bar', role: 'img', 'aria-label': `${Math.round(est.high / budget * 100)}% of the budget` },
      h('span', { class: 'fill', style: { width: `${Math.min(100, share / 1.5 * 100)}%` } }),
      h('span', { class: 'budget-mark', style: { left: `${100 / 1.5}%` } })),
    h('p', { class: 'help' },
      est.parts.map((p, i) => [i ? ' · ' : '', `${p.id} ${partWords(p)}`]),
      est.perUse > 0.0005 || est.fixedMax > est.fixed
        ? ` (per-request charges at the level's mean ${fmt(meanRps)} rps as if every request passed through, at most ${fmt(peakAttempts)} attempts a second at the peak with retries; autoscaled pools from their minimum to their maximum)`
        : ''));
}
