/**
 * Fields every probe kind's schema shares: its name, a port, tcp/udp, an iperf3-style bitrate.
 * Messages say what was expected and what was received (core/fields.ts).
 */
import { z } from 'zod';
import { intIn, matching, quoted, SAFE_ID } from '../core/fields.js';

export const probeName = matching(
  SAFE_ID,
  'a safe probe name (letters, digits, "-", "_", starting with a letter or digit, at most 63 characters)',
);
export const port = intIn(1, 65535);
export const tcpOrUdp = z.enum(['tcp', 'udp']);

/** iperf3 bitrate syntax: a number with an optional K/M/G suffix. */
export const BITRATE = /^\d+(\.\d+)?[KMG]?$/;

/**
 * The one way to ask iperf3 for UDP at no rate limit (`-b 0`, seed 000's 4.98 Gbit/s column):
 * spelled out, never a 0 that could be a slip, and said in the run's report (it measures how fast
 * the client can send as much as the path).
 */
export const UNBOUNDED_BITRATE = 'unbounded';

export const bitrate = z
  .string()
  .refine((s) => s === UNBOUNDED_BITRATE || BITRATE.test(s), {
    error: (iss) =>
      `expected an iperf3 bitrate such as "1G", "500M" or "100K" (or "${UNBOUNDED_BITRATE}"), got ${quoted(iss.input)}`,
  })
  .refine((s) => !BITRATE.test(s) || Number.parseFloat(s) > 0, {
    error: () =>
      `bitrate 0 means unbounded, which saturates the sender and measures the instance, not the path; give a rate such as "1G", or "${UNBOUNDED_BITRATE}" if that is what you want`,
  });

/** The metric a probe kind reports first (a failed record's metric when a probe left no raw file). */
export interface PrimaryMetric {
  metric: string;
  unit: string;
}
