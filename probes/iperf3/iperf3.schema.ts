/**
 * The iperf3 probe's options: `repeats` trials of `durationSeconds` with `streams` parallel
 * streams, one interval record every `intervalSeconds`; UDP at a bounded `bitrate`.
 */
import { z } from 'zod';
import { intIn, numberIn } from '../../core/fields.js';
import { bitrate, type PrimaryMetric, port, probeName, tcpOrUdp } from '../probe-fields.js';

export const iperf3ProbeSchema = z.strictObject({
  kind: z.literal('iperf3'),
  name: probeName,
  mode: tcpOrUdp,
  streams: intIn(1, 128),
  durationSeconds: intIn(1, 3600),
  repeats: intIn(1, 100),
  intervalSeconds: numberIn(0.1, 60),
  /** UDP target bitrate, iperf3 syntax ("1G", "500M"). Never unbounded by default. */
  bitrate: bitrate.optional(),
  port: port.optional(),
});
export type Iperf3Probe = z.output<typeof iperf3ProbeSchema>;

const s = iperf3ProbeSchema.shape;
/** As a plan writes it: the name optional, defaults for the options (UDP's bitrate: resolvePlan's 1G). */
export const iperf3InputSchema = iperf3ProbeSchema.extend({
  name: s.name.optional(),
  mode: s.mode.default('tcp'),
  streams: s.streams.default(1),
  durationSeconds: s.durationSeconds.default(10),
  repeats: s.repeats.default(1),
  intervalSeconds: s.intervalSeconds.default(1),
});

/** A UDP probe without a bitrate gets this one: never unbounded by default. */
export const IPERF3_UDP_DEFAULT_BITRATE = '1G';

export const IPERF3_METRIC: PrimaryMetric = { metric: 'throughput_bps', unit: 'bit/s' };
