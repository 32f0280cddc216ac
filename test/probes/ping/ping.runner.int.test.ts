/** The ping probe runner with the real iputils ping on loopback, its raw output read back by the parser. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { parseRawLenient } from '../../../probes/index.js';
import { PING_DEFAULTS, runPingWith } from '../../../probes/ping/ping.runner.js';
import type { PingProbe } from '../../../probes/ping/ping.schema.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function run(probe: Partial<PingProbe>, host = '127.0.0.1', opt = PING_DEFAULTS) {
  const outDir = await mkdtemp(join(tmpdir(), 'pb-ping-'));
  dirs.push(outDir);
  const p: PingProbe = {
    kind: 'ping',
    name: 'ping',
    count: 20,
    intervalMs: 5,
    sizeBytes: 56,
    timeoutMs: 1000,
    ...probe,
  };
  const outcome = await runPingWith(p, { target: { host, port: 1 }, outDir, log: () => {} }, opt);
  const raw = gunzipSync(await readFile(join(outDir, 'ping', '1.txt.gz'))).toString('utf8');
  const sidecar = await readFile(join(outDir, 'ping', '1.meta.json'), 'utf8');
  const parsed = parseRawLenient('ping', raw, { runId: 'r', pathId: 'p', probe: 'ping', trial: 1, sidecar });
  return { outcome, raw, sidecar: JSON.parse(sidecar), ...parsed };
}

describe('ping runner', () => {
  it('measures every request on loopback: ping output kept as it is, one ok record each', async () => {
    const r = await run({ count: 30 });
    expect(r.outcome).toMatchObject({ status: 'ok', trials: 1, files: ['ping/1.txt.gz', 'ping/1.meta.json'] });
    expect(r.outcome.tools?.ping).toMatch(/^iputils \d+/);
    expect(r.raw).toMatch(/^PING 127\.0\.0\.1/);
    expect(r.stats).toMatchObject({ rejected: 0, truncated: false });
    expect(r.records).toHaveLength(30);
    expect(r.records.every((x) => x.ok && (x.value ?? -1) >= 0 && (x.value ?? 99) < 50)).toBe(true);
    expect(r.sidecar).toMatchObject({ count: 30, intervalMs: 5, timeoutMs: 1000, exitCode: 0 });
  });

  it('sends the payload size asked for', async () => {
    const r = await run({ count: 3, sizeBytes: 1000 });
    expect(r.records.every((x) => x.bytes === 1008)).toBe(true);
  });

  it('interrupts ping at its deadline and keeps what it measured', async () => {
    const r = await run({ count: 100_000, intervalMs: 10 }, '127.0.0.1', { ...PING_DEFAULTS, marginMs: -999_000 });
    expect(r.sidecar.interrupted).toBe(true);
    expect(r.outcome.status).toBe('ok');
    expect(r.records.filter((x) => x.ok).length).toBeGreaterThan(0);
    // No request counted that ping did not say it sent.
    expect(r.records.length).toBeLessThan(100_000);
  });

  it('an unknown host and a missing ping are failures with a reason, never samples', async () => {
    const unknown = await run({ count: 2 }, 'no-such-host.invalid');
    expect(unknown.outcome).toMatchObject({ status: 'failed', reason: 'unknown-host' });
    expect(unknown.records).toMatchObject([{ ok: false, error: 'unknown-host' }]);
    const missing = await run({ count: 2 }, '127.0.0.1', { ...PING_DEFAULTS, command: 'pathbench-no-such-ping' });
    expect(missing.outcome).toMatchObject({ status: 'failed', reason: 'ping-not-installed' });
  });
});
