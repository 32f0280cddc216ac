/** EndTaskProbe: record the task that ran the probe and end the Probe step (functions/pipeline/task-probe.ts). */
import { z } from 'zod';
import { pathRef } from '../pipeline/contracts.js';
import { endTaskProbe as end } from '../pipeline/task-probe.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function endTaskProbe(deps: Deps, input: unknown) {
  return end(deps, parseTaskInput(pathRef.extend({ result: z.unknown() }), input, 'EndTaskProbe'));
}
