/** The sockperf probe's options: ping-pong over tcp or udp for `durationSeconds`. */
import { z } from 'zod';
import { intIn } from '../../core/fields.js';
import { type PrimaryMetric, port, probeName, tcpOrUdp } from '../probe-fields.js';

export const sockperfProbeSchema = z.strictObject({
  kind: z.literal('sockperf'),
  name: probeName,
  mode: tcpOrUdp,
  durationSeconds: intIn(1, 3600),
  port: port.optional(),
});
export type SockperfProbe = z.output<typeof sockperfProbeSchema>;

const s = sockperfProbeSchema.shape;
/** As a plan writes it: the name optional, defaults for the options. */
export const sockperfInputSchema = sockperfProbeSchema.extend({
  name: s.name.optional(),
  mode: s.mode.default('udp'),
  durationSeconds: s.durationSeconds.default(5),
});

export const SOCKPERF_METRIC: PrimaryMetric = { metric: 'rtt_us', unit: 'us' };
