/**
 * CollectOutput against damaged raw files (data lost, bad input): the real ASL through
 * the local runner, a real directory store and DuckDB; only the remote command is a stand-in that
 * writes the given raw files (and agent.json) as the agent would.
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSpec } from '../../../core/agent-spec.js';
import { keys, RAW_EXT } from '../../../core/keys.js';
import { type RunManifest, readManifest } from '../../../core/run-manifest.js';
import type { Summary } from '../../../core/run-summary.js';
import type { SampleRecord } from '../../../core/sample-record.js';
import type { CommandInvocation, CommandRunner, ProbeCommand } from '../../../functions/ports.js';
import { runStateMachine } from '../../../local/asl-interpreter.js';
import type { DirStore } from '../../../local/dir-store.js';
import { noWaits, scenarioDeps } from '../../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const FIX = join(__dirname, '..', '..', 'fixtures');
const T0 = Date.parse('2026-11-30T00:00:00Z');

/** Writes `files` (relative to the raw prefix) and an agent.json (or `agentJson` as given). */
class RawRunner implements CommandRunner {
  constructor(
    private readonly store: DirStore,
    private readonly files: (spec: AgentSpec) => Record<string, string | Uint8Array>,
    private readonly agentJson?: (full: string) => string,
  ) {}
  async send(cmd: ProbeCommand) {
    const spec = JSON.parse((await this.store.getText(cmd.specKey)) ?? '{}') as AgentSpec;
    for (const [rel, body] of Object.entries(this.files(spec))) await this.store.put(`${cmd.rawPrefix}${rel}`, body);
    const full = JSON.stringify({
      agentVersion: 'test',
      host: 'fake',
      kernel: 'k',
      platform: 'linux',
      node: 'v20',
      startedAt: new Date(T0).toISOString(),
      endedAt: new Date(T0 + 10).toISOString(),
      probes: spec.probes.map((p) => ({
        probe: p.name,
        kind: p.kind,
        status: 'ok',
        trials: 1,
        files: [`${p.name}/1.${RAW_EXT[p.kind]}`],
        startedAt: new Date(T0).toISOString(),
        endedAt: new Date(T0 + 10).toISOString(),
      })),
    });
    await this.store.put(`${cmd.rawPrefix}agent.json`, this.agentJson ? this.agentJson(full) : full);
    return { commandId: 'cmd-1' };
  }
  async status(): Promise<CommandInvocation> {
    return { status: 'Success' };
  }
  async cancel() {}
}

function plan(probes: Record<string, unknown>[]) {
  return {
    name: 'collect',
    defaults: {
      client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
      reboot: false,
      creditWaitSeconds: 0,
    },
    paths: [{ id: 'A', target: { host: '10.1.0.10', port: 7000 }, probes }],
  };
}

const tcpLine = (i: number, over: Record<string, unknown> = {}) =>
  JSON.stringify({ seq: i, t_start: T0 + i, t_end: T0 + i + 1, ok: true, rtt_ms: 1 + i / 100, ...over });

async function run(
  probes: Record<string, unknown>[],
  files: (spec: AgentSpec) => Record<string, string | Uint8Array>,
  agentJson?: (full: string) => string,
) {
  const s = await scenarioDeps();
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  s.deps.runner = new RawRunner(s.store, files, agentJson);
  const r = await runStateMachine({
    deps: s.deps,
    input: { plan: plan(probes) },
    runId: 'r1',
    waitTimeOverrides: noWaits(),
  });
  const manifest = (await readManifest(s.store, 'r1')) as RunManifest;
  const summaryText = await s.store.getText(keys.report('r1', 'json'));
  const summary = summaryText ? (JSON.parse(summaryText) as Summary) : undefined;
  const samples = async (name: string, trial = 1): Promise<SampleRecord[]> =>
    ((await s.store.getText(keys.samples('A', 'r1', name, trial))) ?? '')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as SampleRecord);
  return { r, manifest, summary, samples, store: s.store, deps: s.deps };
}

const TCP = { kind: 'tcp-connect', count: 10, intervalMs: 10 };

