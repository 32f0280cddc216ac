/**
 * What a stored sample record must satisfy, whatever parser made it: checked on every record
 * before it is kept, so nothing invalid reaches the samples table. A failure names the field.
 */
import type { SampleRecord } from '../../core/sample-record.js';

/** Metrics that cannot be negative (times, rates, counts, sizes, shares): all of today's. */
export const NON_NEGATIVE_METRICS = new Set([
  'connect_rtt_ms',
  'http_latency_ms',
  'http_pair_ref_ms',
  'rtt_us',
  'throughput_bps',
  'retransmits',
  'jitter_ms',
  'lost_percent',
  'mtu_bytes',
  'icmp_rtt_ms',
]);

const STRING_FIELDS = ['run_id', 'path_id', 'probe', 'kind', 'metric', 'unit'] as const;

/** undefined when `r` may be stored; else "<field> …" saying what is wrong. */
export function recordProblem(r: SampleRecord): string | undefined {
  for (const k of STRING_FIELDS) {
    if (typeof r[k] !== 'string' || r[k] === '') return `${k} must be a non-empty string`;
  }
  if (!Number.isSafeInteger(r.trial) || r.trial < 0) return 'trial must be an integer ≥ 0';
  if (!Number.isSafeInteger(r.seq) || r.seq < 0) return `seq must be an integer 0 … 2^53−1, got ${r.seq}`;
  if (!Number.isFinite(r.t_start)) return 't_start must be a finite number';
  if (!Number.isFinite(r.t_end)) return 't_end must be a finite number';
  if (r.t_end < r.t_start) return `t_end must not be before t_start (${r.t_end} < ${r.t_start})`;
  if (typeof r.ok !== 'boolean') return 'ok must be true or false';
  if (r.value !== null) {
    if (typeof r.value !== 'number' || !Number.isFinite(r.value)) return 'value must be a finite number or null';
    if (r.value < 0 && NON_NEGATIVE_METRICS.has(r.metric)) return `value of ${r.metric} must be ≥ 0, got ${r.value}`;
  }
  if (r.ok && r.value === null) return 'value must be a number when ok is true';
  if (!r.ok && (typeof r.error !== 'string' || r.error === '')) return 'error must say why when ok is false';
  return undefined;
}
