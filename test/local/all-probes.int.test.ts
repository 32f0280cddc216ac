/**
 * Every probe kind through the whole pipeline on one loopback path
 * (plans/local-all-probes.json): real iperf3, sockperf and ping, the agent's own servers.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../core/keys.js';
import { pathManifestSchema } from '../../core/path-manifest.js';
import { manifestIndexSchema } from '../../core/run-manifest.js';
import { type Summary, summarySchema } from '../../core/run-summary.js';
import { type SampleRecord, sampleRecordSchema } from '../../core/sample-record.js';
import { silentLogger } from '../../functions/log.js';
import { type LocalRunResult, runLocal } from '../../local/local-driver.js';
import { type LoopbackTargets, startLoopbackTargets } from '../../local/targets.js';
import { ROOT } from '../helpers/repo.js';

let dir: string;
let targets: LoopbackTargets;
let result: LocalRunResult;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-all-'));
  targets = await startLoopbackTargets(silentLogger);
  const plan = JSON.parse(await readFile(join(ROOT, 'plans', 'local-all-probes.json'), 'utf8'));
  result = await runLocal({ plan, dataDir: dir, runId: 'it-all', log: silentLogger });
});

afterAll(async () => {
  await targets?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function samples(probe: string, trial = 1): Promise<SampleRecord[]> {
  const text = await readFile(join(dir, `samples/path=all/run=it-all/${probe}-${trial}.jsonl`), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as SampleRecord);
}

describe('one path, every probe kind', () => {
  it('runs every kind and summarizes each metric', () => {
    expect(result.execution.status).toBe('SUCCEEDED');
    const s = result.summary as Summary;
    expect(s.status).toBe('succeeded');
    const metrics = s.paths[0].results.map((r) => `${r.probe}/${r.metric}`);
    for (const m of [
      'tcp-connect/connect_rtt_ms',
      'http/http_latency_ms',
      'iperf3/throughput_bps',
      'iperf3/retransmits',
      'sockperf/rtt_us',
      'mtu/mtu_bytes',
      'pingpong/rtt_us',
      'ping/icmp_rtt_ms',
    ]) {
      expect(metrics).toContain(m);
    }
    for (const r of s.paths[0].results) {
      expect(r.n, `${r.probe}/${r.metric}`).toBeGreaterThan(0);
      expect(r.loss, `${r.probe}/${r.metric}`).toBe(0);
    }
    // The kernel timed tcp-connect, http and pingpong here: each shows the client's own part
    // beside its figure (the pingpong network figure is a metric of its own, so it has none).
    const hosts = s.paths[0].results.filter((r) => r.host).map((r) => `${r.probe}/${r.metric}`);
    expect(hosts.sort()).toEqual(['http/http_latency_ms', 'pingpong/rtt_us', 'tcp-connect/connect_rtt_ms']);
    for (const r of s.paths[0].results.filter((x) => x.host)) {
      expect(r.host?.ts_source).toBe('kernel-sw');
      // Every sample with both stamps; an exchange whose stamp the kernel did not deliver has none.
      expect(r.host?.n).toBeGreaterThan(r.n / 2);
      expect(r.host?.n).toBeLessThanOrEqual(r.n);
      expect(r.host?.p50_us, r.probe).toBeGreaterThan(0);
    }
    // pingpong against its echo server on this same kernel: one-way figures with no clock error.
    const pp = s.paths[0].results.find((r) => r.probe === 'pingpong' && r.metric === 'rtt_us');
    expect(pp?.oneWay?.clock_error_us).toBe(0);
    expect(pp?.oneWay?.n).toBeGreaterThan((pp?.n ?? 0) / 2);
  });

  it('stores a manifest and a summary their schemas read back whole, and records the sample schema takes', async () => {
    // The manifest is its index and one object per path; each reads back whole through its schema.
    const index = JSON.parse(await readFile(join(dir, 'runs/run=it-all/manifest.json'), 'utf8'));
    const pathKeys = (index.pathIds as string[]).map((id) => keys.pathManifest('it-all', id));
    expect(pathKeys.length).toBeGreaterThan(0);
    for (const [key, schema] of [
      ['runs/run=it-all/manifest.json', manifestIndexSchema],
      ...pathKeys.map((k) => [k, pathManifestSchema] as const),
      ['reports/run=it-all/summary.json', summarySchema],
    ] as const) {
      const json = JSON.parse(await readFile(join(dir, key), 'utf8'));
      expect(schema.parse(json), key).toEqual(json);
    }
    for (const probe of ['tcp-connect', 'http', 'iperf3', 'sockperf', 'mtu'])
      for (const r of await samples(probe)) expect(sampleRecordSchema.parse(r)).toEqual(r);
  });

  it('keeps per-interval iperf3 records with real throughput, never an error as 0 bps', async () => {
    const recs = (await samples('iperf3')).filter((r) => r.metric === 'throughput_bps');
    expect(recs.length).toBe(3);
    for (const r of recs) {
      expect(r.ok).toBe(true);
      expect(r.value).toBeGreaterThan(1e8);
      expect(r.unit).toBe('bit/s');
    }
  });

  it('stores sockperf round trips (one-way × 2) and the loopback MTU', async () => {
    const sp = await samples('sockperf');
    expect(sp.length).toBeGreaterThan(1000);
    expect(sp[0]).toMatchObject({ metric: 'rtt_us', unit: 'us', ok: true });
    const mtu = await samples('mtu');
    expect(mtu).toHaveLength(1);
    expect(mtu[0]).toMatchObject({ metric: 'mtu_bytes', value: 9001, ok: true });
  });

  it('stores one ICMP round trip per ping request, from ping itself', async () => {
    const ping = await samples('ping');
    expect(ping).toHaveLength(50);
    expect(ping.every((r) => r.ok && r.metric === 'icmp_rtt_ms' && r.clock === 'iputils-ping')).toBe(true);
    expect(ping.map((r) => r.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('carries the probes’ own cost for tcp-connect and http', () => {
    const p = (result.summary as Summary).paths[0];
    const o = p.probe_overhead_us as Record<string, { p50_us: number; p99_us: number }>;
    expect(o['tcp-connect'].p50_us).toBeGreaterThan(0);
    expect(o.http.p50_us).toBeGreaterThan(0);
  });
});
