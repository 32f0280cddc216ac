/**
 * sockperf `--full-log` CSV → one `rtt_us` record per exchange. The log's `latency(usec)` column
 * is ONE-WAY latency (sockperf halves the round trip); pathbench stores the ROUND TRIP
 * (latency × 2, unit "us") so sockperf rows line up with tcp-connect and netperf-style RTTs, and
 * every record says so in `note`. The CSV looks like (real sockperf 3.7 output):
 *
 *   ------------------------------
 *   test was performed using the following parameters: --mps=… --time=1
 *   ------------------------------
 *   sockperf: [Total Run] RunTime=… (sockperf's summary)
 *   packet, txTime(sec), rxTime(sec), latency(usec)
 *   0, 751.700139930, 751.700143126, 1.598
 *   ------------------------------
 *
 * tx/rx are CLOCK_MONOTONIC seconds (the runner passes --no-rdtsc); the runner's sidecar gives
 * the offset to epoch ms. Without a sidecar the times stay on sockperf's clock
 * (`time_base: "monotonic"`). A log without rows (no server reply, connection refused) becomes
 * one ok:false record with a reason. A bad row (a field that is not a number, a negative
 * latency) is rejected naming the column; a last row without newline is truncated (a number cut
 * short still parses, so it is never trusted).
 */
import { ParseError } from '../../core/errors.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { readSidecar } from '../iperf3/iperf3.parser.js';
import { decimal } from '../parsing/numbers.js';
import type { LineParser, ParseMeta } from '../parsing/parser-types.js';
import { strictParser } from '../parsing/strict.js';

export const SOCKPERF_NOTE = 'round trip (sockperf one-way latency x 2)';

const COLUMNS = ['packet', 'txTime(sec)', 'rxTime(sec)', 'latency(usec)'];

/** The line parser for one sockperf full-log CSV (see module header). */
export function sockperfLines(meta: ParseMeta): LineParser {
  const side = readSidecar(meta.sidecar);
  const offset = typeof side.monotonicToEpochMs === 'number' ? side.monotonicToEpochMs : undefined;
  const shift = offset ?? 0;
  const base = {
    run_id: meta.runId,
    path_id: meta.pathId,
    probe: meta.probe,
    kind: 'sockperf' as const,
    trial: meta.trial,
    unit: 'us',
    clock: 'sockperf-monotonic',
    time_base: offset === undefined ? 'monotonic' : 'epoch',
    note: SOCKPERF_NOTE,
    ...(side.mode ? { mode: side.mode } : {}),
  };
  let state: 'before' | 'rows' | 'bad-header' | 'after' = 'before';
  let firstText: string | undefined;
  let noReplies = false;
  let sockperfLike = false;
  return {
    line(text, n, complete) {
      if (state === 'before') {
        const t = text.trim();
        if (t !== '' && firstText === undefined) firstText = t;
        if (t.includes('test was performed') || t.startsWith('sockperf') || t.startsWith('---')) sockperfLike = true;
        if (/No messages were received/.test(text)) noReplies = true;
        if (!text.startsWith('packet,')) return [];
        if (!/txTime\(sec\),\s*rxTime\(sec\),\s*latency\(usec\)/.test(text)) {
          state = 'bad-header';
          throw new ParseError(`sockperf line ${n}: unexpected full-log header: ${text.slice(0, 80)}`);
        }
        state = 'rows';
        return [];
      }
      if (state === 'bad-header') {
        if (text === '' || text.startsWith('---')) {
          state = 'after';
          return [];
        }
        throw new ParseError(`sockperf line ${n}: row under an unexpected full-log header`);
      }
      if (state === 'after') return [];
      if (text === '' || text.startsWith('---')) {
        state = 'after';
        return [];
      }
      if (!complete) throw new ParseError(`sockperf line ${n}: row cut off`);
      const f = text.split(',');
      if (f.length !== 4) {
        throw new ParseError(`sockperf line ${n}: ${f.length} fields, expected 4 (${COLUMNS.join(', ')})`);
      }
      const v = [0, 0, 0, 0];
      for (let i = 0; i < 4; i++) {
        v[i] = decimal(f[i]);
        if (!Number.isFinite(v[i])) {
          throw new ParseError(`sockperf line ${n}: ${COLUMNS[i]} is not a number: ${f[i].trim().slice(0, 30)}`);
        }
      }
      const [seq, tx, rx, oneWay] = v;
      if (!Number.isSafeInteger(seq) || seq < 0)
        throw new ParseError(`sockperf line ${n}: packet must be an integer ≥ 0`);
      if (oneWay < 0) throw new ParseError(`sockperf line ${n}: latency(usec) must be ≥ 0, got ${oneWay}`);
      // A plain literal, not `...base`: object spread costs ~40× here, and a log has 1 M rows.
      const r: SampleRecord = {
        run_id: base.run_id,
        path_id: base.path_id,
        probe: base.probe,
        kind: 'sockperf',
        trial: base.trial,
        unit: 'us',
        clock: base.clock,
        time_base: base.time_base,
        note: SOCKPERF_NOTE,
        seq,
        t_start: tx * 1000 + shift,
        t_end: rx * 1000 + shift,
        metric: 'rtt_us',
        value: Math.round(oneWay * 2000) / 1000,
        ok: true,
      };
      if (side.mode) r.mode = side.mode;
      return [r];
    },
    end(ctx) {
      if (ctx.kept > 0) return [];
      if (state === 'before' && firstText !== undefined && !sockperfLike) {
        ctx.reject('sockperf: not a sockperf full-log CSV (no "packet, txTime…" header)');
        return [];
      }
      if (ctx.rejected > 0) return [];
      const reason = side.reason ?? (noReplies ? 'no-replies' : firstText === undefined ? 'no-output' : 'no-samples');
      const t = side.startedAtMs ?? 0;
      const rec: SampleRecord = {
        ...base,
        seq: 0,
        t_start: t,
        t_end: side.endedAtMs ?? t,
        metric: 'rtt_us',
        value: null,
        ok: false,
        error: reason,
      };
      return [rec];
    },
  };
}

/** Strict whole-text form (see strict.ts). */
export const parseSockperf = strictParser('sockperf', sockperfLines);
