/** The fault suite's loopback target ports: the loopback plans' ports − 1000, so an integration run elsewhere does not collide. */
import { LOOPBACK_PORTS } from '../../local/targets.js';

export const FAULT_PORTS = Object.fromEntries(
  Object.entries(LOOPBACK_PORTS).map(([k, v]) => [k, v - 1000]),
) as unknown as typeof LOOPBACK_PORTS;
