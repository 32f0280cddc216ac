/**
 * A mesh run's tables as the reports print them: the pair matrix and the fit lines
 * (functions/pipeline/mesh-summary.ts computes what they show).
 */
import type { MeshSummary } from '../core/run-summary.js';

const ms = (v: number | null) => (v === null ? '–' : `${v.toFixed(v < 10 ? 2 : 1)} ms`);
const gbit = (v: number | null) => (v === null ? '–' : `${(v / 1e9).toFixed(3)} Gb/s`);

/** The pair matrix: rows are client regions, columns target regions, cells "latency / throughput". */
export function meshMatrix(m: MeshSummary): string[][] {
  const head = ['from \\ to', ...m.regions];
  const rows = m.regions.map((from) => [
    from,
    ...m.regions.map((to) => {
      if (from === to) return '·';
      const p = m.pairs.find((x) => x.from === from && x.to === to);
      return p ? `${ms(p.latencyMs)} / ${gbit(p.throughputBps)}` : '';
    }),
  ]);
  return [head, ...rows];
}

/** The fit lines, as the report prints them. */
export function meshFitLines(m: MeshSummary): string[] {
  const out: string[] = [];
  const l = m.latencyVsDistance;
  out.push(
    l
      ? `latency vs distance: latency = ${(l.slope * 1000).toFixed(3)} ms per 1000 km × distance + ${l.intercept.toFixed(2)} ms, r = ${l.r.toFixed(3)} (n = ${l.n})`
      : 'latency vs distance: fewer than 2 pairs with a latency',
  );
  const t = m.throughputVsInverseRtt;
  out.push(
    t
      ? `throughput vs RTT: throughput = ${(t.slope / 1e9).toFixed(4)} Gbit / RTT(s) + ${(t.intercept / 1e9).toFixed(3)} Gb/s, r (throughput, 1/RTT) = ${t.r.toFixed(3)} (n = ${t.n})`
      : 'throughput vs RTT: fewer than 2 pairs with throughput and latency',
  );
  out.push(
    `window bound: throughput ≤ W / RTT per stream, W = ${(m.windowBytes / 1048576).toFixed(0)} MiB (Linux tcp_rmem max, the receive window autotuning can reach)`,
  );
  return out;
}
