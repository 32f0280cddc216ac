/** The mtu probe's options: the path MTU searched between `min` and `max`, each ping given `timeoutMs`. */
import { z } from 'zod';
import { intIn } from '../../core/fields.js';
import { type PrimaryMetric, probeName } from '../probe-fields.js';

const mtuProbeFields = z.strictObject({
  kind: z.literal('mtu'),
  name: probeName,
  min: intIn(68, 65535),
  max: intIn(68, 65535),
  timeoutMs: intIn(1, 60_000),
});

/** The mtu probe's min < max rule, for its spec and its plan input alike. */
function mtuBoundsInOrder<T extends z.ZodType<{ min: number; max: number }>>(schema: T): T {
  // Only compare when both bounds are valid integers, so a bad bound is reported once.
  return schema.refine((p) => !(Number.isInteger(p.min) && Number.isInteger(p.max)) || p.min < p.max, {
    path: ['max'],
    error: (iss) => {
      const p = iss.input as { min: number; max: number };
      return `expected max > min (${p.min}), got ${p.max}`;
    },
  });
}

export const mtuProbeSchema = mtuBoundsInOrder(mtuProbeFields);
export type MtuProbe = z.output<typeof mtuProbeSchema>;

const s = mtuProbeFields.shape;
/** As a plan writes it: the name optional, defaults for the options. */
export const mtuInputSchema = mtuBoundsInOrder(
  mtuProbeFields.extend({
    name: s.name.optional(),
    min: s.min.default(1200),
    max: s.max.default(9001),
    timeoutMs: s.timeoutMs.default(1000),
  }),
);

export const MTU_METRIC: PrimaryMetric = { metric: 'mtu_bytes', unit: 'bytes' };
