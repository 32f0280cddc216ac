/** PollProbe: one bounded poll of the probe command (functions/pipeline/probe-command.ts). */
import { pollProbeInput } from '../pipeline/contracts.js';
import { pollProbe as poll } from '../pipeline/probe-command.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function pollProbe(deps: Deps, input: unknown) {
  return poll(deps, parseTaskInput(pollProbeInput, input, 'PollProbe'));
}
