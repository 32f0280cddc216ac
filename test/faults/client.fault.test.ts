/**
 * Fault classes of the client and its command channel: capacity failure on start; SSM agent
 * offline and a command never delivered; output over 24 KB and the execution timeout; iperf3
 * busy and killed. The client is the AWS-world instance (EC2 + SSM adapter over the mocked
 * SDK), the probe the real agent on loopback.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import type { ProbeCommand } from '../../functions/ports.js';
import { DirStore } from '../../local/dir-store.js';
import { haveTool } from '../../local/targets.js';
import { type FaultCase, faultCase } from './harness.js';
import { FAULT_PORTS } from './ports.js';

async function manifest(c: FaultCase, runId: string): Promise<RunManifest> {
  return ((await readManifest(new DirStore(c.dir), runId)) ?? null) as RunManifest;
}

function path(m: RunManifest, id: string) {
  const p = m.paths.find((x) => x.id === id);
  if (!p) throw new Error(`no path ${id}`);
  return { ...p, samples: p.probes.reduce((s, x) => s + x.samples, 0) };
}

describe.concurrent('capacity failure on start', () => {
  faultCase(
    'capacity failure on start',
    'the start fails once for capacity: retried or recorded, the next path still measures',
    async (c) => {
      c.aws.capacityFailures = 1;
      const r = await c.run(c.plan([{ id: 'a', reboot: true }, { id: 'b' }]), { awsFleet: true });
      expect(r.execution.status).toBe('SUCCEEDED');
      const m = await manifest(c, r.runId);
      if (path(m, 'a').status !== 'succeeded') expect(path(m, 'a').error).toMatch(/InstanceCapacityError/);
      expect(path(m, 'b').status, path(m, 'b').error).toBe('succeeded');
      expect(c.aws.instance.state).toBe('running');
    },
  );

  faultCase('capacity failure on start', 'a reboot that starts fine measures (the EC2 world itself)', async (c) => {
    const r = await c.run(c.plan([{ id: 'a', reboot: true }]), { awsFleet: true });
    const m = await manifest(c, r.runId);
    expect(path(m, 'a').status, path(m, 'a').error).toBe('succeeded');
    expect(c.faults.count('fleet.stop')).toBe(1);
    expect(c.faults.count('fleet.start')).toBe(1);
  });
});

describe.concurrent('SSM agent offline, command never delivered', () => {
  faultCase(
    'SSM agent offline / never delivered',
    'agent offline: SendCommand refused, the path fails naming it, the run ends cleanly',
    async (c) => {
      c.aws.faults.agentOffline = true;
      const r = await c.run(c.plan([{ id: 'a' }]), { awsFleet: true });
      expect(r.execution.status).toBe('SUCCEEDED');
      const a = path(await manifest(c, r.runId), 'a');
      expect(a.status).toBe('failed');
      expect(a.error).toMatch(/InvalidInstanceId/);
    },
  );

  faultCase(
    'SSM agent offline / never delivered',
    'agent never back online after the reboot: bounded wait, the path fails',
    async (c) => {
      c.aws.faults.agentOffline = true;
      const r = await c.run(c.plan([{ id: 'a', reboot: true }]), { awsFleet: true });
      expect(r.execution.status).toBe('SUCCEEDED');
      const a = path(await manifest(c, r.runId), 'a');
      expect(a.status).toBe('failed');
      expect(a.failedStep).toBe('CheckReady');
    },
  );

  faultCase(
    'SSM agent offline / never delivered',
    'command accepted but never delivered: cancelled at its deadline, the next path measures',
    async (c) => {
      let sent = 0;
      c.faults.add({
        site: 'runner.send',
        nth: 1,
        action: { replace: async () => ({ commandId: `never-delivered-${++sent}` }) },
      });
      c.faults.add({
        site: 'runner.status',
        match: (a) => String(a[0]).startsWith('never-delivered'),
        action: {
          replace: async () => {
            // Pending for ever; time runs past the command's deadline.
            c.skewMs += 10 * 60_000;
            return { status: 'Pending' };
          },
        },
      });
      c.faults.add({
        site: 'runner.cancel',
        match: (a) => String(a[0]).startsWith('never-delivered'),
        action: { replace: async () => undefined },
      });
      const r = await c.run(c.plan([{ id: 'a' }, { id: 'b' }]), { awsFleet: true });
      const m = await manifest(c, r.runId);
      expect(path(m, 'a').status).toBe('failed');
      expect(path(m, 'a').error).toMatch(/ProbeTimeoutError|PollTimeoutError/);
      expect(c.faults.count('runner.cancel')).toBeGreaterThanOrEqual(1);
      expect(path(m, 'b').status, path(m, 'b').error).toBe('succeeded');
    },
  );
});

describe.concurrent('output over 24 KB, execution timeout', () => {
  faultCase('output over 24 KB / execution timeout', 'raw output over 24 KB: every sample stored', async (c) => {
    const r = await c.run(c.plan([{ id: 'a', count: 400 }]));
    const a = path(await manifest(c, r.runId), 'a');
    expect(a.status).toBe('succeeded');
    expect(a.samples).toBe(400);
    const raw = (await new DirStore(c.dir).list(`raw/path=a/run=${r.runId}/`)).find((k) =>
      k.endsWith('tcp-connect/1.jsonl'),
    );
    expect(statSync(join(c.dir, raw ?? 'missing')).size).toBeGreaterThan(24 * 1024);
  });

  faultCase(
    'output over 24 KB / execution timeout',
    'a failed command with 30 KB of output: the path fails, its samples are kept',
    async (c) => {
      // SSM reports the agent's end as Failed with a long output (it keeps 24,000 characters).
      c.faults.add({
        site: 'runner.status',
        action: {
          map: (_a, inv) =>
            (inv as { status: string }).status === 'Success' ? { status: 'Failed', detail: 'x'.repeat(30_000) } : inv,
        },
      });
      const r = await c.run(c.plan([{ id: 'a', count: 40 }, { id: 'b' }]));
      expect(r.execution.status).toBe('SUCCEEDED');
      const m = await manifest(c, r.runId);
      expect(path(m, 'a').status).toBe('failed');
      expect(path(m, 'a').samples).toBe(40);
      expect(JSON.stringify(m).length).toBeLessThan(256 * 1024);
    },
  );

  faultCase(
    'output over 24 KB / execution timeout',
    'the execution timeout kills the agent mid-probe: what it wrote is kept',
    async (c) => {
      // Path a only, long enough for its agent to start on a loaded machine, short of its 10 s probe.
      c.faults.add({
        site: 'runner.send',
        match: (a) => (a[0] as ProbeCommand).pathId === 'a',
        action: {
          hook: (a) => {
            (a[0] as ProbeCommand).timeoutSeconds = 8;
          },
        },
      });
      const r = await c.run(c.plan([{ id: 'a', count: 2000 }, { id: 'b' }]));
      const m = await manifest(c, r.runId);
      expect(path(m, 'a').status).toBe('failed');
      expect(path(m, 'a').error).toMatch(/TimedOut|killed/);
      expect(path(m, 'a').samples).toBeGreaterThan(0);
      expect(path(m, 'b').status).toBe('succeeded');
    },
  );

  faultCase(
    'output over 24 KB / execution timeout',
    "the killed agent's files are still being copied when the timeout is reported: CollectOutput waits for them",
    async (c) => {
      // The copy of the killed agent's work directory is slow (a loaded machine): the command
      // must not read as ended before its files are in the store.
      // Path a only, long enough for its agent to start on a loaded machine, short of its 10 s probe.
      c.faults.add({
        site: 'runner.send',
        match: (a) => (a[0] as ProbeCommand).pathId === 'a',
        action: {
          hook: (a) => {
            (a[0] as ProbeCommand).timeoutSeconds = 8;
          },
        },
      });
      c.faults.add({
        site: 'raw.put',
        match: (a) => String(a[0]).startsWith('raw/path=a/'),
        action: { delayMs: 1500 },
      });
      const r = await c.run(c.plan([{ id: 'a', count: 2000 }, { id: 'b' }]));
      const m = await manifest(c, r.runId);
      expect(path(m, 'a').status).toBe('failed');
      expect(path(m, 'a').error).toMatch(/TimedOut|killed|cancelled/);
      expect(path(m, 'a').samples).toBeGreaterThan(0);
      expect(path(m, 'b').status).toBe('succeeded');
    },
  );
});

/** A process this suite started, stopped by its pid. */
function start(argv: string[]): ChildProcess {
  const child = spawn(argv[0], argv.slice(1), { stdio: 'ignore' });
  child.on('error', () => undefined);
  return child;
}

