/**
 * Task input validation shared by the handlers: an invalid event is a programming error between
 * the ASL and the code, so it fails with TaskInputError naming the field.
 */
import type { z } from 'zod';
import { PathbenchError } from '../../core/errors.js';

export class TaskInputError extends PathbenchError {}

/** The event checked against `schema` (functions/pipeline/contracts.ts), or TaskInputError naming the first bad field. */
export function parseTaskInput<T extends z.ZodType>(
  schema: T,
  input: unknown,
  task: string,
  what = 'input',
): z.infer<T> {
  const r = schema.safeParse(input);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new TaskInputError(`${task}: bad ${what} at ${first.path.join('.') || '(root)'}: ${first.message}`);
  }
  return r.data;
}
