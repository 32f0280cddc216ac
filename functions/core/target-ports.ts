/**
 * Ports the target servers listen on and the plans probe: the same on the AWS testbed (user
 * data, security groups, plan-from-outputs) and in the lab's target namespaces. `tcp` and
 * `http` are `agent serve`'s listeners; `iperf3` and `sockperf` are those tools' servers.
 */
export interface TargetPorts {
  tcp: number;
  http: number;
  iperf3: number;
  sockperf: number;
}

export const TARGET_PORTS = { tcp: 7000, http: 8080, iperf3: 5201, sockperf: 11111 } as const satisfies TargetPorts;
