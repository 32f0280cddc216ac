/**
 * The exact `ip`/`tc`/`iptables` argv that build a lab profile: namespaces, links, addresses,
 * forwarding, routes, delay rules and the client's burst-credit bucket. Pure: the executor
 * (lab.ts and its steps) only runs what this module returns, so the layout is unit-testable.
 */
import { nsName } from './namespace-names.js';
import {
  hostOf,
  type LabCredits,
  type LabProfile,
  type LabRole,
  OSAKA_CIDR,
  TOKYO_CIDR,
} from './profiles/lab-profile.js';
import { NLB_IP } from './profiles/seed-000-profile.js';

export type Argv = string[];

/** Namespaces, their links and addresses (every profile). */
function linkCommands(prefix: string, profile: LabProfile): Argv[] {
  const ns = (r: LabRole) => nsName(prefix, r);
  const cmds: Argv[] = [];
  for (const r of profile.roles) {
    cmds.push(['ip', 'netns', 'add', ns(r)]);
    cmds.push(['ip', '-n', ns(r), 'link', 'set', 'lo', 'up']);
  }
  for (const l of profile.links) {
    // Created inside one lab namespace with the peer moved straight into the other: nothing
    // ever appears in the host's root namespace.
    cmds.push([
      'ip',
      '-n',
      ns(l.a.role),
      'link',
      'add',
      l.a.ifname,
      'type',
      'veth',
      'peer',
      'name',
      l.b.ifname,
      'netns',
      ns(l.b.role),
    ]);
    for (const end of [l.a, l.b]) {
      cmds.push(['ip', '-n', ns(end.role), 'addr', 'add', end.addr, 'dev', end.ifname]);
      cmds.push(['ip', '-n', ns(end.role), 'link', 'set', end.ifname, 'mtu', String(l.mtu), 'up']);
    }
  }
  return cmds;
}

