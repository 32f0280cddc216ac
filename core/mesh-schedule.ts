/**
 * Mesh plans: every directed pair of a set of sites (regions, or the lab's namespaces named after
 * regions), with great-circle distances, and a schedule of rounds in which no site takes part in
 * two tests at once. Pure; `pathbench plan mesh` (cli/commands/plan.command.ts) and the lab mesh
 * (lab/lab-mesh.ts) build on it.
 *
 * The schedule reaches the lower bound: each round holds at most ⌊n/2⌋ disjoint pairs and there
 * are n·(n−1) directed pairs, so at least 2·(n−1) rounds for even n and 2·n for odd n. The circle
 * method (round-robin tournament) gives n−1 perfect matchings of the complete graph for even n
 * (n rounds with one site idle for odd n); running them once in each direction is the bound.
 */
import { greatCircleKm } from './regions.js';
import { TARGET_PORTS } from './target-ports.js';

export interface MeshSite {
  /** Region code (or lab name); the path ids are `<from>--<to>`. */
  code: string;
  lat: number;
  lon: number;
}

export interface MeshPair {
  from: string;
  to: string;
  distanceKm: number;
  round: number;
}

/**
 * The unordered pairs of each round of a round-robin over `n` sites (indices), by the circle
 * method: site n−1 (or a dummy, for odd n) stays put, the others rotate one step a round.
 */
export function roundRobin(n: number): [number, number][][] {
  if (!Number.isInteger(n) || n < 0) throw new Error(`roundRobin: expected a site count, got ${n}`);
  if (n < 2) return [];
  const m = n % 2 === 0 ? n : n + 1; // m − 1 is the dummy for odd n: its partner sits the round out
  const rounds: [number, number][][] = [];
  for (let r = 0; r < m - 1; r++) {
    const pairs: [number, number][] = [];
    // The fixed site meets the rotating one at position r.
    const fixedPartner = r;
    if (m - 1 < n) pairs.push(r % 2 === 0 ? [fixedPartner, m - 1] : [m - 1, fixedPartner]);
    for (let k = 1; k < m / 2; k++) {
      const a = (r + k) % (m - 1);
      const b = (r - k + (m - 1)) % (m - 1);
      if (a < n && b < n) pairs.push([a, b]);
    }
    rounds.push(pairs);
  }
  return rounds;
}

/** Fewest rounds any schedule of the complete directed mesh over n sites can use. */
export function meshRoundLowerBound(n: number): number {
  if (n < 2) return 0;
  return n % 2 === 0 ? 2 * (n - 1) : 2 * n;
}

/**
 * Every directed pair of the sites, in rounds: the round robin once as written, then once
 * reversed. Round numbers start at 0 and are consecutive.
 */
export function meshSchedule(n: number): [number, number][][] {
  const forward = roundRobin(n);
  return [...forward, ...forward.map((round) => round.map(([a, b]): [number, number] => [b, a]))];
}

export interface MeshOptions {
  minKm?: number;
  maxKm?: number;
  maxRegions?: number;
}

export interface MeshLayout {
  sites: MeshSite[];
  pairs: MeshPair[];
  rounds: number;
  /** The bound for this pair set: the most tests any one site takes part in (its in + out degree). */
  lowerBound: number;
}

/**
 * The directed pairs of the sites (the first `maxRegions`, in the order given) whose distance is
 * within [minKm, maxKm], scheduled in rounds. Once a distance filter has dropped a pair, the
 * following pairs are packed first-fit into the earliest round where both their regions are
 * free; rounds left empty are dropped and the rest renumbered, so rounds stay consecutive.
 * Without filters the rounds equal {@link meshRoundLowerBound}.
 */
export function meshLayout(all: readonly MeshSite[], opts: MeshOptions = {}): MeshLayout {
  const sites = all.slice(0, opts.maxRegions ?? all.length);
  const minKm = opts.minKm ?? 0;
  const maxKm = opts.maxKm ?? Number.POSITIVE_INFINITY;
  const pairs: MeshPair[] = [];
  const degree = new Map<string, number>();
  // Pairs in schedule order; the full mesh keeps the schedule's rounds, a filtered one is packed
  // first-fit (each pair into the earliest round where neither region is busy).
  const busy: Set<string>[] = [];
  let filtered = false;
  for (const [r, matching] of meshSchedule(sites.length).entries()) {
    for (const [a, b] of matching) {
      const from = sites[a];
      const to = sites[b];
      const distanceKm = Math.round(greatCircleKm(from, to) * 10) / 10;
      if (distanceKm < minKm || distanceKm > maxKm) {
        filtered = true;
        continue;
      }
      let round = r;
      if (filtered) {
        round = busy.findIndex((s) => !s.has(from.code) && !s.has(to.code));
        if (round === -1) round = busy.length;
      }
      while (busy.length <= round) busy.push(new Set());
      busy[round].add(from.code).add(to.code);
      pairs.push({ from: from.code, to: to.code, distanceKm, round });
      degree.set(from.code, (degree.get(from.code) ?? 0) + 1);
      degree.set(to.code, (degree.get(to.code) ?? 0) + 1);
    }
  }
  // Rounds left empty are dropped, the rest renumbered.
  const used = [...new Set(pairs.map((p) => p.round))].sort((x, y) => x - y);
  const renumber = new Map(used.map((r, i) => [r, i]));
  for (const p of pairs) p.round = renumber.get(p.round)!;
  pairs.sort((x, y) => x.round - y.round);
  const round = used.length;
  return { sites, pairs, rounds: round, lowerBound: Math.max(0, ...degree.values()) };
}

/** The path id of a directed pair. */
export function meshPathId(from: string, to: string): string {
  return `${from}--${to}`;
}

/** Where a mesh site's instance is: what the client side needs (SSM) and what the target side is reached at. */
export interface MeshEndpoint {
  instanceId: string;
  /** The region SSM reaches the instance in (`lab` in the lab). */
  region: string;
  host: string;
  port: number;
}

/**
 * The default probes of a mesh pair: RTT by TCP connect (one round trip each, 20 a pair) to the
 * target's port (the agent's TCP listener, TARGET_PORTS.tcp) and a short iperf3 (3 s, one
 * stream: about 1–10 MB between regions, the window-over-RTT bound) to iperf3's own port.
 */
export const MESH_PROBES: readonly Record<string, unknown>[] = [
  { kind: 'tcp-connect', count: 20, intervalMs: 100, timeoutMs: 2000 },
  { kind: 'iperf3', durationSeconds: 3, port: TARGET_PORTS.iperf3 },
];

/**
 * A plan (as written, docs/data.md) of a mesh layout: one path per directed pair, the client at
 * the `from` site, the target at the `to` site's host, the pair's facts in `mesh`.
 */
export function meshPlanInput(
  name: string,
  layout: MeshLayout,
  endpoint: (code: string) => MeshEndpoint,
  probes: readonly Record<string, unknown>[] = MESH_PROBES,
): Record<string, unknown> {
  return {
    name,
    defaults: { probes },
    paths: layout.pairs.map((p) => {
      const from = endpoint(p.from);
      const to = endpoint(p.to);
      return {
        id: meshPathId(p.from, p.to),
        label: `${p.from} → ${p.to} (${Math.round(p.distanceKm)} km)`,
        client: { instanceId: from.instanceId, region: from.region },
        target: { host: to.host, port: to.port },
        mesh: { from: p.from, to: p.to, distanceKm: p.distanceKm, round: p.round },
      };
    }),
    compare: [],
  };
}