describe('CollectOutput keeps every good line of a damaged raw file', () => {
  it('one damaged line of ten: nine samples kept, one rejected line counted in the manifest with its reason', async () => {
    const { manifest, samples, r } = await run([TCP], (spec) => ({
      [`${spec.probes[0].name}/1.jsonl`]: Array.from({ length: 10 }, (_, i) =>
        i === 4 ? '{"seq": 4, "t_start": 17' : tcpLine(i),
      ).join('\n'),
    }));
    expect(r.status).toBe('SUCCEEDED');
    const recs = await samples('tcp-connect');
    expect(recs.map((x) => x.seq)).toEqual([0, 1, 2, 3, 5, 6, 7, 8, 9]);
    const p = manifest.paths[0];
    expect(p.status).toBe('succeeded');
    expect(p.probes[0].files?.[0]).toMatchObject({
      key: 'raw/path=A/run=r1/client=i-0123456789abcdef0/tcp-connect/1.jsonl',
      lines: 10,
      samples: 9,
      rejected: 1,
    });
    expect(p.probes[0].files?.[0].firstRejection).toMatch(/line 5: not JSON/);
    expect(p.probes[0].rejected).toBe(1);
    expect(p.notes.join('\n')).toMatch(/tcp-connect: 1 of 10 raw line\(s\) rejected/);
  });

  it('negative RTTs and negative throughput are rejected as bad lines, never stored', async () => {
    const iperf = JSON.parse(readFileSync(join(FIX, 'iperf3', 'tcp-p2.json'), 'utf8'));
    iperf.intervals[1].sum.bits_per_second = -5e8;
    const { manifest, samples } = await run(
      [TCP, { kind: 'iperf3', port: 5201, mode: 'tcp', durationSeconds: 3, repeats: 1 }],
      (spec) => ({
        [`${spec.probes[0].name}/1.jsonl`]: Array.from({ length: 10 }, (_, i) =>
          tcpLine(i, i === 2 ? { rtt_ms: -3 } : {}),
        ).join('\n'),
        [`${spec.probes[1].name}/1.json`]: JSON.stringify(iperf, null, 2),
      }),
    );
    const tcp = await samples('tcp-connect');
    expect(tcp).toHaveLength(9);
    expect(tcp.every((x) => x.value === null || (x.value as number) >= 0)).toBe(true);
    const thr = (await samples('iperf3')).filter((x) => x.metric === 'throughput_bps');
    expect(thr.length).toBe(iperf.intervals.length - 1);
    expect(thr.every((x) => (x.value as number) >= 0)).toBe(true);
    const [pt, pi] = manifest.paths[0].probes;
    expect(pt.files?.[0]).toMatchObject({ rejected: 1 });
    expect(pt.files?.[0].firstRejection).toMatch(/rtt_ms/);
    expect(pi.files?.[0]).toMatchObject({ rejected: 1 });
    expect(pi.files?.[0].firstRejection).toMatch(/bits_per_second/);
  });

  it('a truncated iperf3 JSON keeps every complete interval and says it was truncated', async () => {
    const text = JSON.stringify(JSON.parse(readFileSync(join(FIX, 'iperf3', 'tcp-p2.json'), 'utf8')), null, 2);
    const full = JSON.parse(text);
    // Cut inside the third interval: the first two are complete.
    const third = text.indexOf(
      '"streams"',
      text.indexOf('"streams"', text.indexOf('"streams"', text.indexOf('"intervals"')) + 1) + 1,
    );
    const cut = text.slice(0, third + 40);
    const { manifest, samples } = await run(
      [{ kind: 'iperf3', port: 5201, mode: 'tcp', durationSeconds: 3, repeats: 1 }],
      (spec) => ({ [`${spec.probes[0].name}/1.json`]: cut }),
    );
    const thr = (await samples('iperf3')).filter((x) => x.metric === 'throughput_bps' && x.ok);
    expect(thr.map((x) => x.value)).toEqual(
      full.intervals.slice(0, 2).map((iv: { sum: { bits_per_second: number } }) => iv.sum.bits_per_second),
    );
    const f = manifest.paths[0].probes[0].files?.[0];
    expect(f?.truncated).toBe(true);
    expect(manifest.paths[0].notes.join('\n')).toMatch(/truncated/);
  });

  it('a truncated agent.json keeps every probe the raw files show and flags it', async () => {
    const { manifest, samples, r } = await run(
      [TCP, { ...TCP, name: 'tcp-b' }],
      (spec) =>
        Object.fromEntries(
          spec.probes.map((p) => [`${p.name}/1.jsonl`, Array.from({ length: 10 }, (_, i) => tcpLine(i)).join('\n')]),
        ),
      (full) => full.slice(0, full.length / 2),
    );
    expect(r.status).toBe('SUCCEEDED');
    expect(await samples('tcp-connect')).toHaveLength(10);
    expect(await samples('tcp-b')).toHaveLength(10);
    const p = manifest.paths[0];
    expect(p.probes.map((x) => x.samples)).toEqual([10, 10]);
    expect(p.notes.join('\n')).toMatch(/agent\.json .*truncated/);
  });

  it('a sample whose seq exceeds 2^31 is stored and the run report is written', async () => {
    const big = 2 ** 31 + 5;
    const { r, summary, samples } = await run([TCP], (spec) => ({
      [`${spec.probes[0].name}/1.jsonl`]: Array.from({ length: 10 }, (_, i) => tcpLine(i, { seq: big + i })).join('\n'),
    }));
    expect(r.status).toBe('SUCCEEDED');
    expect((await samples('tcp-connect')).map((x) => x.seq)[0]).toBe(big);
    expect(summary?.paths[0].status).toBe('succeeded');
  });

  it('a file that ends mid-line (uploaded as produced) keeps the complete lines and counts the last as truncated', async () => {
    const body = `${Array.from({ length: 5 }, (_, i) => tcpLine(i)).join('\n')}\n${tcpLine(5).slice(0, 25)}`;
    const { manifest, samples } = await run([TCP], (spec) => ({ [`${spec.probes[0].name}/1.jsonl`]: body }));
    expect(await samples('tcp-connect')).toHaveLength(5);
    expect(manifest.paths[0].probes[0].files?.[0]).toMatchObject({
      lines: 6,
      samples: 5,
      rejected: 0,
      truncated: true,
    });
  });
});

