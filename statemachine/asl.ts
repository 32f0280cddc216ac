/**
 * The state machine definitions as the code sees them: the ASL files of this folder, checked
 * against the part of the ASL shape pathbench relies on, their Task placeholders and service
 * integrations, and the placeholder substitution CDK's definitionSubstitutions performs. CDK
 * (infra/constructs/orchestration.ts), the local interpreter (local/asl-interpreter.ts) and the
 * service limits (functions/pipeline/limits.ts) all read the definitions through here.
 *
 * - measurement.asl.json: the one hand-written definition (a plan's paths one at a time);
 * - mesh.asl.json: generated from it by mesh-definition.ts (`npx tsx scripts/mesh-asl.ts`).
 */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import measurementJson from './measurement.asl.json' with { type: 'json' };
import meshJson from './mesh.asl.json' with { type: 'json' };

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
export const DEFINITION_NAMES = ['measurement', 'mesh'] as const;
export type DefinitionName = (typeof DEFINITION_NAMES)[number];
const FILES: Record<DefinitionName, unknown> = { measurement: measurementJson, mesh: meshJson };

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
 * Step Functions service integrations the definition may use besides Lambda placeholders. On AWS
 * Step Functions itself calls the service; locally each needs a resolver (local/asl-interpreter.ts).
 */
export const SERVICE_INTEGRATIONS = [
  'arn:aws:states:::sqs:sendMessage.waitForTaskToken',
  'arn:aws:states:::athena:startQueryExecution.sync',
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

/** Replace every `${Task}` placeholder, as CDK's definitionSubstitutions does on AWS. */
export function substitutePlaceholders<T extends string>(
  def: AslStates,
  known: readonly T[],
  value: (task: T) => string,
): AslDefinition {
  const text = JSON.stringify(def).replace(/"\$\{(\w+)\}"/g, (_whole, name: string) => {
    const task = known.find((k) => k === name);
    if (!task) throw new Error(`placeholder \${${name}} is not in the wiring table`);
    return JSON.stringify(value(task));
  });
  return parseDefinition(JSON.parse(text));
}
