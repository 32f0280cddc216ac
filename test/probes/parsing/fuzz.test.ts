/**
 * Property-based fuzzing (fast-check) of every parser, leniently (as CollectOutput reads) and
 * strictly: no crash but a one-line ParseError, every rejection names where and what, nothing
 * invalid kept (the invariants below are this test's own, not the parsers' check), every good
 * line kept around bad ones, and a file cut anywhere keeps its complete part.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../core/errors.js';
import type { SampleRecord } from '../../../core/sample-record.js';
import { PROBE_KINDS, type ProbeKind, parseRaw, parseRawLenient } from '../../../probes/index.js';
import { closeTruncatedJson } from '../../../probes/parsing/json-repair.js';
import { splitLines, splitText } from '../../../probes/parsing/lines.js';
import { FIXTURES } from '../../helpers/repo.js';

const META = { runId: 'r1', pathId: 'p1', probe: 'x', trial: 1 };
const FIX = FIXTURES;
const fixture = (p: string) => readFileSync(join(FIX, p), 'utf8');
const RUNS = { numRuns: 300 };

/** What a stored record must be, written out independently of probes/parsing/record-check.ts. */
function assertStorable(r: SampleRecord): void {
  expect(typeof r.run_id === 'string' && typeof r.path_id === 'string' && typeof r.probe === 'string').toBe(true);
  expect(PROBE_KINDS).toContain(r.kind);
  expect(Number.isSafeInteger(r.seq) && r.seq >= 0).toBe(true);
  expect(Number.isSafeInteger(r.trial) && r.trial >= 0).toBe(true);
  expect(Number.isFinite(r.t_start) && Number.isFinite(r.t_end)).toBe(true);
  expect(typeof r.ok).toBe('boolean');
  if (r.value === null) expect(r.ok).toBe(false);
  else expect(Number.isFinite(r.value) && r.value >= 0).toBe(true);
  if (!r.ok) expect(typeof r.error === 'string' && r.error.length > 0).toBe(true);
  // It survives the JSONL round trip unchanged (no NaN/Infinity turned into null, no BigInt).
  expect(JSON.parse(JSON.stringify(r))).toEqual(r);
}

/** Where-and-what: "<kind> line <n>: <field> …", "iperf3 interval <i>: sum.<field> …", or a document-level reason. */
const REASON =
  /^(tcp-connect line \d+: |http line \d+: |sockperf line \d+: |sockperf: |iperf3 interval \d+: |iperf3 |mtu |unknown mtu result|pingpong line \d+: |pingpong: |ping line \d+: |(tcp-connect|http|sockperf|iperf3|mtu|pingpong|ping) seq \d+: )/;

function lenientInvariants(kind: string, raw: string) {
  const { records, stats } = parseRawLenient(kind, raw, META);
  for (const r of records) assertStorable(r);
  expect(stats.samples).toBe(records.length);
  expect(stats.rejected >= 0 && stats.rejected <= Math.max(stats.lines, 1)).toBe(true);
  expect(stats.rejected > 0).toBe(stats.firstRejection !== undefined);
  if (stats.firstRejection) {
    expect(stats.firstRejection).toMatch(REASON);
    expect(stats.firstRejection).not.toMatch(/\n/);
  }
  return { records, stats };
}

function strictNeverCrashes(kind: string, raw: string): void {
  try {
    for (const r of parseRaw(kind, raw, META)) assertStorable(r);
  } catch (e) {
    expect(e).toBeInstanceOf(ParseError);
    expect((e as Error).message).not.toMatch(/\n/);
  }
}

/** A JSON value of any shape, with the numbers that break naive checks. */
const nasty = fc.oneof(
  fc.constantFrom(
    -1,
    -0.001,
    0,
    2 ** 31,
    2 ** 31 + 1,
    2 ** 53,
    2 ** 64,
    1e308,
    -1e308,
    0.5,
    null,
    true,
    false,
    '',
    '1',
    'NaN',
  ),
  fc.double(),
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.array(fc.integer(), { maxLength: 2 }),
);

