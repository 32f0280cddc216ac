/**
 * The local CommandRunner with a real child process: a command whose deadline is longer than
 * setTimeout can hold (2^31-1 ms) must not be killed at once.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../functions/log.js';
import { LocalCommandRunner } from '../../local/child-command-runner.js';
import { DirStore } from '../../local/dir-store.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('LocalCommandRunner', () => {
  it('keeps an agent with a deadline beyond 2^31-1 ms running until it finishes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pathbench-runner-'));
    dirs.push(dir);
    const store = new DirStore(join(dir, 'data'));
    await store.put('specs/run=r/path=A/spec.json', '{}');
    // A stand-in agent: writes one raw file after 300 ms and exits 0.
    const agent = join(dir, 'agent.cjs');
    await writeFile(
      agent,
      `const fs = require('fs'); const out = process.argv[process.argv.indexOf('--out') + 1];
       setTimeout(() => { fs.mkdirSync(out, { recursive: true }); fs.writeFileSync(out + '/agent.json', '{}'); }, 300);`,
    );
    const runner = new LocalCommandRunner({ agentPath: agent, store, log: silentLogger });
    const { commandId } = await runner.send({
      runId: 'r',
      pathId: 'A',
      client: { instanceId: 'local', region: 'local' },
      specKey: 'specs/run=r/path=A/spec.json',
      rawPrefix: 'raw/path=A/run=r/',
      timeoutSeconds: 3_000_000,
    });
    await runner.drain();
    expect(await runner.status(commandId)).toEqual({ status: 'Success', detail: undefined });
    expect(await store.getText('raw/path=A/run=r/agent.json')).toBe('{}');
  });
});
