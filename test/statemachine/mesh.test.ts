/**
 * The mesh state machine (statemachine/mesh.asl.json): derived from the measurement definition,
 * run in-process through the local runner's Distributed Map emulation with the real handlers;
 * fakes only for the instance, routes and the remote command.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { meshLayout, meshPlanInput } from '../../core/mesh-schedule.js';
import { COMMERCIAL_REGIONS } from '../../core/regions.js';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import { SUMMARY_QUERIES } from '../../functions/pipeline/summary-queries.js';
import { runStateMachine } from '../../local/asl-interpreter.js';
import type { ExecutionEvent } from '../../local/local-execution.js';
import { type AslDefinition, loadDefinition } from '../../statemachine/asl.js';
import { meshDefinition } from '../../statemachine/mesh-definition.js';
import { noWaits, scenarioDeps } from '../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup() {
  const s = await scenarioDeps();
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  return s;
}

function meshPlan(n: number) {
  const layout = meshLayout(COMMERCIAL_REGIONS.slice(0, n));
  return {
    layout,
    plan: meshPlanInput('mesh test', layout, (code) => ({
      instanceId: `i-${code}`,
      region: code,
      host: `${code}.mesh.test`,
      port: 5201,
    })),
  };
}

/** [first, last] event order of each child, by the regions of its pair. */
function spans(children: { name: string; events: ExecutionEvent[] }[], regionsOf: (name: string) => string[]) {
  return children.map((c) => ({
    regions: regionsOf(c.name),
    first: Math.min(...c.events.map((e) => e.seq ?? 0)),
    last: Math.max(...c.events.map((e) => e.seq ?? 0)),
  }));
}

describe('mesh state machine', () => {
  it('is the measurement definition with its chunks turned into rounds of a Distributed Map over the path definition (regenerate: npx tsx scripts/mesh-asl.ts)', () => {
    expect(loadDefinition('mesh')).toEqual(meshDefinition(loadDefinition('measurement'), loadDefinition('path')));
    const round = loadDefinition('mesh').States.MeasureRound as unknown as {
      ItemProcessor: { States: unknown; ProcessorConfig: { Mode: string } };
      ItemReader: { Resource: string };
    };
    expect(round.ItemProcessor.ProcessorConfig.Mode).toBe('DISTRIBUTED');
    expect(round.ItemProcessor.States).toEqual(loadDefinition('path').States);
    expect(round.ItemReader.Resource).toBe('arn:aws:states:::s3:getObject');
  });

  it('runs a 4-region mesh: 12 pairs in 6 rounds, each a child execution, no region in two tests at once', async () => {
    const { deps, store } = await setup();
    const { plan, layout } = meshPlan(4);
    const r = await runStateMachine({
      deps,
      definition: loadDefinition('mesh'),
      input: { plan },
      runId: 'mesh4',
      waitTimeOverrides: noWaits(),
    });
    expect(r.error).toBeUndefined();
    expect(r.status).toBe('SUCCEEDED');
    // The pairs' child executions; the summary's queries ran as children of SummaryQueries.
    const pairs = r.children.filter((c) => c.state === 'MeasureRound');
    expect(r.children.filter((c) => c.state === 'SummaryQueries')).toHaveLength(SUMMARY_QUERIES.length);
    expect(pairs).toHaveLength(12);
    expect(pairs.every((c) => c.status === 'SUCCEEDED')).toBe(true);
    // Ten Map Runs, one per round, in the parent's log.
    expect(r.events.filter((e) => e.type === 'StateEntered' && e.state?.name === 'MeasureRound')).toHaveLength(6);
    expect(layout.rounds).toBe(6);

    const manifest = (await readManifest(store, 'mesh4')) as RunManifest;
    expect(manifest.status).toBe('succeeded');
    expect(manifest.paths.every((p) => p.status === 'succeeded' && p.mesh !== undefined)).toBe(true);
    // Each path's own samples, collected under its pair id.
    expect(await store.list('samples/path=us-east-1--us-east-2/run=mesh4/')).not.toHaveLength(0);

    const pathOf = (name: string) => {
      const c = pairs.find((x) => x.name === name)!;
      // The interpreter's StateEntered event carries the state's input under `state`.
      const begin = c.events.find((e) => e.type === 'StateEntered' && e.state?.name === 'BeginPath') as unknown as {
        state: { input: { path: { id: string } } };
      };
      return begin.state.input.path.id.split('--');
    };
    const s = spans(pairs, pathOf);
    for (const a of s)
      for (const b of s) {
        if (a === b || !a.regions.some((x) => b.regions.includes(x))) continue;
        expect(a.last < b.first || b.last < a.first).toBe(true);
      }
  });

  it('refuses a plain plan in mesh mode, before anything is written', async () => {
    const { deps, store } = await setup();
    const { plan } = meshPlan(3);
    const plain = { ...plan, paths: (plan.paths as Record<string, unknown>[]).map(({ mesh: _m, ...p }) => p) };
    const r = await runStateMachine({
      deps,
      definition: loadDefinition('mesh'),
      input: { plan: plain },
      runId: 'plain',
      waitTimeOverrides: noWaits(),
    });
    expect(r.status).toBe('FAILED');
    expect(r.error?.message).toMatch(/the mesh state machine runs mesh plans/);
    expect(await store.list('runs/run=plain/')).toEqual([]);
  });
});

