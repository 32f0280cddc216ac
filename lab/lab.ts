/**
 * Lab lifecycle: `labUp` builds the seed-000 twin (namespaces, veths, routes, delays, token
 * bucket, target servers), `labDown` removes everything it made even after a crash, `labStatus`
 * (status.ts) says what exists. Every created object and started PID goes into the state file
 * first, so a crashed CLI can always be cleaned up. Nothing is ever created in the host's root
 * namespace. The steps live by job: delay.ts, servers.ts, calibration.ts, next-hop.ts,
 * build-helpers.ts (the C helpers), availability.ts; this module orders them.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { labAvailable } from './availability.js';
import { buildHelper, tcpRttTool } from './build-helpers.js';
import { LabBuilder } from './builder.js';
import { calibrate, seedDelays } from './calibration.js';
import { applyDelays, setUpDelayMechanism } from './delay.js';
import { LabInputError, LabStateError, LabUnavailableError } from './lab-errors.js';
import { journalPath } from './lab-routes.js';
import { type DelayMechanism, type LabState, readState, removeState, statePath, writeState } from './lab-state.js';
import { type LabOptions, labLocation } from './location.js';
import { connectMeter } from './measure.js';
import { allNamespaces, nsName } from './namespace-names.js';
import type { LabProfileName } from './profiles/lab-profile.js';
import { labProfile } from './profiles/profile-by-name.js';
import { startProxies } from './proxies.js';
import { startServers } from './servers.js';
import { type LabStatus, labStatus } from './status.js';
import { labCpu, listNamespaces, namespacePids, run, stopProcess } from './sys.js';
import { buildCreditCommand, buildTopologyCommands } from './topology-commands.js';

// The public surface callers import from this module (the CLI, tests, benches).
export { labAvailable } from './availability.js';
export { tcpRttTool } from './build-helpers.js';
export { labClientWrap, resolveClient } from './client.js';
export { readLabRoute } from './lab-routes.js';
export { type LabOptions, labLocation } from './location.js';
export { type LabStatus, labStatus } from './status.js';

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

/**
 * Build (or reuse/repair) the lab. Idempotent: when the recorded lab is healthy it is reused
 * as is; when anything is missing it is torn down and rebuilt. On failure everything created
 * so far is removed again before the error is rethrown.
 */
export async function labUp(opts: LabUpOptions = {}): Promise<LabStatus> {
  const avail = await labAvailable();
  if (!avail.ok) throw new LabUnavailableError(avail.reason ?? 'lab unavailable');
  const { prefix, dir } = labLocation(opts);
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
    namespaces: allNamespaces(prefix, profile),
    processes: [],
    delay: { mechanism: 'nfqueue', addedRttUs: {}, clock: meter.clock, ...(meter.note ? { note: meter.note } : {}) },
    routers: profile.nextHops.length
      ? {
          [nsName(prefix, 'router')]: Object.fromEntries(profile.nextHops.map((h) => [h.name, h.tokyoVia])),
          [nsName(prefix, 'osaka')]: Object.fromEntries(profile.nextHops.map((h) => [h.name, h.osakaVia])),
        }
      : {},
    credits: profile.credits,
    client: { state: 'running', since: new Date().toISOString(), starts: 1 },
    clientNs: nsName(prefix, profile.clientRole),
    ...(profile.extraClientRoles?.length
      ? { extraClients: profile.extraClientRoles.map((r) => nsName(prefix, r)) }
      : {}),
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
    roles: Object.fromEntries(allNamespaces(prefix, profile).map((n) => [n.slice(prefix.length), n])),
  };
  // Recorded before anything exists, so a crash at any point below can be cleaned up.
  writeState(dir, state);
  const b = new LabBuilder(prefix, dir, profile, state, log);
  try {
    log(`creating ${state.namespaces.length} namespaces (${prefix}*)`);
    for (const cmd of buildTopologyCommands(prefix, profile)) await run(cmd);

    if (profile.delay && opts.delay && opts.delay !== 'auto' && opts.delay !== profile.delay)
      throw new LabInputError(`lab profile ${profile.name} needs the ${profile.delay} delay helper, got ${opts.delay}`);
    const nfqBin = await setUpDelayMechanism(b, profile.delay ?? opts.delay ?? 'auto');
    if (meter.note) log(meter.note);
    seedDelays(b, meter.clock);
    log(`delays via ${state.delay.mechanism}`);
    await applyDelays(b, nfqBin);

    await run(buildCreditCommand(prefix, profile.credits, 'replace', profile.clientRole));
    log('starting target servers');
    await startServers(b);
    await startProxies(b);
    if ((opts.calibrate ?? true) && profile.calibrate !== false) await calibrate(b, meter, nfqBin);
    else if (profile.calibrate === false) log(`lab profile ${profile.name}: delays as set, not calibrated`);
    state.phase = 'up';
    b.save();
  } catch (e: unknown) {
    await labDown({ prefix, stateDir: dir }).catch(() => undefined);
    throw e;
  }
  return labStatus({ prefix, stateDir: dir });
}

