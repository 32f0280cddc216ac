import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../../core/plan.js';
import type { SampleRecord } from '../../../core/sample-record.js';
import { cellName, matrixCells } from '../../../probes/http/http.schema.js';
import type { HttpTrial } from '../../../probes/http/http-trials.js';
import {
  type HttpProbeTrials,
  HttpTrialTally,
  httpWarnings,
  NIC_FLAG,
  sidecarFacts,
  TIME_WAIT_FLAG,
} from '../../../probes/http/http-trials.js';

const rec = (seq: number, t: number, ms: number | null, extra: Partial<SampleRecord> = {}): SampleRecord => ({
  run_id: 'r',
  path_id: 'A',
  probe: 'http-ka-c1-1k',
  kind: 'http',
  trial: 1,
  seq,
  t_start: t,
  t_end: t + (ms ?? 0),
  metric: 'http_latency_ms',
  value: ms,
  unit: 'ms',
  ok: ms !== null,
  bytes: ms === null ? 0 : 1000,
  ...(ms === null ? { error: 'ephemeral-ports-exhausted' } : {}),
  ...extra,
});

const trial = (t: Partial<HttpTrial>): HttpTrial => ({
  trial: 1,
  requests: 100,
  ok: 100,
  wallMs: 100,
  rps: 1000,
  throughputBps: 1e6,
  p50: 1,
  p99: 2,
  ...t,
});

const probe = (keepAlive: boolean, trials: HttpTrial[], concurrency = 1): HttpProbeTrials => ({
  probe: `http-${cellName(keepAlive, concurrency, 1024)}`,
  keepAlive,
  concurrency,
  payloadBytes: 1024,
  matrix: 'http',
  trials,
});

describe('HttpTrialTally', () => {
  it('counts requests per second, throughput, p50/p99 and errors over the trial wall time', () => {
    const t = new HttpTrialTally();
    // 10 requests, one every 10 ms, each 1..10 ms; one failed.
    for (let i = 0; i < 9; i++) t.add(rec(i + 1, 1000 + i * 10, i + 1));
    t.add(rec(10, 1090, null));
    const side = JSON.stringify({
      timeWaitBefore: 3,
      timeWaitAfter: 90,
      tcpTwReuse: 0,
      portRange: [60000, 60099],
      ephemeralPorts: 100,
    });
    const r = t.finish(2, side);
    expect(r).toMatchObject({ trial: 2, requests: 10, ok: 9, p50: 5, p99: 9 });
    // first start 1000, last end 1090 (the failed request at 1090): 90 ms
    expect(r.wallMs).toBe(90);
    expect(r.rps).toBeCloseTo((9 * 1000) / 90, 1);
    expect(r.throughputBps).toBe(Math.round((9000 * 8 * 1000) / 90));
    expect(r.errors).toEqual({ 'ephemeral-ports-exhausted': 1 });
    expect(r).toMatchObject({ timeWaitBefore: 3, timeWaitAfter: 90, tcpTwReuse: 0, ephemeralPorts: 100 });
    expect(r.portRange).toEqual([60000, 60099]);
  });

  it('ignores a damaged sidecar (the figures still count)', () => {
    expect(sidecarFacts('{"timeWaitAfter": -1, "tcpTwReuse": "x"')).toEqual({});
    expect(sidecarFacts(JSON.stringify({ timeWaitAfter: -1, tcpTwReuse: 'x', portRange: [1] }))).toEqual({});
  });
});

