/**
 * The sample record's schema is what the parsers emit: every record parsed from the captured
 * tool output (test/fixtures/<kind>/) matches it, extra facts kept.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sampleRecordSchema } from '../../core/sample-record.js';
import { parseRawLenient } from '../../probes/index.js';
import { FIXTURES } from '../helpers/repo.js';

const files = ['iperf3', 'sockperf', 'pingpong'].flatMap((kind) =>
  readdirSync(join(FIXTURES, kind)).map((file) => ({ kind, file })),
);

describe('sampleRecordSchema', () => {
  it.each(files)('takes every record parsed from $kind/$file whole', ({ kind, file }) => {
    const raw = readFileSync(join(FIXTURES, kind, file), 'utf8');
    const { records } = parseRawLenient(kind, raw, { runId: 'r', pathId: 'p', probe: kind, trial: 1 });
    for (const r of records) expect(sampleRecordSchema.parse(r)).toEqual(r);
  });

  it('refuses a record without its contract fields, naming them', () => {
    const r = sampleRecordSchema.safeParse({ run_id: 'r', path_id: 'p', probe: 'x', kind: 'mtu', value: '1' });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual(
      expect.arrayContaining(['trial', 'seq', 't_start', 't_end', 'metric', 'value', 'unit', 'ok']),
    );
  });
});
