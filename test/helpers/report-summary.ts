import type { Summary } from '../../core/run-summary.js';

/** Two tcp-connect paths (labels a spreadsheet would run as formulas) and one comparison, for the renderings' tests. */
export function summary(): Summary {
  const result = (p50: number) => ({
    probe: 'tcp-connect',
    metric: 'connect_rtt_ms',
    unit: 'ms',
    n: 300,
    loss: 0,
    p50,
    p95: p50 + 0.2,
    p99: p50 + 0.4,
    p999: p50 + 0.5,
    max: p50 + 0.5,
    flags: ['thin-tail:p99', 'thin-tail:p999'],
    ci95: {
      p50: [p50 - 0.01, p50 + 0.02] as [number, number],
      p95: [p50 + 0.15, p50 + 0.25] as [number, number],
      p99: [p50 + 0.3, p50 + 0.5] as [number, number],
    },
    tail: { p50: 150, p95: 15, p99: 3, p999: 0 },
    trials: { count: 3, p50_spread_pct: 1.25, p99_spread_pct: 17 },
  });
  return {
    runId: 'r1',
    status: 'succeeded',
    paths: [
      { id: 'C', label: '=cmd|calc', status: 'succeeded', steps: [], results: [result(2.5)] },
      { id: 'D', label: '@peering', status: 'succeeded', steps: [], results: [result(4.6)] },
    ],
    comparisons: [
      {
        path: 'D',
        baseline: 'C',
        probe: 'tcp-connect',
        metric: 'connect_rtt_ms',
        unit: 'ms',
        p50: { diff: 2.1, pct: 84, ci95: [2.05, 2.16], verdict: 'slower' },
        p95: { diff: 2.1, pct: 77.8, ci95: [1.9, 2.3], verdict: 'slower' },
        p99: { diff: -0.05, pct: -1.7, ci95: [-0.4, 0.3], verdict: 'no clear difference' },
      },
    ],
  };
}
