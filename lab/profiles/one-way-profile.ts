/**
 * The one-way profile (`lab up --profile one-way`): ground truth for pingpong's one-way delays.
 *
 *   pb-client ──c0── pb-router ──a0── pb-a   (A: symmetric, half the added round trip each way)
 *                        ├──b0── pb-b        (FWD: 80 % of it on the way to the target)
 *                        └──e0── pb-e        (REV: 90 % of it on the way back)
 *
 * A star (as seed-004's): each host's default route points at the router. Every namespace runs on one kernel, so both ends of a pingpong read one CLOCK_REALTIME and the
 * probe's one-way figures have no clock error; the NFQUEUE helper holds each direction on a queue
 * of its own and logs what it applied (lab/applied-delay.ts), the truth the figures are held
 * against (test/lab/one-way.lab.test.ts). Not calibrated: the delays are as set, the bare
 * topology's ~0.08 ms taken off the round trip (BARE_RTT_GUESS_MS) as everywhere.
 */
import { matchBothWays as both, LAB_PORTS, type LabProfile } from './lab-profile.js';
import { seed000Profile } from './seed-000-profile.js';

export function oneWayProfile(): LabProfile {
  const roles = ['client', 'router', 'a', 'b', 'e'];
  return {
    name: 'one-way',
    roles,
    clientRole: 'client',
    star: true,
    calibrate: false,
    delay: 'nfqueue',
    paths: [
      {
        id: 'A',
        label: 'symmetric: 0.5 ms round trip, half each way',
        targetRole: 'a',
        targetIp: '10.0.2.10',
        rttMs: 0.5,
        delayRole: 'router',
        queue: 1,
        match: both('10.0.2.0/24'),
      },
      {
        id: 'FWD',
        label: 'asymmetric: 2 ms round trip, 80 % of the added delay on the way to the target',
        targetRole: 'b',
        targetIp: '10.0.3.10',
        rttMs: 2,
        delayRole: 'router',
        queue: 2,
        match: [['-d', '10.0.3.0/24']],
        reverse: { queue: 3, match: [['-s', '10.0.3.0/24']], share: 0.2 },
      },
      {
        id: 'REV',
        label: 'asymmetric: 1 ms round trip, 90 % of the added delay on the way back',
        targetRole: 'e',
        targetIp: '10.0.4.10',
        rttMs: 1,
        delayRole: 'router',
        queue: 4,
        match: [['-d', '10.0.4.0/24']],
        reverse: { queue: 5, match: [['-s', '10.0.4.0/24']], share: 0.9 },
      },
    ],
    // seed 000's links of these roles: the same addresses as its A, B and E
    links: seed000Profile().links.filter((l) => roles.includes(l.a.role) && roles.includes(l.b.role)),
    nextHops: [],
    credits: { rate: '200mbit', burstBytes: 500_000_000, peakrate: '1gbit', mtu: 65536 },
    ports: LAB_PORTS,
  };
}
