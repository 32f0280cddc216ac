import { IN_REGION_MTU, LAB_PORTS, type LabPathDef, type LabProfile, type LabRole } from './lab-profile.js';

/** One host of the seed-004 twin: a namespace named by its AZ id, on its own link to the router. */
export interface LabAzHost {
  role: LabRole;
  region: string;
  azId: string;
  /** The host's address (10.4.<index>.10) and the router's end of its link (10.4.<index>.1). */
  ip: string;
  routerIp: string;
  reference: boolean;
}

/** Seed 004's eight hosts: Tokyo az1/az2/az4 and Osaka az1/az2/az3, plus a second host in each az1. */
export const SEED004_HOSTS: readonly LabAzHost[] = [
  ['ap-northeast-1', 'apne1-az1', false],
  ['ap-northeast-1', 'apne1-az2', false],
  ['ap-northeast-1', 'apne1-az4', false],
  ['ap-northeast-1', 'apne1-az1', true],
  ['ap-northeast-3', 'apne3-az1', false],
  ['ap-northeast-3', 'apne3-az2', false],
  ['ap-northeast-3', 'apne3-az3', false],
  ['ap-northeast-3', 'apne3-az1', true],
].map(([region, azId, reference], i) => ({
  role: `${azId}${reference ? '-ref' : ''}`,
  region: region as string,
  azId: azId as string,
  ip: `10.4.${i + 1}.10`,
  routerIp: `10.4.${i + 1}.1`,
  reference: reference as boolean,
}));

/**
 * Seed 004's inter-AZ round trips as routes: [round trip ms, share] per route, the first taking
 * the rest. Where the seed named modes, the lab keeps their number and order but spreads them
 * to ≥ 1.45× apart: the report's mode detector (core/shape.ts, 40 bins per decade)
 * does not resolve modes closer than ≈ 1.35×, and the seed's own are closer (Tokyo az1↔az2
 * 540 / 605 µs one-way, Osaka az2↔az3 300 / 370 / 450 µs). Osaka az1↔az2 keeps the seed's
 * shape: two modes with the mean (seed: 147.7 µs one-way) in the valley between them. The
 * single-route pairs are not in the seed's text; their figures keep the cross-AZ/same-AZ ratio
 * in its 5–30× range. Same-AZ pairs get no added delay: the bare topology is their figure.
 */
export const SEED004_ROUTES: Record<string, [number, number][]> = {
  'apne1-az1|apne1-az2': [
    [1.0, 0.6],
    [1.45, 0.4],
  ],
  'apne1-az1|apne1-az4': [[0.76, 1]],
  'apne1-az2|apne1-az4': [[0.9, 1]],
  // mean 0.299 ms round trip (the seed's 147.7 µs one-way ×2), its modes 2.1× apart: at 0.22 /
  // 0.38 ms (1.7×) the valley filled up whenever the machine was loaded.
  'apne3-az1|apne3-az2': [
    [0.2, 0.55],
    [0.42, 0.45],
  ],
  'apne3-az1|apne3-az3': [[0.5, 1]],
  // Three routes ≥ 1.6× apart as measured (each with the lab's ~0.12 ms of its own): at 0.5 /
  // 0.75 / 1.1 ms (~1.4×) the mode detector merged two of them about one run in two.
  'apne3-az2|apne3-az3': [
    [0.4, 0.5],
    [0.75, 0.3],
    [1.3, 0.2],
  ],
};

/**
 * The seed-004 twin: a star of eight host namespaces around one router. Each AZ pair with a
 * delay is one lab path and NFQUEUE queue on the router. A mixed pair's whole added round trip
 * sits on the packets from the pair's first host to its second (one iptables rule), so a round
 * trip measured in either direction crosses it exactly once and takes exactly one route's delay.
 * A single-route pair is matched in both directions, half its round trip each way (queueArg):
 * with one rule, half of it went missing (576 µs measured for 760 µs).
 */
export function seed004Profile(): LabProfile {
  const hosts = SEED004_HOSTS;
  const first = (azId: string) => hosts.find((h) => h.azId === azId && !h.reference)!;
  const paths: LabPathDef[] = Object.entries(SEED004_ROUTES).map(([pair, routes], i) => {
    const [a, b] = pair.split('|').map(first);
    const [main, ...more] = routes;
    return {
      id: `${a.azId}_${b.azId}`,
      label: `${a.azId} ↔ ${b.azId}: ${routes.map(([ms, share]) => `${Math.round(share * 100)} % at ${ms} ms`).join(', ')}`,
      targetRole: b.role,
      targetIp: b.ip,
      rttMs: main[0],
      ...(more.length ? { routes: more.map(([rttMs, share]) => ({ rttMs, share })) } : {}),
      delayRole: 'router',
      queue: 11 + i,
      match: [
        ['-s', `${a.ip}/32`, '-d', `${b.ip}/32`],
        ...(more.length ? [] : [['-s', `${b.ip}/32`, '-d', `${a.ip}/32`]]),
      ],
    };
  });
  return {
    name: 'seed-004',
    roles: ['router', ...hosts.map((h) => h.role)],
    clientRole: hosts[0].role,
    serverRoles: hosts.map((h) => h.role),
    extraClientRoles: hosts.slice(1).map((h) => h.role),
    star: true,
    calibrate: false,
    paths,
    links: hosts.map((h, i) => ({
      a: { role: 'router', ifname: `h${i + 1}`, addr: `${h.routerIp}/24` },
      b: { role: h.role, ifname: 'eth0', addr: `${h.ip}/24` },
      mtu: IN_REGION_MTU,
    })),
    nextHops: [],
    credits: { rate: '200mbit', burstBytes: 500_000_000, peakrate: '1gbit', mtu: 65536 },
    ports: LAB_PORTS,
  };
}
