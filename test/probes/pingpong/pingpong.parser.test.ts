/** The pingpong helper's log → rtt_us (and network_rtt_us) records (the real helper's output: test/probes/native/pingpong.int.test.ts). */
import { describe, expect, it } from 'vitest';
import { parseRawLenient } from '../../../probes/index.js';
import {
  NETWORK_CLOCK,
  NETWORK_METRIC,
  PINGPONG_CLOCK,
  PINGPONG_CLOCKS,
  parsePingpong,
} from '../../../probes/pingpong/pingpong.parser.js';
import { summarizePingpongTail } from '../../../probes/pingpong/pingpong.runner.js';

const meta = { runId: 'r1', pathId: 'p1', probe: 'pingpong', trial: 1 };
const OFFSET_NS = 1_796_000_000_000_000_000;
const header = (mode = 'tcp', req = 16, resp = 16, clock: string = PINGPONG_CLOCK) =>
  `# pathbench pingpong v1 mode=${mode} req=${req} resp=${resp} clock=${clock} realtime_minus_monotonic_ns=${OFFSET_NS}\nseq,tx_ns,rtt_ns,status\n`;

describe('parsePingpong', () => {
  it('one record per exchange: round trip in µs as value, one_way_us = rtt/2, epoch times, clock and mode named', () => {
    const recs = parsePingpong(
      `${header()}1,1000000000,23456,ok\n2,1000030000,20000,ok\n# end exchanges=2 ok=2\n`,
      meta,
    );
    expect(recs).toHaveLength(2);
    expect(recs[0]).toEqual({
      run_id: 'r1',
      path_id: 'p1',
      probe: 'pingpong',
      kind: 'pingpong',
      trial: 1,
      seq: 1,
      t_start: (1_000_000_000 + OFFSET_NS) / 1e6,
      t_end: (1_000_000_000 + OFFSET_NS) / 1e6 + 0.023456,
      metric: 'rtt_us',
      value: 23.456,
      unit: 'us',
      ok: true,
      clock: PINGPONG_CLOCK,
      one_way_us: 11.728,
      mode: 'tcp',
      request_bytes: 16,
      response_bytes: 16,
      ts_source: 'user',
    });
    expect(recs[1]).toMatchObject({ seq: 2, value: 20, one_way_us: 10 });
  });

  it('a failed exchange is an ok:false record with its status as the error; a series that never started is seq 0', () => {
    const recs = parsePingpong(`${header('udp')}1,1000,15000,ok\n2,40000,,timeout\n`, meta);
    expect(recs[1]).toMatchObject({ seq: 2, ok: false, value: null, one_way_us: null, error: 'timeout', mode: 'udp' });
    expect(parsePingpong(`${header()}0,5000,,refused\n# end exchanges=0 ok=0\n`, meta)).toMatchObject([
      { seq: 0, ok: false, error: 'refused', value: null },
    ]);
  });

  it('keeps the clock the header names: busy-poll (the default) and blocking read alike', () => {
    expect(PINGPONG_CLOCKS).toEqual({ busy: 'pingpong-monotonic-busypoll', block: 'pingpong-monotonic-block' });
    for (const clock of Object.values(PINGPONG_CLOCKS)) {
      const recs = parsePingpong(`${header('udp', 16, 16, clock)}1,1000,30000,ok\n2,2000,,timeout\n`, meta);
      expect(recs.map((r) => r.clock)).toEqual([clock, clock]);
    }
    // A header without a clock (none is written so) reads as the busy-poll default.
    const bare = `# pathbench pingpong v1 mode=tcp req=16 resp=16 realtime_minus_monotonic_ns=0\nseq,tx_ns,rtt_ns,status\n1,1,2000,ok\n`;
    expect(parsePingpong(bare, meta)[0].clock).toBe(PINGPONG_CLOCKS.busy);
  });

  it('tcp-rr keeps its request and response sizes', () => {
    expect(parsePingpong(`${header('tcp-rr', 1, 1)}1,1000,30000,ok\n`, meta)[0]).toMatchObject({
      mode: 'tcp-rr',
      request_bytes: 1,
      response_bytes: 1,
      value: 30,
    });
  });

  it('bad rows are rejected and counted naming the column, the good ones kept', () => {
    const raw = `${header()}1,1000,20000,ok\n2,abc,20000,ok\n3,3000,-5,ok\n4,4000,20000\n5,5000,7,Bad Status\n6,6000,20000,ok\n7,7000,9,timeout\n`;
    const { records, stats } = parseRawLenient('pingpong', raw, meta);
    expect(records.map((r) => r.seq)).toEqual([1, 6]);
    expect(stats).toMatchObject({ lines: 9, samples: 2, rejected: 5, truncated: false });
    expect(stats.firstRejection).toBe('pingpong line 4: tx_ns is not a number: abc');
    expect(() => parsePingpong(raw, meta)).toThrow(/line 4: tx_ns/);
  });

  it('a last row without its newline is truncated, not rejected', () => {
    const { records, stats } = parseRawLenient('pingpong', `${header()}1,1000,20000,ok\n2,2000,2`, meta);
    expect(records).toHaveLength(1);
    expect(stats).toMatchObject({ rejected: 0, truncated: true });
  });

  it('with kernel timestamps (ts=kernel-sw, net_ns): rtt_us gains host_us, and network_rtt_us is a metric of its own', () => {
    const stamped = `# pathbench pingpong v1 mode=udp req=16 resp=16 clock=${PINGPONG_CLOCK} realtime_minus_monotonic_ns=${OFFSET_NS} ts=kernel-sw\nseq,tx_ns,rtt_ns,status,net_ns\n`;
    const recs = parsePingpong(
      `${stamped}1,1000000000,23456,ok,17000\n2,1000030000,,timeout,\n3,1000060000,20000,ok,\n# end exchanges=3 ok=2\n`,
      meta,
    );
    expect(recs.map((r) => [r.seq, r.metric, r.ok, r.value, r.ts_source])).toEqual([
      [1, 'rtt_us', true, 23.456, 'kernel-sw'],
      [1, NETWORK_METRIC, true, 17, 'kernel-sw'],
      // a failed exchange fails both figures (the network figure's loss is the exchange's)
      [2, 'rtt_us', false, null, 'user'],
      [2, NETWORK_METRIC, false, null, 'kernel-sw'],
      // a stamp missed on an ok exchange: its round trip only, by the user clock
      [3, 'rtt_us', true, 20, 'user'],
    ]);
    expect(recs[0].host_us).toBeCloseTo(6.456, 9);
    expect(recs[1]).toMatchObject({ clock: NETWORK_CLOCK, unit: 'us', mode: 'udp', t_start: recs[0].t_start });
    expect(recs[1].host_us).toBeUndefined();
    expect(recs[3]).toMatchObject({ error: 'timeout' });
    expect(recs[4].host_us).toBeUndefined();
  });

  it('rejects a net_ns on a failed row, a negative one, and a row of the wrong width', () => {
    const stamped = `# pathbench pingpong v1 mode=udp req=16 resp=16 realtime_minus_monotonic_ns=0 ts=kernel-sw\nseq,tx_ns,rtt_ns,status,net_ns\n`;
    for (const [row, why] of [
      ['1,1000,,timeout,5000', /net_ns must be a number ≥ 0 on an ok row and empty on a failed one/],
      ['1,1000,9000,ok,-4', /net_ns must be a number ≥ 0/],
      ['1,1000,9000,ok', /4 fields, expected 5/],
    ] as const) {
      const { stats, records } = parseRawLenient('pingpong', `${stamped}${row}\n`, meta);
      expect(records, row).toEqual([]);
      expect(stats.firstRejection, row).toMatch(why);
    }
  });

  it("with the server's clock readings (eight columns): rtt_us gains the signed one-way delays and their clock bound", () => {
    const h = `# pathbench pingpong v1 mode=tcp req=16 resp=16 clock=${PINGPONG_CLOCK} realtime_minus_monotonic_ns=${OFFSET_NS} ts=kernel-sw\nseq,tx_ns,rtt_ns,status,net_ns,fwd_ns,rev_ns,clock_err_us\n`;
    const recs = parsePingpong(
      `${h}1,1000,900000,ok,880000,612500,-2500,0\n2,2000,800000,ok,790000,,,\n3,3000,,timeout,,,,\n4,4000,850000,ok,840000,400000,430000,1250\n`,
      meta,
    );
    const rtt = recs.filter((r) => r.metric === 'rtt_us');
    expect(rtt.map((r) => [r.seq, r.one_way_fwd_us, r.one_way_rev_us, r.clock_error_us])).toEqual([
      // one kernel (bound 0): a negative reverse delay is kept as measured, not clipped
      [1, 612.5, -2.5, 0],
      // the bound unknown (a clock not disciplined): no one-way figures at all
      [2, undefined, undefined, undefined],
      [3, undefined, undefined, undefined],
      [4, 400, 430, 1250],
    ]);
    // the network figure stays a metric of its own, without the one-way fields
    expect(recs.find((r) => r.metric === NETWORK_METRIC)?.one_way_fwd_us).toBeUndefined();
    for (const [row, why] of [
      [
        '1,1000,9000,ok,8000,5000,,0',
        /fwd_ns, rev_ns and clock_err_us \(≥ 0\) must all be numbers on an ok row, or all empty/,
      ],
      ['1,1000,9000,ok,8000,5000,4000,-1', /clock_err_us \(≥ 0\)/],
      ['1,1000,,timeout,,5000,4000,0', /on an ok row, or all empty/],
      ['1,1000,9000,ok,8000', /5 fields, expected 8 \(seq,tx_ns,rtt_ns,status,net_ns,fwd_ns,rev_ns,clock_err_us\)/],
    ] as const) {
      const { stats, records } = parseRawLenient('pingpong', `${h}${row}\n`, meta);
      expect(records, row).toEqual([]);
      expect(stats.firstRejection, row).toMatch(why);
    }
  });

  it('rows before the column header, and a file that is not a pingpong log, are rejected', () => {
    const { stats } = parseRawLenient('pingpong', '1,1000,20000,ok\n', meta);
    expect(stats.firstRejection).toMatch(
      /before the "seq,tx_ns,rtt_ns,status,net_ns,fwd_ns,rev_ns,clock_err_us" header/,
    );
    const other = parseRawLenient('pingpong', 'hello\n', meta);
    expect(other.stats.rejected).toBe(1);
    expect(other.records).toEqual([]);
  });
});

describe('summarizePingpongTail', () => {
  it("reads the counts, the last failure and each end's clock bound from a log's end", () => {
    const tail = `1,1000,900,ok,800,400,300,1250\n2,2000,,timeout,,,,\n# clocks client_maxerror_us=500 server_maxerror_us=unsync one_kernel=0\n# end exchanges=2 ok=1\n`;
    expect(summarizePingpongTail(tail)).toEqual({
      exchanges: 2,
      ok: 1,
      lastError: 'timeout',
      clocks: { clientMaxErrorUs: 500, serverMaxErrorUs: 'unsync', oneKernel: false },
    });
    // A server that sent no readings: no clocks.
    expect(summarizePingpongTail('1,1000,900,ok,800,,,\n# end exchanges=1 ok=1\n')).toEqual({ exchanges: 1, ok: 1 });
  });
});