describe('httpWarnings', () => {
  it('names TIME_WAIT pressure on keep-alive-off trials with EADDRNOTAVAIL', () => {
    const w = httpWarnings(
      [
        probe(true, [trial({})]),
        probe(false, [trial({ errors: { 'ephemeral-ports-exhausted': 12 }, tcpTwReuse: 0, timeWaitAfter: 10 })]),
      ],
      undefined,
    );
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ probe: 'http-noka-c1-1k', flag: TIME_WAIT_FLAG, trials: [1] });
    expect(w[0].text).toContain('12 connect(s) failed with EADDRNOTAVAIL');
    expect(w[0].text).toContain('tcp_tw_reuse 0');
  });

  it('names TIME_WAIT near the ephemeral range, and a slowdown with half the range in TIME_WAIT', () => {
    const full = httpWarnings([probe(false, [trial({ timeWaitAfter: 450, ephemeralPorts: 512 })])], undefined);
    expect(full.map((x) => x.flag)).toEqual([TIME_WAIT_FLAG]);
    const slow = httpWarnings(
      [
        probe(true, [trial({ p50: 0.2 })]),
        probe(false, [trial({ p50: 0.8, timeWaitAfter: 300, ephemeralPorts: 512 })]),
      ],
      undefined,
    );
    expect(slow[0].text).toContain('p50 ×4.0 vs keep-alive on');
  });

  it('judges by the TIME_WAIT towards the target when the agent counted it, not the namespace’s', () => {
    // 450 of the namespace's sockets, but 10 towards the target: its ports are free
    const elsewhere = trial({ timeWaitAfter: 450, timeWaitToTargetAfter: 10, ephemeralPorts: 512 });
    expect(httpWarnings([probe(false, [elsewhere])], undefined)).toEqual([]);
    const here = trial({ timeWaitAfter: 460, timeWaitToTargetAfter: 450, ephemeralPorts: 512 });
    const w = httpWarnings([probe(false, [here])], undefined);
    expect(w.map((x) => x.flag)).toEqual([TIME_WAIT_FLAG]);
    expect(w[0].text).toContain('450 sockets in TIME_WAIT to the target for 512 ephemeral ports');
    // read from the sidecar like the rest
    const t = new HttpTrialTally();
    t.add(rec(1, 1000, 1));
    expect(t.finish(1, JSON.stringify({ timeWaitToTargetBefore: 0, timeWaitToTargetAfter: 4 }))).toMatchObject({
      timeWaitToTargetBefore: 0,
      timeWaitToTargetAfter: 4,
    });
  });

  it('does not flag keep-alive off without pressure, nor keep-alive on cells', () => {
    expect(
      httpWarnings(
        [
          probe(true, [trial({ timeWaitAfter: 500, ephemeralPorts: 512, errors: { 'ephemeral-ports-exhausted': 1 } })]),
          probe(false, [trial({ p50: 0.8, timeWaitAfter: 100, ephemeralPorts: 512 })]),
        ],
        undefined,
      ),
    ).toEqual([]);
  });

  it("flags a trial at the client's NIC bandwidth: measuring the instance, not the path", () => {
    const net = { baselineBps: 0.781e9, peakBps: 12.5e9 };
    const w = httpWarnings(
      [probe(true, [trial({ throughputBps: 12.4e9 }), trial({ trial: 2, throughputBps: 5e9 })], 16)],
      net,
    );
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ flag: NIC_FLAG, trials: [1] });
    expect(w[0].text).toContain('12.40 Gbit/s, 99 % of the client');
    expect(w[0].text).toContain('measuring the instance, not the path');
    // credits spent: sitting at the baseline of a bursting instance
    const base = httpWarnings([probe(true, [trial({ throughputBps: 0.77e9 })])], net);
    expect(base[0].text).toContain("at the client's baseline");
    // no NIC facts (loopback): nothing to compare with
    expect(httpWarnings([probe(true, [trial({ throughputBps: 12.4e9 })])], undefined)).toEqual([]);
  });
});

describe('the http probe matrix', () => {
  it('expands keep-alive × concurrency × body size into named cells, keep-alive on first', () => {
    expect(
      matrixCells(
        { keepAlive: true, concurrency: 1, payloadBytes: 1024 },
        { keepAlive: [true, false], concurrency: [1, 16], payloadBytes: [1024, 1048576] },
      ).map((c) => c.cell),
    ).toEqual([
      'ka-c1-1k',
      'ka-c1-1m',
      'ka-c16-1k',
      'ka-c16-1m',
      'noka-c1-1k',
      'noka-c1-1m',
      'noka-c16-1k',
      'noka-c16-1m',
    ]);
    expect(cellName(false, 4, 500)).toBe('noka-c4-500b');
  });

  const plan = (probe: Record<string, unknown>, skip?: string) => ({
    name: 'x',
    defaults: { client: { instanceId: 'i-1', region: 'lab' }, probes: [probe] },
    paths: [
      {
        id: 'A',
        target: { host: '10.0.0.1', port: 8080 },
        ...(skip ? { skipProbes: [{ probe: skip, reason: 'r' }] } : {}),
      },
    ],
  });

  it('resolves a matrix into one probe per cell, each with its matrix and cell', () => {
    const r = parsePlan(
      plan({
        kind: 'http',
        count: 10,
        trials: 3,
        tcpTwReuse: 0,
        matrix: { keepAlive: [true, false], concurrency: [1, 16] },
      }),
    );
    if (!r.ok) throw new Error(r.problems.join('\n'));
    const probes = r.plan.paths[0].probes;
    expect(probes.map((p) => p.name)).toEqual([
      'http-ka-c1-1k',
      'http-ka-c16-1k',
      'http-noka-c1-1k',
      'http-noka-c16-1k',
    ]);
    expect(probes[3]).toMatchObject({
      kind: 'http',
      keepAlive: false,
      concurrency: 16,
      payloadBytes: 1024,
      trials: 3,
      tcpTwReuse: 0,
      matrix: 'http',
      cell: 'noka-c16-1k',
    });
  });

  it("skips every cell by the matrix's name", () => {
    const r = parsePlan(plan({ kind: 'http', matrix: { concurrency: [1, 16] } }, 'http'));
    if (!r.ok) throw new Error(r.problems.join('\n'));
    expect(r.plan.paths[0].probes).toEqual([]);
    expect(r.plan.paths[0].skipped.map((s) => s.name)).toEqual(['http-ka-c1-1k', 'http-ka-c16-1k']);
  });

  it('rejects bad matrices with one line each', () => {
    const long = parsePlan(plan({ kind: 'http', name: 'x'.repeat(60), matrix: { concurrency: [1] } }));
    expect(long.ok).toBe(false);
    if (!long.ok) expect(long.problems.join('\n')).toMatch(/matrix cell name .* longer than 63 characters/);
    const bad = parsePlan(plan({ kind: 'http', matrix: { concurrency: [0] } }));
    expect(bad.ok).toBe(false);
    const tw = parsePlan(plan({ kind: 'http', tcpTwReuse: 3 }));
    expect(tw.ok).toBe(false);
  });
});
