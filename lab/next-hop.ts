/** Which next hop (peering or Transit Gateway) carries Tokyo ↔ Osaka traffic in the lab. */
import type { LabBuilder } from './builder.js';
import { OSAKA_CIDR, TOKYO_CIDR } from './profiles/lab-profile.js';
import { run } from './sys.js';

/** Point both router namespaces' cross-region routes at next hop `name`. */
export async function setNextHop(b: LabBuilder, name: 'peering' | 'tgw'): Promise<void> {
  const hop = b.profile.nextHops.find((h) => h.name === name)!;
  await run(['ip', '-n', b.ns('router'), 'route', 'replace', OSAKA_CIDR, 'via', hop.tokyoVia]);
  await run(['ip', '-n', b.ns('osaka'), 'route', 'replace', TOKYO_CIDR, 'via', hop.osakaVia]);
}