describe('Distributed Map emulation', () => {
  const def = (extra: Record<string, unknown>): AslDefinition =>
    ({
      StartAt: 'Fan',
      States: {
        Fan: {
          Type: 'Map',
          ItemsPath: '$.items',
          ItemSelector: { 'ok.$': '$$.Map.Item.Value', 'index.$': '$$.Map.Item.Index', 'tag.$': '$.tag' },
          ItemProcessor: {
            ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
            StartAt: 'Check',
            States: {
              Check: {
                Type: 'Choice',
                Choices: [{ Variable: '$.ok', BooleanEquals: true, Next: 'Done' }],
                Default: 'Broken',
              },
              Done: { Type: 'Succeed' },
              Broken: { Type: 'Fail', Error: 'ItemBroken', Cause: 'a failing item' },
            },
          },
          ResultPath: '$.results',
          Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Caught' }],
          End: true,
          ...extra,
        },
        Caught: { Type: 'Pass', End: true },
      },
    }) as unknown as AslDefinition;

  async function run(items: boolean[], extra: Record<string, unknown>) {
    const { deps } = await setup();
    return runStateMachine({ deps, definition: def(extra), input: { items, tag: 't' }, runId: 'fan' });
  }

  it('runs each item as a child execution with the selected input, within MaxConcurrency', async () => {
    const r = await run([true, true, true, true, true, true], { MaxConcurrency: 2 });
    expect(r.status).toBe('SUCCEEDED');
    expect(r.children.map((c) => c.index).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect((r.output as { results: unknown[] }).results).toEqual(
      [0, 1, 2, 3, 4, 5].map((index) => ({ ok: true, index, tag: 't' })),
    );
    const s = r.children.map((c) => [
      Math.min(...c.events.map((e) => e.seq!)),
      Math.max(...c.events.map((e) => e.seq!)),
    ]);
    for (const [first] of s) expect(s.filter(([a, b]) => a <= first && first <= b).length).toBeLessThanOrEqual(2);
  });

  it('tolerates failed children up to ToleratedFailureCount, and fails the Map Run past it', async () => {
    const tolerated = await run([true, false, true, true], { ToleratedFailureCount: 1 });
    expect(tolerated.status).toBe('SUCCEEDED');
    expect(tolerated.children.filter((c) => c.status === 'FAILED')).toHaveLength(1);
    expect((tolerated.output as { error?: unknown }).error).toBeUndefined();

    const over = await run([true, false, false, true], { ToleratedFailureCount: 1, MaxConcurrency: 1 });
    expect(over.status).toBe('SUCCEEDED'); // the Catch took it
    const err = (over.output as { error: { Error: string; Cause: string } }).error;
    expect(err.Error).toBe('States.ExceedToleratedFailureThreshold');
    expect(err.Cause).toMatch(/2 of 4 child executions of Fan failed/);
    // Past the threshold no further child starts.
    expect(over.children).toHaveLength(3);
  });

  it('tolerates by percentage, and by default tolerates none', async () => {
    expect((await run([true, false, true, true], { ToleratedFailurePercentage: 25 })).output).not.toHaveProperty(
      'error',
    );
    expect((await run([true, false, true, true], { ToleratedFailurePercentage: 24 })).output).toHaveProperty('error');
    expect((await run([true, false], {})).output).toHaveProperty('error');
  });
});