/** A pingpong helper log of `n` exchanges (probes/native/pingpong.c's format). */
function pingpongLog(n: number, clock = 'pingpong-monotonic-busypoll'): string {
  const rows = Array.from({ length: n }, (_, i) => `${i + 1},${1_000_000_000 + i * 30_000},${20_000 + i},ok`);
  return [
    `# pathbench pingpong v1 mode=tcp req=16 resp=16 clock=${clock} realtime_minus_monotonic_ns=${T0 * 1e6}`,
    'seq,tx_ns,rtt_ns,status',
    ...rows,
    `# end exchanges=${n} ok=${n}`,
    '',
  ].join('\n');
}

describe('CollectOutput reads gzip-compressed raw logs, and plain ones of older runs', () => {
  const PP = { kind: 'pingpong', durationSeconds: 1 };
  const SOCK = { kind: 'sockperf', port: 11111, mode: 'udp', durationSeconds: 1 };
  const sock = readFileSync(join(FIX, 'sockperf', 'udp-mps50.csv'), 'utf8');

  it('pingpong and sockperf .csv.gz give the same samples as their plain .csv', async () => {
    const gz = await run([PP, SOCK], (spec) => ({
      [`${spec.probes[0].name}/1.csv.gz`]: gzipSync(pingpongLog(1000)),
      [`${spec.probes[1].name}/1.csv.gz`]: gzipSync(sock),
    }));
    const plain = await run([PP, SOCK], (spec) => ({
      [`${spec.probes[0].name}/1.csv`]: pingpongLog(1000),
      [`${spec.probes[1].name}/1.csv`]: sock,
    }));
    expect(gz.r.status).toBe('SUCCEEDED');
    const pp = await gz.samples('pingpong');
    expect(pp).toHaveLength(1000);
    expect(pp[0]).toMatchObject({ kind: 'pingpong', metric: 'rtt_us', value: 20, one_way_us: 10, unit: 'us' });
    expect(pp).toEqual(await plain.samples('pingpong'));
    const sp = await gz.samples('sockperf');
    expect(sp.length).toBeGreaterThan(10);
    expect(sp).toEqual(await plain.samples('sockperf'));
    expect(gz.manifest.paths[0].probes[0].files?.[0]).toMatchObject({
      key: 'raw/path=A/run=r1/client=i-0123456789abcdef0/pingpong/1.csv.gz',
      lines: 1003,
      samples: 1000,
      rejected: 0,
    });
  });

  it("the log's clock (busy-poll or blocking read) reaches the samples and the probe's provenance", async () => {
    for (const [wait, clock] of [
      ['busy', 'pingpong-monotonic-busypoll'],
      ['block', 'pingpong-monotonic-block'],
    ] as const) {
      const res = await run([{ ...PP, wait }], (spec) => ({
        [`${spec.probes[0].name}/1.csv.gz`]: gzipSync(pingpongLog(10, clock)),
      }));
      expect(res.r.status).toBe('SUCCEEDED');
      expect((await res.samples('pingpong')).map((r) => r.clock)).toEqual(Array(10).fill(clock));
      expect(res.manifest.paths[0].probes[0].clocks).toEqual([clock]);
    }
  });

  it('a .gz cut off in transit keeps what decompresses and reads as truncated', async () => {
    const whole = gzipSync(pingpongLog(20_000));
    const { manifest, samples } = await run([PP], (spec) => ({
      [`${spec.probes[0].name}/1.csv.gz`]: whole.subarray(0, Math.floor(whole.length / 2)),
    }));
    const kept = await samples('pingpong');
    expect(kept.length).toBeGreaterThan(1000);
    expect(kept.length).toBeLessThan(20_000);
    expect(kept.map((r) => r.seq)).toEqual(Array.from({ length: kept.length }, (_, i) => i + 1));
    const f = manifest.paths[0].probes[0].files?.[0];
    expect(f).toMatchObject({ samples: kept.length, truncated: true });
    expect(f?.truncation).toMatch(/gzip stream ends early/);
  });

  it('a trial stored both plain and compressed (stopped between the two) is read once, from the .gz', async () => {
    const { manifest, samples } = await run([PP], (spec) => ({
      [`${spec.probes[0].name}/1.csv`]: pingpongLog(10).slice(0, 200),
      [`${spec.probes[0].name}/1.csv.gz`]: gzipSync(pingpongLog(10)),
    }));
    expect(await samples('pingpong')).toHaveLength(10);
    expect(manifest.paths[0].probes[0].rawKeys).toEqual([
      'raw/path=A/run=r1/client=i-0123456789abcdef0/pingpong/1.csv.gz',
    ]);
  });
});

