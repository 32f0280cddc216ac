/**
 * Named plans in the object store (`pathbench plan put|get|list|rm`): one object per name,
 * `plans/<name>.json` (keys.ts), validated before it is stored, the text kept as written: the
 * plan's own rules and the service limits every run of it is held to (preflight.ts fitLimits), so
 * a stored plan is one a run would accept (its budget and targets are the run's to judge). History: on
 * AWS the data bucket is versioned and plans/ is left out of the expiry of old versions
 * (infra/constructs/data-lake.ts); a directory has no versions, so the local store copies the
 * plan it replaces or removes to `plans/history/<name>/<time>.json` first.
 */
import { PlanInvalidError } from '../../core/errors.js';
import { keys } from '../../core/keys.js';
import { parsePlanText } from '../../core/plan.js';
import type { ObjectStore, PlanSource } from '../ports.js';
import { fitLimits } from './preflight.js';

const PREFIX = 'plans/';

/** The key of a named plan; a name that cannot be one is a bad plan name, not an internal error. */
function planKey(name: string): string {
  try {
    return keys.namedPlan(name);
  } catch {
    throw new PlanInvalidError([`name: not a valid plan name: ${JSON.stringify(name)}`]);
  }
}
const HISTORY = 'plans/history/';

export interface PlanStoreOptions {
  /** Copy a replaced or removed plan under plans/history/ (a store without versions). */
  copyHistory?: boolean;
  now?: () => Date;
  /**
   * The poll interval of the fleet the plan will run on (the limits depend on it); default 1 s,
   * the strictest any fleet amounts to (every limit polls at least a second apart).
   */
  pollSeconds?: number;
}

export class PlanStore implements PlanSource {
  constructor(
    private readonly store: ObjectStore,
    private readonly opts: PlanStoreOptions = {},
  ) {}

  /** Validate and store `text` under `name` (the plan's own name). Returns whether it replaced one. */
  async put(name: string, text: string): Promise<{ replaced: boolean; bytes: number }> {
    planKey(name);
    const parsed = parsePlanText(text);
    if (!parsed.ok) throw new PlanInvalidError(parsed.problems);
    if (parsed.plan.name !== name)
      throw new PlanInvalidError([
        `name: the plan calls itself ${JSON.stringify(parsed.plan.name)}, not ${JSON.stringify(name)}; store it under its own name`,
      ]);
    // The limits ValidatePlan holds every run of it to: a plan no run would accept is not stored.
    fitLimits(parsed.plan, { pollSeconds: this.opts.pollSeconds ?? 1 });
    const key = planKey(name);
    const previous = await this.store.getText(key);
    if (previous !== undefined) await this.keep(name, previous);
    await this.store.put(key, text, 'application/json');
    return { replaced: previous !== undefined, bytes: Buffer.byteLength(text) };
  }

  /** The stored text, or undefined. */
  async text(name: string): Promise<string | undefined> {
    return this.store.getText(planKey(name));
  }

  /** PlanSource: the stored plan as JSON (ValidatePlan validates it again). */
  async get(name: string): Promise<unknown | undefined> {
    const text = await this.text(name);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch {
      throw new PlanInvalidError([`planName: ${planKey(name)} is not valid JSON`]);
    }
  }

  /** Names of the stored plans, sorted. */
  async list(): Promise<string[]> {
    return (await this.store.list(PREFIX))
      .filter((k) => !k.startsWith(HISTORY) && k.endsWith('.json') && !k.slice(PREFIX.length).includes('/'))
      .map((k) => decodeURIComponent(k.slice(PREFIX.length, -'.json'.length)))
      .sort();
  }

  /** Remove a plan; false when there was none. The history keeps it. */
  async rm(name: string): Promise<boolean> {
    const key = planKey(name);
    const previous = await this.store.getText(key);
    if (previous === undefined) return false;
    await this.keep(name, previous);
    await this.store.delete(key);
    return true;
  }

  /** Earlier versions kept by the local store, oldest first (keys). */
  async history(name: string): Promise<string[]> {
    return this.store.list(`${HISTORY}${encodeURIComponent(name)}/`);
  }

  private async keep(name: string, text: string): Promise<void> {
    if (!this.opts.copyHistory) return;
    const at = (this.opts.now?.() ?? new Date()).toISOString().replace(/[:]/g, '');
    await this.store.put(`${HISTORY}${encodeURIComponent(name)}/${at}.json`, text, 'application/json');
  }
}

/** Named plans from the first source that has the name (AWS: the bucket, then SSM as before). */
export class FirstPlanSource implements PlanSource {
  constructor(private readonly sources: PlanSource[]) {}

  async get(name: string): Promise<unknown | undefined> {
    for (const s of this.sources) {
      const found = await s.get(name);
      if (found !== undefined) return found;
    }
    return undefined;
  }
}
