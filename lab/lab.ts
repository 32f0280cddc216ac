/**
 * Lab lifecycle: `labUp` builds the seed-000 twin (namespaces, veths, routes, delays, token
 * bucket, target servers), `labDown` removes everything it made even after a crash, `labStatus`
 * says what exists. Every created object and started PID goes into the state file first, so a
 * crashed CLI can always be cleaned up. Nothing is ever created in the host's root namespace.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClientRef, RouteTarget } from '../functions/core/model.js';
import { LabCommandError, LabInputError, LabUnavailableError } from './errors.js';
import { parseIpRoute, sameDestination } from './ip-route.js';
import { type ConnectMeter, connectMeter, type MeterClock, robustP50 } from './measure.js';
import {
  type ClientTrack,
  type DelayMechanism,
  defaultStateDir,
  isAlive,
  type LabProcess,
  type LabState,
  labCpu,
  listNamespaces,
  mtimeMs,
  namespacePids,
  readState,
  removeState,
  run,
  spawnInNamespace,
  statePath,
  stopProcess,
  tryRun,
  writeState,
} from './sys.js';
import {
  type Argv,
  allNamespaces,
  buildCreditCommand,
  buildDelayRuleCommands,
  buildTopologyCommands,
  DEFAULT_PREFIX,
  hostOf,
  type LabPathDef,
  type LabProfile,
  type LabProfileName,
  type LabRole,
  labProfile,
  nsName,
  OSAKA_CIDR,
  PREFIX_RE,
  queuesByRole,
  TOKYO_CIDR,
  targetRoles,
} from './topology.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LAB_DIR = join(ROOT, 'lab', 'native');
const BUILD_DIR = join(LAB_DIR, 'build');
const AGENT_BUNDLE = join(ROOT, 'dist', 'agent.cjs');
const FALLBACK_SERVER = join(LAB_DIR, 'target-server.mjs');

export interface LabOptions {
  /** Namespace prefix (default "pb-"); tests use their own, e.g. "pb-tl-". */
  prefix?: string;
  /** Where the state file lives (default /run/pathbench-lab/<prefix>). */
  stateDir?: string;
}

export interface LabUpOptions extends LabOptions {
  profile?: LabProfileName;
  /** Delay mechanism: netem when the kernel has it (auto), or force one. */
  delay?: 'auto' | DelayMechanism;
  /**
   * Measure and tune the delays until TCP-connect p50 (kernel tcpi_rtt, the figure a run
   * reports as connect_rtt_ms) matches the targets (default true).
   */
  calibrate?: boolean;
  /** Called with progress lines (the CLI prints them). */
  onProgress?: (line: string) => void;
}

export interface LabStatus {
  up: boolean;
  healthy: boolean;
  prefix: string;
  stateFile: string;
  profile?: LabProfileName;
  namespaces: { name: string; exists: boolean }[];
  processes: { role: string; ns: string; pid: number; alive: boolean }[];
  delay?: LabState['delay'];
  server?: LabState['server'];
  routes: Record<string, RouteTarget>;
  client?: ClientTrack & { ns: string };
  credits?: LabState['credits'];
  targets: LabState['targets'];
  ports?: LabState['ports'];
  problems: string[];
  /** Remarks that do not make the lab unhealthy (e.g. delays measured with the fallback clock). */
  notes: string[];
}

function resolvePrefix(opts: LabOptions): { prefix: string; dir: string } {
  const prefix = opts.prefix ?? DEFAULT_PREFIX;
  if (!PREFIX_RE.test(prefix)) throw new LabInputError(`lab prefix "${prefix}" must match ${PREFIX_RE}`);
  return { prefix, dir: opts.stateDir ?? defaultStateDir(prefix) };
}

/** Whether the lab can run here: root, iproute2 present, network namespaces usable. */
export async function labAvailable(): Promise<{ ok: boolean; reason?: string }> {
  if (process.platform !== 'linux') return { ok: false, reason: 'the lab needs Linux network namespaces' };
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return { ok: false, reason: 'the lab needs root (network namespaces, iptables, tc)' };
  if (!(await tryRun(['ip', '-V']))) return { ok: false, reason: 'iproute2 (`ip`) is not installed' };
  if (!(await tryRun(['ip', 'netns', 'list']))) return { ok: false, reason: '`ip netns` does not work here' };
  return { ok: true };
}

