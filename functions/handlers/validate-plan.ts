/** ValidatePlan: resolve the plan, take the run lock, write plan, specs and manifest (functions/pipeline/validate.ts). */
import { z } from 'zod';
import { validatePlanStep } from '../pipeline/validate.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

const validatePlanInput = z.object({
  input: z.unknown(),
  runId: z.string(),
  startedAt: z.string().optional(),
  mode: z.literal('mesh').optional(),
});

export async function validatePlan(deps: Deps, input: unknown) {
  return validatePlanStep(deps, parseTaskInput(validatePlanInput, input, 'ValidatePlan'));
}
