/**
 * What FileParse (every parser's driver) and the record check refuse or clean whatever the
 * parser: a failed record's error of any size or content, a seq said twice, an end before the
 * start; and decimal-only numbers in the CSV parsers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SampleRecord } from '../../../core/sample-record.js';
import { parseRawLenient } from '../../../probes/index.js';
import { FileParse, MAX_ERROR } from '../../../probes/parsing/file-parse.js';
import type { LineParserFactory } from '../../../probes/parsing/parser-types.js';

const META = { runId: 'r', pathId: 'p', probe: 'x', trial: 1 };
const tcp = (o: Record<string, unknown>) =>
  JSON.stringify({ seq: 1, t_start: 1000, t_end: 1001, ok: true, rtt_ms: 1, ...o });

describe('a failed record says why in one short, printable line', () => {
  it('a 10 MB error with control, bidi and zero-width characters is cut and cleaned', () => {
    const error = `refused\u001b[31m\r\n\u202eevil\u200b\u0000${'x'.repeat(10 << 20)}`;
    const raw = `${tcp({ seq: 1, ok: false, rtt_ms: null, error })}\n${tcp({ seq: 2 })}\n`;
    const { records, stats } = parseRawLenient('tcp-connect', raw, META);
    expect(stats).toMatchObject({ samples: 2, rejected: 0 });
    const e = records[0].error ?? '';
    expect(e.length).toBe(MAX_ERROR);
    expect(e.startsWith('refused [31m evil ')).toBe(true);
    expect(e.endsWith('x…')).toBe(true);
    expect(e).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
  });

  it('a short error is kept as it is; one with nothing printable says so', () => {
    const raw = `${tcp({ seq: 1, ok: false, rtt_ms: null, error: 'connect: ECONNREFUSED' })}\n${tcp({ seq: 2, ok: false, rtt_ms: null, error: '\u0007\u200b' })}\n`;
    const { records } = parseRawLenient('tcp-connect', raw, META);
    expect(records.map((r) => r.error)).toEqual(['connect: ECONNREFUSED', 'error text had no printable characters']);
  });
});

describe('a seq said twice counts once', () => {
  it('tcp-connect: the second line of a seq is rejected naming it, the first kept', () => {
    const raw = [tcp({ seq: 1 }), tcp({ seq: 2 }), tcp({ seq: 1, rtt_ms: 9 }), tcp({ seq: 3 })].join('\n');
    const { records, stats } = parseRawLenient('tcp-connect', `${raw}\n`, META);
    expect(records.map((r) => [r.seq, r.value])).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
    ]);
    expect(stats).toMatchObject({ samples: 3, rejected: 1 });
    expect(stats.firstRejection).toBe('tcp-connect line 3: seq 1 of connect_rtt_ms appears twice (the first kept)');
  });

  it('sockperf and pingpong rows likewise', () => {
    const sp = 'packet, txTime(sec), rxTime(sec), latency(usec)\n0, 1.0, 1.1, 5\n1, 2.0, 2.1, 5\n0, 3.0, 3.1, 5\n';
    expect(parseRawLenient('sockperf', sp, META).stats).toMatchObject({ samples: 2, rejected: 1 });
    const pp =
      '# pathbench pingpong v1 mode=tcp realtime_minus_monotonic_ns=0\nseq,tx_ns,rtt_ns,status\n1,10,5,ok\n1,20,5,ok\n';
    expect(parseRawLenient('pingpong', pp, META).stats).toMatchObject({ samples: 1, rejected: 1 });
  });

  // A parser that emits one record per line with the line's seq, for any order of seqs.
  const bySeq: LineParserFactory = () => ({
    line: (text) => [
      {
        run_id: 'r',
        path_id: 'p',
        probe: 'x',
        kind: 'tcp-connect',
        trial: 1,
        seq: Number(text),
        t_start: 0,
        t_end: 0,
        metric: 'm',
        value: 1,
        unit: 'ms',
        ok: true,
      } satisfies SampleRecord,
    ],
    end: () => [],
  });

  it('in any order: exactly the first of each seq is kept', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(60), { maxLength: 200 }), (seqs) => {
        const f = new FileParse('x', bySeq, META);
        const kept = seqs.flatMap((s, i) => f.line({ text: String(s), n: i + 1, complete: true })).map((r) => r.seq);
        expect(kept).toEqual([...new Set(seqs)]);
        expect(f.stats.rejected).toBe(seqs.length - kept.length);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the record check', () => {
  it('rejects a record that ends before it starts', () => {
    const { stats } = parseRawLenient('tcp-connect', `${tcp({ t_start: 1000, t_end: 999 })}\n`, META);
    expect(stats.firstRejection).toBe('tcp-connect line 1: t_end must not be before t_start (999 < 1000)');
    const sp = 'packet, txTime(sec), rxTime(sec), latency(usec)\n0, 2.0, 1.0, 5\n';
    expect(parseRawLenient('sockperf', sp, META).stats.firstRejection).toMatch(
      /^sockperf line 2: t_end must not be before t_start/,
    );
  });
});

describe('CSV numbers are decimal', () => {
  for (const [field, row] of [
    ['packet', '0x1, 1.0, 1.1, 5'],
    ['txTime(sec)', '1, 0x10, 17.1, 5'],
    ['rxTime(sec)', '1, 1.0, 0b11, 5'],
    ['latency(usec)', '1, 1.0, 1.1, 0o7'],
    ['latency(usec)', '1, 1.0, 1.1, Infinity'],
  ])
    it(`sockperf refuses ${row.split(', ').find((c) => /[xbo]|Inf/.test(c))} in ${field}`, () => {
      const sp = `packet, txTime(sec), rxTime(sec), latency(usec)\n${row}\n`;
      const { records, stats } = parseRawLenient('sockperf', sp, META);
      expect(stats.firstRejection).toMatch(
        new RegExp(`^sockperf line 2: ${field.replace(/[()]/g, '\\$&')} is not a number`),
      );
      expect(records.every((r) => !r.ok)).toBe(true);
    });

  it('pingpong refuses hex seq, tx_ns and rtt_ns; decimal forms (1e3, .5) still read', () => {
    const head = '# pathbench pingpong v1 mode=tcp realtime_minus_monotonic_ns=0\nseq,tx_ns,rtt_ns,status\n';
    for (const [row, field] of [
      ['0x1,10,5,ok', 'seq'],
      ['1,0x10,5,ok', 'tx_ns'],
      ['1,10,0x5,ok', 'rtt_ns'],
    ]) {
      expect(parseRawLenient('pingpong', `${head}${row}\n`, META).stats.firstRejection).toMatch(
        new RegExp(`^pingpong line 3: ${field} `),
      );
    }
    const ok = parseRawLenient('pingpong', `${head}1,1e3,.5e3,ok\n`, META);
    expect(ok.records.map((r) => [r.seq, r.t_start, r.value])).toEqual([[1, 0.001, 0.5]]);
  });
});