/**
 * Re-run the delay calibration on a lab that is up, from the delays it has now. The delays are
 * tuned against the machine's own cost of the bare topology, and on a VM that cost can move by
 * ~0.2 ms for minutes (seen in CI as every path reading the same amount short at once; load
 * inside the VM and restarted delay helpers did not reproduce it; docs/lab.md, "Drift"), so a
 * long-lived lab can drift out of its band. `paths`: those alone (the others keep their delays).
 * Returns the status with the new calibration.
 */
export async function labCalibrate(
  opts: LabOptions & { onProgress?: (line: string) => void; paths?: readonly string[] } = {},
): Promise<LabStatus> {
  const avail = await labAvailable();
  if (!avail.ok) throw new LabUnavailableError(avail.reason ?? 'lab unavailable');
  const { prefix, dir } = labLocation(opts);
  const state = readState(dir);
  if (state?.phase !== 'up') throw new LabStateError(`the lab ${prefix}* is not up`);
  const profile = labProfile(state.profile);
  if (profile.calibrate === false)
    throw new LabInputError(`lab profile ${profile.name} is not calibrated (its delays are as set)`);
  const unknown = (opts.paths ?? []).filter((id) => !profile.paths.some((p) => p.id === id));
  if (unknown.length > 0 || opts.paths?.length === 0)
    throw new LabInputError(
      `lab profile ${profile.name} has no path ${unknown.join(', ') || '(none named)'}: its paths are ${profile.paths.map((p) => p.id).join(', ')}`,
    );
  // Calibration moves the next hop to measure the tgw paths and puts the default back: refuse
  // while a run has the routes pointed elsewhere rather than undo its swap under it.
  const before = await labStatus({ prefix, stateDir: dir });
  const swapped = profile.defaultNextHop
    ? Object.entries(before.routes).filter(([, v]) => v !== `labNextHop:${profile.defaultNextHop}`)
    : [];
  if (swapped.length > 0)
    throw new LabStateError(
      `routes are not at the default next hop (${swapped.map(([k, v]) => `${k} → ${v}`).join('; ')}): is a run using the lab?`,
    );
  const b = new LabBuilder(prefix, dir, profile, state, opts.onProgress ?? (() => {}));
  const meter = await connectMeter(tcpRttTool, { cpu: labCpu() });
  await calibrate(
    b,
    meter,
    state.delay.mechanism === 'nfqueue' ? await buildHelper('nfq-delay') : undefined,
    opts.paths,
  );
  return labStatus({ prefix, stateDir: dir });
}

/**
 * Add `deltaUs` of round trip to one path's emulated delay on a lab that is up (negative takes
 * it away; never below 0), as a real path's latency would change under a running schedule: the
 * pipeline is not told. Returns the path's new added round trip in µs. With the NFQUEUE helper
 * the helpers are restarted with the new delays (a few ms without delay for packets in flight).
 */
export async function labShiftDelay(opts: LabOptions, pathId: string, deltaUs: number): Promise<number> {
  const { prefix, dir } = labLocation(opts);
  const state = readState(dir);
  if (state?.phase !== 'up') throw new LabStateError(`the lab ${prefix}* is not up`);
  const profile = labProfile(state.profile);
  if (!profile.paths.some((p) => p.id === pathId))
    throw new LabInputError(`no path ${JSON.stringify(pathId)} in lab profile ${profile.name}`);
  if (!Number.isFinite(deltaUs)) throw new LabInputError(`deltaUs must be a finite number, got ${deltaUs}`);
  const b = new LabBuilder(prefix, dir, profile, state, () => {});
  const added = Math.max(0, (state.delay.addedRttUs[pathId] ?? 0) + deltaUs);
  state.delay.addedRttUs[pathId] = added;
  b.save();
  await applyDelays(b, state.delay.mechanism === 'nfqueue' ? await buildHelper('nfq-delay') : undefined);
  return added;
}

/**
 * Remove everything the lab made: processes it started (by recorded PID, and any process
 * still inside a lab namespace), then the namespaces (which takes their veths, routes,
 * qdiscs and iptables rules with them). Safe to call when nothing exists.
 */
export async function labDown(opts: LabOptions = {}): Promise<{ removed: string[] }> {
  const { prefix, dir } = labLocation(opts);
  // A state this version cannot read still names a lab: its namespaces go by prefix, its
  // processes with them, and the state file after.
  let state: LabState | undefined;
  let unreadable = false;
  try {
    state = readState(dir);
  } catch (e) {
    if (!(e instanceof LabStateError)) throw e;
    unreadable = true;
  }
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
  if (state || unreadable) {
    removeState(dir);
    // The namespaces are gone, and their routes with them: no route is left to put back.
    rmSync(journalPath(dir), { force: true });
    // The proxies' configs (lab/proxies.ts) went with their processes.
    // So did the delay helpers, whose logs of applied delays go with them (lab/applied-delay.ts).
    for (const f of readdirSync(dir))
      if (/^haproxy-.*\.cfg$|^applied-.*\.bin(\.1)?$/.test(f)) rmSync(join(dir, f), { force: true });
    removed.push(`state ${statePath(dir)}`);
  }
  return { removed };
}
