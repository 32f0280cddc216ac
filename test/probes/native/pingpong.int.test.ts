/**
 * The pingpong probe end to end on loopback: the real native helper (compiled by the agent)
 * against the real echo server that `agent serve --pingpong` starts, its gzip-compressed log
 * read back through the parser, in both wait modes (busy-poll, blocking read). Short series;
 * figures against sockperf are `npm run bench`'s.
 */
import { spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServers, startServers } from '../../../agent/server.js';
import { parseRawLenient } from '../../../probes/index.js';
import { pingpongArgs, TcpingArgumentError } from '../../../probes/native/tcping.js';
import { ensureTcping } from '../../../probes/native/tcping-build.js';
import { NETWORK_CLOCK, NETWORK_METRIC } from '../../../probes/pingpong/pingpong.parser.js';
import { runPingpongProbe } from '../../../probes/pingpong/pingpong.runner.js';
import type { PingpongProbe } from '../../../probes/pingpong/pingpong.schema.js';
import type { ProbeContext } from '../../../probes/run-kit/runner-types.js';
import { freePort } from '../../helpers/ports.js';

let servers: RunningServers;
const dirs: string[] = [];
beforeAll(async () => {
  servers = await startServers({ host: '127.0.0.1', pingpong: 0 });
}, 120_000);
afterAll(async () => {
  await servers?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function ctx(): ProbeContext {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pb-pingpong-'));
  dirs.push(dir);
  return { target: { host: '127.0.0.1', port: 7000 }, outDir: dir, log: () => {} };
}

const probe = (over: Partial<PingpongProbe>): PingpongProbe => ({
  kind: 'pingpong',
  name: 'pingpong',
  mode: 'tcp',
  messageBytes: 16,
  durationSeconds: 0,
  count: 300,
  timeoutMs: 1000,
  port: servers.ports.pingpong,
  ...over,
});

function records(c: ProbeContext, trial = 1) {
  const raw = gunzipSync(readFileSync(path.join(c.outDir, 'pingpong', `${trial}.csv.gz`))).toString('utf8');
  const sidecar = readFileSync(path.join(c.outDir, 'pingpong', `${trial}.meta.json`), 'utf8');
  return {
    raw,
    ...parseRawLenient('pingpong', raw, { runId: 'r', pathId: 'p', probe: 'pingpong', trial, sidecar }),
  };
}

describe('pingpong probe on loopback (real helper, real echo server)', () => {
  it('agent serve starts the echo server (TCP and UDP on one port)', () => {
    expect(servers.problems).toEqual([]);
    expect(servers.ports.pingpong).toBeGreaterThan(0);
  });

  const CLOCK = { busy: 'pingpong-monotonic-busypoll', block: 'pingpong-monotonic-block' } as const;
  for (const [mode, req, resp, wait] of [
    ['tcp', 16, 16, undefined],
    ['udp', 64, 64, undefined],
    ['tcp-rr', 1, 200, undefined],
    ['tcp', 16, 16, 'block'],
    ['udp', 64, 64, 'block'],
    ['tcp-rr', 1, 200, 'block'],
    ['tcp', 1000, 1000, 'busy'],
  ] as const) {
    it(`${mode} ${req}/${resp} bytes, wait ${wait ?? '(default)'}: every exchange a record, round trip and one-way side by side`, async () => {
      const c = ctx();
      const t0 = Date.now();
      const out = await runPingpongProbe(
        probe({
          mode,
          messageBytes: req,
          ...(mode === 'tcp-rr' ? { responseBytes: resp } : {}),
          ...(wait ? { wait } : {}),
        }),
        c,
      );
      const t1 = Date.now();
      expect(out).toMatchObject({ status: 'ok', trials: 1, files: ['pingpong/1.csv.gz', 'pingpong/1.meta.json'] });
      const { records: all, stats, raw } = records(c);
      const recs = all.filter((r) => r.metric === 'rtt_us');
      const net = all.filter((r) => r.metric === NETWORK_METRIC);
      expect(stats).toMatchObject({ samples: 300 + net.length, rejected: 0, truncated: false });
      expect(raw).toMatch(/# end exchanges=300 ok=300\n$/);
      // Kernel software timestamps: the network part of each round trip, and the host's own part.
      expect(raw).toMatch(/ ts=kernel-sw\n/);
      expect(net.length).toBe(recs.filter((r) => r.ts_source === 'kernel-sw').length);
      expect(net.length, `${mode}: stamps on loopback, all but a rare miss`).toBeGreaterThanOrEqual(290);
      for (const n of net) {
        const r = recs.find((x) => x.seq === n.seq)!;
        expect(n).toMatchObject({ ok: true, unit: 'us', clock: NETWORK_CLOCK, ts_source: 'kernel-sw' });
        expect(n.value as number).toBeGreaterThan(0);
        expect(n.value as number).toBeLessThan(r.value as number);
        expect(r.host_us).toBeCloseTo((r.value as number) - (n.value as number), 6);
        // One way, from the server's clock readings: one kernel, so no clock error; the way out
        // is causal (≥ 0), and both together leave the server's turnaround out of the network figure.
        expect(r.clock_error_us, `${mode} seq ${r.seq}`).toBe(0);
        const [fwd, rev] = [r.one_way_fwd_us as number, r.one_way_rev_us as number];
        expect(fwd).toBeGreaterThanOrEqual(0);
        expect(fwd + rev).toBeLessThanOrEqual((n.value as number) + 1e-6);
      }
      // The way back starts at the server's send estimated from its recent send paths (the least
      // of them): an exchange whose own send was quicker reads a little below zero, rarely.
      const revs = recs.flatMap((r) => (typeof r.one_way_rev_us === 'number' ? [r.one_way_rev_us] : []));
      expect(revs.filter((v) => v < 0).length, `${mode}: reverse below zero`).toBeLessThanOrEqual(revs.length * 0.03);
      expect(recs.map((r) => r.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
      for (const r of recs) {
        expect(r).toMatchObject({ kind: 'pingpong', metric: 'rtt_us', unit: 'us', ok: true, mode });
        expect(r.clock).toBe(CLOCK[wait ?? 'busy']);
        expect(r.value as number).toBeGreaterThan(0);
        // A loopback round trip on a busy 2-core machine: well under the timeout.
        expect(r.value as number).toBeLessThan(1_000_000);
        expect(r.one_way_us).toBeCloseTo((r.value as number) / 2, 9);
        expect(r.t_start).toBeGreaterThanOrEqual(t0 - 5);
        expect(r.t_end).toBeLessThanOrEqual(t1 + 5);
      }
      expect(recs[0]).toMatchObject({ request_bytes: req, response_bytes: resp });
      expect(JSON.parse(readFileSync(path.join(c.outDir, 'pingpong', '1.meta.json'), 'utf8'))).toMatchObject({
        wait: wait ?? 'busy',
        // each end's clock over the series: one kernel here; each bound a number or "unsync"
        clocks: { oneKernel: true },
      });
      expect(raw).toMatch(/^# clocks client_maxerror_us=(\d+|unsync) server_maxerror_us=(\d+|unsync) one_kernel=1$/m);
    });
  }

  it('block mode: a UDP reply that never comes is a timeout after timeoutMs, each exchange on its own', async () => {
    // A UDP socket that reads nothing back: every exchange waits out its deadline.
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', () => r()));
    try {
      const c = ctx();
      const t0 = performance.now();
      const out = await runPingpongProbe(
        probe({ mode: 'udp', port: silent.address().port, count: 3, timeoutMs: 100, wait: 'block' }),
        c,
      );
      const took = performance.now() - t0;
      expect(out).toMatchObject({ status: 'failed', reason: 'no exchange succeeded (timeout)' });
      const { records: all } = records(c);
      const recs = all.filter((r) => r.metric === 'rtt_us');
      expect(recs.map((r) => [r.seq, r.ok, r.error, r.clock])).toEqual(
        [1, 2, 3].map((i) => [i, false, 'timeout', CLOCK.block]),
      );
      // the network figure (kernel stamps are on) lost the same exchanges
      expect(all.filter((r) => r.metric === NETWORK_METRIC).map((r) => [r.seq, r.ok, r.error])).toEqual(
        [1, 2, 3].map((i) => [i, false, 'timeout']),
      );
      // Three deadlines waited out in a blocking read, not one (nor none).
      expect(took).toBeGreaterThanOrEqual(300);
      // Consecutive sends a deadline apart (SO_RCVTIMEO rounds up to the kernel's tick).
      const gaps = recs.slice(1).map((r, i) => r.t_start - recs[i].t_start);
      for (const g of gaps) {
        expect(g).toBeGreaterThanOrEqual(99);
        expect(g).toBeLessThan(1000);
      }
    } finally {
      silent.close();
    }
  });

  it('the helper takes wait as an optional last argument and rejects anything but busy or block', async () => {
    const base = { address: '127.0.0.1', port: 1, mode: 'tcp', requestBytes: 16, responseBytes: 16 } as const;
    const o = { ...base, durationSeconds: 0, count: 1, timeoutMs: 10 };
    expect(pingpongArgs(o)).toHaveLength(9);
    expect(pingpongArgs({ ...o, wait: 'block' }).slice(-2)).toEqual(['10', 'block']);
    expect(() => pingpongArgs({ ...o, wait: 'spin' as 'busy' })).toThrow(TcpingArgumentError);
    expect(() => pingpongArgs({ ...o, wait: 'spin' as 'busy' })).toThrow('wait must be "busy" or "block", got "spin"');
    const built = await ensureTcping();
    if (!built.ok) throw new Error(built.reason);
    const r = spawnSync(built.path, [...pingpongArgs(o), 'spin'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('wait must be busy or block, got "spin"');
  });

  it('trials run one series after another, each its own log and sidecar', async () => {
    const c = ctx();
    const out = await runPingpongProbe(probe({ count: 200, trials: 3 }), c);
    expect(out).toMatchObject({
      status: 'ok',
      trials: 3,
      files: [1, 2, 3].flatMap((t) => [`pingpong/${t}.csv.gz`, `pingpong/${t}.meta.json`]),
    });
    let lastEnd = 0;
    for (const trial of [1, 2, 3]) {
      const { records: recs, stats } = records(c, trial);
      expect(stats).toMatchObject({ rejected: 0 });
      expect(recs.filter((r) => r.metric === 'rtt_us')).toHaveLength(200);
      expect(new Set(recs.map((r) => r.trial))).toEqual(new Set([trial]));
      // One after another: each series starts after the one before ended.
      expect(recs[0].t_start).toBeGreaterThanOrEqual(lastEnd - 1);
      lastEnd = Math.max(...recs.map((r) => r.t_end));
    }
  });

  it('no server with trials: every trial tried and failed, the first reason given', async () => {
    const c = ctx();
    const out = await runPingpongProbe(probe({ port: await freePort(), count: 5, trials: 2 }), c);
    expect(out.status).toBe('failed');
    expect(out.trials).toBe(2);
    expect(out.files).toContain('pingpong/2.meta.json');
  });

  it('a duration ends the series (count 0)', async () => {
    const c = ctx();
    const t0 = Date.now();
    const out = await runPingpongProbe(probe({ count: 0, durationSeconds: 1 }), c);
    expect(out.status).toBe('ok');
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(records(c).stats.samples).toBeGreaterThan(100);
  });

  it('no server: failed with the reason, the log holds one failed record', async () => {
    const c = ctx();
    const out = await runPingpongProbe(probe({ port: await freePort() }), c);
    expect(out).toMatchObject({ status: 'failed', reason: 'no exchange succeeded (refused)' });
    expect(records(c).records).toMatchObject([{ seq: 0, ok: false, error: 'refused' }]);
  });

  it('an echo server from before one-way stamps: timed as before, without one-way figures', async () => {
    // The old protocol exactly: TCP "PPG1" setup acknowledged "PPOK" ("PPG2" closed), fixed-size
    // echoes; UDP datagrams echoed as they came.
    const tcp = net.createServer((sock) => {
      let buf = Buffer.alloc(0);
      let setUp = false;
      sock.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        if (!setUp) {
          if (buf.length < 12) return;
          if (buf.subarray(0, 4).toString() !== 'PPG1') return void sock.destroy();
          setUp = true;
          buf = buf.subarray(12);
          sock.write('PPOK');
        }
        while (buf.length >= 16) {
          sock.write(buf.subarray(0, 16));
          buf = buf.subarray(16);
        }
      });
      sock.on('error', () => {});
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    const port = (tcp.address() as net.AddressInfo).port;
    const udp = dgram.createSocket('udp4');
    udp.on('message', (m, from) => udp.send(m, from.port, from.address));
    await new Promise<void>((r) => udp.bind(port, '127.0.0.1', () => r()));
    try {
      for (const mode of ['tcp', 'udp'] as const) {
        const c = ctx();
        const out = await runPingpongProbe(probe({ mode, port, count: 50 }), c);
        expect(out.status, mode).toBe('ok');
        const recs = records(c).records.filter((r) => r.metric === 'rtt_us');
        expect(recs, mode).toHaveLength(50);
        expect(
          recs.every((r) => r.ok && r.one_way_fwd_us === undefined && r.clock_error_us === undefined),
          mode,
        ).toBe(true);
      }
    } finally {
      tcp.close();
      udp.close();
    }
  });

  it('a server that is not the pingpong echo (HTTP) is reported, not timed', async () => {
    const http = await startServers({ host: '127.0.0.1', http: 0 });
    try {
      const c = ctx();
      const out = await runPingpongProbe(probe({ port: http.ports.http, timeoutMs: 500 }), c);
      expect(out.status).toBe('failed');
      expect(out.reason).toMatch(/no exchange succeeded \((bad-server|timeout)\)/);
    } finally {
      await http.close();
    }
  });
});
