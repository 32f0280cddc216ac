/**
 * Preflight: every check a plan passes before a run of it may start, in one place. ValidatePlan
 * calls it (functions/pipeline/validate.ts) and so do the commands that start runs — `run
 * --local` and `start` (cli/) — before anything starts, with the same settings (core/settings.ts).
 * Pure: no store, no lock, no AWS. (What needs the account — the routes' current targets — is
 * ValidatePlan's own, after this.)
 */
import { applicableBudget, type Budget, enforceBudget, estimateRun, type RunEstimate } from '../../core/cost.js';
import { PlanInvalidError } from '../../core/errors.js';
import { orderPlan, runIndexOf } from '../../core/path-order.js';
import { parsePlan } from '../../core/plan.js';
import type { ResolvedPath, ResolvedPlan } from '../../core/resolved-plan.js';
import type { CostRecord } from '../../core/run-manifest.js';
import type { Settings } from '../../core/settings.js';
import { type AllowedTargets, targetRefusal } from '../../core/target-policy.js';
import { PATHS_PER_CHUNK } from '../../statemachine/asl.js';
import { planLimitProblems } from './limits.js';

/** Which state machine runs the plan: one path after another, or the mesh's rounds. */
export type RunMode = 'sequential' | 'mesh';

/** The small per-path facts the state machine branches on (state payloads stay tiny). */
export interface PathItem {
  id: string;
  reboot: boolean;
  creditWaitSeconds: number;
  hasRoutes: boolean;
  client: { instanceId: string; region: string };
}

export interface ValidateOutput {
  runId: string;
  planName: string;
  /**
   * The path items in plan order, PATHS_PER_CHUNK to a chunk (sequential mode: each chunk is a
   * child execution of statemachine/chunk.asl.json); empty in mesh mode, whose items are in the
   * round lists.
   */
  chunks: PathItem[][];
  /** Mesh mode: where the round lists are, how many, and the round to run next (0). */
  mesh?: MeshState;
}

export interface MeshState {
  bucket: string;
  rounds: number;
  round: number;
}

/** The path item of a resolved path: the small facts the state machine branches on. */
export function pathItem(p: ResolvedPath): PathItem {
  return {
    id: p.id,
    reboot: p.reboot,
    creditWaitSeconds: p.creditWaitSeconds,
    hasRoutes: p.routes.length > 0,
    client: p.client,
  };
}

/** A mesh plan's path items by round (round numbers are consecutive from 0; validated by the plan). */
export function meshRounds(plan: ResolvedPlan): PathItem[][] {
  const rounds: PathItem[][] = [];
  for (const p of plan.paths) {
    const r = p.mesh?.round ?? 0;
    while (rounds.length <= r) rounds.push([]);
    rounds[r].push(pathItem(p));
  }
  return rounds;
}

/** What ValidatePlan returns: the state the execution carries through the Map (kept small). */
export function validateOutput(runId: string, plan: ResolvedPlan, mesh?: MeshState): ValidateOutput {
  if (mesh) return { runId, planName: plan.name, chunks: [], mesh };
  const items = plan.paths.map(pathItem);
  const chunks: PathItem[][] = [];
  for (let i = 0; i < items.length; i += PATHS_PER_CHUNK) chunks.push(items.slice(i, i + PATHS_PER_CHUNK));
  return { runId, planName: plan.name, chunks };
}

/** The longest an S3 bucket name can be: the stand-in for a bucket not known yet (sizes are upper bounds). */
const LONGEST_BUCKET = 'b'.repeat(63);

export interface PreflightOptions {
  runId: string;
  /** The machine that will run it; default: mesh for a mesh plan (paths with `mesh`), else sequential. */
  mode?: RunMode;
  /** The fleet's poll interval (the execution-time limits depend on it). */
  pollSeconds: number;
  /** The run's index for a rotated or shuffled path order (a run counter); default: from the run id. */
  runIndex?: number;
  /** Where a mesh run's round lists go (its name is in the state); unknown: the longest a name can be. */
  bucket?: string;
  /**
   * The targets the operator allowed at deploy (core/target-policy.ts; ValidatePlan's
   * Deps.allowedTargets). Undefined: no list (local runs), every target not forbidden.
   */
  allowedTargets?: AllowedTargets;
}

