/**
 * The local lab's public surface: lifecycle (up/down/status), availability, the client wrapper
 * and the port adapters bundled for the local driver.
 */

import type { ClientRef } from '../core/resolved-plan.js';
import type { Fleet, Routes } from '../functions/ports.js';
import { labClientWrap } from './client.js';
import { LabFleet, type LabFleetOptions } from './lab-fleet.js';
import { LabRoutes } from './lab-routes.js';
import { addLabTruth, type LabTruthFn } from './lab-truth.js';

export { parseIpRoute } from './ip-route.js';
export type { LabOptions, LabStatus, LabUpOptions } from './lab.js';
export { labAvailable, labCalibrate, labClientWrap, labDown, labShiftDelay, labStatus, labUp } from './lab.js';
export { LabCommandError, LabInputError, LabStateError, LabUnavailableError } from './lab-errors.js';
export { LAB_PORTS, OSAKA_CIDR, TOKYO_CIDR } from './profiles/lab-profile.js';
export { labProfile } from './profiles/profile-by-name.js';

/** Fleet, Routes and the command wrapper for running the pipeline against the lab. */
export async function createLabPorts(opts: LabFleetOptions = {}): Promise<{
  fleet: Fleet;
  routes: Routes;
  wrap: (argv: string[], client: ClientRef) => string[];
  /** Put back routes a killed run left changed (lab/lab-routes.ts); one line per route. */
  recoverLeftovers: () => Promise<string[]>;
  /** A run's summary with what the lab applied per path (lab/lab-truth.ts). */
  truth: LabTruthFn;
}> {
  const routes = new LabRoutes(opts);
  return {
    fleet: new LabFleet(opts),
    routes,
    recoverLeftovers: () => routes.recoverLeftovers(),
    truth: (summary, manifest, plan) => addLabTruth(opts, summary, manifest, plan),
    wrap: (argv, client) => labClientWrap(client)(argv),
  };
}
