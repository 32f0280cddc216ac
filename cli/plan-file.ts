/** Reading a plan file from disk; parsing and validation are the core's (core/plan.ts). */
import { readFile } from 'node:fs/promises';
import type { PlanResult } from '../core/plan.js';
import { parsePlanText } from '../core/plan.js';

/**
 * Read a plan file (JSON) and parse it. A missing or unreadable file is reported as a problem
 * ("plan: cannot read FILE (reason)"), like every other plan problem.
 */
export async function loadPlanFile(file: string): Promise<PlanResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e: unknown) {
    return { ok: false, problems: [`plan: cannot read ${file} (${readReason(e)})`] };
  }
  return parsePlanText(text);
}

function readReason(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  // Node's message repeats the path ("ENOENT: no such file or directory, open 'x'"); keep the cause.
  return e.message.replace(/, \w+ '.*'$/, '');
}
