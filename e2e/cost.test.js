// The side panel's price without a browser (cost.js and estimate.js are plain code): a
// component's part, as the panel says it, is its part of the whole design's estimate, a
// balancer's health-check probes included (a probe of each component it calls every
// interval, at the price per million probes), so the panel and the estimate never disagree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { designCost } from '../web/dist/js/cost.js';
import { componentEstimate, partWords, probeWords } from '../web/dist/js/estimate.js';

const LB_PER_HOUR = 20 / 730;
const PROBES_PER_MILLION = 0.25;
const APP_PER_HOUR = 0.055;

// CATALOG is a level's catalog as catalogOf makes it: a balancer with health checks, app
// servers.
const CATALOG = [
  {
    kind: 'load_balancer', defaultType: 'lb.standard',
    prices: { 'lb.standard': { kind: 'load_balancer', price_per_hour: LB_PER_HOUR, price_per_million_probes: PROBES_PER_MILLION } },
    params: [
      { name: 'instances', type: 'integer', default: 1 },
      { name: 'health_checks', type: 'boolean', default: true },
      { name: 'health_check_interval_sec', type: 'number', default: 5 },
    ],
  },
  {
    kind: 'app_service', defaultType: 'app.small',
    prices: { 'app.small': { kind: 'app_service', price_per_hour: APP_PER_HOUR } },
    params: [{ name: 'replicas', type: 'integer', default: 1 }],
  },
];

// design is a balancer calling backends app servers, its health checks set by lbParams.
function design(backends, lbParams = {}) {
  const apps = Array.from({ length: backends }, (_, i) => ({ id: `app-${i + 1}`, type: 'app_service' }));
  return {
    components: [{ id: 'lb', type: 'load_balancer', params: lbParams }, ...apps],
    edges: apps.map((a) => ({ from: 'lb', to: a.id })),
  };
}

test('the panel\'s price of a component is its part of the estimate, health checks included', () => {
  const cases = [
    { name: 'two backends, every 5 s', d: design(2), probesPerHour: 2 * 720 },
    { name: 'ten backends, every second', d: design(10, { health_check_interval_sec: 1 }), probesPerHour: 10 * 3600 },
    { name: 'two instances, one backend', d: design(1, { instances: 2 }), instances: 2, probesPerHour: 720 },
    { name: 'health checks off', d: design(3, { health_checks: false }), probesPerHour: 0 },
    { name: 'no backend yet', d: design(0), probesPerHour: 0 },
  ];
  for (const c of cases) {
    const est = designCost(CATALOG, c.d, 100);
    const lb = componentEstimate(CATALOG, c.d, 'lb', 100);
    const want = (c.instances || 1) * LB_PER_HOUR + c.probesPerHour * PROBES_PER_MILLION / 1e6;
    assert.ok(Math.abs(lb.fixed - want) < 1e-12, `${c.name}: the balancer's part is ${lb.fixed}/h, want ${want}/h`);
    assert.equal(partWords(lb), partWords(est.parts.find((p) => p.id === 'lb')), `${c.name}: the panel and the estimate`);
    assert.equal(lb.probes?.perHour ?? 0, c.probesPerHour, `${c.name}: probes an hour`);
    const sum = c.d.components.reduce((t, comp) => t + componentEstimate(CATALOG, c.d, comp.id, 100).fixed, 0);
    assert.ok(Math.abs(sum - est.low) < 1e-12, `${c.name}: the parts sum to ${sum}/h, the estimate is ${est.low}/h`);
  }
});

test('the panel says what the health checks add', () => {
  const cases = [
    { d: design(2), want: 'health checks included: 1,440 probes/h (2 backends, every 5 s) at $0.250 per million, $0.00036/h' },
    { d: design(10, { health_check_interval_sec: 1 }), want: 'health checks included: 36,000 probes/h (10 backends, every 1 s) at $0.250 per million, $0.009/h' },
    { d: design(1), want: 'health checks included: 720 probes/h (1 backend, every 5 s) at $0.250 per million, $0.00018/h' },
    { d: design(3, { health_checks: false }), want: '' },
  ];
  for (const c of cases) {
    assert.equal(probeWords(componentEstimate(CATALOG, c.d, 'lb', 100), PROBES_PER_MILLION), c.want);
  }
});
