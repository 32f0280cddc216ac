import { LAB_MESH_HOSTS, LAB_MESH_ROUTE_FACTOR, labMeshPairs } from '../lab-mesh.js';
import { INTER_REGION_MTU, LAB_PORTS, type LabPathDef, type LabProfile } from './lab-profile.js';

/**
 * The lab mesh (lab/lab-mesh.ts): six region namespaces in a star around one router, every host a
 * client and a target. Each unordered region pair is one lab path on its own NFQUEUE queue in
 * the router, matched in both directions, half the pair's round trip each way (queueArg), so a
 * round trip between two regions crosses that pair's delay once each way and no other. The
 * round trip is the fibre one over the great circle × route factor 1.5 (LAB_MESH_ROUTE_FACTOR); not
 * calibrated (the bare hop is taken off as everywhere, BARE_RTT_GUESS_MS in calibration.ts).
 */
export function meshProfile(): LabProfile {
  const hosts = LAB_MESH_HOSTS;
  const paths: LabPathDef[] = labMeshPairs().map((p) => ({
    id: p.id,
    label: `${p.a.role} ↔ ${p.b.role}: ${Math.round(p.distanceKm)} km, fibre RTT ${p.rttMs.toFixed(2)} ms (route factor ${LAB_MESH_ROUTE_FACTOR})`,
    targetRole: p.b.role,
    targetIp: p.b.ip,
    rttMs: p.rttMs,
    delayRole: 'router',
    queue: p.queue,
    match: [
      ['-s', `${p.a.ip}/32`, '-d', `${p.b.ip}/32`],
      ['-s', `${p.b.ip}/32`, '-d', `${p.a.ip}/32`],
    ],
  }));
  return {
    name: 'mesh',
    roles: ['router', ...hosts.map((h) => h.role)],
    clientRole: hosts[0].role,
    serverRoles: hosts.map((h) => h.role),
    extraClientRoles: hosts.slice(1).map((h) => h.role),
    star: true,
    calibrate: false,
    delay: 'nfqueue',
    paths,
    links: hosts.map((h, i) => ({
      a: { role: 'router', ifname: `m${i + 1}`, addr: `${h.routerIp}/24` },
      b: { role: h.role, ifname: 'eth0', addr: `${h.ip}/24` },
      mtu: INTER_REGION_MTU,
    })),
    nextHops: [],
    // Only the first host has the burst-credit bucket (as in seed-004); 500 MB outlasts a short mesh run.
    credits: { rate: '200mbit', burstBytes: 500_000_000, peakrate: '1gbit', mtu: 65536 },
    ports: LAB_PORTS,
  };
}
