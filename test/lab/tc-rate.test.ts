import { describe, expect, it } from 'vitest';
import { tcRateBps } from '../../lab/tc-rate.js';

describe('tcRateBps', () => {
  it('reads tc rates in bit/s, with tc’s units (bps is bytes per second, case-insensitive)', () => {
    expect(tcRateBps('200mbit')).toBe(200e6);
    expect(tcRateBps('1gbit')).toBe(1e9);
    expect(tcRateBps('12.5Gbit')).toBe(12.5e9);
    expect(tcRateBps('781kbit')).toBe(781e3);
    expect(tcRateBps('1mibit')).toBe(1_048_576);
    expect(tcRateBps('125MBps')).toBe(1e9);
    expect(tcRateBps('125mbps')).toBe(1e9);
    expect(tcRateBps('1000')).toBe(1000);
  });

  it('rejects what tc would reject', () => {
    expect(() => tcRateBps('fast')).toThrow(/not a tc rate/);
    expect(() => tcRateBps('10 furlongs')).toThrow(/not a tc rate/);
    expect(() => tcRateBps('')).toThrow(/not a tc rate/);
  });
});
