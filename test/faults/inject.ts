/**
 * The fault-injection layer: wraps a real adapter (or the Lambda boundary of the local runner)
 * so that chosen calls fail on cue. A rule names a call site (`store.put`, `routes.point`,
 * `lambda.SwapRoutes` …), which of its calls it hits (the Nth, every one, or a predicate on the
 * arguments) and what happens: an AWS-shaped error before the call, the same after the call's
 * side effect ("crash after"), a delay, a body truncated, or an arbitrary hook.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** An error shaped like the AWS SDK's (name, $fault, $metadata) or Step Functions' Lambda.* errors. */
export function awsError(name: string, message = name, status = 500): Error {
  const e = new Error(message) as Error & { $fault: string; $metadata: { httpStatusCode: number }; Code: string };
  e.name = name;
  e.Code = name;
  e.$fault = status >= 500 ? 'server' : 'client';
  e.$metadata = { httpStatusCode: status };
  return e;
}

export type FaultAction =
  | { throw: () => Error }
  | { crashAfter: () => Error }
  | { delayMs: number }
  | { truncate: (body: string) => string }
  | { hook: (args: unknown[]) => Promise<void> | void }
  | { after: (args: unknown[], result: unknown) => Promise<void> | void }
  | { replace: (args: unknown[]) => Promise<unknown> }
  | { map: (args: unknown[], result: unknown) => Promise<unknown> | unknown };

export interface FaultRule {
  /** Call site: `<adapter>.<method>` (store.put, runner.send, routes.point, lambda.<State>). */
  site: string;
  /** Which calls: the Nth (1-based) of the site, all of them (default), or those matching. */
  nth?: number | number[];
  match?: (args: unknown[]) => boolean;
  /** How many times the rule may fire (default: unbounded, or 1 with `nth`). */
  times?: number;
  action: FaultAction;
}

export class Faults {
  readonly calls = new Map<string, number>();
  readonly fired: string[] = [];
  private readonly rules: (FaultRule & { left: number })[] = [];
  constructor(rules: FaultRule[] = []) {
    for (const r of rules) this.add(r);
  }

  add(rule: FaultRule): this {
    const left = rule.times ?? (typeof rule.nth === 'number' ? 1 : Number.POSITIVE_INFINITY);
    this.rules.push({ ...rule, left });
    return this;
  }

  /** Run one call through the rules of its site. */
  async call<T>(site: string, args: unknown[], real: (args: unknown[]) => Promise<T>): Promise<T> {
    const n = (this.calls.get(site) ?? 0) + 1;
    this.calls.set(site, n);
    const hits = this.rules.filter((r) => {
      if (r.site !== site || r.left <= 0) return false;
      if (r.nth !== undefined && !(Array.isArray(r.nth) ? r.nth.includes(n) : r.nth === n)) return false;
      return !r.match || r.match(args);
    });
    let a = args;
    const after: FaultRule[] = [];
    let replaced: { value: unknown } | undefined;
    for (const r of hits) {
      r.left--;
      this.fired.push(`${site}#${n}`);
      const act = r.action;
      if ('throw' in act) throw act.throw();
      if ('delayMs' in act) await sleep(act.delayMs);
      if ('truncate' in act) a = [a[0], act.truncate(toText(a[1])), ...a.slice(2)];
      if ('hook' in act) await act.hook(a);
      if ('replace' in act) replaced = { value: await act.replace(a) };
      if ('crashAfter' in act || 'after' in act || 'map' in act) after.push(r);
    }
    let out = replaced ? (replaced.value as T) : await real(a);
    for (const r of after) {
      const act = r.action;
      if ('after' in act) await act.after(a, out);
      if ('map' in act) out = (await act.map(a, out)) as T;
      if ('crashAfter' in act) throw act.crashAfter();
    }
    return out;
  }

  /**
   * A proxy of `target` whose methods go through the rules as `<name>.<method>` (and so answer
   * with a promise); the `sync` ones (pure and synchronous in their port) are passed through.
   */
  wrap<T extends object>(name: string, target: T, sync: readonly (keyof T & string)[] = []): T {
    return new Proxy(target, {
      get: (t, prop, receiver) => {
        const v = Reflect.get(t, prop, receiver);
        if (typeof v !== 'function' || typeof prop !== 'string') return v;
        if ((sync as readonly string[]).includes(prop)) return v.bind(t);
        return (...args: unknown[]) => this.call(`${name}.${prop}`, args, async (a) => v.apply(t, a));
      },
    });
  }

  count(site: string): number {
    return this.calls.get(site) ?? 0;
  }
}

function toText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  return String(body);
}
