/**
 * The state machine definitions as the code sees them: the ASL files of this folder, checked
 * against the part of the ASL shape pathbench relies on, their Task placeholders and service
 * integrations, and the placeholder substitution CDK's definitionSubstitutions performs. CDK
 * (infra/constructs/orchestration.ts), the local interpreter (local/asl-interpreter.ts) and the
 * service limits (functions/pipeline/limits.ts) all read the definitions through here.
 *
 * - measurement.asl.json: a run (validate, the plan's chunks one at a time, restore, summarize);
 * - chunk.asl.json: up to PATHS_PER_CHUNK paths one at a time, each a child execution of
 * - path.asl.json: one path's steps (reboot, credit wait, route swap, probe, collect);
 * - mesh.asl.json: generated from measurement and path by mesh-definition.ts
 *   (`npx tsx scripts/mesh-asl.ts`).
 *
 * A run's executions nest: measurement starts each chunk and chunk each path with
 * `states:startExecution.sync:2`, so one execution's history holds one path's steps, a chunk's a
 * few events a path and the run's a few events a chunk, whatever the plan's size.
 */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import chunkJson from './chunk.asl.json' with { type: 'json' };
import measurementJson from './measurement.asl.json' with { type: 'json' };
import meshJson from './mesh.asl.json' with { type: 'json' };
import pathJson from './path.asl.json' with { type: 'json' };

/** A state, as far as pathbench reads it; every other ASL field is kept as it is. */
export interface AslState {
  Type: string;
  Resource?: string;
  ItemProcessor?: AslStates & { ProcessorConfig?: { Mode?: string; [field: string]: unknown } };
  Iterator?: AslStates;
  Branches?: AslStates[];
  [field: string]: unknown;
}
export interface AslStates {
  StartAt: string;
  States: Record<string, AslState>;
}
export interface AslDefinition extends AslStates {
  Comment?: string;
  TimeoutSeconds?: number;
  [field: string]: unknown;
}

const statesSchema: z.ZodType<AslStates> = z.looseObject({
  StartAt: z.string().min(1),
  get States() {
    return z.record(z.string(), stateSchema);
  },
});
const stateSchema: z.ZodType<AslState> = z.looseObject({
  Type: z.enum(['Task', 'Pass', 'Choice', 'Wait', 'Succeed', 'Fail', 'Parallel', 'Map']),
  Resource: z.string().optional(),
  get ItemProcessor() {
    return z
      .looseObject({
        StartAt: z.string().min(1),
        States: z.record(z.string(), stateSchema),
        ProcessorConfig: z.looseObject({ Mode: z.string().optional() }).optional(),
      })
      .optional();
  },
  get Iterator() {
    return statesSchema.optional();
  },
  get Branches() {
    return z.array(statesSchema).optional();
  },
});
const definitionSchema: z.ZodType<AslDefinition> = z.looseObject({
  Comment: z.string().optional(),
  TimeoutSeconds: z.number().int().positive().optional(),
  StartAt: z.string().min(1),
  States: z.record(z.string(), stateSchema),
});

/** The definitions, by name: `statemachine/<name>.asl.json`. */
export const DEFINITION_NAMES = ['measurement', 'chunk', 'path', 'mesh'] as const;
export type DefinitionName = (typeof DEFINITION_NAMES)[number];
const FILES: Record<DefinitionName, unknown> = {
  measurement: measurementJson,
  chunk: chunkJson,
  path: pathJson,
  mesh: meshJson,
};

/**
 * The `${Placeholder}` of a `states:startExecution.sync:2` Task's StateMachineArn → the
 * definition it starts. CDK substitutes the machine's ARN; the local runner runs that definition.
 */
export const MACHINE_PLACEHOLDERS = { ChunkStateMachine: 'chunk', PathStateMachine: 'path' } as const satisfies Record<
  string,
  DefinitionName
>;
export type MachinePlaceholder = keyof typeof MACHINE_PLACEHOLDERS;
/** Paths in one chunk execution: its history stays near 8 events a path (under 2,000 at worst). */
export const PATHS_PER_CHUNK = 100;

/** Parse ASL text (or JSON already parsed) as a definition; throws naming the first bad field. */
export function parseDefinition(json: unknown, what = 'state machine definition'): AslDefinition {
  const r = definitionSchema.safeParse(json);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new Error(`${what}: ${first.path.join('.') || '(root)'}: ${first.message}`);
  }
  return r.data;
}

