import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, setLongTimeout } from '../../core/long-timer.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('setLongTimeout', () => {
  it('waits the whole delay beyond 2^31-1 ms instead of firing after 1 ms', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const ms = 3_000_000 * 1000; // a 3,000,000 s deadline
    setLongTimeout(fn, ms);
    vi.advanceTimersByTime(1);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(ms - MAX_TIMER_MS - 2);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledOnce();
  });

  it('fires short delays like setTimeout, and clear() stops it at any stage', () => {
    vi.useFakeTimers();
    const short = vi.fn();
    setLongTimeout(short, 10);
    vi.advanceTimersByTime(10);
    expect(short).toHaveBeenCalledOnce();
    const cleared = vi.fn();
    const t = setLongTimeout(cleared, MAX_TIMER_MS * 2);
    vi.advanceTimersByTime(MAX_TIMER_MS + 5);
    t.clear();
    vi.advanceTimersByTime(MAX_TIMER_MS * 2);
    expect(cleared).not.toHaveBeenCalled();
  });
});
