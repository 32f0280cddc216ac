/**
 * Which lab profile a plan was written for. A plan names it by its name (`lab-<profile>…`, as the
 * plans/lab-<profile>.json files do); otherwise it is the first profile whose namespaces include
 * every client of the plan and whose paths include every target. Undefined: not a lab plan.
 */
import type { ResolvedPlan } from '../core/resolved-plan.js';
import { DEFAULT_PREFIX, nsName } from './namespace-names.js';
import { LAB_PROFILES, type LabProfileName } from './profiles/lab-profile.js';
import { labProfile } from './profiles/profile-by-name.js';

export function labProfileForPlan(plan: ResolvedPlan, prefix: string = DEFAULT_PREFIX): LabProfileName | undefined {
  // The longest profile name the plan's name starts with (lab-seed-000-nlb is seed-000-nlb's).
  const named = [...LAB_PROFILES]
    .sort((a, b) => b.length - a.length)
    .find((n) => plan.name === `lab-${n}` || plan.name.startsWith(`lab-${n}-`));
  const seed000Shaped = plan.paths.some(
    (p) => p.client.region === 'lab' || p.routes.some((r) => 'labNextHop' in r.via),
  );
  if (named && (seed000Shaped || plan.paths.some((p) => p.client.instanceId.startsWith(prefix)))) return named;
  for (const name of LAB_PROFILES) {
    const profile = labProfile(name);
    const clients = new Set([profile.clientRole, ...(profile.extraClientRoles ?? [])].map((r) => nsName(prefix, r)));
    // Every address in the lab a target may have: the paths' targets and the hosts' own addresses.
    const targets = new Set([
      ...profile.paths.map((p) => p.targetIp),
      ...profile.links.flatMap((l) => [l.a.addr, l.b.addr]).map((a) => a.replace(/\/\d+$/, '')),
    ]);
    if (plan.paths.every((p) => clients.has(p.client.instanceId) && targets.has(p.target.host))) return name;
  }
  return seed000Shaped ? 'seed-000' : undefined;
}