describe.runIf(haveTool('iperf3'))('iperf3 busy / killed', () => {
  const iperf = (port: number) => ({ kind: 'iperf3', port, mode: 'tcp', durationSeconds: 2, repeats: 1 });

  faultCase('iperf3 busy / killed', 'server busy with another client: retried, then measured', async (c) => {
    const hog = start(['iperf3', '-c', '127.0.0.1', '-p', String(FAULT_PORTS.iperf3), '-t', '2']);
    try {
      await new Promise((r) => setTimeout(r, 300));
      const r = await c.run(c.plan([{ id: 'a', probes: [iperf(FAULT_PORTS.iperf3)] }]));
      const a = path(await manifest(c, r.runId), 'a');
      expect(a.status, a.error).toBe('succeeded');
      expect(a.samples).toBeGreaterThan(0);
    } finally {
      hog.kill('SIGKILL');
    }
  });

  faultCase('iperf3 busy / killed', 'server killed mid-test: the intervals measured before are kept', async (c) => {
    const port = FAULT_PORTS.iperf3 + 7;
    const server = start(['iperf3', '-s', '-1', '-p', String(port)]);
    try {
      await new Promise((r) => setTimeout(r, 300));
      c.faults.add({
        site: 'runner.send',
        action: { after: () => void setTimeout(() => server.kill('SIGKILL'), 1500) },
      });
      const r = await c.run(c.plan([{ id: 'a', probes: [{ ...iperf(port), durationSeconds: 4 }] }]));
      expect(r.execution.status).toBe('SUCCEEDED');
    } finally {
      server.kill('SIGKILL');
    }
  });
});