/**
 * Argv prefix that runs a command inside the lab client's namespace (instanceId = namespace),
 * pinned to the delay helpers' CPU (see labCpu) so probes measure the delays, not the VM's
 * cross-CPU wake-ups.
 */
export function labClientWrap(client: ClientRef): (argv: string[]) => string[] {
  if (!/^pb-[a-z0-9-]{1,20}$/.test(client.instanceId)) {
    throw new LabInputError(`lab client instanceId "${client.instanceId}" is not a lab namespace name (pb-…)`);
  }
  const pin = ['taskset', '-c', String(labCpu())];
  return (argv) => ['ip', 'netns', 'exec', client.instanceId, ...pin, ...argv];
}

/** Compile a lab C tool when the binary is missing or older than its source. */
async function buildTool(name: 'nfq-delay' | 'tcp-rtt'): Promise<string> {
  const src = join(LAB_DIR, `${name}.c`);
  const bin = join(BUILD_DIR, name);
  if (mtimeMs(bin) > mtimeMs(src)) return bin;
  mkdirSync(BUILD_DIR, { recursive: true });
  const libs = name === 'nfq-delay' ? ['-lnetfilter_queue', '-lmnl', '-lnfnetlink'] : [];
  await run(['gcc', '-O2', '-Wall', '-o', bin, src, ...libs], { timeoutMs: 60_000 });
  return bin;
}

/**
 * Path to the fallback TCP-connect timer lab/native/tcp-rtt.c (built on demand). Only used when the
 * precise helper (agent/native/tcping.ts) cannot be built here.
 */
export async function tcpRttTool(): Promise<string> {
  return buildTool('tcp-rtt');
}