describe('CollectOutput streams', () => {
  it('reads raw files through the store stream and writes samples through the stream write, never whole', async () => {
    const s = await scenarioDeps();
    cleanups.push(async () => {
      s.query.close();
      await rm(s.dir, { recursive: true, force: true });
    });
    s.deps.runner = new RawRunner(s.store, (spec) => ({
      [`${spec.probes[0].name}/1.jsonl`]: Array.from({ length: 10 }, (_, i) => tcpLine(i)).join('\n'),
    }));
    const whole: string[] = [];
    const streamed: string[] = [];
    const { get, getText, getStream, putStream, put } = s.store;
    const log =
      <A extends unknown[], R>(to: string[], what: string, f: (...a: A) => R) =>
      (...a: A): R => {
        to.push(`${what} ${a[0]}`);
        return f.apply(s.store, a);
      };
    Object.assign(s.store, {
      get: log(whole, 'get', get),
      getText: log(whole, 'get', getText),
      put: log(whole, 'put', put),
      getStream: log(streamed, 'get', getStream),
      putStream: log(streamed, 'put', putStream),
    });
    const r = await runStateMachine({
      deps: s.deps,
      input: { plan: plan([TCP]) },
      runId: 'r1',
      waitTimeOverrides: noWaits(),
    });
    expect(r.status).toBe('SUCCEEDED');
    expect(streamed).toEqual([
      'get raw/path=A/run=r1/client=i-0123456789abcdef0/tcp-connect/1.jsonl',
      // the Parquet copy is the engine's (DuckDB reads the file itself, not through the store)
      'put samples/path=A/run=r1/tcp-connect-1.jsonl',
    ]);
    expect(
      whole.filter((x) => /tcp-connect\/1\.jsonl|tcp-connect-1\.jsonl/.test(x) && !x.startsWith('put raw/')),
    ).toEqual([]);
  });
});

