/**
 * The runners keep the NIC's allowance counters around each trial in its sidecar (`nic`), read by
 * the context's reader (probes/run-kit/nic.ts). The reader here counts its own readings, so the
 * before/after pair is known; the real readers (ENA's ethtool -S, the lab's tbf) are read by the
 * lab pipeline test (test/lab/pipeline.lab.test.ts) and parsed in test/core/nic-allowance.test.ts.
 * Real tcp-connect runner against a loopback listener.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServers, startServers } from '../../../agent/server.js';
import type { NicSnapshot } from '../../../core/nic-allowance.js';
import { type NicReader, nicTrial } from '../../../probes/run-kit/nic.js';
import { runTcpConnect } from '../../../probes/tcp-connect/tcp-connect.runner.js';

let dir: string;
let servers: RunningServers;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pb-nic-'));
  servers = await startServers({ host: '127.0.0.1', tcp: 0 });
});
afterAll(async () => {
  await servers.close();
  await rm(dir, { recursive: true, force: true });
});

/** A reader whose bw_out counter grows by `step` at every reading. */
function counting(step: number): NicReader & { reads: number } {
  const r = Object.assign(
    async (): Promise<NicSnapshot> => {
      r.reads++;
      return { source: 'ena', dev: 'ens5', counters: { bw_out: 100 + step * r.reads, pps: 7 } };
    },
    { reads: 0 },
  );
  return r;
}

describe('the NIC counters around a trial', () => {
  it('tcp-connect keeps the readings before and after its series in 1.meta.json', async () => {
    const nic = counting(5);
    const probe = { kind: 'tcp-connect' as const, name: 'tc-nic', count: 5, intervalMs: 2, timeoutMs: 1000 };
    const out = await runTcpConnect(probe, {
      target: { host: '127.0.0.1', port: servers.ports.tcp! },
      outDir: dir,
      log: () => {},
      nic,
    });
    expect(out.status).toBe('ok');
    expect(out.files).toEqual(['tc-nic/1.jsonl', 'tc-nic/1.meta.json']);
    const meta = JSON.parse(await readFile(path.join(dir, 'tc-nic/1.meta.json'), 'utf8'));
    expect(meta.nic).toEqual({
      source: 'ena',
      dev: 'ens5',
      before: { bw_out: 105, pps: 7 },
      after: { bw_out: 110, pps: 7 },
    });
    expect(nic.reads).toBe(2);
  });

  it('without a reader tcp-connect writes no sidecar, as before', async () => {
    const probe = { kind: 'tcp-connect' as const, name: 'tc-plain', count: 3, intervalMs: 2, timeoutMs: 1000 };
    const out = await runTcpConnect(probe, {
      target: { host: '127.0.0.1', port: servers.ports.tcp! },
      outDir: dir,
      log: () => {},
    });
    expect(out.files).toEqual(['tc-plain/1.jsonl']);
    await expect(stat(path.join(dir, 'tc-plain/1.meta.json'))).rejects.toThrow();
  });

  it('keeps a pair only from one source and device', async () => {
    const a: NicSnapshot = { source: 'tbf', dev: 'eth0', counters: { bw_out: 1 } };
    expect(nicTrial(a, { ...a, counters: { bw_out: 9 } })).toEqual({
      nic: { source: 'tbf', dev: 'eth0', before: { bw_out: 1 }, after: { bw_out: 9 } },
    });
    expect(nicTrial(a, { ...a, dev: 'eth1' })).toEqual({});
    expect(nicTrial(a, undefined)).toEqual({});
  });
});