async function hasNetem(ns: string): Promise<boolean> {
  const ok = await tryRun(['tc', '-n', ns, 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '0ms']);
  if (ok) await tryRun(['tc', '-n', ns, 'qdisc', 'del', 'dev', 'lo', 'root']);
  return ok;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(50);
  }
  throw new LabCommandError(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

async function listening(ns: string, port: number, proto: 'tcp' | 'udp' = 'tcp'): Promise<boolean> {
  try {
    const out = await run([
      'ip',
      'netns',
      'exec',
      ns,
      'ss',
      '-Hn',
      proto === 'tcp' ? '-tl' : '-ul',
      `sport = :${port}`,
    ]);
    return out.trim().length > 0;
  } catch {
    return false;
  }
}

/** Interface on `role` facing `towards` (the egress a netem delay goes on). */
function egressIf(profile: LabProfile, role: LabRole, towards: LabRole): string | undefined {
  for (const l of profile.links) {
    if (l.a.role === role && l.b.role === towards) return l.a.ifname;
    if (l.b.role === role && l.a.role === towards) return l.b.ifname;
  }
  return undefined;
}

/** Where a path's delay sits for netem: the delay namespace's link towards the target side. */
function netemIf(profile: LabProfile, p: LabPathDef): string {
  const towards: LabRole = p.delayRole === 'router' ? p.targetRole : 'osaka';
  const ifname = egressIf(profile, p.delayRole, towards);
  if (!ifname) throw new LabInputError(`no link from ${p.delayRole} towards ${towards} for path ${p.id}`);
  return ifname;
}

class Builder {
  constructor(
    readonly prefix: string,
    readonly dir: string,
    readonly profile: LabProfile,
    readonly state: LabState,
    readonly log: (line: string) => void,
  ) {}

  ns(role: LabRole): string {
    return nsName(this.prefix, role);
  }

  save(): void {
    writeState(this.dir, this.state);
  }

  spawn(role: string, ns: string, argv: Argv): LabProcess {
    const logs = join(this.dir, 'logs');
    mkdirSync(logs, { recursive: true });
    const p = spawnInNamespace(role, ns, argv, join(logs, `${ns}-${role.replace(/[^a-z0-9-]/gi, '_')}.log`));
    this.state.processes.push(p);
    this.save();
    return p;
  }

  async stopRole(role: string): Promise<void> {
    const keep: LabProcess[] = [];
    for (const p of this.state.processes) {
      if (p.role === role) await stopProcess(p);
      else keep.push(p);
    }
    this.state.processes = keep;
    this.save();
  }

  /** Apply the current addedRttUs with the chosen mechanism (restarting helpers for NFQUEUE). */
  async applyDelays(nfqBin: string | undefined): Promise<void> {
    const added = this.state.delay.addedRttUs;
    if (this.state.delay.mechanism === 'netem') {
      for (const p of this.profile.paths) {
        const us = Math.max(0, Math.round(added[p.id] ?? 0));
        await run([
          'tc',
          '-n',
          this.ns(p.delayRole),
          'qdisc',
          'replace',
          'dev',
          netemIf(this.profile, p),
          'root',
          'netem',
          'delay',
          `${us}us`,
          'limit',
          '100000',
        ]);
      }
      return;
    }
    if (!nfqBin) throw new LabCommandError('nfq-delay helper is not built');
    for (const [role, queues] of queuesByRole(this.profile)) {
      const args = queues.map((q) => {
        const p = this.profile.paths.find((x) => x.queue === q)!;
        // Half per direction: one-way delays stay symmetric like a real long link.
        return `${q}:${Math.max(0, (added[p.id] ?? 0) / 2).toFixed(1)}`;
      });
      const procRole = `delay-${role}`;
      await this.stopRole(procRole);
      const proc = this.spawn(procRole, this.ns(role), [nfqBin, '--cpu', String(labCpu()), ...args]);
      await waitFor(
        `nfq-delay in ${this.ns(role)}`,
        () => {
          if (!isAlive(proc)) throw new LabCommandError(`nfq-delay exited in ${this.ns(role)}: ${tail(proc.log)}`);
          return tail(proc.log).includes('nfq-delay: ready');
        },
        5000,
      );
    }
  }

  async setNextHop(name: 'peering' | 'tgw'): Promise<void> {
    const hop = this.profile.nextHops.find((h) => h.name === name)!;
    await run(['ip', '-n', this.ns('router'), 'route', 'replace', OSAKA_CIDR, 'via', hop.tokyoVia]);
    await run(['ip', '-n', this.ns('osaka'), 'route', 'replace', TOKYO_CIDR, 'via', hop.osakaVia]);
  }

  async startServers(): Promise<void> {
    const ports = this.profile.ports;
    const haveSockperf = await tryRun(['sh', '-c', 'command -v sockperf']);
    const useAgent = existsSync(AGENT_BUNDLE);
    let server: LabState['server'] = useAgent ? 'agent' : 'fallback';
    for (const role of targetRoles(this.profile)) {
      const ns = this.ns(role);
      this.spawn('iperf3', ns, ['iperf3', '-s', '-p', String(ports.iperf3)]);
      if (haveSockperf) {
        this.spawn('sockperf-tcp', ns, ['sockperf', 'server', '--tcp', '-i', '0.0.0.0', '-p', String(ports.sockperf)]);
        this.spawn('sockperf-udp', ns, ['sockperf', 'server', '-i', '0.0.0.0', '-p', String(ports.sockperf)]);
      }
      const ready = join(this.dir, `${ns}.ready`);
      writeFileSync(ready, '');
      const serveArgs = [
        '--host',
        '0.0.0.0',
        '--tcp',
        String(ports.tcp),
        '--http',
        String(ports.http),
        '--ready-file',
        ready,
      ];
      const readyNow = () => readFileSync(ready, 'utf8').length > 0 || false;
      let started = false;
      if (server === 'agent') {
        const p = this.spawn('target', ns, [process.execPath, AGENT_BUNDLE, 'serve', ...serveArgs]);
        try {
          await waitFor(`agent serve in ${ns}`, async () => readyNow() || (await listening(ns, ports.tcp)), 10_000);
          started = true;
        } catch {
          // The bundle exists but cannot serve yet: fall back for the whole lab, say so in the state.
          this.log(`agent serve did not become ready in ${ns}; using the fallback target server`);
          await this.stopRole('target');
          server = 'fallback';
          void p;
        }
      }
      if (!started) {
        this.spawn('target', ns, [process.execPath, FALLBACK_SERVER, ...serveArgs]);
        await waitFor(`target server in ${ns}`, () => readyNow(), 10_000);
      }
      await waitFor(`iperf3 server in ${ns}`, () => listening(ns, ports.iperf3), 10_000);
    }
    this.state.server = server;
    this.save();
  }

  /**
   * Connect p50 per path from the client: the median of several short rounds' p50s, so a
   * burst of load on a busy machine moves one round, not the calibration.
   */
  async measureAll(meter: ConnectMeter): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    const measureOne = async (p: LabPathDef) => {
      try {
        const r = await robustP50(meter, this.ns('client'), p.targetIp, this.profile.ports.tcp, CALIBRATION_SAMPLING);
        out[p.id] = r.p50;
      } catch (e: unknown) {
        throw new LabCommandError(`calibration of path ${p.id}: ${(e as Error).message}`, { cause: e });
      }
    };
    for (const p of this.profile.paths.filter((x) => x.nextHop !== 'tgw')) await measureOne(p);
    const viaTgw = this.profile.paths.filter((x) => x.nextHop === 'tgw');
    if (viaTgw.length > 0) {
      await this.setNextHop('tgw');
      try {
        for (const p of viaTgw) await measureOne(p);
      } finally {
        await this.setNextHop(this.profile.defaultNextHop);
      }
    }
    return out;
  }

  /** Closed loop: measure p50 per path, move each path's added delay by its error, repeat. */
  async calibrate(meter: ConnectMeter, nfqBin: string | undefined): Promise<void> {
    const tolerance = (target: number) => Math.max(0.01 * target, 0.02);
    let measured: Record<string, number> = {};
    const rounds = 6;
    for (let round = 1; round <= rounds; round++) {
      measured = await this.measureAll(meter);
      // A path already at zero added delay cannot get faster: the bare topology is the floor.
      const off = this.profile.paths.filter(
        (p) =>
          Math.abs(measured[p.id] - p.rttMs) > tolerance(p.rttMs) &&
          !(measured[p.id] > p.rttMs && (this.state.delay.addedRttUs[p.id] ?? 0) === 0),
      );
      const line = `calibration round ${round} (${meter.clock}): ${this.profile.paths.map((p) => `${p.id} ${measured[p.id].toFixed(3)}/${p.rttMs}`).join(' ')} ms`;
      this.log(line);
      // Kept next to the state so a later accuracy complaint can be traced to how it converged.
      appendFileSync(join(this.dir, 'calibration.log'), `${new Date().toISOString()} ${line}\n`);
      if (off.length === 0 || round === rounds) break;
      // Damped after the first round: the first step removes the start guess's bias, later
      // errors are partly noise, and a full step would chase it back and forth.
      const gain = round === 1 ? 1 : 0.7;
      for (const p of off) {
        // Bounded step: one noisy round (a busy machine) must not throw a path far off.
        const limit = Math.max(300, 200 * p.rttMs);
        const step = Math.max(-limit, Math.min(limit, gain * (p.rttMs - measured[p.id]) * 1000));
        const next = (this.state.delay.addedRttUs[p.id] ?? 0) + step;
        this.state.delay.addedRttUs[p.id] = Math.max(0, Math.round(next));
      }
      await this.applyDelays(nfqBin);
    }
    this.state.delay.calibration = Object.fromEntries(
      this.profile.paths.map((p) => [p.id, { targetMs: p.rttMs, measuredMs: Number(measured[p.id].toFixed(4)) }]),
    );
    this.save();
    writeFileSync(
      join(this.dir, 'calibration.json'),
      `${JSON.stringify({ mechanism: this.state.delay.mechanism, clock: meter.clock, addedRttUs: this.state.delay.addedRttUs }, null, 2)}\n`,
    );
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-2000);
  } catch {
    return '';
  }
}

