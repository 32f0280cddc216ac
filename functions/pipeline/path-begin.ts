/** BeginPath: the path marked running, with the client's network facts and state (or its task service). */
import type { ClientNetwork } from '../../core/client-network.js';
import { isTaskClient } from '../../core/ecs-client.js';
import { errorMessage } from '../../core/errors.js';
import type { ClientRef } from '../../core/resolved-plan.js';
import type { Deps } from '../ports.js';
import type { PathRef } from './contracts.js';
import { addNote, updatePath } from './manifest.js';
import { loadResolvedPlan } from './validate.js';

/** What BeginPath tells the state machine: a client that is not running is started even when the path does not ask for a reboot. */
export interface BeginOutput {
  clientRunning: boolean;
}

/**
 * Mark the path running and record the client's network facts (instance type, AZ id, baseline
 * and peak bandwidth: `client` in the manifest; CollectOutput flags trials at the baseline with
 * them). Facts the fleet cannot give are a note, never a failed path: they describe the
 * measurement, they are not part of it. Also looks at the client's state: after a start that
 * failed (no capacity) the client stays stopped, and a `reboot: false` path would only fail at
 * SendProbe — `clientRunning: false` makes the state machine start it first.
 */
export async function beginPath(deps: Deps, ref: PathRef): Promise<BeginOutput> {
  const plan = await loadResolvedPlan(deps, ref.runId);
  const path = plan.paths.find((p) => p.id === ref.pathId);
  if (!path) throw new Error(`path ${ref.pathId} not in plan`);
  if (isTaskClient(path.client)) return beginTaskPath(deps, ref, path.client);
  let client: ClientNetwork | undefined;
  const notes: string[] = [];
  try {
    client = await deps.fleet.network(path.client);
  } catch (e) {
    notes.push(`client network facts (instance type, baseline / peak bandwidth) unavailable: ${errorMessage(e)}`);
    deps.log.warn('client network facts unavailable', { ...ref, error: errorMessage(e) });
  }
  let clientRunning = true;
  try {
    const info = await deps.fleet.describe(path.client);
    clientRunning = info.state === 'running';
    if (!clientRunning && !path.reboot)
      notes.push(
        `client ${path.client.instanceId} was ${info.state} when the path began (an earlier start failed?): started before probing although the path asks for no reboot`,
      );
  } catch (e) {
    // Unknown state: go on as planned; SendProbe reports a client that cannot take the command.
    deps.log.warn('client state unavailable', { ...ref, error: errorMessage(e) });
  }
  await updatePath(deps.store, ref.runId, ref.pathId, (p) => {
    p.status = 'running';
    p.startedAt = deps.now().toISOString();
    p.clientKind = 'ec2-instance';
    if (client) p.client = client;
    for (const n of notes) addNote(p, n);
  });
  deps.log.info('path started', { ...ref, clientRunning, ...(client ?? {}) });
  return { clientRunning };
}

/**
 * A task client has no instance the pipeline stops, starts or describes: the service keeps its
 * task running, and a task that is not there shows as a heartbeat timeout at the probe. So the
 * path only records the client kind and service; reboot is refused by the plan.
 */
async function beginTaskPath(
  deps: Deps,
  ref: PathRef,
  client: ClientRef & { cluster: string; service: string },
): Promise<BeginOutput> {
  await updatePath(deps.store, ref.runId, ref.pathId, (p) => {
    p.status = 'running';
    p.startedAt = deps.now().toISOString();
    p.clientKind = 'ecs-task';
    p.task = { cluster: client.cluster, service: client.service };
    addNote(
      p,
      `client is a task of ECS service ${client.service} (cluster ${client.cluster}): probes sent through its queue; no instance facts recorded`,
    );
  });
  deps.log.info('path started', { ...ref, clientKind: 'ecs-task', service: client.service });
  return { clientRunning: true };
}
