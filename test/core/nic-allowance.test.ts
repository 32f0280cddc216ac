/**
 * The NIC's allowance counters (core/nic-allowance.ts): ENA's `ethtool -S` and the lab's tbf
 * (`tc -s -j qdisc`) read into the same allowances, growth over a trial, the flag and the note.
 */
import { describe, expect, it } from 'vitest';
import {
  allowanceGrowth,
  formatThrottledNote,
  nicTrialOf,
  parseEthtoolStats,
  parseTbfStats,
  throttledAllowances,
  throttledFlag,
} from '../../core/nic-allowance.js';

/** `ethtool -S ens5` on an ENA instance: the allowance counters among the driver's others. */
const ENA = `NIC statistics:
     tx_timeout: 0
     suspend: 0
     resume: 0
     wd_expired: 0
     interface_up: 1
     interface_down: 0
     admin_q_pause: 0
     bw_in_allowance_exceeded: 0
     bw_out_allowance_exceeded: 1742
     pps_allowance_exceeded: 3
     conntrack_allowance_exceeded: 0
     linklocal_allowance_exceeded: 0
     conntrack_allowance_available: 136812
     queue_0_tx_cnt: 6416
     queue_0_tx_bytes: 1117546
`;

/** `tc -s -j qdisc show dev a0` with the lab's bucket at the root (captured from iproute2 here). */
const TBF = (overlimits: number, drops: number) =>
  `[{"kind":"tbf","handle":"1:","root":true,"refcnt":3,"options":{"rate":25000000,"burst":500000,"minburst":2000,"lat":100000},"bytes":2274,"packets":47,"drops":${drops},"overlimits":${overlimits},"requeues":0,"backlog":0,"qlen":0}]`;

describe('reading the counters', () => {
  it('takes the five allowance counters from ethtool -S and nothing else', () => {
    expect(parseEthtoolStats(ENA)).toEqual({ bw_in: 0, bw_out: 1742, pps: 3, conntrack: 0, linklocal: 0 });
  });

  it('finds none in a device without them (a veth, virtio)', () => {
    expect(
      parseEthtoolStats('NIC statistics:\n     peer_ifindex: 7\n     rx_queue_0_xdp_packets: 0\n'),
    ).toBeUndefined();
    expect(parseEthtoolStats('')).toBeUndefined();
  });

  it("reads the lab's root tbf as bw_out: overlimits plus drops", () => {
    expect(parseTbfStats(TBF(1200, 34))).toEqual({ bw_out: 1234 });
  });

  it('finds no tbf in a plain qdisc, a tbf below the root, or output that is not JSON', () => {
    expect(parseTbfStats('[{"kind":"noqueue","handle":"0:","root":true,"drops":0,"overlimits":0}]')).toBeUndefined();
    expect(parseTbfStats('[{"kind":"tbf","handle":"10:","parent":"1:1","drops":0,"overlimits":9}]')).toBeUndefined();
    expect(parseTbfStats('qdisc tbf 1: root refcnt 2')).toBeUndefined();
    expect(parseTbfStats('{"kind":"tbf"}')).toBeUndefined();
  });
});

describe('a trial', () => {
  const trial = (before: Record<string, number>, after: Record<string, number>) => ({
    source: 'ena' as const,
    dev: 'ens5',
    before,
    after,
  });

  it('grew in the allowances whose counters went up, in a fixed order', () => {
    const t = trial({ bw_in: 5, bw_out: 10, pps: 0 }, { bw_in: 5, bw_out: 52, pps: 7 });
    expect(allowanceGrowth(t)).toEqual({ bw_in: 0, bw_out: 42, pps: 7 });
    expect(throttledAllowances(t)).toEqual(['bw_out', 'pps']);
    expect(throttledFlag(throttledAllowances(t))).toBe('throttled:bw_out+pps');
  });

  it('leaves out a counter that went down (reset: device or qdisc replaced) or is missing on one side', () => {
    const t = trial({ bw_out: 900, pps: 1 }, { bw_out: 12, bw_in: 3 });
    expect(allowanceGrowth(t)).toEqual({});
    expect(throttledAllowances(t)).toEqual([]);
  });

  it("reads the sidecar's nic, and none from a sidecar without one or a malformed one", () => {
    const nic = trial({ bw_out: 1 }, { bw_out: 2 });
    expect(nicTrialOf(JSON.stringify({ tool: 'iperf3', nic }))).toEqual(nic);
    expect(nicTrialOf(JSON.stringify({ tool: 'iperf3' }))).toBeUndefined();
    expect(nicTrialOf(JSON.stringify({ nic: { source: 'ena', before: {} } }))).toBeUndefined();
    expect(nicTrialOf('not json')).toBeUndefined();
    expect(nicTrialOf(undefined)).toBeUndefined();
  });

  it('says which allowance, by how much and where', () => {
    expect(
      formatThrottledNote('iperf3-tcp', { trial: 2, source: 'ena', dev: 'ens5', grew: { bw_out: 42, pps: 7 } }),
    ).toBe(
      "iperf3-tcp trial 2: the NIC throttled it for exceeding the outbound bandwidth and packets per second allowances (bw_out_allowance_exceeded +42, pps_allowance_exceeded +7 on ens5); its figures measure the instance's allowance, not only the path",
    );
    expect(formatThrottledNote('iperf3-tcp', { trial: 1, source: 'tbf', dev: 'eth0', grew: { bw_out: 1234 } })).toMatch(
      /outbound bandwidth allowance \(the lab's token bucket: \+1234 overlimits and drops on eth0\)/,
    );
  });
});
