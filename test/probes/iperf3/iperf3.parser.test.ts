/**
 * parseIperf3 on real captured iperf3 outputs (test/fixtures/iperf3, how each was made: see
 * test/fixtures/PROBES-B-FIXTURES.md) for the cases a loopback run cannot provoke, and the argv the
 * runner builds. No tools, no network: the runs against the real iperf3 are in iperf3.int.test.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../core/errors.js';
import { extractJsonObject, parseIperf3 } from '../../../probes/iperf3/iperf3.parser.js';
import { iperf3Args } from '../../../probes/iperf3/iperf3.runner.js';
import { iperf3Probe as probe } from '../../helpers/probes.js';
import { ROOT } from '../../helpers/repo.js';

const fixture = (name: string) => readFileSync(path.join(ROOT, 'test/fixtures/iperf3', name), 'utf8');
const meta = () => ({ runId: 'r1', pathId: 'p1', probe: 'iperf3-tcp', trial: 1 });

describe('parseIperf3 on captured real output', () => {
  it('text after the JSON is ignored (and noted)', () => {
    const raw = fixture('tcp-p2.json');
    const clean = parseIperf3(raw, meta());
    const noisy = parseIperf3(`${raw}iperf3: error - control socket has closed unexpectedly\n{"x":1}\n`, meta());
    expect(noisy.map((r) => r.value)).toEqual(clean.map((r) => r.value));
    expect(noisy[0].trailing_text).toBe(true);
    expect(clean[0].trailing_text).toBeUndefined();
  });

  it('an "error" key fails the repeat but keeps the intervals measured before it', () => {
    const doc = JSON.parse(fixture('tcp-p2.json'));
    doc.error = 'control socket has closed unexpectedly';
    const recs = parseIperf3(JSON.stringify(doc), meta());
    const tput = recs.filter((r) => r.metric === 'throughput_bps');
    expect(tput.filter((r) => r.ok)).toHaveLength(3);
    expect(tput.at(-1)).toMatchObject({ ok: false, value: null, seq: 3, error: 'connection-lost' });
  });

  it('busy, refused and interrupted outputs each give one failed record, never 0 bps', () => {
    expect(parseIperf3(fixture('busy.json'), meta())).toMatchObject([{ ok: false, value: null, error: 'server-busy' }]);
    expect(parseIperf3(fixture('refused.json'), meta())).toMatchObject([{ ok: false, error: 'connection-refused' }]);
    const interrupted = parseIperf3(fixture('interrupted.json'), meta());
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0].value).toBeNull();
  });

  it('UDP without server JSON: whole-test jitter/loss once per repeat', () => {
    const recs = parseIperf3(fixture('udp-no-server-json.json'), meta());
    expect(recs.filter((r) => r.metric === 'throughput_bps')).toHaveLength(2);
    expect(recs.filter((r) => r.metric === 'jitter_ms')).toMatchObject([{ scope: 'test', seq: 0, ok: true }]);
    expect(recs.filter((r) => r.metric === 'lost_percent')).toHaveLength(1);
  });

  it('the tbf lab run (high for 5 s, then the 200 Mbit/s rate) is flagged credit-exhausted from interval 5', () => {
    const recs = parseIperf3(fixture('tcp-tbf-cliff.json'), meta());
    const tput = recs.filter((r) => r.metric === 'throughput_bps');
    expect(tput).toHaveLength(12);
    expect(tput.map((r) => r.flag === 'credit-exhausted')).toEqual([...Array(5).fill(false), ...Array(7).fill(true)]);
    expect(recs.filter((r) => r.metric === 'retransmits').some((r) => r.flag)).toBe(false);
  });

  it('rejects output that is not iperf3 JSON with a one-line ParseError', () => {
    expect(() => parseIperf3('iperf3: error - unable to connect\n', meta())).toThrow(ParseError);
    expect(() => parseIperf3('{"start": {"x": "}"', meta())).toThrow(/truncated/);
    expect(() => parseIperf3('{"intervals":[{"sum":{}}]}', meta())).toThrow(/interval 0/);
  });

  it('extractJsonObject respects braces inside strings', () => {
    expect(extractJsonObject('warn\n{"a":"}{","b":{"c":1}} tail')).toEqual({
      json: '{"a":"}{","b":{"c":1}}',
      trailing: ' tail',
    });
  });
});

describe('iperf3Args', () => {
  it('builds the argv and refuses an unbounded UDP bitrate', () => {
    expect(iperf3Args(probe(), 'h', 5201)).toEqual(['-c', 'h', '-p', '5201', '-J', '-i', '1', '-t', '3', '-P', '2']);
    expect(iperf3Args(probe({ mode: 'udp', streams: 1, bitrate: '1G' }), 'h', 1)).toContain('--get-server-output');
    expect(() => iperf3Args(probe({ mode: 'udp', bitrate: '0' }), 'h', 1)).toThrow(/bounded bitrate/);
    // Unbounded only when spelled out: iperf3's own -b 0.
    const unbounded = iperf3Args(probe({ mode: 'udp', streams: 1, bitrate: 'unbounded' }), 'h', 1);
    expect(unbounded.slice(unbounded.indexOf('-b'), unbounded.indexOf('-b') + 2)).toEqual(['-b', '0']);
  });
});
