/**
 * The tcp-connect probe's options: `count` handshakes `intervalMs` apart, each given `timeoutMs`
 * (seed 000's 300 × 0.2 s, 0.4 s timeout counted as loss, are the plan defaults).
 */
import { z } from 'zod';
import { intIn } from '../../core/fields.js';
import { type PrimaryMetric, port, probeName } from '../probe-fields.js';

export const tcpConnectProbeSchema = z.strictObject({
  kind: z.literal('tcp-connect'),
  /** Unique within a path; defaults to the kind (with -2, -3 … for repeats of a kind). */
  name: probeName,
  count: intIn(1, 1_000_000),
  intervalMs: intIn(0, 60_000),
  timeoutMs: intIn(1, 60_000),
  /** Overrides the path's target port for this probe. */
  port: port.optional(),
});
export type TcpConnectProbe = z.output<typeof tcpConnectProbeSchema>;

const s = tcpConnectProbeSchema.shape;
/** As a plan writes it: the name optional, defaults for the options. */
export const tcpConnectInputSchema = tcpConnectProbeSchema.extend({
  name: s.name.optional(),
  count: s.count.default(300),
  intervalMs: s.intervalMs.default(200),
  timeoutMs: s.timeoutMs.default(400),
});

export const TCP_CONNECT_METRIC: PrimaryMetric = { metric: 'connect_rtt_ms', unit: 'ms' };