/** Namespace creation and wiring: links, addresses, forwarding, routes, MTUs. */
export function buildTopologyCommands(prefix: string, profile: LabProfile): Argv[] {
  if (profile.star) return buildStarCommands(prefix, profile);
  const ns = (r: LabRole) => nsName(prefix, r);
  const cmds = linkCommands(prefix, profile);
  // Routers forward; reverse-path filtering off so a half-swapped (asymmetric) state still works.
  for (const r of ['router', 'peering', 'tgw', 'osaka'] as LabRole[]) {
    cmds.push(['ip', 'netns', 'exec', ns(r), 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    cmds.push(['ip', 'netns', 'exec', ns(r), 'sysctl', '-qw', 'net.ipv4.conf.all.rp_filter=0']);
    cmds.push(['ip', 'netns', 'exec', ns(r), 'sysctl', '-qw', 'net.ipv4.conf.default.rp_filter=0']);
  }
  // Osaka's target addresses live on the Osaka namespace's loopback (the "instance" behind its
  // router, and the NLB in front of it); the hops route all of Osaka's CIDR there.
  const osakaTargets = [...new Set(profile.paths.filter((p) => p.targetRole === 'osaka').map((p) => p.targetIp))];
  for (const ip of osakaTargets.length > 0 ? osakaTargets : ['10.1.1.10'])
    cmds.push(['ip', '-n', ns('osaka'), 'addr', 'add', `${ip}/32`, 'dev', 'lo']);
  // Targets on a loopback (path F): the address, and the router's host route to it.
  for (const p of profile.paths.filter((x) => x.loopbackTarget)) {
    const link = profile.links.find(
      (l) =>
        (l.a.role === 'router' && l.b.role === p.targetRole) || (l.b.role === 'router' && l.a.role === p.targetRole),
    );
    const end = link && (link.a.role === p.targetRole ? link.a : link.b);
    if (!end) throw new Error(`no link from the router to ${p.targetRole} for path ${p.id}`);
    cmds.push(['ip', '-n', ns(p.targetRole), 'addr', 'add', `${p.targetIp}/32`, 'dev', 'lo']);
    cmds.push(['ip', '-n', ns('router'), 'route', 'add', `${p.targetIp}/32`, 'via', hostOf(end.addr)]);
  }
  // Default routes towards the Tokyo router for hosts on its side.
  for (const r of ['client', 'a', 'b', 'e'] as LabRole[]) {
    const link = profile.links.find((l) => l.b.role === r || l.a.role === r);
    const routerEnd = link && (link.a.role === 'router' ? link.a : link.b);
    if (routerEnd) cmds.push(['ip', '-n', ns(r), 'route', 'add', 'default', 'via', hostOf(routerEnd.addr)]);
  }
  // Hop namespaces know both sides statically; only the routers' entries are swapped.
  for (const h of profile.nextHops) {
    const toTokyo = profile.links.find((l) => l.b.role === h.role && l.a.role === 'router');
    const toOsaka = profile.links.find((l) => l.a.role === h.role && l.b.role === 'osaka');
    if (toTokyo) cmds.push(['ip', '-n', ns(h.role), 'route', 'add', TOKYO_CIDR, 'via', hostOf(toTokyo.a.addr)]);
    if (toOsaka) cmds.push(['ip', '-n', ns(h.role), 'route', 'add', OSAKA_CIDR, 'via', hostOf(toOsaka.b.addr)]);
  }
  const active = profile.nextHops.find((h) => h.name === profile.defaultNextHop)!;
  cmds.push(['ip', '-n', ns('router'), 'route', 'replace', OSAKA_CIDR, 'via', active.tokyoVia]);
  cmds.push(['ip', '-n', ns('osaka'), 'route', 'replace', TOKYO_CIDR, 'via', active.osakaVia]);
  // A small ephemeral port range in the client namespace (per namespace), for TIME_WAIT pressure.
  if (profile.clientPortRange) {
    const [lo, hi] = profile.clientPortRange;
    cmds.push(['ip', 'netns', 'exec', ns('client'), 'sysctl', '-qw', `net.ipv4.ip_local_port_range=${lo} ${hi}`]);
  }
  // The client NIC's receive side: a plain token bucket on the router's link towards the client.
  if (profile.clientIngressRate) {
    const link = profile.links.find((l) => l.a.role === 'client' && l.b.role === 'router')!;
    cmds.push([
      ...['tc', '-n', ns('router'), 'qdisc', 'replace', 'dev', link.b.ifname, 'root', 'tbf'],
      ...['rate', profile.clientIngressRate, 'burst', '262144', 'latency', '50ms'],
    ]);
  }
  // PrivateLink passes no ICMP echo (seed 000: ping 100 % loss through the NLB), nor does the NLB.
  const noEcho = ['-p', 'icmp', '--icmp-type', 'echo-request', '-j', 'DROP'];
  cmds.push(['ip', 'netns', 'exec', ns('e'), 'iptables', '-A', 'INPUT', ...noEcho]);
  if (profile.paths.some((p) => p.targetIp === NLB_IP))
    cmds.push(['ip', 'netns', 'exec', ns('osaka'), 'iptables', '-A', 'INPUT', '-d', `${NLB_IP}/32`, ...noEcho]);
  return cmds;
}

/** The seed-004 star: hosts on links to one forwarding router, each with a default route to it. */
function buildStarCommands(prefix: string, profile: LabProfile): Argv[] {
  const ns = (r: LabRole) => nsName(prefix, r);
  const cmds = linkCommands(prefix, profile);
  cmds.push(['ip', 'netns', 'exec', ns('router'), 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
  for (const l of profile.links) {
    // Every link joins the router and one host, in either order.
    const [router, host] = l.a.role === 'router' ? [l.a, l.b] : [l.b, l.a];
    cmds.push(['ip', '-n', ns(host.role), 'route', 'add', 'default', 'via', hostOf(router.addr)]);
  }
  return cmds;
}

/**
 * iptables rules sending each path's packets to its delay queue (both directions). A packet
 * takes the first rule it matches (NFQUEUE ends the chain), so in each namespace the matching
 * rules come before the catch-all ones (a hop's own path: C, D), in profile order otherwise.
 */
export function buildDelayRuleCommands(prefix: string, profile: LabProfile): Argv[] {
  const cmds: Argv[] = [];
  const rules = profile.paths.flatMap((p) => [
    ...p.match.map((m) => ({ p, m, queue: p.queue })),
    ...(p.reverse?.match ?? []).map((m) => ({ p, m, queue: p.reverse?.queue ?? p.queue })),
  ]);
  const ordered = [...rules.filter((r) => r.m.length > 0), ...rules.filter((r) => r.m.length === 0)];
  for (const { p, m, queue } of ordered) {
    cmds.push([
      'ip',
      'netns',
      'exec',
      nsName(prefix, p.delayRole),
      'iptables',
      '-A',
      'FORWARD',
      ...m,
      '-j',
      'NFQUEUE',
      '--queue-num',
      String(queue),
      '--queue-bypass',
    ]);
  }
  return cmds;
}

/** The token bucket that emulates network burst credits on the client's egress. */
export function buildCreditCommand(
  prefix: string,
  credits: LabCredits,
  op: 'add' | 'replace' = 'replace',
  clientRole: LabRole = 'client',
): Argv {
  return [
    'tc',
    '-n',
    nsName(prefix, clientRole),
    'qdisc',
    op,
    'dev',
    'eth0',
    'root',
    'handle',
    '1:',
    'tbf',
    'rate',
    credits.rate,
    'burst',
    String(credits.burstBytes),
    'latency',
    '100ms',
    'peakrate',
    credits.peakrate,
    'mtu',
    String(credits.mtu),
  ];
}
