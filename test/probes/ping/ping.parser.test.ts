/** parsePing / pingLines on captured real iputils output (test/fixtures/ping) and on damaged input. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../core/errors.js';
import { parseRawLenient } from '../../../probes/index.js';
import { recordProblem } from '../../../probes/parsing/record-check.js';
import { PING_CLOCK, parsePing } from '../../../probes/ping/ping.parser.js';
import { FIXTURES } from '../../helpers/repo.js';

const fixture = (name: string) => readFileSync(join(FIXTURES, 'ping', name), 'utf8');
const sidecar = (o: Record<string, unknown>) => JSON.stringify(o);
const meta = (side?: Record<string, unknown>) => ({
  runId: 'r1',
  pathId: 'p1',
  probe: 'ping',
  trial: 1,
  ...(side ? { sidecar: sidecar(side) } : {}),
});

describe('parsePing on captured real output', () => {
  it('gives one record per request on loopback, each with the reply time and its epoch stamp', () => {
    const recs = parsePing(
      fixture('loopback-20.txt'),
      meta({ startedAtMs: 1796200872200, intervalMs: 10, timeoutMs: 1000 }),
    );
    expect(recs).toHaveLength(20);
    expect(recs.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(recs.every((r) => r.ok && r.metric === 'icmp_rtt_ms' && r.unit === 'ms' && r.clock === PING_CLOCK)).toBe(
      true,
    );
    expect(recs[0]).toMatchObject({ value: 0.041, ttl: 64, bytes: 64, t_end: 1796200872202.271 });
    expect(recs[0].t_end - recs[0].t_start).toBeCloseTo(0.041, 3);
    for (const r of recs) expect(recordProblem(r)).toBeUndefined();
  });

  it('counts every unanswered request as lost, whether or not ping said "no answer yet"', () => {
    const recs = parsePing(
      fixture('every-third-lost.txt'),
      meta({ startedAtMs: 1796200872600, intervalMs: 50, timeoutMs: 300 }),
    );
    expect(recs).toHaveLength(9);
    const lost = recs.filter((r) => !r.ok).map((r) => r.seq);
    expect(lost).toEqual([1, 4, 7]);
    for (const r of recs.filter((x) => !x.ok)) expect(r).toMatchObject({ value: null, error: 'timeout' });
    // A lost request's time: sent at start + (seq − 1) × interval, given up after the timeout.
    expect(recs.find((r) => r.seq === 4)).toMatchObject({ t_start: 1796200872750, t_end: 1796200873050 });
  });

  it('reads 100 % loss (ICMP dropped, as through an NLB) as loss, not as a failed probe', () => {
    const recs = parsePing(fixture('all-lost.txt'), meta({ intervalMs: 50, timeoutMs: 200 }));
    expect(recs).toHaveLength(4);
    expect(recs.every((r) => !r.ok && r.error === 'timeout')).toBe(true);
    expect(parsePing(fixture('unreachable.txt'), meta())).toHaveLength(3);
  });
});

describe('pingLines rules', () => {
  const head = 'PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n';
  const reply = (seq: number, ms: number, extra = '') =>
    `[1700000000.${String(seq).padStart(6, '0')}] 64 bytes from 10.0.0.2: icmp_seq=${seq} ttl=63 time=${ms} ms${extra}\n`;
  const stats = (sent: number, got: number) =>
    `\n--- 10.0.0.2 ping statistics ---\n${sent} packets transmitted, ${got} received, 0% packet loss, time 1ms\n`;

  it('a reply later than the timeout is a loss (late-reply) that keeps its time', () => {
    const recs = parsePing(head + reply(1, 0.5) + reply(2, 1500) + stats(2, 2), meta({ timeoutMs: 1000 }));
    expect(recs[1]).toMatchObject({ ok: false, value: null, error: 'late-reply', late_rtt_ms: 1500 });
  });

  it('an ICMP error names the request it answered; a later reply to that request wins', () => {
    const text = `${head}[1700000000.1] From 10.0.0.1 icmp_seq=1 Destination Host Unreachable\n[1700000000.2] From 10.0.0.1 icmp_seq=2 Time to live exceeded\n${reply(2, 3)}${stats(3, 1)}`;
    const recs = parsePing(text, meta({ timeoutMs: 1000 }));
    expect(recs.map((r) => [r.seq, r.ok, r.error])).toEqual([
      [2, true, undefined],
      [1, false, 'unreachable'],
      [3, false, 'timeout'],
    ]);
  });

  it('skips duplicate replies instead of counting a request twice', () => {
    const recs = parsePing(head + reply(1, 0.5) + reply(1, 0.6, ' (DUP!)') + reply(1, 0.7) + stats(1, 1), meta());
    expect(recs).toHaveLength(1);
    expect(recs[0].value).toBe(0.5);
  });

  it('follows icmp_seq past its 16-bit wrap', () => {
    const text = head + reply(65535, 0.1) + reply(0, 0.1) + reply(1, 0.1);
    const seqs = parsePing(text, meta())
      .filter((r) => r.ok)
      .map((r) => r.seq);
    expect(seqs).toEqual([65535, 65536, 65537]);
  });

  it('without statistics (ping killed) the highest request seen bounds what was sent', () => {
    const recs = parsePing(`${head}${reply(1, 0.2)}[1700000000.3] no answer yet for icmp_seq=3\n`, meta());
    expect(recs.map((r) => [r.seq, r.ok])).toEqual([
      [1, true],
      [2, false],
      [3, false],
    ]);
  });

  it('never trusts a reply cut off at the end of the file', () => {
    const text = `${head}${reply(1, 0.25)}${reply(2, 0.25).slice(0, -6)}`;
    const { records, stats: s } = parseRawLenient('ping', text, meta());
    expect(s.truncated).toBe(true);
    expect(records.find((r) => r.seq === 2)).toMatchObject({ ok: false, error: 'timeout' });
  });

  it('keeps the good lines around a damaged one, naming it; rejects what is not ping output', () => {
    const text = `${head}${reply(1, 0.2)}garbage here\n${reply(2, 0.3)}${stats(2, 2)}`;
    const { records, stats: s } = parseRawLenient('ping', text, meta());
    expect(records.filter((r) => r.ok)).toHaveLength(2);
    expect(s.rejected).toBe(1);
    expect(s.firstRejection).toMatch(/^ping line 3: not a line of ping's output/);
    expect(() => parsePing('hello\n', meta())).toThrow(ParseError);
  });

  it('empty output with a runner reason is one failed record with that reason', () => {
    expect(parsePing('', meta({ reason: 'unknown-host', startedAtMs: 5, endedAtMs: 9 }))).toMatchObject([
      { ok: false, error: 'unknown-host', value: null, t_start: 5, t_end: 9 },
    ]);
  });

  it('whatever the lines, every record it keeps may be stored (fuzz)', () => {
    const line = fc.oneof(
      fc.constantFrom(head.trim(), 'rtt min/avg/max/mdev = 0.1/0.2/0.3/0.0 ms', ''),
      fc
        .tuple(fc.integer({ min: 0, max: 66000 }), fc.double({ min: 0, max: 5000, noNaN: true }))
        .map(([s, ms]) => reply(s, Number(ms.toFixed(3))).trim()),
      fc.integer({ min: 0, max: 66000 }).map((s) => `[1.5] no answer yet for icmp_seq=${s}`),
      fc.string({ maxLength: 40 }),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), (lines) => {
        const { records } = parseRawLenient('ping', `${lines.join('\n')}\n`, meta({ timeoutMs: 1000 }));
        for (const r of records) expect(recordProblem(r)).toBeUndefined();
        const seqs = records.map((r) => r.seq);
        expect(new Set(seqs).size).toBe(seqs.length);
      }),
      { numRuns: 300 },
    );
  });
});
