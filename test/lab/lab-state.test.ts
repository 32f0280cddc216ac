/**
 * The lab state file's reader (no namespace, no root): a state an earlier version wrote (the
 * fixture: before the pingpong port) reads, no state or a torn one is no lab, and a state of
 * another shape is a LabStateError naming the file and the field. lab/sys.ts's process helpers
 * are tested with the lab itself (test/lab/namespaces.lab.test.ts).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LabStateError } from '../../lab/lab-errors.js';
import { readState, statePath, writeState } from '../../lab/lab-state.js';

const FIXTURE = JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/lab/state.json'), 'utf8'));
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function dir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'pb-lab-state-'));
  dirs.push(d);
  return d;
}

describe('readState', () => {
  it('reads a state an earlier version wrote, and one this version writes, whole', async () => {
    const d = await dir();
    expect(FIXTURE.ports.pingpong).toBeUndefined();
    await writeFile(statePath(d), JSON.stringify(FIXTURE));
    const read = readState(d);
    expect(read).toEqual(FIXTURE);
    if (!read) throw new Error('unreachable');
    const now = { ...read, ports: { ...read.ports, pingpong: 7007 }, extraClients: ['pb-a'] };
    writeState(d, now);
    expect(readState(d)).toEqual(now);
  });

  it('is undefined without a state or with a torn one; another shape names the file and field', async () => {
    const d = await dir();
    expect(readState(d)).toBeUndefined();
    await writeFile(statePath(d), '{"version": 1, "prefix": ');
    expect(readState(d)).toBeUndefined();
    await writeFile(statePath(d), JSON.stringify({ ...FIXTURE, phase: 'ready' }));
    expect(() => readState(d)).toThrow(LabStateError);
    expect(() => readState(d)).toThrow(
      `${statePath(d)} is not a valid lab state: phase: expected "building" or "up", got "ready" (\`pathbench lab down\` takes the lab down without it)`,
    );
  });
});
