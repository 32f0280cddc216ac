/**
 * Ports the target servers listen on and the plans probe: the same on the AWS testbed (user
 * data, security groups, plan-from-outputs) and in the lab's target namespaces. `tcp` and
 * `http` are `agent serve`'s listeners; `iperf3` and `sockperf` are those tools' servers; `pingpong` is the native helper's
 * echo server that `agent serve --pingpong` starts.
 */
import { z } from 'zod';

export const targetPortsSchema = z.object({
  tcp: z.number(),
  http: z.number(),
  iperf3: z.number(),
  sockperf: z.number(),
  /** The pingpong probe's echo server (`tcping --echo`, TCP and UDP on the same port). */
  pingpong: z.number(),
});
export type TargetPorts = z.output<typeof targetPortsSchema>;

export const TARGET_PORTS = {
  tcp: 7000,
  http: 8080,
  iperf3: 5201,
  sockperf: 11111,
  pingpong: 7007,
} as const satisfies TargetPorts;
