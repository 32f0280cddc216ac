/**
 * The sockperf probe's options: `trials` ping-pongs over tcp or udp, each `durationSeconds` long
 * (seed 004 ran 60 s × 2), reported per trial as iperf3's repeats are.
 */
import { z } from 'zod';
import { intIn } from '../../core/fields.js';
import { type PrimaryMetric, port, probeName, tcpOrUdp } from '../probe-fields.js';

export const sockperfProbeSchema = z.strictObject({
  kind: z.literal('sockperf'),
  name: probeName,
  mode: tcpOrUdp,
  durationSeconds: intIn(1, 3600),
  /** Trials one after another; absent = 1 (specs and plans stored before the option). */
  trials: intIn(1, 100).optional(),
  port: port.optional(),
});
export type SockperfProbe = z.output<typeof sockperfProbeSchema>;

const s = sockperfProbeSchema.shape;
/** As a plan writes it: the name optional, defaults for the options. */
export const sockperfInputSchema = sockperfProbeSchema.extend({
  name: s.name.optional(),
  mode: s.mode.default('udp'),
  durationSeconds: s.durationSeconds.default(5),
  trials: s.trials.unwrap().default(1),
});

export const SOCKPERF_METRIC: PrimaryMetric = { metric: 'rtt_us', unit: 'us' };