export interface Preflight {
  plan: ResolvedPlan;
  mode: RunMode;
  /** ValidatePlan's output for the run, as the limits measured it. */
  output: ValidateOutput;
  /** Mesh mode: the path items by round (empty otherwise). */
  rounds: PathItem[][];
  estimate: RunEstimate;
  budget?: Budget;
  /** What the manifest records of the cost guard (estimate, budget, whether the override was used). */
  cost: CostRecord;
  /** The plan's path order and this run's index (plan.paths are in that order); absent: as written. */
  order?: { mode: NonNullable<ResolvedPlan['order']>['mode']; index: number; seed?: number };
}

/**
 * The plan parsed and resolved, held to the service limits of the machine that will run it and
 * to its budget. Throws PlanInvalidError (every problem, "field: what is wrong") or
 * OverBudgetError (over budget without settings.allowOverBudget); nothing else is checked twice
 * anywhere.
 */
export function preflight(raw: unknown, settings: Settings, opts: PreflightOptions): Preflight {
  const result = parsePlan(raw);
  if (!result.ok) throw new PlanInvalidError(result.problems);
  const index = opts.runIndex ?? runIndexOf(opts.runId);
  // The paths in this run's order: the state machine runs them as listed.
  const plan = orderPlan(result.plan, index);
  const order = plan.order ? { ...plan.order, index } : undefined;
  // Targets: only those the operator allowed (the clients would send to any host a plan names).
  const refused = plan.paths.flatMap((p, i) => {
    const refusal = targetRefusal(opts.allowedTargets, p.target.host);
    return refusal ? [`paths[${i}].target.host: ${refusal}`] : [];
  });
  if (refused.length > 0) throw new PlanInvalidError(refused);
  const { mode, rounds, output } = fitLimits(plan, opts);
  // The cost guard: over budget without the caller's override is refused.
  const estimate = estimateRun(plan, settings);
  const budget = applicableBudget(plan, settings.budgetUsd);
  const cost = enforceBudget(estimate, budget, settings.allowOverBudget);
  return { plan, mode, output, rounds, estimate, ...(budget ? { budget } : {}), cost, ...(order ? { order } : {}) };
}

/** The longest a run id can be (core/keys.ts): the stand-in for a run not started yet. */
const LONGEST_RUN_ID = 'r'.repeat(80);

/**
 * A valid plan held to the service limits of the machine that will run it (history events,
 * payload size, SSM and execution timeouts): its mode, round lists and ValidatePlan's output as
 * measured, or PlanInvalidError with the number that breaks. Also `plan put`'s check
 * (functions/pipeline/plan-store.ts), before a run exists: `runId` defaults to the longest one.
 */
export function fitLimits(
  plan: ResolvedPlan,
  opts: Pick<PreflightOptions, 'mode' | 'pollSeconds' | 'bucket'> & { runId?: string },
): { mode: RunMode; rounds: PathItem[][]; output: ValidateOutput } {
  const mode = opts.mode ?? (plan.paths.some((p) => p.mesh) ? 'mesh' : 'sequential');
  if (mode === 'mesh' && !plan.paths.some((p) => p.mesh))
    throw new PlanInvalidError([
      'paths: the mesh state machine runs mesh plans (paths with "mesh": make one with `pathbench plan mesh`); run this plan on the measurement state machine',
    ]);
  const rounds = mode === 'mesh' ? meshRounds(plan) : [];
  const output = validateOutput(
    opts.runId ?? LONGEST_RUN_ID,
    plan,
    mode === 'mesh' ? { bucket: opts.bucket ?? LONGEST_BUCKET, rounds: rounds.length, round: 0 } : undefined,
  );
  // Service limits (history events, payload size, SSM and execution timeouts), with the number that breaks.
  const limits = planLimitProblems(plan.paths, output, opts.pollSeconds, mode);
  if (limits.length > 0) throw new PlanInvalidError(limits);
  return { mode, rounds, output };
}
