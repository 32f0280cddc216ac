/**
 * collectFile: one raw file through the store's read stream (gunzipped as it streams), the line
 * splitter and the kind's line parser, to its sample file. A real directory store.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProbeProvenance } from '../../../core/path-manifest.js';
import type { SampleRecord } from '../../../core/sample-record.js';
import { collectFile } from '../../../functions/pipeline/sample-file.js';
import type { Deps } from '../../../functions/ports.js';
import { DirStore } from '../../../local/dir-store.js';
import { FIXTURES } from '../../helpers/repo.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function storeDeps(): Promise<{ deps: Pick<Deps, 'store'>; store: DirStore }> {
  const dir = await mkdtemp(join(tmpdir(), 'pathbench-sample-file-'));
  dirs.push(dir);
  const store = new DirStore(dir);
  return { deps: { store }, store };
}

const prov = (): ProbeProvenance => ({
  probe: 'pp',
  kind: 'pingpong',
  trials: 1,
  rawKeys: [],
  sampleKeys: [],
  samples: 0,
  status: 'ok',
});

describe('collectFile on a raw file with one enormous line', () => {
  // A 32 MB line once cost 11.5 s plain and 155 s through gzip (the pending part of the line was
  // re-joined and re-searched on every chunk). Linear now: each case takes about a second here,
  // far inside the unit suite's 30 s test timeout.
  const csv = readFileSync(join(FIXTURES, 'pingpong', 'tcp-loopback.csv'), 'utf8').split('\n');
  const good = csv.filter((l) => /^\d+,/.test(l)).length;
  const huge = `${csv[2].slice(0, -2)}${'9'.repeat(32 << 20)}`;
  const raw = [...csv.slice(0, 3), huge, ...csv.slice(3)].join('\n');

  for (const [name, key, body] of [
    ['plain', 'raw/pp/1.csv', Buffer.from(raw)],
    ['gzip', 'raw/pp/1.csv.gz', gzipSync(raw)],
  ] as const) {
    it(`${name}: the line is rejected whole, every other line is kept`, async () => {
      const { deps, store } = await storeDeps();
      await store.put(key, body);
      const p = prov();
      const meta = { runId: 'r', pathId: 'p', probe: 'pp', trial: 1 };
      const stats = await collectFile(deps as Deps, 'pingpong', key, 'samples/pp/1.jsonl', meta, undefined, p);
      expect(stats).toMatchObject({ lines: csv.length, samples: good, rejected: 1, truncated: false });
      expect(stats.firstRejection).toMatch(/^pingpong line 4: /);
      expect(stats.firstRejection?.length).toBeLessThanOrEqual(200);
      const lines = ((await store.getText('samples/pp/1.jsonl')) ?? '').split('\n').filter(Boolean);
      const records: SampleRecord[] = lines.map((l) => JSON.parse(l));
      expect(records.map((r) => r.seq)).toEqual(Array.from({ length: good }, (_, i) => i + 1));
    });
  }
});
