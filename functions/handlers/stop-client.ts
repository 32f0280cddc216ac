/** StopClient: stop the client instance, reboot part 1 (functions/pipeline/client-reboot.ts). */

import { stopClient as stop } from '../pipeline/client-reboot.js';
import { clientInput } from '../pipeline/contracts.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function stopClient(deps: Deps, input: unknown) {
  return stop(deps, parseTaskInput(clientInput, input, 'StopClient'));
}
