/**
 * The agent bundle end to end: build dist/agent.cjs, start `agent serve` on free loopback
 * ports, run a spec with tcp-connect (open, closed, overloaded ports) and http (keep-alive on
 * and off), and check raw files, agent.json, failure reasons and the slow-accept behaviour.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runSpec } from '../../agent/run.js';
import { registerParse } from '../../cli/commands/parse.command.js';
import type { AgentReport } from '../../core/agent-report.js';
import type { AgentSpec } from '../../core/agent-spec.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { parseRaw } from '../../probes/index.js';
import { freePort } from '../helpers/ports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const AGENT = path.join(ROOT, 'dist', 'agent.cjs');
const run = promisify(execFile);

let dir: string;
let server: ChildProcess;
let ports: { tcp: number; http: number; slowAccept: number };
let closedPort: number;

/** Run the agent; never rejects, resolves to exit code and output. */
async function agent(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [AGENT, ...args], { timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

beforeAll(async () => {
  await run(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
  dir = await mkdtemp(path.join(os.tmpdir(), 'pb-agent-it-'));
  const readyFile = path.join(dir, 'ready.json');
  server = spawn(process.execPath, [
    AGENT,
    'serve',
    '--host',
    '127.0.0.1',
    '--tcp',
    '0',
    '--http',
    '0',
    '--slow-accept',
    '0:300',
    '--ready-file',
    readyFile,
  ]);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (out === 'ready\n') resolve();
    });
    server.once('exit', (code) => reject(new Error(`serve exited early with ${code}`)));
  });
  ports = JSON.parse(await readFile(readyFile, 'utf8'));
  closedPort = await freePort();
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('agent bundle', () => {
  it('is one file that needs node built-ins only and knows its version', async () => {
    const src = await readFile(AGENT, 'utf8');
    expect(src.startsWith('#!/usr/bin/env node\n')).toBe(true);
    const requires = [...src.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
    expect(requires.length).toBeGreaterThan(0);
    expect(requires.filter((r) => !r.startsWith('node:') && !['fs', 'path', 'os', 'net', 'http'].includes(r))).toEqual(
      [],
    );
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
    expect((await agent('version')).stdout).toBe(`${pkg.version}\n`);
  });

  it('rejects a bad spec with exit 1 and one clear line', async () => {
    const bad = path.join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ runId: 'r', pathId: '../etc', target: { host: 'x', port: 1 }, probes: [] }));
    const res = await agent('run', '--spec', bad, '--out', path.join(dir, 'bad-out'));
    expect(res.code).toBe(1);
    expect(res.stderr.split('\n')[0]).toBe(
      'agent: bad spec: pathId: expected a safe id (letters, digits, "-", "_", starting with a letter or digit, ' +
        'at most 63 characters), got "../etc"',
    );
    expect(existsSync(path.join(dir, 'bad-out', 'agent.json'))).toBe(false);
  });

  it('fails with exit 1 and one clear line when the output directory cannot be created', async () => {
    const spec = path.join(dir, 'ok-spec.json');
    await writeFile(
      spec,
      JSON.stringify({ runId: 'r', pathId: 'p', target: { host: '127.0.0.1', port: 1 }, probes: [] }),
    );
    const res = await agent('run', '--spec', spec, '--out', path.join(spec, 'sub'));
    expect(res.code).toBe(1);
    expect(res.stderr.split('\n')[0]).toMatch(/^agent: cannot create output directory .*sub: ENOTDIR$/);
  });

  it('runs tcp-connect and http probes and records everything', async () => {
    // Prepare
    const spec: AgentSpec = {
      runId: 'it-1',
      pathId: 'loopback',
      target: { host: '127.0.0.1', port: ports.tcp },
      probes: [
        { kind: 'tcp-connect', name: 'tcp-connect', count: 40, intervalMs: 10, timeoutMs: 2000 },
        { kind: 'tcp-connect', name: 'closed', count: 5, intervalMs: 10, timeoutMs: 1000, port: closedPort },
        { kind: 'tcp-connect', name: 'overloaded', count: 12, intervalMs: 40, timeoutMs: 5000, port: ports.slowAccept },
        {
          kind: 'http',
          name: 'http-ka',
          count: 100,
          concurrency: 4,
          keepAlive: true,
          payloadBytes: 1024,
          trials: 2,
          timeoutMs: 2000,
          port: ports.http,
        },
        {
          kind: 'http',
          name: 'http-noka',
          count: 50,
          concurrency: 1,
          keepAlive: false,
          payloadBytes: 1024,
          trials: 1,
          timeoutMs: 2000,
          port: ports.http,
        },
      ],
      skipped: [{ name: 'mtu', kind: 'mtu', reason: 'no ICMP on this path' }],
    };
    const specFile = path.join(dir, 'spec.json');
    const out = path.join(dir, 'out');
    await writeFile(specFile, JSON.stringify(spec));

    // Act
    const res = await agent('run', '--spec', specFile, '--out', out);

    // Assess: the agent worked (exit 0) even though a probe failed; failures are data.
    expect(res.stderr).toContain('probe end');
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`${path.join(out, 'agent.json')}\n`);
    const report = JSON.parse(await readFile(path.join(out, 'agent.json'), 'utf8')) as AgentReport;
    expect(report).toMatchObject({ host: os.hostname(), kernel: os.release(), node: process.version });
    expect(report.partial).toBeUndefined();
    // The spec has tcp-connect probes, so the agent calibrated its own loopback overhead.
    expect(report.calibration?.['tcp-connect']).toMatchObject({ n: expect.any(Number), method: expect.any(String) });
    const cal = report.calibration?.['tcp-connect'] as { p50_us: number } | undefined;
    expect(cal?.p50_us).toBeGreaterThan(0);
    expect(Date.parse(String(report.endedAt))).toBeGreaterThanOrEqual(Date.parse(String(report.startedAt)));
    const byName = Object.fromEntries(report.probes.map((p) => [p.probe, p]));
    expect(byName.mtu).toMatchObject({ kind: 'mtu', status: 'skipped', reason: 'no ICMP on this path', files: [] });
    expect(byName['tcp-connect']).toMatchObject({ status: 'ok', trials: 1, files: ['tcp-connect/1.jsonl'] });
    expect(byName.closed).toMatchObject({ status: 'failed', files: ['closed/1.jsonl'] });
    expect(byName.closed.reason).toMatch(/refused/);
    expect(byName['http-ka']).toMatchObject({ status: 'ok', trials: 2, files: ['http-ka/1.jsonl', 'http-ka/2.jsonl'] });
    expect(byName['http-noka']).toMatchObject({ status: 'ok', trials: 1, files: ['http-noka/1.jsonl'] });

    const records = async (probe: string, kind: string, trial = 1): Promise<SampleRecord[]> =>
      parseRaw(kind, await readFile(path.join(out, probe, `${trial}.jsonl`), 'utf8'), {
        runId: spec.runId,
        pathId: spec.pathId,
        probe,
        trial,
      });

    const open = await records('tcp-connect', 'tcp-connect');
    expect(open).toHaveLength(40);
    expect(open.every((r) => r.ok && typeof r.value === 'number')).toBe(true);

    const closed = await records('closed', 'tcp-connect');
    expect(closed).toHaveLength(5);
    expect(closed.every((r) => !r.ok && r.value === null && r.error === 'refused')).toBe(true);

    // An overloaded server (full accept queue) shows up as SYN retransmits: ≥ 1 s connects
    // or timeouts, which the plain listener never produces.
    const slow = await records('overloaded', 'tcp-connect');
    const stalled = (rs: SampleRecord[]) => rs.filter((r) => !r.ok || (r.value as number) >= 900).length;
    expect(stalled(open)).toBe(0);
    expect(stalled(slow)).toBeGreaterThanOrEqual(2);
    // Failed attempts count as their full timeout: an overloaded server costs at least that.
    const mean = (rs: SampleRecord[], timeoutMs: number) =>
      rs.reduce((a, r) => a + (r.ok ? (r.value as number) : timeoutMs), 0) / rs.length;
    expect(mean(slow, 5000)).toBeGreaterThan(100 * mean(open, 2000));
    expect(mean(slow, 5000)).toBeGreaterThan(150);

    for (const trial of [1, 2]) {
      const ka = await records('http-ka', 'http', trial);
      expect(ka).toHaveLength(100);
      expect(ka.every((r) => r.ok && r.status === 200 && r.bytes === 1024)).toBe(true);
      expect(new Set(ka.map((r) => r.local_port)).size).toBeLessThanOrEqual(4);
    }
    const noka = await records('http-noka', 'http');
    expect(noka).toHaveLength(50);
    expect(noka.every((r) => r.ok && r.bytes === 1024)).toBe(true);
    expect(new Set(noka.map((r) => r.local_port)).size).toBe(50);
  });

  it('`pathbench parse` prints the records of a raw file, names bad lines (exit 1), rejects unusable input with exit 2', async () => {
    const raw = path.join(dir, 'out', 'closed', '1.jsonl');
    const broken = path.join(dir, 'broken.jsonl');
    await writeFile(broken, '{"seq":1,"t_start":1,"t_end":2,"ok":true,"rtt_ms":0.1}\n{"seq":2,\n');
    const cli = async (...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => out.push(String(c)) > 0);
      const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => err.push(String(c)) > 0);
      process.exitCode = undefined;
      try {
        const program = new Command('pathbench').exitOverride();
        registerParse(program);
        await program.parseAsync(['parse', ...args], { from: 'user' });
        return { code: process.exitCode ?? 0, stdout: out.join(''), stderr: err.join('') };
      } finally {
        o.mockRestore();
        e.mockRestore();
        process.exitCode = undefined;
      }
    };

    const ok = await cli('tcp-connect', raw, '--run', 'it-1', '--path', 'loopback');
    expect(ok.code).toBe(0);
    const lines = ok.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatchObject({
      run_id: 'it-1',
      path_id: 'loopback',
      probe: 'closed',
      trial: 1,
      error: 'refused',
    });

    // One good line and one bad: the good record printed, the bad line named, exit 1.
    const partial = await cli('tcp-connect', broken);
    expect(partial.code).toBe(1);
    expect(partial.stdout.trim().split('\n')).toHaveLength(1);
    expect(partial.stderr).toMatch(/tcp-connect line 2: /);

    for (const args of [
      ['traceroute', raw],
      ['http', path.join(dir, 'missing.jsonl')],
    ]) {
      const bad = await cli(...args);
      expect(bad.code).toBe(2);
      expect(bad.stdout).toBe('');
      expect(bad.stderr).toMatch(/^pathbench parse: .+\n$/);
      expect(bad.stderr.split('\n')).toHaveLength(2);
    }
  });

  it('records a probe whose runner throws as failed and goes on with the next probe', async () => {
    // Prepare: port 70000 makes node:net throw inside the runner (the CLI's spec check would
    // refuse it, so call runSpec directly).
    const out = path.join(dir, 'throws');
    const snapshots: AgentReport[] = [];
    const spec: AgentSpec = {
      runId: 'it-2',
      pathId: 'loopback',
      target: { host: '127.0.0.1', port: ports.tcp },
      probes: [
        { kind: 'tcp-connect', name: 'bad-port', count: 3, intervalMs: 10, timeoutMs: 500, port: 70000 },
        { kind: 'tcp-connect', name: 'after', count: 3, intervalMs: 10, timeoutMs: 500 },
      ],
      skipped: [],
    };
    // Act
    const report = await runSpec(
      spec,
      out,
      () => {},
      async (r) => {
        snapshots.push(r);
      },
    );
    // Assess
    expect(report.probes.map((p) => [p.probe, p.status])).toEqual([
      ['bad-port', 'failed'],
      ['after', 'ok'],
    ]);
    expect(report.probes[0].reason).toMatch(/^runner error: .*70000/);
    // Before each probe the stored report already names it as interrupted (the crash tombstone).
    expect(snapshots[0].probes).toEqual([
      expect.objectContaining({ probe: 'bad-port', reason: expect.stringMatching(/^interrupted/) }),
    ]);
    expect(snapshots).toHaveLength(4);
  });

  it('serves /bytes/<n> and /health, refuses oversize payloads', async () => {
    const base = `http://127.0.0.1:${ports.http}`;
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    const body = await (await fetch(`${base}/bytes/300000`)).arrayBuffer();
    expect(body.byteLength).toBe(300000);
    expect((await fetch(`${base}/bytes/${100 * 1024 * 1024 + 1}`)).status).toBe(400);
    expect((await fetch(`${base}/bytes/abc`)).status).toBe(400);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  it('stops cleanly on SIGTERM', async () => {
    const exited = new Promise<number | null>((r) => server.once('exit', (code) => r(code)));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
