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
 * one ok:false record with a reason.
 */
import { ParseError } from '../errors.js';
import type { SampleRecord } from '../model.js';
import { readSidecar } from './iperf3.js';
import type { Parser } from './types.js';

export const SOCKPERF_NOTE = 'round trip (sockperf one-way latency x 2)';

/** Parse one sockperf full-log CSV (see module header). */
export const parseSockperf: Parser = (raw, meta) => {
  const side = readSidecar(meta.sidecar);
  const offset = typeof side.monotonicToEpochMs === 'number' ? side.monotonicToEpochMs : undefined;
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
  const lines = raw.split('\n');
  const header = lines.findIndex((l) => l.startsWith('packet,'));
  const out: SampleRecord[] = [];
  if (header >= 0) {
    if (!/txTime\(sec\),\s*rxTime\(sec\),\s*latency\(usec\)/.test(lines[header])) {
      throw new ParseError(`unexpected sockperf full-log header: ${lines[header].slice(0, 80)}`);
    }
    const shift = offset ?? 0;
    for (let i = header + 1; i < lines.length; i++) {
      const line = lines[i];
      if (line === '' || line.startsWith('---')) break;
      const f = line.split(',');
      const seq = Number(f[0]);
      const tx = Number(f[1]);
      const rx = Number(f[2]);
      const oneWay = Number(f[3]);
      if (f.length !== 4 || !Number.isInteger(seq) || ![tx, rx, oneWay].every(Number.isFinite)) {
        throw new ParseError(`sockperf full-log line ${i + 1} is not "packet, tx, rx, latency": ${line.slice(0, 80)}`);
      }
      out.push({
        ...base,
        seq,
        t_start: tx * 1000 + shift,
        t_end: rx * 1000 + shift,
        metric: 'rtt_us',
        value: Math.round(oneWay * 2000) / 1000,
        ok: true,
      });
    }
  }
  if (out.length > 0) return out;
  const trimmed = raw.trim();
  if (trimmed !== '' && header < 0 && !trimmed.includes('test was performed') && !trimmed.startsWith('sockperf')) {
    throw new ParseError('not a sockperf full-log CSV (no "packet, txTime…" header)');
  }
  const reason =
    side.reason ?? (/No messages were received/.test(raw) ? 'no-replies' : trimmed === '' ? 'no-output' : 'no-samples');
  const t = side.startedAtMs ?? 0;
  return [
    {
      ...base,
      seq: 0,
      t_start: t,
      t_end: side.endedAtMs ?? t,
      metric: 'rtt_us',
      value: null,
      ok: false,
      error: reason,
    },
  ];
};
