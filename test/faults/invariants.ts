/**
 * The one invariant checker of the fault suite. After a case (its runs, stops, cleanups and
 * reruns) it checks, over every run id of the case:
 *   - every sample the agent measured (counted from the agent's own raw files as they were
 *     handed to the store) is in the store exactly once: per raw file, the sample file's
 *     records, the manifest's count and the DuckDB rows agree with the measured count, and no
 *     (path, probe, trial, metric, seq) appears twice in the query;
 *   - every route is back to its original target (the in-memory EC2 tables equal their state
 *     before the first run);
 *   - the run lock is free.
 * Each check appends one row to the suite's table (test/faults/table.ts).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { keys } from '../../core/keys.js';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { silentLogger } from '../../functions/log.js';
import type { ObjectStore } from '../../functions/ports.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { FileLock } from '../../local/file-lock.js';
import type { AwsWorld, WorldRoute } from './aws-world.js';
import type { Faults } from './inject.js';

/** A raw file of a probe trial: raw/path=<p>/run=<id>/[client=<instance>/]<probe>/<trial>.<ext>. */
const RAW = /^raw\/path=([^/]+)\/run=([^/]+)\/(?:client=[^/]+\/)?([^/]+)\/(\d+)\.(jsonl|json)$/;

/**
 * Samples in one raw file as the agent wrote it: a JSONL line that is a complete JSON object is
 * one sample (a damaged or cut line is not); an iperf3 JSON has one throughput sample per
 * interval with a sum.
 */
export function measuredIn(ext: string, text: string): number {
  if (ext === 'jsonl') {
    return text.split('\n').filter((l) => {
      try {
        const o = JSON.parse(l);
        return o !== null && typeof o === 'object' && !Array.isArray(o);
      } catch {
        return false;
      }
    }).length;
  }
  try {
    const doc = JSON.parse(text) as { intervals?: { sum?: { bits_per_second?: number } }[] };
    return (doc.intervals ?? []).filter((i) => typeof i.sum?.bits_per_second === 'number').length;
  } catch {
    return 0;
  }
}

/** Which stored records stand for one measured sample (the unit measuredIn counts). */
function countsAsSample(kind: string, r: SampleRecord): boolean {
  if (kind === 'iperf3') return r.metric === 'throughput_bps' && r.ok && r.value !== null;
  return true;
}

/**
 * The store the runner uploads through: `raw.put` faults (damage to what the agent wrote) apply
 * first, then the upload is recorded as measured, then `store.*` faults apply to the real store.
 */
export class RecordingStore implements ObjectStore {
  constructor(
    private readonly inner: ObjectStore,
    private readonly faults: Faults,
    /** Raw key → samples the agent measured in it (the last upload of a key wins, as in S3). */
    readonly measured: Map<string, number>,
  ) {}
  get location(): string {
    return this.inner.location;
  }
  async put(key: string, body: string | Uint8Array, contentType?: string): Promise<void> {
    let b = body;
    const m = RAW.exec(key);
    if (m) {
      b = await this.faults.call('raw.put', [key, body], async (a) => a[1] as string | Uint8Array);
      this.measured.set(key, measuredIn(m[5], typeof b === 'string' ? b : Buffer.from(b).toString('utf8')));
    }
    await this.faults.call('store.put', [key, b, contentType], (a) =>
      this.inner.put(a[0] as string, a[1] as string | Uint8Array, a[2] as string | undefined),
    );
  }
  get(key: string) {
    return this.faults.call('store.get', [key], (a) => this.inner.get(a[0] as string));
  }
  getText(key: string) {
    return this.faults.call('store.getText', [key], (a) => this.inner.getText(a[0] as string));
  }
  list(prefix: string) {
    return this.faults.call('store.list', [prefix], (a) => this.inner.list(a[0] as string));
  }
  delete(key: string) {
    return this.faults.call('store.delete', [key], (a) => this.inner.delete(a[0] as string));
  }
}

export interface Outcome {
  measured: number;
  stored: number;
  routesLeftSwapped: number;
  locksHeld: number;
  problems: string[];
}

export interface CheckInput {
  dir: string;
  runIds: string[];
  measured: Map<string, number>;
  aws?: AwsWorld;
  routesBefore?: Record<string, WorldRoute[]>;
}

