/**
 * A Lambda runs with the ports of its needs only (functions/wiring.ts): every other port of Deps
 * is a stand-in whose methods fail naming the function and the port. On AWS the function is built
 * without those adapters at all (functions/lambda-handler.ts); the local runner hands each task the
 * same restricted Deps (functions/handlers/index.ts), so a handler that reaches past its needs fails
 * in the scenario and fault suites, not first on AWS as AccessDenied.
 */
import { ConfigError } from '../core/errors.js';
import type { Deps } from './ports.js';
import { LAMBDAS, type LambdaName, type PortName, portsOf } from './wiring.js';

/** The ports Deps requires; plans and publisher are optional and simply left out when not needed. */
const REQUIRED_PORTS = ['store', 'fleet', 'routes', 'runner', 'query', 'lock'] as const;

/**
 * A port this Lambda does not need: plain values (a fleet's pollSeconds, a runner's stop grace)
 * read through from `constants`; every other member is a function that throws.
 */
function absentPort(name: LambdaName, port: PortName, constants: object): never {
  const refuse = (member: string) => () => {
    throw new ConfigError(
      `${name} has no ${port} port (${port}.${member}): its needs in functions/wiring.ts are ${LAMBDAS[name].needs.join(', ')}`,
    );
  };
  return new Proxy(constants, {
    get(target, key) {
      // Not a thenable: `await deps.fleet` must not call anything.
      if (key === 'then' || typeof key === 'symbol') return undefined;
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' || v === undefined ? refuse(key) : v;
    },
  }) as never;
}

/**
 * Deps as the Lambda `name` sees them: the ports of its needs as given, the others absent
 * (constants kept), plans and publisher only when needed.
 */
export function restrictToNeeds<D extends Deps>(deps: D, name: LambdaName): D {
  const own = new Set(portsOf(name));
  const out = { ...deps };
  for (const port of REQUIRED_PORTS) {
    if (!own.has(port)) (out as Record<PortName, unknown>)[port] = absentPort(name, port, deps[port] as object);
  }
  if (!own.has('plans')) delete out.plans;
  if (!own.has('publisher')) delete out.publisher;
  return out;
}

/**
 * Deps for the Lambda `name` from the ports built for it: each port of its needs must be there and
 * no other; the rest are absent, with `constants` for their plain values (AWS: the fleet's poll
 * interval).
 */
export function depsForNeeds(
  name: LambdaName,
  ports: Partial<Pick<Deps, PortName>>,
  rest: Omit<Deps, PortName>,
  constants: Partial<Record<PortName, object>> = {},
): Deps {
  const own = new Set(portsOf(name));
  const extra = (Object.keys(ports) as PortName[]).filter((p) => ports[p] !== undefined && !own.has(p));
  if (extra.length > 0)
    throw new ConfigError(`${name} was built with adapters its needs do not use: ${extra.join(', ')}`);
  const out: Record<string, unknown> = { ...rest };
  for (const port of own) {
    if (ports[port] === undefined) throw new ConfigError(`${name} needs the ${port} port but was built without it`);
    out[port] = ports[port];
  }
  for (const port of REQUIRED_PORTS) if (!own.has(port)) out[port] = absentPort(name, port, constants[port] ?? {});
  return out as unknown as Deps;
}
