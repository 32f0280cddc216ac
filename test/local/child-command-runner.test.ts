/**
 * LocalCommandRunner with a real child process (a tiny agent script): a SendProbe sent twice
 * starts one agent, raw files already stored for the path are never overwritten, and an agent a
 * gone process left running is ended and its output stored.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, onTestFinished } from 'vitest';
import { keys } from '../../core/keys.js';
import { LocalCommandRunner } from '../../local/child-command-runner.js';
import { DirStore } from '../../local/dir-store.js';

const AGENT = `const fs = require('node:fs');
const out = process.argv[process.argv.indexOf('--out') + 1];
fs.mkdirSync(out + '/tcp', { recursive: true });
fs.writeFileSync(out + '/tcp/1.jsonl', 'agent ' + process.pid + '\\n');
fs.appendFileSync(process.env.AGENT_STARTS, process.pid + '\\n');
`;

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), 'pathbench-runner-'));
  dirs.push(dir);
  const agentPath = join(dir, 'agent.cjs');
  await writeFile(agentPath, AGENT);
  const store = new DirStore(join(dir, 'data'));
  await store.put(keys.spec('r1', 'A', 'local'), '{}');
  process.env.AGENT_STARTS = join(dir, 'starts');
  await writeFile(process.env.AGENT_STARTS, '');
  const warnings: string[] = [];
  const log = { info() {}, warn: (m: string) => void warnings.push(m), error() {} };
  const runner = new LocalCommandRunner({ agentPath, store, log });
  const cmd = {
    runId: 'r1',
    pathId: 'A',
    client: { instanceId: 'local', region: 'local' },
    specKey: keys.spec('r1', 'A', 'local'),
    rawPrefix: keys.rawPrefix('A', 'r1'),
    timeoutSeconds: 30,
  };
  return { dir, store, runner, cmd, warnings };
}

it('a probe sent twice for the same run and path starts one agent and resumes it', async () => {
  const { dir, store, runner, cmd } = await setup();
  const first = await runner.send(cmd);
  const again = await runner.send(cmd);
  expect(again).toEqual(first);
  await runner.drain();
  const { readFile } = await import('node:fs/promises');
  expect((await readFile(join(dir, 'starts'), 'utf8')).trim().split('\n')).toHaveLength(1);
  expect((await runner.status(first.commandId)).status).toBe('Success');
  expect(await store.getText(`${cmd.rawPrefix}tcp/1.jsonl`)).toMatch(/^agent \d+/);
});

it('raw files already stored for the run and path (a first agent’s) are kept, not overwritten', async () => {
  const { store, runner, cmd, warnings } = await setup();
  await store.put(`${cmd.rawPrefix}tcp/1.jsonl`, 'first agent\n');
  const { commandId } = await runner.send(cmd);
  await runner.drain();
  expect((await runner.status(commandId)).status).toBe('Success');
  expect(await store.getText(`${cmd.rawPrefix}tcp/1.jsonl`)).toBe('first agent\n');
  expect(warnings).toContain('raw files already stored by another agent were kept, not overwritten');
});

it('an agent recorded by a process that is gone is killed with its tools, and its output stored', async () => {
  const { dir, store } = await setup();
  const stateDir = join(dir, 'data', '.agents');
  const runner = new LocalCommandRunner({
    agentPath: join(dir, 'agent.cjs'),
    store,
    log: { info() {}, warn() {}, error() {} },
    stateDir,
  });
  // An orphan that ignores its parent's end: it and a "tool" it started keep running.
  const work = join(dir, 'work');
  const out = join(work, 'out');
  const { mkdir, readFile } = await import('node:fs/promises');
  await mkdir(join(out, 'tcp'), { recursive: true });
  await writeFile(join(out, 'tcp', '1.jsonl'), '{"seq":1}\n{"seq":2}\n');
  const script = `require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'inherit' });
setInterval(() => {}, 1000);`;
  const commandId = `local-r9-A-${process.pid}`;
  const orphan = spawn(process.execPath, ['-e', script], {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, PATHBENCH_AGENT_COMMAND: commandId },
  });
  orphan.unref();
  // Whatever the test leaves running is ended, also when it fails.
  onTestFinished(() => {
    try {
      if (orphan.pid) process.kill(-orphan.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  const gone = spawn('true');
  await new Promise((r) => gone.once('close', r));
  await mkdir(stateDir, { recursive: true });
  await writeFile(
    join(stateDir, `${commandId}.json`),
    JSON.stringify({
      commandId,
      runId: 'r9',
      pathId: 'A',
      rawPrefix: keys.rawPrefix('A', 'r9'),
      pid: orphan.pid,
      work,
      outDir: out,
      owner: { pid: gone.pid, host: hostname() },
      startedAt: new Date().toISOString(),
    }),
  );
  const marked = () =>
    readdirSync('/proc')
      .filter((e) => /^\d+$/.test(e))
      .filter((e) => {
        try {
          return readFileSync(`/proc/${e}/environ`, 'latin1').includes(`PATHBENCH_AGENT_COMMAND=${commandId}\0`);
        } catch {
          return false;
        }
      });
  for (let i = 0; i < 100 && marked().length < 2; i++) await new Promise((r) => setTimeout(r, 100));
  expect(marked()).toHaveLength(2);
  // Another run's agents are not this run's to recover.
  expect(await runner.recoverOrphans('r8')).toEqual([]);
  const got = await runner.recoverOrphans('r9');
  expect(got).toEqual([{ runId: 'r9', pathId: 'A', commandId, killed: true, files: 1 }]);
  expect(marked()).toEqual([]);
  expect(await store.getText(`${keys.rawPrefix('A', 'r9')}tcp/1.jsonl`)).toBe('{"seq":1}\n{"seq":2}\n');
  expect(existsSync(work)).toBe(false);
  expect(readdirSync(stateDir)).toEqual([]);
  await expect(readFile(join(stateDir, `${commandId}.json`))).rejects.toThrow();
});
