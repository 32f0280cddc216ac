/**
 * The agent's half of the probe registry (probes/index.ts): one runner per probe kind, each from
 * its kind's folder. Exhaustive over ProbeKind, so a kind without a runner fails to compile.
 * Apart from probes/index.ts because runners run tools and sockets: the agent bundles them, the
 * Lambda functions never do.
 */

import { runHttp } from './http/http.runner.js';
import type { ProbeKind, ProbeSpec } from './index.js';
import { runIperf3 } from './iperf3/iperf3.runner.js';
import { runMtu } from './mtu/mtu.runner.js';
import { runPing } from './ping/ping.runner.js';
import { runPingpongProbe } from './pingpong/pingpong.runner.js';
import type { ProbeContext, ProbeOutcome, ProbeRunner } from './run-kit/runner-types.js';
import { runSockperf } from './sockperf/sockperf.runner.js';
import { runTcpConnect } from './tcp-connect/tcp-connect.runner.js';

/** Each kind's runner, typed with that kind's own probe options. */
export const PROBE_RUNNERS: { [K in ProbeKind]: ProbeRunner<Extract<ProbeSpec, { kind: K }>> } = {
  'tcp-connect': runTcpConnect,
  iperf3: runIperf3,
  http: runHttp,
  sockperf: runSockperf,
  mtu: runMtu,
  pingpong: runPingpongProbe,
  ping: runPing,
};

/** Run any probe with the runner of its kind. */
export function runProbe(probe: ProbeSpec, ctx: ProbeContext): Promise<ProbeOutcome> {
  // The mapped type guarantees PROBE_RUNNERS[probe.kind] accepts exactly this probe's shape;
  // TypeScript cannot correlate the two through the union, hence the single widening cast.
  const runner = PROBE_RUNNERS[probe.kind] as ProbeRunner<ProbeSpec>;
  return runner(probe, ctx);
}
