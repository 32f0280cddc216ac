/**
 * Property-based fuzzing (fast-check) of the plan validator: parsePlan never throws,
 * every rejection names the field it is about, an accepted plan resolves to one that validates
 * again, and ValidatePlan stores nothing for a plan it refuses (real local store and lock).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PathbenchError } from '../../core/errors.js';
import { SAFE_ID } from '../../core/fields.js';
import { keys } from '../../core/keys.js';
import { parsePlan, parsePlanText } from '../../core/plan.js';
import { firstUnprintable } from '../../core/printable.js';
import { silentLogger } from '../../functions/log.js';
import { validatePlanStep } from '../../functions/pipeline/validate.js';
import type { Deps } from '../../functions/ports.js';
import { DirStore } from '../../local/dir-store.js';
import { FileLock } from '../../local/file-lock.js';
import { LoopbackFleet, LoopbackRoutes } from '../../local/loopback.js';

/** A valid plan exercising every section: defaults, several probe kinds, routes, skips, compare. */
function basePlan(): Record<string, unknown> {
  return {
    name: 'fuzz base',
    defaults: {
      client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
      reboot: false,
      creditWaitSeconds: 0,
      probes: [
        { kind: 'tcp-connect', count: 10, intervalMs: 10 },
        { kind: 'iperf3', durationSeconds: 5 },
        { kind: 'http', count: 20 },
      ],
    },
    paths: [
      { id: 'A', label: 'Tokyo → Osaka', target: { host: '10.1.0.10', port: 7000 } },
      {
        id: 'B',
        target: { host: 'target.example.com', port: 443 },
        routes: [
          {
            region: 'ap-northeast-1',
            routeTableId: 'rtb-1',
            destination: '10.1.0.0/16',
            via: { transitGatewayId: 'tgw-1' },
          },
        ],
        skipProbes: [{ probe: 'iperf3', reason: 'no server' }],
        reboot: true,
        creditWaitSeconds: 30,
      },
    ],
    compare: [{ path: 'B', baseline: 'A' }],
  };
}

type Json = unknown;
type Key = string | number;

/** Every location in a JSON document (objects' keys, arrays' indices), the root excluded. */
function locations(doc: Json, at: Key[] = [], out: Key[][] = []): Key[][] {
  // Collected into one array (no spread of a sub-result into push: a large document would overflow the stack).
  if (Array.isArray(doc))
    doc.forEach((v, i) => {
      out.push([...at, i]);
      locations(v, [...at, i], out);
    });
  else if (doc && typeof doc === 'object')
    for (const [k, v] of Object.entries(doc)) {
      out.push([...at, k]);
      locations(v, [...at, k], out);
    }
  return out;
}

type Mutation =
  | { op: 'set'; where: number; value: Json }
  | { op: 'delete'; where: number }
  | { op: 'add'; where: number; key: string; value: Json };

/** Hostile strings: control and bidi characters, formulas, long text, lone surrogates. */
const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '=1+1',
    '\u001b[2J',
    '\u009b31m',
    'a\u202eb',
    '\u200b',
    '\ud800',
    'x'.repeat(300),
    '10.0.0.0/8',
    'A',
    'tcp-connect',
    '-1',
    '__proto__',
    'constructor',
  ),
);
const value: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1e9, 2 ** 31, Number.NaN)) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('set' as const), where: fc.nat(), value }),
  fc.record({ op: fc.constant('delete' as const), where: fc.nat() }),
  fc.record({ op: fc.constant('add' as const), where: fc.nat(), key: hostileString, value }),
);

