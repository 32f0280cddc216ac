/** The wiring table's Lambdas: one entry file each, named for its step, whose handler is named for it too. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TASK_RUNS } from '../../functions/handlers/index.js';
import { LAMBDA_NAMES, LAMBDAS, PORT_OF, portsOf, TASK_NAMES } from '../../functions/wiring.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const kebab = (name: string) => name.replace(/(?<!^)([A-Z])/g, '-$1').toLowerCase();
const camel = (name: string) => name[0].toLowerCase() + name.slice(1);

describe('the wiring table', () => {
  it('has one Lambda per task plus the cleanup, each with its own entry file named for its step', () => {
    expect(LAMBDA_NAMES).toEqual([...TASK_NAMES, 'CleanupAfterExecution']);
    for (const name of LAMBDA_NAMES) {
      expect(LAMBDAS[name].entry, name).toBe(`functions/handlers/${kebab(name)}.lambda.ts`);
      expect(existsSync(path.join(ROOT, LAMBDAS[name].entry)), name).toBe(true);
    }
  });

  it("names each handler for its step, and the local runner's map holds every task's", async () => {
    for (const name of LAMBDA_NAMES) {
      const file = path.join(ROOT, 'functions', 'handlers', `${kebab(name)}.ts`);
      const mod = (await import(/* @vite-ignore */ file)) as Record<string, unknown>;
      expect(Object.keys(mod), name).toEqual([camel(name)]);
      expect((mod[camel(name)] as () => unknown).name, name).toBe(camel(name));
    }
    expect(Object.keys(TASK_RUNS).sort()).toEqual([...TASK_NAMES].sort());
  });

  it("gives each Lambda the ports of its needs: ReleaseLock the store and the lock, SummarizeRun's publisher", () => {
    expect(portsOf('ReleaseLock')).toEqual(['store', 'lock']);
    expect(portsOf('SummarizeRun')).toEqual(['store', 'query', 'publisher']);
    expect(portsOf('PollProbe')).toEqual(['store', 'runner', 'lock']);
    expect(new Set(Object.values(PORT_OF))).toEqual(
      new Set(['store', 'fleet', 'routes', 'runner', 'query', 'lock', 'plans', 'publisher']),
    );
  });
});
