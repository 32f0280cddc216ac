/** SwapRoutes: point the path's routes at its targets (functions/pipeline/route-swap.ts). */
import { pathRef } from '../pipeline/contracts.js';
import { swapRoutes as swap } from '../pipeline/route-swap.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function swapRoutes(deps: Deps, input: unknown) {
  return swap(deps, parseTaskInput(pathRef, input, 'SwapRoutes'));
}
