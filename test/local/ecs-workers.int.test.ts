/**
 * A plan with a task client (kind ecs-task) end to end through the real ASL: PrepareTaskProbe,
 * ProbeTask (sqs:sendMessage.waitForTaskToken, resolved by the loopback queue) and EndTaskProbe,
 * with the real ECS worker bundle (dist/ecs-worker.cjs) as a child process running the real agent
 * against a real loopback listener. The EC2-instance path of the same plan still goes through SendProbe.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import { silentLogger } from '../../functions/log.js';
import { DirStore } from '../../local/dir-store.js';
import { type LocalRunResult, runLocal } from '../../local/local-driver.js';

let dir: string;
let server: net.Server;
let result: LocalRunResult;
const entered: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-task-it-'));
  server = net.createServer((s) => {
    s.on('error', () => undefined); // the probe may reset its connections
    s.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  const probes = [{ kind: 'tcp-connect', count: 40, intervalMs: 5, timeoutMs: 400 }];
  const plan = {
    name: 'task-client-loopback',
    defaults: { reboot: false, creditWaitSeconds: 0, probes },
    paths: [
      {
        id: 'D',
        label: 'from a task of the client service',
        client: { kind: 'ecs-task', cluster: 'local', service: 'client-d', region: 'local' },
        target: { host: '127.0.0.1', port },
      },
      {
        id: 'A',
        label: 'from the instance client',
        client: { instanceId: 'local', region: 'local' },
        target: { host: '127.0.0.1', port },
      },
    ],
  };
  result = await runLocal({
    plan,
    dataDir: dir,
    runId: 'it-task-client',
    log: silentLogger,
    onEvent: (e) => {
      if (e.type.endsWith('StateEntered') && e.state) entered.push(e.state.name);
    },
  });
}, 180_000);

afterAll(async () => {
  await new Promise<void>((r) => server?.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

describe('local driver, task client', () => {
  it('measures the task path through the callback branch and the instance path through SSM polling', async () => {
    expect(result.execution.status).toBe('SUCCEEDED');
    for (const s of ['ProbeChannelChoice', 'PrepareTaskProbe', 'ProbeTask', 'EndTaskProbe', 'SendProbe', 'PollProbe'])
      expect(entered).toContain(s);
    const store = new DirStore(dir);
    const keys = await store.list('raw/path=D/');
    expect(keys).toContain('raw/path=D/run=it-task-client/client=client-d/agent.json');
    expect(keys).toContain('raw/path=D/run=it-task-client/client=client-d/tcp-connect/1.jsonl');
    expect(await store.list('samples/path=D/run=it-task-client/')).toContain(
      'samples/path=D/run=it-task-client/tcp-connect-1.jsonl',
    );
  });

  it('records the client kind and the task that ran the probe in the manifest', async () => {
    const m = (await readManifest(new DirStore(dir), 'it-task-client')) as RunManifest;
    const d = m.paths.find((p) => p.id === 'D');
    const a = m.paths.find((p) => p.id === 'A');
    expect(d?.status).toBe('succeeded');
    expect(d?.clientKind).toBe('ecs-task');
    expect(d?.task?.service).toBe('client-d');
    expect(d?.task?.taskArn).toMatch(/^arn:aws:ecs:local:000000000000:task\/local\//);
    expect(d?.steps.find((s) => s.name === 'Probe')?.status).toBe('succeeded');
    expect(a?.status).toBe('succeeded');
    expect(a?.clientKind).toBe('ec2-instance');
    const row = result.summary?.paths.find((p) => p.id === 'D')?.results.find((r) => r.metric === 'connect_rtt_ms');
    expect(row?.n).toBeGreaterThan(30);
  });
});
