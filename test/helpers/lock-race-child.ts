/**
 * A process for test/local/file-lock.test.ts. `seed BASE N`: take the lock of BASE/0 … BASE/N-1
 * and exit, leaving N stale locks. `race BASE N ID`: after "go" on stdin, try to take each of
 * them; print the trials won as JSON, then hold the locks until stdin closes.
 */
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FileLock } from '../../local/file-lock.js';

const [mode, base, n, id] = process.argv.slice(2);
const trials = Number(n);

if (mode === 'seed') {
  for (let t = 0; t < trials; t++) await new FileLock(join(base, String(t))).acquire('seed', 'seed-start');
  process.exit(0);
}

const lines = createInterface({ input: process.stdin });
const it = lines[Symbol.asyncIterator]();
process.stdout.write('ready\n');
await it.next();
const won: number[] = [];
const errors: string[] = [];
for (let t = 0; t < trials; t++) {
  try {
    await new FileLock(join(base, String(t))).acquire(`racer-${id}`, 'race-start');
    won.push(t);
  } catch (e) {
    if ((e as Error).name !== 'RunLockedError') errors.push(String(e));
  }
}
process.stdout.write(`${JSON.stringify({ won, errors })}\n`);
await it.next();
process.exit(0);
