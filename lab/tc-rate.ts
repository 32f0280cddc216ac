/** tc's rate units (tc(8) "RATES"), matched case-insensitively as tc does: "bps" is BYTES per second. */
const TC_RATE_UNITS: Record<string, number> = {
  '': 1,
  bit: 1,
  kbit: 1e3,
  mbit: 1e6,
  gbit: 1e9,
  tbit: 1e12,
  kibit: 2 ** 10,
  mibit: 2 ** 20,
  gibit: 2 ** 30,
  tibit: 2 ** 40,
  bps: 8,
  kbps: 8e3,
  mbps: 8e6,
  gbps: 8e9,
  tbps: 8e12,
  kibps: 8 * 2 ** 10,
  mibps: 8 * 2 ** 20,
  gibps: 8 * 2 ** 30,
  tibps: 8 * 2 ** 40,
};

/**
 * A tc rate ("200mbit", "1gbit", "125MBps") in bit/s. Hand-written: tc's unit grammar is small and
 * has no library here; a bare number is bit/s, as in tc.
 */
export function tcRateBps(rate: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(rate);
  const scale = m ? TC_RATE_UNITS[m[2].toLowerCase()] : undefined;
  if (!m || scale === undefined) throw new RangeError(`not a tc rate: "${rate}"`);
  return Math.round(Number(m[1]) * scale);
}