function mutate(doc: Record<string, unknown>, muts: Mutation[]): Record<string, unknown> {
  const out = structuredClone(doc);
  for (const m of muts) {
    const locs = locations(out);
    if (locs.length === 0) break;
    const path = locs[m.where % locs.length];
    const parent = path.slice(0, -1).reduce<Json>((n, k) => (n as Record<Key, Json>)[k], out) as Record<Key, Json>;
    const last = path[path.length - 1];
    // fast-check hands out one shared instance for constantFrom([], {}): clone, or a later
    // mutation can put a value inside itself (a cycle)
    if (m.op === 'set') parent[last] = structuredClone(m.value);
    else if (m.op === 'delete') {
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete parent[last];
    } else {
      const target = parent[last];
      if (target && typeof target === 'object' && !Array.isArray(target))
        Object.defineProperty(target, m.key, {
          value: structuredClone(m.value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else parent[last] = { [m.key]: structuredClone(m.value) };
    }
  }
  return out;
}

const planArb = fc.array(mutation, { minLength: 1, maxLength: 4 }).map((m) => mutate(basePlan(), m));

/** A field path as formatPath writes it: identifiers, `[n]` indices and `["odd key"]` keys. */
const FIELD_PATH = /^((?:[A-Za-z_$][\w$]*|\[\d+\]|\["(?:[^"\\]|\\.)*"\]|\.[A-Za-z_$][\w$]*)+): \S/;

/** A problem names a field: `plan` (the document) or a path from one of the plan's top-level keys. */
function namesField(problem: string, doc: unknown): boolean {
  const m = FIELD_PATH.exec(problem);
  if (!m) return false;
  if (m[1] === 'plan') return true;
  const isObject = doc !== null && typeof doc === 'object' && !Array.isArray(doc);
  if (m[1].startsWith('["')) return isObject; // an odd top-level key, e.g. an unknown field
  const top = /^[A-Za-z_$][\w$]*/.exec(m[1])?.[0] ?? '';
  return ['name', 'defaults', 'paths', 'compare'].includes(top) || (isObject && Object.hasOwn(doc, top));
}

function checkResolved(plan: ReturnType<typeof parsePlan>): void {
  if (!plan.ok) return;
  for (const p of plan.plan.paths) {
    expect(p.id).toMatch(SAFE_ID);
    expect(firstUnprintable(p.label)).toBeUndefined();
    for (const s of p.skipped) expect(firstUnprintable(s.reason)).toBeUndefined();
  }
  // The resolved plan is itself a valid plan that resolves to the same thing — except a path
  // whose every probe is skipped: it resolves to no probes, and an explicit empty probe list is
  // refused as input by design (found by this property with seed -770919502).
  if (plan.plan.paths.some((p) => p.probes.length === 0)) return;
  const again = parsePlan(JSON.parse(JSON.stringify({ name: plan.plan.name, paths: plan.plan.paths.map(asInput) })));
  expect(again.ok, again.ok ? '' : again.problems.join('\n')).toBe(true);
}

/** A resolved path written back as a plan path. */
function asInput(p: ReturnType<typeof resolvedPaths>[number]) {
  return {
    id: p.id,
    label: p.label,
    client: p.client,
    target: p.target,
    routes: p.routes,
    probes: [...p.probes],
    reboot: p.reboot,
    creditWaitSeconds: p.creditWaitSeconds,
  };
}
function resolvedPaths() {
  const r = parsePlan(basePlan());
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.plan.paths;
}

describe('plan validator fuzzing', () => {
  it('the base plan is valid', () => {
    expect(parsePlan(basePlan())).toMatchObject({ ok: true });
  });

  it('never throws on any JSON value, and every problem names a field', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (doc) => {
        const r = parsePlan(doc);
        if (r.ok) return;
        expect(r.problems.length).toBeGreaterThan(0);
        for (const p of r.problems) expect(namesField(p, doc), p).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on any text, and reports invalid JSON as a problem of the plan', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        const r = parsePlanText(text);
        if (!r.ok) for (const p of r.problems) expect(firstUnprintable(p.replace(/\n/g, ' ')), p).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('mutated plans: no crash, every rejection names a field and carries no raw control character, accepted plans are clean', () => {
    fc.assert(
      fc.property(planArb, (doc) => {
        const r = parsePlan(doc);
        if (r.ok) {
          checkResolved(r);
          return;
        }
        expect(r.problems.length).toBeGreaterThan(0);
        for (const p of r.problems) {
          expect(namesField(p, doc), p).toBe(true);
          expect(firstUnprintable(p.replace(/\n/g, ' ')), p).toBeUndefined();
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('ValidatePlan stores nothing for a plan it refuses and a re-validating plan for one it takes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pathbench-fuzz-'));
    try {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(planArb, async (doc) => {
          const data = join(dir, String(++n));
          const store = new DirStore(data);
          const deps: Deps = {
            store,
            fleet: new LoopbackFleet(silentLogger),
            routes: new LoopbackRoutes(silentLogger),
            runner: undefined as never,
            query: undefined as never,
            lock: new FileLock(data, silentLogger),
            log: silentLogger,
            driver: 'local',
            now: () => new Date('2026-12-01T00:00:00Z'),
          };
          const runId = 'fuzz';
          try {
            await validatePlanStep(deps, { input: { plan: doc }, runId, startedAt: '2026-12-01T00:00:00.000Z' });
          } catch (e) {
            expect(e, String(e)).toBeInstanceOf(PathbenchError);
            expect(await store.list('')).toEqual([]);
            expect(await deps.lock.current()).toBeUndefined();
            return;
          }
          const stored = JSON.parse((await store.getText(keys.plan(runId))) ?? 'null') as { source: unknown };
          expect(parsePlan(stored.source).ok).toBe(true);
          expect(await store.getText(keys.manifest(runId))).toBeDefined();
        }),
        { numRuns: 150 },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
