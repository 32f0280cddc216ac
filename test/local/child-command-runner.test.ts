/**
 * LocalCommandRunner with a real child process (a tiny agent script): a SendProbe sent twice
 * starts one agent, and raw files already stored for the path are never overwritten.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
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
  await store.put(keys.spec('r1', 'A'), '{}');
  process.env.AGENT_STARTS = join(dir, 'starts');
  await writeFile(process.env.AGENT_STARTS, '');
  const warnings: string[] = [];
  const log = { info() {}, warn: (m: string) => void warnings.push(m), error() {} };
  const runner = new LocalCommandRunner({ agentPath, store, log });
  const cmd = {
    runId: 'r1',
    pathId: 'A',
    client: { instanceId: 'local', region: 'local' },
    specKey: keys.spec('r1', 'A'),
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
