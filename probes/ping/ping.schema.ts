/**
 * The ping probe's options: `count` ICMP echo requests of `sizeBytes` payload, `intervalMs`
 * apart; a reply later than `timeoutMs` (or none) counts as lost. ICMP is what seed 003's mesh
 * measured and what an NLB or PrivateLink drops (seed 000: ping 100 % loss through the endpoint).
 */
import { z } from 'zod';
import { intIn } from '../../core/fields.js';
import { type PrimaryMetric, probeName } from '../probe-fields.js';

export const pingProbeSchema = z.strictObject({
  kind: z.literal('ping'),
  name: probeName,
  count: intIn(1, 1_000_000),
  /** iputils ping refuses gaps below 2 ms unless run as root; the agent runs as root on the clients. */
  intervalMs: intIn(1, 60_000),
  /** ICMP payload bytes (ping -s); the packet is 28 bytes more on IPv4, 48 on IPv6. */
  sizeBytes: intIn(0, 65_000),
  timeoutMs: intIn(1, 60_000),
});
export type PingProbe = z.output<typeof pingProbeSchema>;

const s = pingProbeSchema.shape;
/** As a plan writes it: the name optional, defaults for the options (ping's own 56-byte payload). */
export const pingInputSchema = pingProbeSchema.extend({
  name: s.name.optional(),
  count: s.count.default(300),
  intervalMs: s.intervalMs.default(200),
  sizeBytes: s.sizeBytes.default(56),
  timeoutMs: s.timeoutMs.default(1000),
});

export const PING_METRIC: PrimaryMetric = { metric: 'icmp_rtt_ms', unit: 'ms' };
