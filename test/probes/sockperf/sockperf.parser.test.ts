/** parseSockperf on captured real sockperf logs (test/fixtures/sockperf) and on garbage (no sockperf, no network). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../core/errors.js';
import { parseSockperf } from '../../../probes/sockperf/sockperf.parser.js';
import { ROOT } from '../../helpers/repo.js';

const fixture = (name: string) => readFileSync(path.join(ROOT, 'test/fixtures/sockperf', name), 'utf8');
const meta = () => ({ runId: 'r1', pathId: 'p1', probe: 'sockperf', trial: 1 });

describe('parseSockperf on captured real logs', () => {
  it('without a sidecar keeps sockperf clock times and says so', () => {
    const recs = parseSockperf(fixture('udp-mps50.csv'), meta());
    expect(recs.length).toBeGreaterThan(10);
    expect(recs.every((r) => r.time_base === 'monotonic' && r.ok)).toBe(true);
    expect(recs.map((r) => r.seq)).toEqual(recs.map((_, i) => i));
  });

  it('a no-reply log is one failed record; garbage is a ParseError', () => {
    expect(parseSockperf(fixture('no-replies.csv'), meta())).toMatchObject([{ ok: false, error: 'no-replies' }]);
    expect(() => parseSockperf('hello,world\n', meta())).toThrow(ParseError);
    const bad = fixture('udp-mps50.csv').replace(/\n0, [^\n]*/, '\n0, x, y, z');
    expect(() => parseSockperf(bad, meta())).toThrow(/line \d+/);
  });
});