export async function checkInvariants(input: CheckInput): Promise<Outcome> {
  const store = new DirStore(input.dir);
  const problems: string[] = [];
  let measured = 0;
  let stored = 0;
  const query = await DuckDbQueryEngine.open(input.dir);
  try {
    for (const runId of input.runIds) {
      // Read as the tools read it: the index and every path's own object.
      let manifest: RunManifest | undefined;
      try {
        manifest = await readManifest(store, runId);
      } catch (e) {
        problems.push(`${runId}: the manifest cannot be read: ${e instanceof Error ? e.message : String(e)}`);
      }
      // The store's sample files of this run, by (path, probe, trial).
      const files = (await store.list('samples/')).filter((k) => k.includes(`/run=${runId}/`));
      const records = new Map<string, SampleRecord[]>();
      for (const k of files) {
        for (const line of ((await store.getText(k)) ?? '').split('\n')) {
          if (!line.trim()) continue;
          const r = JSON.parse(line) as SampleRecord;
          const id = `${r.path_id}/${r.probe}/${r.trial}`;
          records.set(id, [...(records.get(id) ?? []), r]);
        }
      }
      // Measured vs stored, per raw file.
      for (const [rawKey, n] of input.measured) {
        const m = RAW.exec(rawKey);
        if (!m || m[2] !== runId) continue;
        const [, pathId, , probe, trial] = m;
        const recs = records.get(`${pathId}/${probe}/${Number(trial)}`) ?? [];
        const kind = recs[0]?.kind ?? (m[5] === 'json' ? 'iperf3' : 'tcp-connect');
        // A raw file with nothing in it may be recorded as one failed record (its absence shows as loss): not a sample.
        const absence = n === 0 && recs.length === 1 && recs[0].ok === false && recs[0].value === null;
        const got = absence ? 0 : recs.filter((r) => countsAsSample(kind, r)).length;
        measured += n;
        stored += Math.min(got, n);
        if (got !== n) problems.push(`${rawKey}: ${n} measured, ${got} stored`);
      }
      // Store, manifest and query agree.
      const rows = (await query
        .query(
          'SELECT path_id, probe, trial, metric, seq, count(*) AS n FROM samples WHERE run_id = ? GROUP BY ALL',
          [runId],
          'faults-invariants',
        )
        .catch((e: Error) => {
          problems.push(`${runId}: the samples query fails: ${e.message.split('\n')[0]}`);
          return [];
        })) as { path_id: string; probe: string; trial: number; metric: string; seq: number; n: number | bigint }[];
      const dup = rows.filter((r) => Number(r.n) > 1);
      if (dup.length) problems.push(`${runId}: ${dup.length} (path, probe, trial, metric, seq) rows counted twice`);
      const queried = new Map<string, number>();
      for (const r of rows) {
        const id = `${r.path_id}/${r.probe}`;
        queried.set(id, (queried.get(id) ?? 0) + Number(r.n));
      }
      const inFiles = new Map<string, number>();
      for (const [id, recs] of records) {
        const pp = id.split('/').slice(0, 2).join('/');
        inFiles.set(pp, (inFiles.get(pp) ?? 0) + recs.length);
      }
      for (const id of new Set([...queried.keys(), ...inFiles.keys()])) {
        if ((queried.get(id) ?? 0) !== (inFiles.get(id) ?? 0)) {
          problems.push(`${runId} ${id}: ${inFiles.get(id) ?? 0} records in the store, ${queried.get(id) ?? 0} rows`);
        }
      }
      for (const p of manifest?.paths ?? []) {
        for (const pr of p.probes ?? []) {
          const id = `${p.id}/${pr.probe}`;
          if (pr.samples !== (inFiles.get(id) ?? 0)) {
            problems.push(`${runId} ${id}: manifest counts ${pr.samples}, the store holds ${inFiles.get(id) ?? 0}`);
          }
        }
      }
      // A path called succeeded with samples has its Parquet copy (collect writes it first).
      for (const p of manifest?.paths ?? []) {
        const hasSamples = [...inFiles.keys()].some((k) => k.startsWith(`${p.id}/`));
        if (p.status !== 'succeeded' || !hasSamples) continue;
        if ((await store.list(keys.parquetPrefix(p.id, runId))).length === 0)
          problems.push(`${runId} ${p.id}: succeeded with samples but no Parquet copy`);
      }
      if (manifest?.status === 'running') problems.push(`${runId}: manifest still says running`);
      // A checker that saw no upload cannot vouch for anything (e.g. the raw key layout changed).
      const counted = manifest?.paths.reduce((n, p) => n + (p.probes ?? []).reduce((k, x) => k + x.samples, 0), 0) ?? 0;
      const seen = [...input.measured.keys()].some((k) => RAW.exec(k)?.[2] === runId);
      if (counted > 0 && !seen) problems.push(`${runId}: ${counted} samples stored but no raw upload was recorded`);
    }
  } finally {
    query.close();
  }
  let routesLeftSwapped = 0;
  if (input.aws && input.routesBefore) {
    const now = input.aws.snapshot();
    for (const [table, before] of Object.entries(input.routesBefore)) {
      const after = now[table] ?? [];
      const dests = new Set([...before, ...after].map((r) => r.DestinationCidrBlock));
      for (const d of dests) {
        const a = norm(before.find((r) => r.DestinationCidrBlock === d));
        const b = norm(after.find((r) => r.DestinationCidrBlock === d));
        if (a !== b) {
          routesLeftSwapped++;
          problems.push(`route ${table} ${d}: was ${a}, is ${b}`);
        }
      }
    }
  }
  const held = await new FileLock(input.dir, silentLogger).current();
  const locksHeld = held ? 1 : 0;
  if (held) problems.push(`lock still held by run ${held.runId}`);
  return { measured, stored, routesLeftSwapped, locksHeld, problems };
}

/** A route as text, its fields in a fixed order. */
function norm(r: WorldRoute | undefined): string {
  if (!r) return 'absent';
  return JSON.stringify(Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b))));
}

/** One row of the printed table (test/faults/table.ts). */
export function recordRow(faultClass: string, caseName: string, o: Outcome, hole?: string): void {
  let dir: string | undefined;
  try {
    dir = inject('faultsTableDir' as never) as string | undefined;
  } catch {
    dir = undefined;
  }
  if (!dir) return;
  appendFileSync(
    join(dir, 'rows.jsonl'),
    `${JSON.stringify({ faultClass, caseName, ...o, problems: o.problems.length, hole })}\n`,
  );
}
