/**
 * The lab's truth per path (lab runs only, summary.paths[].lab, lab/lab-truth.ts): the round trip
 * the lab was to emulate, the one it achieved by its delay helper's clock, the helper's part and
 * the topology's, so a reader sees what the figures above measured — and which paths were lab
 * error rather than measurement.
 */
import type { Summary } from '../core/run-summary.js';

export const LAB_HEAD = [
  'path',
  'target ms',
  'achieved ms',
  'off',
  'applied ms',
  'applied p10–p90 ms',
  'bare ms',
  'packets',
  'lab',
];

export const LAB_NOTE =
  "the lab's own round trip per path, by its delay helper's clock: achieved = applied (the helper's delay) + bare (the topology); a path beyond max(3 %, 0.02 ms) of its target is lab error, and its figures measure the lab, not the path";

/** Right-aligned (numeric) columns of LAB_HEAD. */
export const labNumeric = (i: number): boolean => i >= 1 && i <= 7;

const ms = (v: number | null | undefined) => (typeof v === 'number' ? v.toFixed(3) : '');

/** One row per path the lab has a truth for, in the summary's order; none outside the lab. */
export function labTableRows(s: Summary): string[][] {
  return s.paths.flatMap((p) => {
    const t = p.lab;
    if (!t) return [];
    const achieved = typeof t.achievedRttMs === 'number' ? t.achievedRttMs : null;
    const off =
      achieved === null
        ? ''
        : `${achieved >= t.targetRttMs ? '+' : '−'}${Math.abs(((achieved - t.targetRttMs) / t.targetRttMs) * 100).toFixed(1)} %`;
    const range = t.appliedP10P90Ms ? `${ms(t.appliedP10P90Ms[0])}–${ms(t.appliedP10P90Ms[1])}` : '';
    return [
      [
        p.id,
        ms(t.targetRttMs),
        ms(achieved),
        off,
        ms(t.appliedRttMs),
        range,
        ms(t.bareRttMs),
        t.packets === undefined ? '' : String(t.packets),
        t.labError ? 'lab error' : 'ok',
      ],
    ];
  });
}

export const CSV_LAB_HEAD = [
  'run_id',
  'path',
  'lab_target_rtt_ms',
  'lab_achieved_rtt_ms',
  'lab_applied_rtt_ms',
  'lab_applied_p10_ms',
  'lab_applied_p90_ms',
  'lab_bare_rtt_ms',
  'lab_packets',
  'lab_error',
];

/** The same per path as CSV cells (numbers stay numbers). */
export function labCsvRows(s: Summary): unknown[][] {
  return s.paths.flatMap((p) =>
    p.lab
      ? [
          [
            s.runId,
            p.id,
            p.lab.targetRttMs,
            p.lab.achievedRttMs,
            p.lab.appliedRttMs,
            p.lab.appliedP10P90Ms?.[0],
            p.lab.appliedP10P90Ms?.[1],
            p.lab.bareRttMs,
            p.lab.packets,
            p.lab.labError === true,
          ],
        ]
      : [],
  );
}