/** A fresh copy of `statemachine/<name>.asl.json`, checked (callers may change their copy). */
export function loadDefinition(name: DefinitionName = 'measurement'): AslDefinition {
  return parseDefinition(structuredClone(FILES[name]), `statemachine/${name}.asl.json`);
}

/** The definition's text as Step Functions receives it before substitution. */
export function definitionText(name: DefinitionName): string {
  return JSON.stringify(FILES[name], null, 2);
}

/** Where `statemachine/<name>.asl.json` is (CDK uploads the file as it is, an asset). */
export function definitionFile(name: DefinitionName): string {
  return fileURLToPath(new URL(`./${name}.asl.json`, import.meta.url));
}

/** Every state of the definition, nested Map/Parallel states included, by name. */
export function allStates(def: AslStates): [string, AslState][] {
  const out: [string, AslState][] = [];
  for (const [name, s] of Object.entries(def.States)) {
    out.push([name, s]);
    const inner = s.ItemProcessor ?? s.Iterator;
    if (inner) out.push(...allStates(inner));
    for (const b of s.Branches ?? []) out.push(...allStates(b));
  }
  return out;
}

/**
 * Every state a sequential run goes through, in its three nested definitions (measurement, chunk,
 * path): state names are unique across them, as a Wait or Retry override by name assumes.
 */
export function runStates(): [string, AslState][] {
  return (['measurement', 'chunk', 'path'] as const).flatMap((n) => allStates(loadDefinition(n)));
}

/**
 * Step Functions service integrations the definition may use besides Lambda placeholders. On AWS
 * Step Functions itself calls the service; locally each needs a resolver (local/asl-interpreter.ts).
 */
export const SERVICE_INTEGRATIONS = [
  'arn:aws:states:::sqs:sendMessage.waitForTaskToken',
  'arn:aws:states:::athena:startQueryExecution.sync',
  'arn:aws:states:::states:startExecution.sync:2',
] as const;
export type ServiceIntegration = (typeof SERVICE_INTEGRATIONS)[number];

const isIntegration = (r: string | undefined): r is ServiceIntegration =>
  (SERVICE_INTEGRATIONS as readonly (string | undefined)[]).includes(r);

/** Task state name → service integration, for every Task whose resource is one. */
export function taskIntegrations(def: AslStates): Record<string, ServiceIntegration> {
  const out: Record<string, ServiceIntegration> = {};
  for (const [name, s] of allStates(def)) if (s.Type === 'Task' && isIntegration(s.Resource)) out[name] = s.Resource;
  return out;
}

const PLACEHOLDER = /^\$\{(\w+)\}$/;

/** The `${Placeholder}` names of the definition's text, sorted, each once. */
export function placeholdersIn(text: string): string[] {
  return [...new Set([...text.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]))].sort();
}

/**
 * Task state name → its placeholder, for every Task that is not a service integration. Every
 * such Task must name one of `known` (the wiring table's tasks, functions/wiring.ts).
 */
export function taskPlaceholders<T extends string>(def: AslStates, known: readonly T[]): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [name, s] of allStates(def)) {
    if (s.Type !== 'Task' || isIntegration(s.Resource)) continue;
    const m = PLACEHOLDER.exec(s.Resource ?? '');
    const task = known.find((k) => k === m?.[1]);
    if (!task) throw new Error(`Task ${name} has resource ${s.Resource}, which is not in the wiring table`);
    out[name] = task;
  }
  return out;
}

/**
 * Replace every `${Task}` placeholder, and every `${…StateMachine}` one (MACHINE_PLACEHOLDERS)
 * by `machine(definition)`, as CDK's definitionSubstitutions does on AWS.
 */
export function substitutePlaceholders<T extends string>(
  def: AslStates,
  known: readonly T[],
  value: (task: T) => string,
  machine: (name: DefinitionName) => string = (name) => name,
): AslDefinition {
  const text = JSON.stringify(def).replace(/"\$\{(\w+)\}"/g, (_whole, name: string) => {
    if (name in MACHINE_PLACEHOLDERS) return JSON.stringify(machine(MACHINE_PLACEHOLDERS[name as MachinePlaceholder]));
    const task = known.find((k) => k === name);
    if (!task) throw new Error(`placeholder \${${name}} is not in the wiring table`);
    return JSON.stringify(value(task));
  });
  return parseDefinition(JSON.parse(text));
}