/**
 * Calibration sampling per path and measurement: the median p50 of 5 short rounds of 20
 * connects 10 ms apart, so up to two rounds spoiled by a neighbour's load burst do not count.
 */
const CALIBRATION_SAMPLING = { rounds: 5, count: 20, intervalMs: 10 };

/**
 * Starting point for a path's added delay before any calibration: the bare topology (veths,
 * two NFQUEUE trips) measures about this much by the kernel clock here.
 */
const BARE_RTT_GUESS_MS = 0.08;

function previousCalibration(
  dir: string,
  mechanism: DelayMechanism,
  clock: MeterClock,
): Record<string, number> | undefined {
  try {
    const c = JSON.parse(readFileSync(join(dir, 'calibration.json'), 'utf8')) as {
      mechanism: string;
      clock?: string;
      addedRttUs: Record<string, number>;
    };
    // A calibration made with another clock (the old application timer) is off by its bias.
    return c.mechanism === mechanism && c.clock === clock ? c.addedRttUs : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Build (or reuse/repair) the lab. Idempotent: when the recorded lab is healthy it is reused
 * as is; when anything is missing it is torn down and rebuilt. On failure everything created
 * so far is removed again before the error is rethrown.
 */
export async function labUp(opts: LabUpOptions = {}): Promise<LabStatus> {
  const avail = await labAvailable();
  if (!avail.ok) throw new LabUnavailableError(avail.reason ?? 'lab unavailable');
  const { prefix, dir } = resolvePrefix(opts);
  const profile = labProfile(opts.profile ?? 'seed-000');
  const log = opts.onProgress ?? (() => {});

  const existing = readState(dir);
  if (existing) {
    const st = await labStatus({ prefix, stateDir: dir });
    if (st.healthy && existing.profile === profile.name) {
      log('lab is up and healthy; reusing it');
      return st;
    }
    log(`repairing the lab (${st.problems.join('; ') || 'profile changed'})`);
  }
  await labDown({ prefix, stateDir: dir });

  // The precise helper when it builds (what runs report); the C timer only as a fallback.
  const meter = await connectMeter(tcpRttTool, { cpu: labCpu() });
  const state: LabState = {
    version: 1,
    prefix,
    profile: profile.name,
    createdAt: new Date().toISOString(),
    phase: 'building',
    namespaces: allNamespaces(prefix),
    processes: [],
    delay: { mechanism: 'nfqueue', addedRttUs: {}, clock: meter.clock, ...(meter.note ? { note: meter.note } : {}) },
    routers: {
      [nsName(prefix, 'router')]: Object.fromEntries(profile.nextHops.map((h) => [h.name, h.tokyoVia])),
      [nsName(prefix, 'osaka')]: Object.fromEntries(profile.nextHops.map((h) => [h.name, h.osakaVia])),
    },
    credits: profile.credits,
    client: { state: 'running', since: new Date().toISOString(), starts: 1 },
    clientNs: nsName(prefix, 'client'),
    targets: profile.paths.map((p) => ({
      id: p.id,
      label: p.label,
      host: p.targetIp,
      ns: nsName(prefix, p.targetRole),
      rttMs: p.rttMs,
      ...(p.nextHop ? { nextHop: p.nextHop } : {}),
    })),
    ports: profile.ports,
    server: 'fallback',
    roles: Object.fromEntries(allNamespaces(prefix).map((n) => [n.slice(prefix.length), n])),
  };
  // Recorded before anything exists, so a crash at any point below can be cleaned up.
  writeState(dir, state);
  const b = new Builder(prefix, dir, profile, state, log);
  try {
    log(`creating ${state.namespaces.length} namespaces (${prefix}*)`);
    for (const cmd of buildTopologyCommands(prefix, profile)) await run(cmd);

    const want = opts.delay ?? 'auto';
    const netem = want === 'nfqueue' ? false : await hasNetem(b.ns('router'));
    if (want === 'netem' && !netem) throw new LabUnavailableError('tc netem is not available in this kernel');
    state.delay.mechanism = netem ? 'netem' : 'nfqueue';
    let nfqBin: string | undefined;
    if (!netem) {
      nfqBin = await buildTool('nfq-delay');
      for (const cmd of buildDelayRuleCommands(prefix, profile)) await run(cmd);
    }
    if (meter.note) log(meter.note);
    const prev = previousCalibration(dir, state.delay.mechanism, meter.clock);
    for (const p of profile.paths)
      state.delay.addedRttUs[p.id] = prev?.[p.id] ?? Math.max(0, Math.round((p.rttMs - BARE_RTT_GUESS_MS) * 1000));
    log(`delays via ${state.delay.mechanism}`);
    await b.applyDelays(nfqBin);

    await run(buildCreditCommand(prefix, profile.credits, 'replace'));
    log('starting target servers');
    await b.startServers();
    if (opts.calibrate ?? true) await b.calibrate(meter, nfqBin);
    state.phase = 'up';
    b.save();
  } catch (e: unknown) {
    await labDown({ prefix, stateDir: dir }).catch(() => undefined);
    throw e;
  }
  return labStatus({ prefix, stateDir: dir });
}

/**
 * Remove everything the lab made: processes it started (by recorded PID, and any process
 * still inside a lab namespace), then the namespaces (which takes their veths, routes,
 * qdiscs and iptables rules with them). Safe to call when nothing exists.
 */
export async function labDown(opts: LabOptions = {}): Promise<{ removed: string[] }> {
  const { prefix, dir } = resolvePrefix(opts);
  const state = readState(dir);
  const removed: string[] = [];
  for (const p of state?.processes ?? []) {
    if (await stopProcess(p)) removed.push(`process ${p.pid} (${p.role} in ${p.ns})`);
  }
  const ours = new Set([...(state?.namespaces ?? []), ...allNamespaces(prefix)]);
  const existing = new Set(await listNamespaces());
  for (const ns of ours) {
    if (!existing.has(ns)) continue;
    // Anything still inside our namespace was started by us (directly or as a child).
    for (const pid of await namespacePids(ns)) {
      try {
        process.kill(pid, 'SIGKILL');
        removed.push(`process ${pid} (in ${ns})`);
      } catch {
        // exited meanwhile
      }
    }
  }
  for (const ns of ours) {
    if (!existing.has(ns)) continue;
    await run(['ip', 'netns', 'del', ns]);
    removed.push(`netns ${ns}`);
  }
  if (state) {
    removeState(dir);
    removed.push(`state ${statePath(dir)}`);
  }
  return { removed };
}

/** Read a router namespace's route for `destination` as "labNextHop:<name>", "none", or "via:<ip>". */
export async function readLabRoute(
  ns: string,
  destination: string,
  hops: Record<string, string>,
): Promise<RouteTarget> {
  const routes = parseIpRoute(await run(['ip', '-n', ns, 'route', 'show', destination]));
  const r = routes.find((x) => sameDestination(x.destination, destination));
  if (!r) return 'none';
  if (r.type !== 'unicast') return r.type;
  const name = Object.entries(hops).find(([, ip]) => ip === r.via)?.[0];
  if (name) return `labNextHop:${name}`;
  return r.via ? `via:${r.via}` : `dev:${r.dev ?? '?'}`;
}

/** What exists right now, according to the state file and the machine. */
export async function labStatus(opts: LabOptions = {}): Promise<LabStatus> {
  const { prefix, dir } = resolvePrefix(opts);
  const state = readState(dir);
  const existing = new Set(await listNamespaces());
  const names = [...new Set([...(state?.namespaces ?? []), ...allNamespaces(prefix)])];
  const namespaces = names.map((name) => ({ name, exists: existing.has(name) }));
  const problems: string[] = [];
  if (!state) {
    const left = namespaces.filter((n) => n.exists).map((n) => n.name);
    if (left.length) problems.push(`namespaces without a state file: ${left.join(', ')}`);
    return {
      up: false,
      healthy: false,
      prefix,
      stateFile: statePath(dir),
      namespaces,
      processes: [],
      routes: {},
      targets: [],
      problems,
      notes: [],
    };
  }
  const processes = state.processes.map((p) => ({ role: p.role, ns: p.ns, pid: p.pid, alive: isAlive(p) }));
  for (const n of namespaces) if (!n.exists) problems.push(`namespace ${n.name} is missing`);
  for (const p of processes) if (!p.alive) problems.push(`${p.role} in ${p.ns} (pid ${p.pid}) is not running`);
  if (state.phase !== 'up') problems.push('the lab was not completely built');
  const routes: Record<string, RouteTarget> = {};
  for (const [ns, hops] of Object.entries(state.routers)) {
    if (!existing.has(ns)) continue;
    const dest = ns.endsWith('osaka') ? TOKYO_CIDR : OSAKA_CIDR;
    routes[`${ns} ${dest}`] = await readLabRoute(ns, dest, hops).catch(() => 'none');
  }
  return {
    up: true,
    healthy: problems.length === 0,
    prefix,
    stateFile: statePath(dir),
    profile: state.profile,
    namespaces,
    processes,
    delay: state.delay,
    server: state.server,
    routes,
    client: { ...resolveClient(state.client, new Date()), ns: state.clientNs },
    credits: state.credits,
    targets: state.targets,
    ports: state.ports,
    problems,
    notes: state.delay.note ? [state.delay.note] : [],
  };
}

/** Complete a timed transition (stopping → stopped, pending → running) once its time has come. */
export function resolveClient(track: ClientTrack, now: Date): ClientTrack {
  if (!track.until || now.getTime() < Date.parse(track.until)) return track;
  if (track.state === 'stopping') return { ...track, state: 'stopped', since: track.until, until: undefined };
  if (track.state === 'pending') return { ...track, state: 'running', since: track.until, until: undefined };
  return track;
}

/** Internal access for the adapters (same prefix/stateDir resolution as the lifecycle). */
export function labLocation(opts: LabOptions = {}): { prefix: string; dir: string } {
  return resolvePrefix(opts);
}

export { hostOf };