const tcpLine = (i: number) => ({ seq: i, t_start: 1000 + i, t_end: 1001 + i, ok: true, rtt_ms: 0.5 + i });
const httpLine = (i: number) => ({
  seq: i,
  t_start: 1000 + i,
  t_end: 1001 + i,
  ok: true,
  latency_ms: 0.5,
  bytes: 1024,
});
const GOOD: Record<string, (i: number) => Record<string, unknown>> = { 'tcp-connect': tcpLine, http: httpLine };

/** A good line with one field replaced, dropped or added. */
const mutatedLine = (kind: string) =>
  fc
    .tuple(
      fc.nat(1000),
      fc.constantFrom(
        'seq',
        't_start',
        't_end',
        'ok',
        'rtt_ms',
        'latency_ms',
        'bytes',
        'status',
        'clock',
        'error',
        'lport',
        'app_rtt_ms',
        'kernel_rtt_us',
      ),
      fc.option(nasty, { nil: undefined }),
    )
    .map(([i, k, v]) => {
      const o: Record<string, unknown> = GOOD[kind](i);
      if (v === undefined) delete o[k];
      else o[k] = v;
      return JSON.stringify(o);
    });

/** Text edits: cut, delete a range, insert garbage, duplicate a range. */
const edited = (text: string) =>
  fc
    .array(
      fc.tuple(
        fc.constantFrom('cut', 'delete', 'insert', 'dup'),
        fc.nat(text.length),
        fc.nat(40),
        fc.string({ maxLength: 12 }),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((edits) => {
      let t = text;
      for (const [op, at, len, junk] of edits) {
        const p = Math.min(at, t.length);
        if (op === 'cut') t = t.slice(0, p);
        else if (op === 'delete') t = t.slice(0, p) + t.slice(p + len);
        else if (op === 'insert') t = t.slice(0, p) + junk + t.slice(p);
        else t = t.slice(0, p) + t.slice(p, p + len) + t.slice(p);
      }
      return t;
    });

describe('every parser on arbitrary and damaged input', () => {
  const samples: Record<ProbeKind, string> = {
    'tcp-connect': Array.from({ length: 8 }, (_, i) => JSON.stringify(tcpLine(i))).join('\n'),
    http: Array.from({ length: 8 }, (_, i) => JSON.stringify(httpLine(i))).join('\n'),
    sockperf: fixture('sockperf/udp-mps50.csv'),
    pingpong: fixture('pingpong/tcp-loopback.csv'),
    ping: fixture('ping/every-third-lost.txt'),
    iperf3: fixture('iperf3/udp-server-json.json'),
    mtu: JSON.stringify({
      tool: 'ping',
      startedAtMs: 1,
      endedAtMs: 2,
      attempts: [1],
      result: { status: 'ok', mtu: 1500 },
    }),
  };

  for (const kind of PROBE_KINDS) {
    it(`${kind}: arbitrary text never crashes and keeps nothing invalid`, () => {
      fc.assert(
        fc.property(
          fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 100 }), fc.json()),
          (raw) => {
            lenientInvariants(kind, raw);
            strictNeverCrashes(kind, raw);
          },
        ),
        RUNS,
      );
    });

    it(`${kind}: a real file with random edits never crashes and keeps nothing invalid`, () => {
      fc.assert(
        fc.property(edited(samples[kind]), (raw) => {
          lenientInvariants(kind, raw);
          strictNeverCrashes(kind, raw);
        }),
        RUNS,
      );
    });
  }

  for (const kind of ['tcp-connect', 'http']) {
    it(`${kind}: lines with one field broken are rejected naming the field; the good ones are all kept`, () => {
      fc.assert(
        fc.property(
          fc.array(fc.oneof(mutatedLine(kind), fc.constant(''), fc.constant(null)), { maxLength: 40 }),
          (mix) => {
            // null: a good line, anywhere among the broken ones.
            const lines = mix.map((l, i) => l ?? JSON.stringify(GOOD[kind](i)));
            const nGood = mix.filter((l) => l === null).length;
            const { records, stats } = lenientInvariants(kind, `${lines.join('\n')}\n`);
            expect(records.length).toBeGreaterThanOrEqual(nGood);
            expect(records.length + stats.rejected).toBe(lines.filter((l) => l !== '').length);
            if (stats.firstRejection && !/not JSON/.test(stats.firstRejection)) {
              expect(stats.firstRejection).toMatch(
                /(seq|t_start|t_end|ok|rtt_ms|latency_ms|bytes|status|clock|lport|error|app_rtt_ms|kernel_rtt_us|value)\b/,
              );
            }
          },
        ),
        RUNS,
      );
    });
  }

  it('tcp-connect: a file cut at any byte keeps every complete line and rejects nothing', () => {
    const lines = Array.from({ length: 20 }, (_, i) => JSON.stringify(tcpLine(i)));
    const text = `${lines.join('\n')}\n`;
    fc.assert(
      fc.property(fc.nat(text.length), (at) => {
        const cut = text.slice(0, at);
        const { records, stats } = lenientInvariants('tcp-connect', cut);
        const complete = cut.split('\n').length - 1;
        expect(stats.rejected).toBe(0);
        expect(records.length).toBeGreaterThanOrEqual(complete);
        expect(records.length).toBeLessThanOrEqual(complete + 1);
      }),
      RUNS,
    );
  });

  it('sockperf: a log cut at any byte keeps every complete row and rejects nothing', () => {
    const text = fixture('sockperf/udp-mps50.csv');
    const header = text.indexOf('packet,');
    fc.assert(
      fc.property(fc.integer({ min: header, max: text.length }), (at) => {
        const cut = text.slice(0, at);
        const { records, stats } = lenientInvariants('sockperf', cut);
        const rows = cut
          .slice(cut.indexOf('\n', header) + 1)
          .split('\n')
          .slice(0, -1)
          .filter((l) => /^\d+,/.test(l)).length;
        expect(stats.rejected).toBe(0);
        if (rows > 0) expect(records.filter((r) => r.ok)).toHaveLength(rows);
      }),
      RUNS,
    );
  });

  it('iperf3: a JSON cut at any byte keeps exactly the complete intervals, in order, and says truncated', () => {
    const text = fixture('iperf3/tcp-p2.json');
    const full = parseRaw('iperf3', text, META).filter((r) => r.metric === 'throughput_bps');
    const firstInterval = text.indexOf('"intervals"');
    fc.assert(
      fc.property(fc.integer({ min: firstInterval, max: text.length - 2 }), (at) => {
        const { records, stats } = lenientInvariants('iperf3', text.slice(0, at));
        expect(stats.rejected).toBe(0);
        expect(stats.truncated).toBe(true);
        const thr = records.filter((r) => r.metric === 'throughput_bps' && r.ok);
        expect(thr.map((r) => r.value)).toEqual(full.slice(0, thr.length).map((r) => r.value));
      }),
      RUNS,
    );
  });

  it('closeTruncatedJson: any prefix of any JSON object repairs to valid JSON or to nothing', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.double({ min: 0, max: 1, noNaN: true }), (o, f) => {
        const text = JSON.stringify(o, null, 1);
        const fixed = closeTruncatedJson(text.slice(0, Math.floor(text.length * f)));
        if (fixed !== undefined) expect(() => JSON.parse(fixed)).not.toThrow();
      }),
      RUNS,
    );
  });

  it('splitLines over any chunking equals splitText of the whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.array(fc.nat(50), { maxLength: 10 }),
        async (s, cuts) => {
          const bytes = new TextEncoder().encode(s.replace(/\r/g, ''));
          const chunks: Uint8Array[] = [];
          let p = 0;
          for (const c of cuts) {
            chunks.push(bytes.slice(p, p + c));
            p += c;
          }
          chunks.push(bytes.slice(p));
          const got = [];
          for await (const l of splitLines(
            (async function* () {
              yield* chunks;
            })(),
          ))
            got.push(l);
          expect(got).toEqual([...splitText(s.replace(/\r/g, ''))]);
        },
      ),
      RUNS,
    );
  });
});
