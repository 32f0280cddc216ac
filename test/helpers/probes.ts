/** Probe specs for tests, with the fields a test does not care about filled in. */
import type { Iperf3Probe } from '../../probes/iperf3/iperf3.schema.js';

/** A TCP iperf3 probe: 2 streams, 3 s, one repeat, 1 s intervals; `over` replaces any field. */
export const iperf3Probe = (over: Partial<Iperf3Probe> = {}): Iperf3Probe => ({
  kind: 'iperf3',
  name: 'iperf3-tcp',
  mode: 'tcp',
  streams: 2,
  durationSeconds: 3,
  repeats: 1,
  intervalSeconds: 1,
  ...over,
});
