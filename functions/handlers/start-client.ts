/** StartClient: start the client instance, reboot part 2 (functions/pipeline/client-reboot.ts). */

import { startClient as start } from '../pipeline/client-reboot.js';
import { clientInput } from '../pipeline/contracts.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function startClient(deps: Deps, input: unknown) {
  return start(deps, parseTaskInput(clientInput, input, 'StartClient'));
}
