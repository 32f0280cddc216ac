/**
 * The fault suite's loopback target ports: the loopback plans' ports − 1000, so an integration
 * run elsewhere does not collide. PATHBENCH_FAULT_PORT_SHIFT (default 1000) moves them further
 * down, so two fault-suite runs (e.g. a case run in a loop beside the suite) can share a host.
 */
import { LOOPBACK_PORTS } from '../../local/targets.js';

const SHIFT = Number(process.env.PATHBENCH_FAULT_PORT_SHIFT ?? 1000);
if (!Number.isInteger(SHIFT) || SHIFT < 1000 || SHIFT > 20000) {
  throw new Error(
    `PATHBENCH_FAULT_PORT_SHIFT must be an integer 1000-20000, got "${process.env.PATHBENCH_FAULT_PORT_SHIFT}"`,
  );
}

export const FAULT_PORTS = Object.fromEntries(
  Object.entries(LOOPBACK_PORTS).map(([k, v]) => [k, v - SHIFT]),
) as unknown as typeof LOOPBACK_PORTS;
