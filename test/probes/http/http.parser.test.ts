/** parseHttp on hand-written input: the error cases, the clock field and parseRaw's dispatch (no network). */
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../core/errors.js';
import { parseHttp } from '../../../probes/http/http.parser.js';
import { parseRaw } from '../../../probes/index.js';

const META = { runId: 'r1', pathId: 'p1', probe: 'http', trial: 1 };

describe('parseHttp on hand-written input', () => {
  it.each([
    ['not JSON', 'oops', /http line 1: not JSON/],
    [
      'ok without latency',
      '{"seq":1,"t_start":1,"t_end":2,"ok":true,"latency_ms":null,"bytes":1}',
      /without latency_ms/,
    ],
    ['missing bytes', '{"seq":1,"t_start":1,"t_end":2,"ok":true,"latency_ms":1}', /line 1: bytes must be an integer/],
    ['fractional status', '{"seq":1,"t_start":1,"t_end":2,"ok":true,"latency_ms":1,"status":2.5,"bytes":1}', /status/],
    ['oha summary JSON', '{"summary":{"successRate":1}}', /line 1: seq must be an integer/],
    [
      'a network part on a failed request',
      '{"seq":1,"t_start":1,"t_end":2,"ok":false,"latency_ms":null,"error":"timeout","bytes":0,"net_ms":0.5}',
      /line 1: net_ms on a failed request/,
    ],
    [
      'a negative network part',
      '{"seq":1,"t_start":1,"t_end":2,"ok":true,"latency_ms":1,"bytes":1,"net_ms":-1}',
      /net_ms must be a number ≥ 0/,
    ],
    [
      'an unknown clock',
      '{"seq":1,"t_start":1,"t_end":2,"ok":true,"latency_ms":1,"bytes":1,"clock":"sundial"}',
      /line 1: unknown clock "sundial"/,
    ],
  ])('rejects %s with a one-line ParseError', (_label, raw, reason) => {
    expect(() => parseHttp(raw, META)).toThrow(ParseError);
    expect(() => parseHttp(raw, META)).toThrow(reason);
  });

  it('takes the clock from the line (the C client), app-hrtime when absent (the Node client)', () => {
    const c = '{"seq":1,"t_start":1,"t_end":2,"ok":true,"latency_ms":1,"bytes":1,"clock":"httping-monotonic"}';
    const n = '{"seq":1,"t_start":1,"t_end":2,"ok":true,"latency_ms":1,"bytes":1}';
    expect(parseHttp(c, META)[0].clock).toBe('httping-monotonic');
    expect(parseHttp(n, META)[0].clock).toBe('app-hrtime');
  });

  it("the C client's kernel-timed network part gives the host part (latency − network) and ts_source kernel-sw", () => {
    const c =
      '{"seq":1,"t_start":1,"t_end":2,"ok":true,"latency_ms":0.0745,"bytes":1,"net_ms":0.0383,"clock":"httping-monotonic"}';
    const [r] = parseHttp(c, META);
    expect(r).toMatchObject({ value: 0.0745, ts_source: 'kernel-sw' });
    expect(r.host_us).toBeCloseTo(36.2, 9);
    // Without it (no stamps, or the Node client): the app clock only, no host part.
    const [n] = parseHttp('{"seq":1,"t_start":1,"t_end":2,"ok":true,"latency_ms":1,"bytes":1}', META);
    expect(n.ts_source).toBe('user');
    expect(n.host_us).toBeUndefined();
  });

  it("a paired probe's reference requests are http_pair_ref_ms records; any other pair is refused", () => {
    const own = '{"seq":1,"t_start":1,"t_end":2,"ok":true,"latency_ms":1.2,"bytes":1}';
    const ref = '{"seq":2,"t_start":2,"t_end":3,"ok":true,"latency_ms":0.4,"bytes":1,"pair":"ref"}';
    expect(parseHttp(`${own}\n${ref}`, META).map((r) => [r.metric, r.value])).toEqual([
      ['http_latency_ms', 1.2],
      ['http_pair_ref_ms', 0.4],
    ]);
    expect(() => parseHttp(ref.replace('"ref"', '"own"'), META)).toThrow(/line 1: unknown pair "own"/);
  });

  it('parseRaw dispatches http', () => {
    const line = '{"seq":1,"t_start":1,"t_end":2,"ok":false,"latency_ms":null,"error":"timeout","bytes":0}';
    expect(parseRaw('http', line, META)[0]).toMatchObject({ metric: 'http_latency_ms', ok: false, error: 'timeout' });
  });
});
