/**
 * The pingpong probe (probes/native/pingpong.c): back-to-back request/response exchanges on one
 * connection (tcp, tcp-rr) or socket (udp), each timed with CLOCK_MONOTONIC.
 * Ends after `count` exchanges or `durationSeconds`, whichever first (0 = that limit is off; not
 * both). `responseBytes` is tcp-rr's response size (default: messageBytes); tcp and udp echo.
 * `wait` is how the client awaits a reply: "busy" polls it (the default, also when absent),
 * "block" sleeps in a blocking read as sockperf's client does (docs/probes.md says when to use which).
 */
import { z } from 'zod';
import { intIn } from '../../core/fields.js';
import { type PrimaryMetric, port, probeName } from '../probe-fields.js';

/** How the pingpong client awaits a reply: busy-poll (default) or a blocking read. */
export const PINGPONG_WAITS = ['busy', 'block'] as const;
export type PingpongWait = (typeof PINGPONG_WAITS)[number];

const pingpongProbeFields = z.strictObject({
  kind: z.literal('pingpong'),
  name: probeName,
  mode: z.enum(['tcp', 'udp', 'tcp-rr']),
  /** Request size in bytes (udp: at least 8, the sequence number travels in it). */
  messageBytes: intIn(1, 65_000),
  responseBytes: intIn(1, 65_000).optional(),
  durationSeconds: intIn(0, 3600),
  count: intIn(0, 100_000_000),
  /** One exchange's timeout: a UDP exchange past it is lost; a TCP one ends the series. */
  timeoutMs: intIn(1, 60_000),
  /** Defaults to the targets' pingpong port (TARGET_PORTS.pingpong), not the path's target port. */
  port: port.optional(),
  /** How the client awaits the reply; absent = "busy" (specs written before the option). */
  wait: z.enum(PINGPONG_WAITS).optional(),
  /** Series one after another, each to its count or duration; absent = 1 (stored before the option). */
  trials: intIn(1, 100).optional(),
});

/** The pingpong probe's cross-field rules, for its spec and its plan input alike. */
function pingpongRules<
  T extends z.ZodType<{
    mode: string;
    messageBytes: number;
    responseBytes?: number;
    durationSeconds: number;
    count: number;
  }>,
>(schema: T): T {
  return schema
    .refine((p) => !(p.count === 0 && p.durationSeconds === 0), {
      path: ['count'],
      error: () => 'expected a count or a durationSeconds above 0 (both are 0: the probe would never end)',
    })
    .refine((p) => p.mode !== 'udp' || !(p.messageBytes < 8), {
      path: ['messageBytes'],
      error: (iss) =>
        `expected messageBytes ≥ 8 for udp (the sequence number travels in it), got ${(iss.input as { messageBytes: number }).messageBytes}`,
    })
    .refine((p) => p.mode === 'tcp-rr' || p.responseBytes === undefined || p.responseBytes === p.messageBytes, {
      path: ['responseBytes'],
      error: (iss) =>
        `expected responseBytes only with mode "tcp-rr" (tcp and udp echo the message), got ${(iss.input as { responseBytes: number }).responseBytes}`,
    }) as unknown as T;
}

export const pingpongProbeSchema = pingpongRules(pingpongProbeFields);
export type PingpongProbe = z.output<typeof pingpongProbeSchema>;

const s = pingpongProbeFields.shape;
/** As a plan writes it: the name optional, defaults for the options. */
export const pingpongInputSchema = pingpongRules(
  pingpongProbeFields.extend({
    name: s.name.optional(),
    mode: s.mode.default('tcp'),
    messageBytes: s.messageBytes.default(16),
    durationSeconds: s.durationSeconds.default(5),
    count: s.count.default(0),
    timeoutMs: s.timeoutMs.default(1000),
    wait: s.wait.unwrap().default('busy'),
    trials: s.trials.unwrap().default(1),
  }),
);

export const PINGPONG_METRIC: PrimaryMetric = { metric: 'rtt_us', unit: 'us' };
