/**
 * parseTcpConnect on hand-written input: the precise helper's fields, blank lines, the error cases
 * and parseRaw's dispatch. No network: the runs against real listeners are in tcp-connect.int.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../core/errors.js';
import { parseRaw } from '../../../probes/index.js';
import { parseTcpConnect } from '../../../probes/tcp-connect/tcp-connect.parser.js';

const META = { runId: 'r1', pathId: 'p1', probe: 'tcp-connect', trial: 1 };

describe('parseTcpConnect on hand-written input', () => {
  const good = '{"seq":1,"t_start":1000.5,"t_end":1000.7,"ok":true,"rtt_ms":0.2,"clock":"app-hrtime"}';

  it('uses the precise figure as the value and keeps the app-observed one', () => {
    const line =
      '{"seq":1,"t_start":1000,"t_end":1000.3,"ok":true,"rtt_ms":0.11,"clock":"kernel-tcpi_rtt","kernel_rtt_us":110,"app_rtt_ms":0.3}';
    const [r] = parseTcpConnect(line, META);
    expect(r).toMatchObject({ value: 0.11, clock: 'kernel-tcpi_rtt', app_rtt_ms: 0.3, kernel_rtt_us: 110, ok: true });
    // the kernel's figure is the network's; what the app clock adds is this host's
    expect(r.ts_source).toBe('kernel-sw');
    expect(r.host_us).toBeCloseTo(190, 9);
  });

  it('an app-clock value (Node path, or the helper without a kernel sample) has ts_source user and no host part', () => {
    const [node] = parseTcpConnect(good, META);
    expect(node.ts_source).toBe('user');
    expect(node.host_us).toBeUndefined();
    const fallback =
      '{"seq":1,"t_start":1000,"t_end":1000.3,"ok":true,"rtt_ms":0.3,"clock":"tcping-monotonic","app_rtt_ms":0.3}';
    expect(parseTcpConnect(fallback, META)[0]).toMatchObject({ ts_source: 'user' });
    expect(parseTcpConnect(fallback, META)[0].host_us).toBeUndefined();
  });

  it('skips blank lines', () => {
    expect(parseTcpConnect(`\n${good}\n\n`, META)).toHaveLength(1);
  });

  it.each([
    ['not JSON', `${good}\n{"seq":2,`, /tcp-connect line 2: not JSON/],
    ['a JSON array', '[1,2]', /line 1: not a JSON object/],
    ['missing seq', '{"t_start":1,"t_end":2,"ok":true,"rtt_ms":1}', /line 1: seq must be an integer/],
    ['ok without rtt', '{"seq":1,"t_start":1,"t_end":2,"ok":true,"rtt_ms":null}', /line 1: ok attempt without rtt_ms/],
    ['negative rtt', '{"seq":1,"t_start":1,"t_end":2,"ok":true,"rtt_ms":-1}', /rtt_ms must be a number ≥ 0/],
    ['string ok', '{"seq":1,"t_start":1,"t_end":2,"ok":"yes","rtt_ms":1}', /line 1: ok must be true or false/],
    ['empty input', '\n\n', /no JSON lines/],
    ['iperf3 JSON', '{"start":{},"intervals":[],"end":{}}', /seq must be an integer/],
  ])('rejects %s with a one-line ParseError', (_label, raw, reason) => {
    let err: unknown;
    try {
      parseTcpConnect(raw, META);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ParseError);
    expect((err as Error).message).toMatch(reason);
    expect((err as Error).message).not.toContain('\n');
  });

  it('parseRaw dispatches by kind and rejects an unknown kind', () => {
    expect(parseRaw('tcp-connect', good, META)[0].metric).toBe('connect_rtt_ms');
    expect(() => parseRaw('traceroute', good, META)).toThrow(/unknown probe kind "traceroute"/);
  });
});
