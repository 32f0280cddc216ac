/** SendProbe: send the probe command to the client (functions/pipeline/probe-command.ts). */
import { clientInput } from '../pipeline/contracts.js';
import { sendProbe as send } from '../pipeline/probe-command.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function sendProbe(deps: Deps, input: unknown) {
  return send(deps, parseTaskInput(clientInput, input, 'SendProbe'));
}
