/** `labStatus`: what exists right now, according to the state file and the machine. */
import type { RouteTarget } from '../core/resolved-plan.js';
import { resolveClient } from './client.js';
import { readLabRoute } from './lab-routes.js';
import { type ClientTrack, type LabState, readState, statePath } from './lab-state.js';
import { type LabOptions, labLocation } from './location.js';
import { allNamespaces } from './namespace-names.js';
import { type LabProfileName, OSAKA_CIDR, TOKYO_CIDR } from './profiles/lab-profile.js';
import { isAlive, listNamespaces } from './sys.js';

export interface LabStatus {
  up: boolean;
  healthy: boolean;
  prefix: string;
  stateFile: string;
  profile?: LabProfileName;
  namespaces: { name: string; exists: boolean }[];
  processes: { role: string; ns: string; pid: number; alive: boolean }[];
  delay?: LabState['delay'];
  server?: LabState['server'];
  routes: Record<string, RouteTarget>;
  client?: ClientTrack & { ns: string };
  credits?: LabState['credits'];
  targets: LabState['targets'];
  ports?: LabState['ports'];
  problems: string[];
  /** Remarks that do not make the lab unhealthy (e.g. delays measured with the fallback clock). */
  notes: string[];
}

/** What exists right now, according to the state file and the machine. */
export async function labStatus(opts: LabOptions = {}): Promise<LabStatus> {
  const { prefix, dir } = labLocation(opts);
  const state = readState(dir);
  const existing = new Set(await listNamespaces());
  // With a state file, its profile's namespaces; without one, every profile's.
  const names = state ? [...new Set(state.namespaces)] : allNamespaces(prefix);
  const namespaces = names.map((name) => ({ name, exists: existing.has(name) }));
  const problems: string[] = [];
  if (!state) {
    const left = namespaces.filter((n) => n.exists).map((n) => n.name);
    if (left.length) problems.push(`namespaces without a state file: ${left.join(', ')}`);
    return {
      up: false,
      healthy: false,
      prefix,
      stateFile: statePath(dir),
      namespaces,
      processes: [],
      routes: {},
      targets: [],
      problems,
      notes: [],
    };
  }
  const processes = state.processes.map((p) => ({ role: p.role, ns: p.ns, pid: p.pid, alive: isAlive(p) }));
  for (const n of namespaces) if (!n.exists) problems.push(`namespace ${n.name} is missing`);
  for (const p of processes) if (!p.alive) problems.push(`${p.role} in ${p.ns} (pid ${p.pid}) is not running`);
  if (state.phase !== 'up') problems.push('the lab was not completely built');
  const routes: Record<string, RouteTarget> = {};
  for (const [ns, hops] of Object.entries(state.routers)) {
    if (!existing.has(ns)) continue;
    const dest = ns.endsWith('osaka') ? TOKYO_CIDR : OSAKA_CIDR;
    routes[`${ns} ${dest}`] = await readLabRoute(ns, dest, hops).catch(() => 'none');
  }
  return {
    up: true,
    healthy: problems.length === 0,
    prefix,
    stateFile: statePath(dir),
    profile: state.profile,
    namespaces,
    processes,
    delay: state.delay,
    server: state.server,
    routes,
    client: { ...resolveClient(state.client, new Date()), ns: state.clientNs },
    credits: state.credits,
    targets: state.targets,
    ports: state.ports,
    problems,
    notes: state.delay.note ? [state.delay.note] : [],
  };
}
