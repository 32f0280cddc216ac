/**
 * The pingpong probe end to end on loopback: the real native helper (compiled by the agent)
 * against the real echo server that `agent serve --pingpong` starts, its gzip-compressed log
 * read back through the parser. Short series; figures against sockperf are `npm run bench`'s.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPingpongProbe } from '../../../agent/probes/pingpong.js';
import type { ProbeContext } from '../../../agent/probes/types.js';
import { type RunningServers, startServers } from '../../../agent/server.js';
import type { PingpongProbe } from '../../../functions/core/model.js';
import { parseRawLenient } from '../../../functions/core/parsers/index.js';
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

function records(c: ProbeContext) {
  const raw = gunzipSync(readFileSync(path.join(c.outDir, 'pingpong', '1.csv.gz'))).toString('utf8');
  const sidecar = readFileSync(path.join(c.outDir, 'pingpong', '1.meta.json'), 'utf8');
  return {
    raw,
    ...parseRawLenient('pingpong', raw, { runId: 'r', pathId: 'p', probe: 'pingpong', trial: 1, sidecar }),
  };
}

describe('pingpong probe on loopback (real helper, real echo server)', () => {
  it('agent serve starts the echo server (TCP and UDP on one port)', () => {
    expect(servers.problems).toEqual([]);
    expect(servers.ports.pingpong).toBeGreaterThan(0);
  });

  for (const [mode, req, resp] of [
    ['tcp', 16, 16],
    ['udp', 64, 64],
    ['tcp-rr', 1, 200],
  ] as const) {
    it(`${mode} ${req}/${resp} bytes: every exchange a record, round trip and one-way side by side`, async () => {
      const c = ctx();
      const t0 = Date.now();
      const out = await runPingpongProbe(
        probe({ mode, messageBytes: req, ...(mode === 'tcp-rr' ? { responseBytes: resp } : {}) }),
        c,
      );
      const t1 = Date.now();
      expect(out).toMatchObject({ status: 'ok', trials: 1, files: ['pingpong/1.csv.gz', 'pingpong/1.meta.json'] });
      const { records: recs, stats, raw } = records(c);
      expect(stats).toMatchObject({ samples: 300, rejected: 0, truncated: false });
      expect(raw).toMatch(/# end exchanges=300 ok=300\n$/);
      expect(recs.map((r) => r.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
      for (const r of recs) {
        expect(r).toMatchObject({ kind: 'pingpong', metric: 'rtt_us', unit: 'us', ok: true, mode });
        expect(r.clock).toBe('pingpong-monotonic-busypoll');
        expect(r.value as number).toBeGreaterThan(0);
        // A loopback round trip on a busy 2-core machine: well under the timeout.
        expect(r.value as number).toBeLessThan(1_000_000);
        expect(r.one_way_us).toBeCloseTo((r.value as number) / 2, 9);
        expect(r.t_start).toBeGreaterThanOrEqual(t0 - 5);
        expect(r.t_end).toBeLessThanOrEqual(t1 + 5);
      }
      expect(recs[0]).toMatchObject({ request_bytes: req, response_bytes: resp });
    });
  }

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
