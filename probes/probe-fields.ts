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

/** The highest bitrate a plan may ask for: the fastest EC2 network interface, 400 Gbit/s. */
export const MAX_BITS_PER_SECOND = 400e9;

/** A bitrate in bit/s as iperf3 reads it (K, M, G are powers of 1000 for rates). */
export function bitsPerSecond(rate: string): number {
  const unit = { K: 1e3, M: 1e6, G: 1e9 }[rate.slice(-1)] ?? 1;
  return Number.parseFloat(rate) * unit;
}

export const bitrate = z
  .string()
  .refine((s) => s === UNBOUNDED_BITRATE || BITRATE.test(s), {
    error: (iss) =>
      `expected an iperf3 bitrate such as "1G", "500M" or "100K" (or "${UNBOUNDED_BITRATE}"), got ${quoted(iss.input)}`,
    abort: true,
  })
  .refine((s) => s === UNBOUNDED_BITRATE || Number.parseFloat(s) > 0, {
    error: () =>
      `bitrate 0 means unbounded, which saturates the sender and measures the instance, not the path; give a rate such as "1G", or "${UNBOUNDED_BITRATE}" if that is what you want`,
    abort: true,
  })
  // iperf3 keeps the rate as a whole number of bit/s: below 1 it becomes 0 (unbounded), and a
  // huge one wraps around; either way the sender is no longer bounded.
  .refine((s) => s === UNBOUNDED_BITRATE || (bitsPerSecond(s) >= 1 && bitsPerSecond(s) <= MAX_BITS_PER_SECOND), {
    error: (iss) =>
      `expected a rate of 1 bit/s–400G (iperf3 takes less than 1 bit/s as 0, unbounded, and a larger rate is no bound), got ${quoted(iss.input)} (${typeof iss.input === 'string' ? bitsPerSecond(iss.input) : '?'} bit/s); "${UNBOUNDED_BITRATE}" is the one way to ask for no bound`,
  });

/** The metric a probe kind reports first (a failed record's metric when a probe left no raw file). */
export interface PrimaryMetric {
  metric: string;
  unit: string;
}
