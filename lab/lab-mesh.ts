/**
 * The lab mesh: six "regions" as namespaces around one router (lab profile `mesh`), each pair's
 * round trip the fibre round trip between the real regions' cities (core/regions.ts:
 * great-circle distance, light in fibre ≈ 2/3 c, route factor {@link LAB_MESH_ROUTE_FACTOR}),
 * each unordered pair on its own NFQUEUE queue so every pair's RTT is its own. The mesh plan of
 * the lab (`plans/lab-mesh.json`) is built by the same code as `pathbench plan mesh`
 * (core/mesh-schedule.ts), with the namespaces as clients and their addresses as targets.
 *
 * Pure: data, the plan and the comparison of a run's mesh summary with the emulated delays.
 */
import { type MeshEndpoint, meshLayout, meshPathId, meshPlanInput } from '../core/mesh-schedule.js';
import { fibreRttMs, greatCircleKm, regionByCode } from '../core/regions.js';
import type { MeshSummary } from '../core/run-summary.js';
import { TARGET_PORTS } from '../core/target-ports.js';

/**
 * The six regions: Frankfurt, Zurich, Dublin, London, Paris, Stockholm: 300–1,650 km apart, so
 * round trips of 4.5–24 ms (several ms each: the bare namespace hop's ~0.1 ms stays under 5 %).
 */
export const LAB_MESH_REGIONS = ['eu-central-1', 'eu-central-2', 'eu-west-1', 'eu-west-2', 'eu-west-3', 'eu-north-1'];

/** The route factor of the lab mesh: the fibreRttMs default (real cable routes ≈ 1.5× the great circle). */
export const LAB_MESH_ROUTE_FACTOR = 1.5;

/** First NFQUEUE queue of the mesh pairs (15 pairs: 31–45; the helper takes up to 16 queues). */
const FIRST_QUEUE = 31;

export interface LabMeshHost {
  /** The region code, which is also the namespace role (`<prefix><code>`). */
  role: string;
  ip: string;
  routerIp: string;
}

export const LAB_MESH_HOSTS: readonly LabMeshHost[] = LAB_MESH_REGIONS.map((code, i) => ({
  role: code,
  ip: `10.6.${i + 1}.10`,
  routerIp: `10.6.${i + 1}.1`,
}));

export interface LabMeshPair {
  /** The lab path id of the unordered pair: `<a>__<b>` in region-table order. */
  id: string;
  a: LabMeshHost;
  b: LabMeshHost;
  distanceKm: number;
  /** The emulated round trip, ms: fibre over the great circle × the route factor. */
  rttMs: number;
  queue: number;
}

/** Every unordered pair of the lab mesh with its distance, emulated round trip and queue. */
export function labMeshPairs(): LabMeshPair[] {
  const out: LabMeshPair[] = [];
  const hosts = LAB_MESH_HOSTS;
  for (let i = 0; i < hosts.length; i++)
    for (let j = i + 1; j < hosts.length; j++) {
      const distanceKm = greatCircleKm(regionByCode(hosts[i].role)!, regionByCode(hosts[j].role)!);
      out.push({
        id: `${hosts[i].role}__${hosts[j].role}`,
        a: hosts[i],
        b: hosts[j],
        distanceKm,
        rttMs: Math.round(fibreRttMs(distanceKm, LAB_MESH_ROUTE_FACTOR) * 1000) / 1000,
        queue: FIRST_QUEUE + out.length,
      });
    }
  return out;
}

/** The emulated round trip between two regions of the lab mesh (either order), ms. */
export function labMeshRttMs(from: string, to: string): number {
  const p = labMeshPairs().find(
    (x) => (x.a.role === from && x.b.role === to) || (x.a.role === to && x.b.role === from),
  );
  if (!p) throw new Error(`not a pair of the lab mesh: ${from} → ${to} (regions: ${LAB_MESH_REGIONS.join(', ')})`);
  return p.rttMs;
}

/** The lab's mesh endpoints: the region's namespace is the client, its address the target. */
export function labMeshEndpoints(prefix = 'pb-'): Record<string, MeshEndpoint> {
  return Object.fromEntries(
    LAB_MESH_HOSTS.map((h) => [
      h.role,
      { instanceId: `${prefix}${h.role}`, region: h.role, host: h.ip, port: TARGET_PORTS.tcp },
    ]),
  );
}

/**
 * The probes of the lab mesh plan: RTT by TCP connect and a 1-second iperf3 (throughput against
 * RTT), short enough for 30 pairs in a couple of minutes. The pairs of a round run side by side
 * on the lab's two CPUs and do not start at the same instant, so one pair's connects can overlap
 * another pair's iperf3, which made them read ~0.3 ms long (a CI run: 7 of 30 pairs, one 5.7 %
 * over its emulated round trip with 20 connects). 60 connects (3 s) keep such an overlap to a
 * smaller share of the samples, so it moves the p50 less.
 */
export const LAB_MESH_PROBES: readonly Record<string, unknown>[] = [
  { kind: 'tcp-connect', count: 60, intervalMs: 50, timeoutMs: 2000 },
  { kind: 'iperf3', durationSeconds: 1, port: TARGET_PORTS.iperf3 },
];

/** `plans/lab-mesh.json`: the mesh plan of the lab's six regions (what `plan mesh --endpoints` writes, short probes). */
export function labMeshPlan(prefix = 'pb-'): Record<string, unknown> {
  const endpoints = labMeshEndpoints(prefix);
  const layout = meshLayout(LAB_MESH_REGIONS.map((c) => regionByCode(c)!));
  // The lab's regression floor, as in every lab plan (docs/data.md, `regression`).
  return {
    ...meshPlanInput('lab-mesh', layout, (code) => endpoints[code], LAB_MESH_PROBES),
    regression: { minAbsoluteMs: 0.1 },
  };
}

export interface LabMeshRow {
  path: string;
  from: string;
  to: string;
  distanceKm: number;
  emulatedMs: number;
  measuredMs: number | null;
  /** measured / emulated − 1. */
  error: number | null;
}

/** Measured (the mesh summary's latency p50) against emulated round trip, per directed pair. */
export function labMeshRows(m: MeshSummary): LabMeshRow[] {
  return m.pairs.map((p) => {
    const emulatedMs = labMeshRttMs(p.from, p.to);
    return {
      path: p.path,
      from: p.from,
      to: p.to,
      distanceKm: p.distanceKm,
      emulatedMs,
      measuredMs: p.latencyMs,
      error: p.latencyMs === null ? null : p.latencyMs / emulatedMs - 1,
    };
  });
}

/** The matrix of measured / emulated round trips (ms), rows the client region, as lines of text. */
export function labMeshMatrixLines(rows: readonly LabMeshRow[]): string[] {
  const regions = LAB_MESH_REGIONS;
  const w = 16;
  const cell = (s: string) => s.padStart(w);
  const lines = [`${'from \\ to'.padEnd(14)}${regions.map(cell).join('')}`];
  for (const from of regions) {
    const cells = regions.map((to) => {
      if (from === to) return cell('·');
      const r = rows.find((x) => x.path === meshPathId(from, to));
      return cell(r ? `${r.measuredMs === null ? '–' : r.measuredMs.toFixed(2)}/${r.emulatedMs.toFixed(2)}` : '');
    });
    lines.push(`${from.padEnd(14)}${cells.join('')}`);
  }
  return lines;
}
