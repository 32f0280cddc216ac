import { describe, expect, it } from 'vitest';
import { checkRunId, keys, parseRawKey, routeKey } from '../../core/keys.js';

describe('key layout (the S3 layout contract, docs/data.md)', () => {
  it('builds the contract keys', () => {
    expect(keys.plan('r1')).toBe('runs/run=r1/plan.json');
    expect(keys.manifest('r1')).toBe('runs/run=r1/manifest.json');
    expect(keys.spec('r1', 'A', 'i-1')).toBe('specs/run=r1/path=A/client=i-1/spec.json');
    expect(keys.raw('A', 'r1', 'iperf3-tcp', 2, 'json')).toBe('raw/path=A/run=r1/iperf3-tcp/2.json');
    expect(keys.samples('A', 'r1', 'tcp-connect', 1)).toBe('samples/path=A/run=r1/tcp-connect-1.jsonl');
    expect(keys.report('r1', 'md')).toBe('reports/run=r1/summary.md');
  });

  it('refuses unsafe ids instead of writing outside the run', () => {
    expect(() => keys.spec('r1', '../x', 'i-1')).toThrow(/unsafe path id/);
    expect(() => keys.spec('r1', 'A', '../i-2')).toThrow(/unsafe client instance id/);
    expect(() => keys.plan('a/b')).toThrow(/unsafe run id/);
    expect(() => keys.samples('A', 'r1', "p'1", 1)).toThrow(/unsafe probe name/);
    expect(() => checkRunId('')).toThrow();
    expect(checkRunId('20261130T040851Z-3572c7')).toBe('20261130T040851Z-3572c7');
  });

  it('parses raw keys back', () => {
    expect(parseRawKey('raw/path=A/run=r1/http/3.jsonl')).toEqual({
      pathId: 'A',
      runId: 'r1',
      probe: 'http',
      trial: 3,
      ext: 'jsonl',
    });
    expect(parseRawKey('samples/path=A/run=r1/http-3.jsonl')).toBeUndefined();
  });

  it('keys a route entry by region, table and destination', () => {
    expect(routeKey({ region: 'ap-northeast-1', routeTableId: 'rtb-1', destination: '10.1.0.0/16' })).toBe(
      'ap-northeast-1|rtb-1|10.1.0.0/16',
    );
  });
});