describe('CollectOutput under fuzzing (fast-check)', () => {
  it('never crashes but with a CollectError, stores only valid samples, and the manifest counts them exactly', async () => {
    const fc = (await import('fast-check')).default;
    const { validatePlanStep } = await import('../../../functions/pipeline/validate.js');
    const { collectOutput } = await import('../../../functions/pipeline/collect.js');
    const { CollectError } = await import('../../../core/errors.js');
    const s = await scenarioDeps();
    cleanups.push(async () => {
      s.query.close();
      await rm(s.dir, { recursive: true, force: true });
    });
    const probes = [TCP, { kind: 'sockperf', port: 11111, mode: 'udp', durationSeconds: 1 }];
    const good = Array.from({ length: 6 }, (_, i) => tcpLine(i));
    const sock = readFileSync(join(FIX, 'sockperf', 'udp-mps50.csv'), 'utf8');
    const damaged = (text: string) =>
      fc
        .array(fc.tuple(fc.nat(text.length), fc.nat(30), fc.string({ maxLength: 10 }), fc.boolean()), { maxLength: 4 })
        .map((edits) => {
          let t = text;
          for (const [at, len, junk, cut] of edits)
            t = cut ? t.slice(0, at) : t.slice(0, at) + junk + t.slice(at + len);
          return t;
        });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        damaged(`${good.join('\n')}\n`),
        damaged(sock),
        fc.option(fc.nat(600), { nil: undefined }),
        async (tcpRaw, sockRaw, agentCut) => {
          const runId = `fz${++n}`;
          await validatePlanStep(s.deps, { input: { plan: plan(probes) }, runId });
          const spec = JSON.parse(
            (await s.store.getText(keys.spec(runId, 'A', 'i-0123456789abcdef0'))) ?? '{}',
          ) as AgentSpec;
          const prefix = keys.rawPrefix('A', runId);
          await s.store.put(`${prefix}${spec.probes[0].name}/1.jsonl`, tcpRaw);
          await s.store.put(`${prefix}${spec.probes[1].name}/1.csv`, sockRaw);
          const agent = JSON.stringify({ agentVersion: 't', startedAt: new Date(T0).toISOString(), probes: [] });
          await s.store.put(`${prefix}agent.json`, agentCut === undefined ? agent : agent.slice(0, agentCut));
          const ref = { runId, pathId: 'A', client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' } };
          try {
            await collectOutput(s.deps, ref);
          } catch (e) {
            expect(e).toBeInstanceOf(CollectError);
          }
          await s.deps.lock.release(runId);
          const m = (await readManifest(s.store, runId)) as RunManifest;
          let stored = 0;
          for (const key of await s.store.list(`samples/path=A/run=${runId}/`)) {
            for (const line of ((await s.store.getText(key)) ?? '').split('\n').filter(Boolean)) {
              const r = JSON.parse(line) as SampleRecord;
              stored++;
              expect(Number.isSafeInteger(r.seq) && r.seq >= 0).toBe(true);
              expect(Number.isFinite(r.t_start) && Number.isFinite(r.t_end)).toBe(true);
              if (r.value !== null) expect(Number.isFinite(r.value) && r.value >= 0).toBe(true);
              else expect(r.ok).toBe(false);
            }
          }
          const probesM = m.paths[0].probes;
          expect(probesM.reduce((a, p) => a + p.samples, 0)).toBe(stored);
          for (const p of probesM) {
            for (const f of p.files ?? []) {
              // One record per line at most, plus sockperf's one failed record for a log without rows.
              expect(f.samples + f.rejected).toBeLessThanOrEqual(f.lines + 1);
              if (f.rejected) expect(f.firstRejection).toMatch(/^(tcp-connect|sockperf)( line \d+)?: /);
            }
          }
        },
      ),
      { numRuns: 40 },
    );
    expect(n).toBe(40);
  }, 120_000);
});

describe('CollectOutput on an empty raw file', () => {
  it('stores one failed sample saying so, so loss shows the probe produced nothing', async () => {
    const { manifest, samples } = await run([TCP], (spec) => ({ [`${spec.probes[0].name}/1.jsonl`]: '' }));
    expect(await samples('tcp-connect')).toMatchObject([{ ok: false, value: null, error: 'empty raw file' }]);
    expect(manifest.paths[0].probes[0]).toMatchObject({ status: 'failed', samples: 1 });
  });
});
