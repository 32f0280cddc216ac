/**
 * Parsing `ip route show` output (pure). The lab's Routes adapter reads a route back with it to
 * learn which next hop is active.
 */

export interface IpRoute {
  /** Route type when not unicast: blackhole, unreachable, prohibit, throw … */
  type: string;
  destination: string;
  via?: string;
  dev?: string;
  /** Flags such as "linkdown" or "dead" that make the route unusable. */
  flags: string[];
}

const ROUTE_TYPES = new Set([
  'unicast',
  'blackhole',
  'unreachable',
  'prohibit',
  'throw',
  'local',
  'broadcast',
  'multicast',
  'nat',
  'anycast',
]);
const FLAGS = new Set([
  'linkdown',
  'dead',
  'onlink',
  'pervasive',
  'offload',
  'trap',
  'notify',
  'rt_offload',
  'rt_trap',
]);

/** One route per non-empty line; keywords with a value are read pairwise, bare flags collected. */
export function parseIpRoute(text: string): IpRoute[] {
  const out: IpRoute[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || /^(nexthop|\s)/.test(line)) continue;
    const tok = line.split(/\s+/);
    let i = 0;
    let type = 'unicast';
    if (ROUTE_TYPES.has(tok[0])) {
      type = tok[0];
      i = 1;
    }
    const destination = tok[i] === 'default' ? '0.0.0.0/0' : tok[i];
    if (!destination) continue;
    const route: IpRoute = { type, destination, flags: [] };
    for (i += 1; i < tok.length; i++) {
      const t = tok[i];
      if (FLAGS.has(t)) route.flags.push(t);
      else if (t === 'via') route.via = tok[++i];
      else if (t === 'dev') route.dev = tok[++i];
      else i++; // proto/scope/src/metric/… take one value
    }
    out.push(route);
  }
  return out;
}

/** Normalize "10.1.0.0/16" vs "10.1.0.0/16" and host routes ("10.1.1.10" ≡ "10.1.1.10/32"). */
export function sameDestination(a: string, b: string): boolean {
  const norm = (s: string) => (s === 'default' ? '0.0.0.0/0' : s.includes('/') ? s : `${s}/32`);
  return norm(a) === norm(b);
}
