/**
 * Which route changes the operator allowed when deploying (stack configuration `allowedRoutes`,
 * docs/aws.md "Who can change which route"). IAM limits route changes to the listed route
 * tables; the destinations and targets inside a table have no IAM condition key, so ValidatePlan
 * and SwapRoutes check them here. Pure: no I/O.
 */
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { cidrProblem } from './plan-input.js';
import type { RouteVia } from './resolved-plan.js';

export interface AllowedRoute {
  region: string;
  routeTableId: string;
  /** The destination exactly as plans write it (CIDR or prefix list id). */
  destination: string;
  /** Targets a plan may point it at, as "kind:id" (e.g. "transitGatewayId:tgw-0abc"). */
  targets: string[];
}

const id = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/, { error: 'expected a cloud id (letters, digits, ".", "_", "-")' });
const allowedRouteSchema = z.strictObject({
  region: id,
  routeTableId: id,
  destination: z.string().superRefine((s, ctx) => {
    if (s.startsWith('pl-')) return;
    const problem = cidrProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, input: s });
  }),
  targets: z
    .array(z.string().regex(/^[A-Za-z]+:[A-Za-z0-9._:/-]+$/, { error: 'expected "kind:id"' }))
    .min(1, { error: 'expected at least one target' }),
});
export const allowedRoutesSchema = z.array(allowedRouteSchema);

/** Parse the allow-list (JSON text); a missing list allows nothing. Errors name the entry and field. */
export function parseAllowedRoutes(text: string | undefined, source: string): AllowedRoute[] {
  if (text === undefined || text.trim() === '') return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${source}: not JSON (${(e as Error).message})`);
  }
  return checkAllowedRoutes(raw, source);
}

export function checkAllowedRoutes(raw: unknown, source: string): AllowedRoute[] {
  const r = allowedRoutesSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    const at = i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
    throw new ConfigError(`${source}${at}: ${i.message}`);
  }
  return r.data;
}

/**
 * Why the route change is not allowed, or undefined when it is. `allowed` undefined: no
 * restriction (the local driver; the host's operator runs it).
 */
export function routeRefusal(
  allowed: readonly AllowedRoute[] | undefined,
  route: { region: string; routeTableId: string; destination: string },
  target: string,
): string | undefined {
  if (allowed === undefined) return undefined;
  const name = `${route.region} ${route.routeTableId} ${route.destination}`;
  const entry = allowed.find(
    (a) => a.region === route.region && a.routeTableId === route.routeTableId && a.destination === route.destination,
  );
  if (!entry) {
    return `${name} is not in the stack's allowedRoutes (${allowed.length ? `allowed: ${allowed.map((a) => `${a.region} ${a.routeTableId} ${a.destination}`).join(', ')}` : 'none allowed'}); redeploy with it to allow it`;
  }
  if (!entry.targets.includes(target)) {
    return `${name} may not point at ${target} (allowed targets: ${entry.targets.join(', ')})`;
  }
  return undefined;
}

/** "kind:id" form of a plan route's `via`. */
export function viaTarget(via: RouteVia): string {
  const [kind, id] = Object.entries(via)[0] as [string, string];
  return `${kind}:${id}`;
}
