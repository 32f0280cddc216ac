/**
 * mtu runner + parser with the real ping: loopback (MTU 65536 → capped at max), a veth into a
 * namespace of ours with MTU 1400 ("message too long" is an answer), and the same namespace
 * dropping ICMP echo (→ icmp-blocked, never a number). Needs root for the namespace. The ping
 * texts and malformed files without ping are in mtu.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMtu } from '../../../probes/mtu/mtu.parser.js';
import { MTU_DEFAULTS, runMtuWith } from '../../../probes/mtu/mtu.runner.js';
import type { MtuProbe } from '../../../probes/mtu/mtu.schema.js';
import { sh } from '../../helpers/sh.js';

const NS = 'pb-tcr-ms';
const HOST_IF = 'pb-tcrm0';
const PEER_IF = 'pb-tcrm1';
const PEER_IP = '10.213.77.2';
const dirs: string[] = [];
const meta = { runId: 'r1', pathId: 'p1', probe: 'mtu', trial: 1 };
const probe = (over: Partial<MtuProbe> = {}): MtuProbe => ({
  kind: 'mtu',
  name: 'mtu',
  min: 576,
  max: 9001,
  timeoutMs: 500,
  ...over,
});

function ctx(host: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pb-mtu-'));
  dirs.push(dir);
  return { target: { host, port: 0 }, outDir: dir, log: () => {} };
}
const rawOf = (c: { outDir: string }) => readFileSync(path.join(c.outDir, 'mtu', '1.json'), 'utf8');

function cleanup() {
  try {
    sh('ip', 'netns', 'del', NS); // deleting the namespace removes both veth ends
  } catch {
    // not there
  }
  try {
    sh('ip', 'link', 'del', HOST_IF);
  } catch {
    // not there
  }
}

beforeAll(() => {
  cleanup();
  sh('ip', 'netns', 'add', NS);
  sh('ip', 'link', 'add', HOST_IF, 'mtu', '1400', 'type', 'veth', 'peer', 'name', PEER_IF, 'mtu', '1400');
  sh('ip', 'link', 'set', PEER_IF, 'netns', NS);
  sh('ip', 'addr', 'add', '10.213.77.1/30', 'dev', HOST_IF);
  sh('ip', 'link', 'set', HOST_IF, 'up');
  sh('ip', '-n', NS, 'addr', 'add', `${PEER_IP}/30`, 'dev', PEER_IF);
  sh('ip', '-n', NS, 'link', 'set', PEER_IF, 'up');
  sh('ip', '-n', NS, 'link', 'set', 'lo', 'up');
});

afterAll(() => {
  cleanup();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  expect(sh('ip', 'netns', 'list')).not.toContain(NS);
  expect(sh('ip', 'link', 'show')).not.toContain('pb-tcrm');
});

describe('runMtu + parseMtu (real ping)', () => {
  it('loopback (MTU 65536): the result is the max, 9001', async () => {
    const c = ctx('127.0.0.1');
    const out = await runMtuWith(probe(), c, MTU_DEFAULTS);
    expect(out).toEqual({ status: 'ok', files: ['mtu/1.json'], trials: 1 });
    const raw = JSON.parse(rawOf(c));
    expect(raw.result).toEqual({ status: 'ok', mtu: 9001 });
    expect(raw.attempts.map((a: { mtu: number; payload: number }) => [a.mtu, a.payload])).toEqual([
      [576, 548],
      [9001, 8973],
    ]);
    expect(parseMtu(rawOf(c), meta)).toMatchObject([
      { metric: 'mtu_bytes', unit: 'bytes', value: 9001, ok: true, seq: 0 },
    ]);
  });

  it('a 1400-byte link: "message too long, mtu=1400" is an answer, the search lands on 1400', async () => {
    const c = ctx(PEER_IP);
    const out = await runMtuWith(probe(), c, MTU_DEFAULTS);
    expect(out.status).toBe('ok');
    const raw = JSON.parse(rawOf(c));
    expect(raw.result).toEqual({ status: 'ok', mtu: 1400 });
    expect(
      raw.attempts.some((a: { outcome: string; localMtu?: number }) => a.outcome === 'too-big' && a.localMtu === 1400),
    ).toBe(true);
    expect(parseMtu(rawOf(c), meta)).toMatchObject([{ value: 1400, ok: true }]);
  });

  it('ICMP echo dropped on the far side: icmp-blocked, one failed record, never a number', async () => {
    sh('ip', 'netns', 'exec', NS, 'iptables', '-A', 'INPUT', '-p', 'icmp', '--icmp-type', 'echo-request', '-j', 'DROP');
    try {
      const c = ctx(PEER_IP);
      const out = await runMtuWith(probe({ timeoutMs: 300 }), c, MTU_DEFAULTS);
      expect(out).toMatchObject({ status: 'failed', reason: 'icmp-blocked' });
      const raw = JSON.parse(rawOf(c));
      expect(raw.result).toEqual({ status: 'icmp-blocked' });
      expect(raw.attempts).toHaveLength(2); // the smallest size, asked twice
      const recs = parseMtu(rawOf(c), meta);
      expect(recs).toEqual([
        expect.objectContaining({ metric: 'mtu_bytes', value: null, ok: false, error: 'icmp-blocked' }),
      ]);
    } finally {
      sh('ip', 'netns', 'exec', NS, 'iptables', '-F', 'INPUT');
    }
  });

  it('ping not installed: failed with reason ping-not-installed', async () => {
    const c = ctx('127.0.0.1');
    const out = await runMtuWith(probe(), c, { ...MTU_DEFAULTS, command: 'pb-no-such-ping' });
    expect(out).toMatchObject({ status: 'failed', reason: 'ping-not-installed' });
    expect(parseMtu(rawOf(c), meta)).toMatchObject([{ ok: false, value: null, error: 'ping-not-installed' }]);
  });
});
