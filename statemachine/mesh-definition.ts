/**
 * The mesh state machine (statemachine/mesh.asl.json), derived from the run's definition
 * (statemachine/measurement.asl.json) and the path's (statemachine/path.asl.json), so the
 * per-path steps cannot drift apart:
 *
 * - ValidatePlan, the reject branch and the finish states (RestoreRoutes, SummarizeRun,
 *   ReleaseLock, RunOutcome) are taken as they are; ValidatePlan is told `mode: "mesh"`, so it
 *   writes one item list per round (`runs/run=<id>/mesh/round=<r>.json`) and returns the round
 *   count instead of the path items.
 * - The sequential Map over chunks (MeasureChunks) becomes a loop over rounds: MeasureRound, a
 *   Distributed Map whose ItemProcessor is the path definition's states (every path step, the
 *   same names and the same tasks), reading its items from the round's list in S3 (ItemReader) and running each pair as
 *   a child execution; then NextRound (round + 1) and MoreRounds (another round, or finish).
 *
 * Rounds run one after another, the pairs of a round in parallel: a round's schedule puts each
 * region in at most one pair (core/mesh-schedule.ts), so no instance is in two tests at once.
 * Each child execution has its own history (one path's events), the parent a few events a round.
 */
import { keys } from '../core/keys.js';
import type { AslDefinition, AslState } from './asl.js';

type Json = Record<string, unknown>;

/** Children of one round that may fail (crash past RecordPathFailure) before the round fails the run. */
export const MESH_TOLERATED_FAILURE_PERCENTAGE = 10;
/** Child executions of one round at once: a round holds at most ⌊n/2⌋ pairs; this caps a hand-made plan. */
export const MESH_MAX_CONCURRENCY = 40;

/** The ItemReader key of a round, as ASL (States.Format) — the same key as keys.meshRound. */
function roundKeyFormat(): string {
  const sample = keys.meshRound('RUNID', 7);
  const format = sample.replace('RUNID', '{}').replace(/7(?=\.json$)/, '{}');
  return `States.Format('${format}', $.runId, $.mesh.round)`;
}

export function meshDefinition(measurement: AslDefinition, path: AslDefinition): AslDefinition {
  const src = structuredClone(measurement);
  const processor = structuredClone(path);
  const map = src.States.MeasureChunks;
  if (map?.Type !== 'Map') throw new Error('the measurement definition has no MeasureChunks Map');
  const states: Record<string, AslState> = {};
  for (const [name, state] of Object.entries(src.States)) {
    if (name === 'MeasureChunks') {
      states.MeasureRound = {
        Type: 'Map',
        Comment:
          "one round's pairs in parallel, each a child execution of the per-path steps; items from the round's list in S3",
        Label: 'MeshRound',
        ItemReader: {
          Resource: 'arn:aws:states:::s3:getObject',
          ReaderConfig: { InputType: 'JSON' },
          Parameters: { 'Bucket.$': '$.mesh.bucket', 'Key.$': roundKeyFormat() },
        },
        ItemSelector: { 'runId.$': '$.runId', 'path.$': '$$.Map.Item.Value' },
        ItemProcessor: {
          ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
          StartAt: processor.StartAt,
          States: processor.States,
        },
        MaxConcurrency: MESH_MAX_CONCURRENCY,
        ToleratedFailurePercentage: MESH_TOLERATED_FAILURE_PERCENTAGE,
        ResultPath: null,
        Catch: map.Catch,
        Next: 'NextRound',
      };
      states.NextRound = {
        Type: 'Pass',
        Comment: 'the next round',
        Parameters: {
          'bucket.$': '$.mesh.bucket',
          'rounds.$': '$.mesh.rounds',
          'round.$': 'States.MathAdd($.mesh.round, 1)',
        },
        ResultPath: '$.mesh',
        Next: 'MoreRounds',
      };
      states.MoreRounds = {
        Type: 'Choice',
        Choices: [{ Variable: '$.mesh.round', NumericLessThanPath: '$.mesh.rounds', Next: 'MeasureRound' }],
        Default: map.Next,
      };
      continue;
    }
    if (name === 'ValidatePlan') {
      state.Parameters = { ...(state.Parameters as Json), mode: 'mesh' };
      state.Next = 'MeasureRound';
    }
    states[name] = state;
  }
  return {
    Comment:
      'pathbench mesh: measure the directed pairs of a mesh plan round by round (a round in parallel, each pair a child execution), restore routes, summarize.',
    StartAt: src.StartAt,
    TimeoutSeconds: src.TimeoutSeconds,
    States: states,
  };
}
