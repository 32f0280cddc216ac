/**
 * The http probe's options: `trials` × `count` GETs of `payloadBytes` with `concurrency`
 * closed-loop workers, keep-alive on or off; and the plan's `matrix`, which turns one probe into
 * one per combination of keep-alive, concurrency and body size (its cells).
 */
import { z } from 'zod';
import { intIn, safeId } from '../../core/fields.js';
import { type PrimaryMetric, port, probeName } from '../probe-fields.js';

export const httpProbeSchema = z.strictObject({
  kind: z.literal('http'),
  name: probeName,
  count: intIn(1, 1_000_000),
  concurrency: intIn(1, 1024),
  keepAlive: z.boolean(),
  payloadBytes: intIn(0, 104_857_600),
  trials: intIn(1, 100),
  timeoutMs: intIn(1, 60_000),
  port: port.optional(),
  /**
   * `net.ipv4.tcp_tw_reuse` for the duration of this probe (0 off, 1 on, 2 loopback only): the
   * agent sets it before the first trial and puts the previous value back after the last, also
   * on error. Absent: left as the client has it (recorded per trial either way).
   */
  tcpTwReuse: z.union([z.literal(0), z.literal(1), z.literal(2)]).optional(),
  /**
   * The plan's reference path measured inside this probe (`regression.paired`): requests
   * alternate between this path's target and the reference path's, one each in turn, on the
   * same client, so both series see the same moments of the host. Set by plan resolution.
   */
  pair: z.strictObject({ path: safeId, host: z.string().min(1), port }).optional(),
  /** The plan probe this one is a cell of, when the plan gave a `matrix`. */
  matrix: probeName.optional(),
  /** The cell's name within its matrix, e.g. "noka-c16-1m" (keep-alive off, concurrency 16, 1 MiB). */
  cell: probeName.optional(),
});
export type HttpProbe = z.output<typeof httpProbeSchema>;

const s = httpProbeSchema.shape;
/** As a plan writes it: the name optional, defaults for the options, and an optional matrix. */
export const httpInputSchema = httpProbeSchema.extend({
  name: s.name.optional(),
  count: s.count.default(1000),
  concurrency: s.concurrency.default(1),
  keepAlive: s.keepAlive.default(true),
  payloadBytes: s.payloadBytes.default(1024),
  trials: s.trials.default(1),
  timeoutMs: s.timeoutMs.default(2000),
  /**
   * Several probes in one: every combination of these values (keep-alive, then concurrency, then
   * body size, in the order given) becomes its own probe `<name>-<cell>` (matrixCells).
   */
  matrix: z
    .strictObject({
      keepAlive: z.array(z.boolean()).min(1).max(2).optional(),
      concurrency: z.array(s.concurrency).min(1).max(8).optional(),
      payloadBytes: z.array(s.payloadBytes).min(1).max(8).optional(),
    })
    .optional(),
  cell: z.never().optional(),
  pair: z.never({ error: "set from the plan's regression.paired and reference, not written in a probe" }).optional(),
});

export const HTTP_METRIC: PrimaryMetric = { metric: 'http_latency_ms', unit: 'ms' };
/** The paired reference's requests of an http probe with `pair`: the reference path's target, timed in the same probe. */
export const HTTP_PAIR_METRIC = 'http_pair_ref_ms';

/** A body size as a cell name part: 1024 → "1k", 1048576 → "1m", 500 → "500b". */
export function sizeLabel(bytes: number): string {
  if (bytes > 0 && bytes % 1_048_576 === 0) return `${bytes / 1_048_576}m`;
  if (bytes > 0 && bytes % 1024 === 0) return `${bytes / 1024}k`;
  return `${bytes}b`;
}

/** A cell's name: "ka-c1-1k" (keep-alive on, concurrency 1, 1 KiB), "noka-c16-1m" … */
export function cellName(keepAlive: boolean, concurrency: number, payloadBytes: number): string {
  return `${keepAlive ? 'ka' : 'noka'}-c${concurrency}-${sizeLabel(payloadBytes)}`;
}

export type MatrixAxes = { keepAlive?: boolean[]; concurrency?: number[]; payloadBytes?: number[] };

/**
 * The cells of an http matrix: one (keepAlive, concurrency, payloadBytes) per combination,
 * keep-alive outermost (so keep-alive-on cells run before the TIME_WAIT-heavy off cells), axes
 * the matrix leaves out take the probe's own value. Duplicate values count once.
 */
export function matrixCells(
  base: { keepAlive: boolean; concurrency: number; payloadBytes: number },
  m: MatrixAxes,
): { keepAlive: boolean; concurrency: number; payloadBytes: number; cell: string }[] {
  const out = [];
  for (const keepAlive of [...new Set(m.keepAlive ?? [base.keepAlive])])
    for (const concurrency of [...new Set(m.concurrency ?? [base.concurrency])])
      for (const payloadBytes of [...new Set(m.payloadBytes ?? [base.payloadBytes])])
        out.push({ keepAlive, concurrency, payloadBytes, cell: cellName(keepAlive, concurrency, payloadBytes) });
  return out;
}
