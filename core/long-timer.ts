/**
 * setTimeout for any delay. Node clamps a delay above 2^31-1 ms (about 24.8 days) to 1 ms, so a
 * long deadline computed from a plan would fire at once; this chains timers of at most that
 * length instead. Hand-written: a dozen lines, and no maintained package does only this.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LongTimer {
  clear(): void;
}

/** Calls `fn` once after `ms` milliseconds (non-finite or negative delays fire at once, as setTimeout does). */
export function setLongTimeout(fn: () => void, ms: number): LongTimer {
  const due = Date.now() + (Number.isFinite(ms) && ms > 0 ? ms : 0);
  let timer: NodeJS.Timeout;
  const arm = () => {
    const left = due - Date.now();
    timer = setTimeout(left > MAX_TIMER_MS ? arm : fn, Math.max(0, Math.min(left, MAX_TIMER_MS)));
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}
