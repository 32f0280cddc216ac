/**
 * The lab end to end (needs root): up/status/idempotent up/repair/down, delay accuracy per path
 * (the probe against what the delay helper applied meanwhile, not against the fixed target),
 * route swap, and the burst-credit "reboot". Uses its own prefix so it never touches a lab
 * someone else built, and proves in afterAll that nothing it made is left.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  labAvailable,
  labCalibrate,
  labClientWrap,
  labDown,
  labShiftDelay,
  labStatus,
  labUp,
  tcpRttTool,
} from '../../lab/lab.js';
import { LabFleet } from '../../lab/lab-fleet.js';
import { LabRoutes } from '../../lab/lab-routes.js';
import { defaultStateDir, readState } from '../../lab/lab-state.js';
import { labTolerance, pathTruth } from '../../lab/lab-truth.js';
import { type ConnectMeter, connectMeter, robustP50 } from '../../lab/measure.js';
import { seed000Profile } from '../../lab/profiles/seed-000-profile.js';
import { isAlive, type LabProcess, labCpu, listNamespaces } from '../../lab/sys.js';

const execFileP = promisify(execFile);
const PREFIX = 'pb-tl-';
const OPTS = { prefix: PREFIX };
const CLIENT = { instanceId: `${PREFIX}client`, region: 'lab' };
const profile = seed000Profile();
const target = (id: string) => profile.paths.find((p) => p.id === id)!;

let meter: ConnectMeter;
/** Every process the lab recorded at any point of the suite (checked dead at the end). */
const seen = new Map<number, LabProcess>();

function remember(): void {
  for (const p of readState(defaultStateDir(PREFIX))?.processes ?? []) seen.set(p.pid, p);
}

/**
 * Connect p50 as a run reports it (kernel tcpi_rtt via the precise helper): the median of five
 * short rounds' p50s, so a neighbour's burst of load spoils a round, not the figure.
 * Throws when any connect failed.
 */
async function p50(host: string): Promise<number> {
  return (await robustP50(meter, CLIENT.instanceId, host, profile.ports.tcp, { rounds: 5, count: 40 })).p50;
}

/**
 * p50 for a band check: re-measured once when the first figure is out of its band, because a
 * load burst on a shared 2-core machine can outlast one measurement. When the second figure is
 * out too, the lab is re-calibrated (`lab calibrate`) and measured a third time: on this VM the
 * bare topology's cost can move ~0.2 ms for minutes after calibration (every path short or
 * long by the same amount, seen in CI), which is what `lab calibrate` is for; a lab whose
 * calibration cannot reach the band fails all three. Returns every figure taken.
 */
async function p50InBand(host: string, rttMs: number): Promise<{ last: number; all: number[] }> {
  const all = [await p50(host)];
  const off = () => Math.abs(all[all.length - 1] - rttMs) > band(rttMs);
  if (off()) all.push(await p50(host));
  if (off()) {
    console.log(`${host}: ${all.join(', ')} ms against ${rttMs} ms; re-calibrating the lab`);
    await labCalibrate(OPTS);
    all.push(await p50(host));
  }
  return { last: all[all.length - 1], all };
}

/**
 * Connect p50 and the round trip the lab achieved meanwhile by its delay helper's log
 * (lab/lab-truth.ts): load moves both, so they agree unless the probe is wrong.
 */
async function p50WithTruth(id: string): Promise<{ p50: number; achieved: number; target: number }> {
  const from = Date.now();
  const measured = await p50(target(id).targetIp);
  const dir = defaultStateDir(PREFIX);
  const truth = pathTruth(dir, profile, readState(dir)!.delay, target(id).targetIp, from, Date.now());
  expect(truth, `no packets of path ${id} in the helper's log`).toBeDefined();
  return { p50: measured, achieved: truth!.achievedRttMs, target: truth!.targetRttMs };
}

/** Band from the brief: ±5 %, or ±0.1 ms below 2 ms. */
function band(rttMs: number): number {
  return rttMs < 2 ? 0.1 : 0.05 * rttMs;
}

/** Per-second sender throughput (bits/s) of an iperf3 run from the client to path A. */
async function iperf3Intervals(seconds: number): Promise<number[]> {
  const argv = labClientWrap(CLIENT)([
    'iperf3',
    '-c',
    target('A').targetIp,
    '-p',
    String(profile.ports.iperf3),
    '-t',
    String(seconds),
    '-J',
  ]);
  const { stdout } = await execFileP(argv[0], argv.slice(1), { timeout: (seconds + 20) * 1000, maxBuffer: 8 << 20 });
  const j = JSON.parse(stdout) as { intervals: { sum: { bits_per_second: number } }[] };
  return j.intervals.map((i) => i.sum.bits_per_second);
}

async function leftovers(): Promise<string[]> {
  const left: string[] = [];
  for (const ns of await listNamespaces()) if (ns.startsWith(PREFIX)) left.push(`netns ${ns}`);
  for (const p of seen.values()) if (isAlive(p)) left.push(`process ${p.pid} (${p.role})`);
  if (existsSync(`${defaultStateDir(PREFIX)}/state.json`)) left.push('state file');
  return left;
}

beforeAll(async () => {
  const a = await labAvailable();
  // The lab suite is only run where it can work (root); say why loudly instead of skipping.
  expect(a, a.reason).toEqual({ ok: true });
  meter = await connectMeter(tcpRttTool, { cpu: labCpu() });
  await labDown(OPTS);
});

afterAll(async () => {
  remember();
  await labDown(OPTS);
  expect(await leftovers()).toEqual([]);
});

describe('lab lifecycle', () => {
  it('up builds every namespace, server and delay helper; status reports them', async () => {
    const s = await labUp({ ...OPTS, profile: 'seed-000' });
    remember();
    expect(s.healthy, s.problems.join('; ')).toBe(true);
    expect(s.namespaces.map((n) => n.name).sort()).toEqual(
      ['a', 'b', 'client', 'e', 'osaka', 'peering', 'router', 'tgw'].map((r) => `${PREFIX}${r}`).sort(),
    );
    expect(s.namespaces.every((n) => n.exists)).toBe(true);
    expect(['netem', 'nfqueue']).toContain(s.delay?.mechanism);
    // Calibrated with the pipeline's own clock (gcc is on every machine the lab runs on).
    expect(s.delay?.clock, s.notes.join('; ')).toBe('kernel-tcpi_rtt');
    expect(meter.clock).toBe('kernel-tcpi_rtt');
    if (s.delay?.mechanism === 'nfqueue')
      expect(s.processes.filter((p) => p.role.startsWith('delay-'))).toHaveLength(3);
    expect(s.processes.filter((p) => p.role === 'iperf3')).toHaveLength(4);
    expect(s.routes[`${PREFIX}router 10.1.0.0/16`]).toBe('labNextHop:peering');
    expect(s.routes[`${PREFIX}osaka 10.0.0.0/16`]).toBe('labNextHop:peering');
    expect((await labStatus(OPTS)).healthy).toBe(true);
    // Nothing of the lab in the root namespace.
    const { stdout } = await execFileP('ip', ['-o', 'addr', 'show']);
    expect(stdout).not.toMatch(/10\.255\.|10\.0\.1\.10\//);
  });

  it('a second up reuses the healthy lab (same PIDs, no rebuild)', async () => {
    const before = (await labStatus(OPTS)).processes.map((p) => p.pid).sort();
    const t0 = Date.now();
    const s = await labUp(OPTS);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(s.processes.map((p) => p.pid).sort()).toEqual(before);
  });

  it('PrivateLink-like path E passes TCP but no ICMP echo', async () => {
    const ping = (host: string) =>
      execFileP('ip', ['netns', 'exec', CLIENT.instanceId, 'ping', '-c', '2', '-i', '0.2', '-W', '1', host]);
    await expect(ping(target('E').targetIp)).rejects.toThrow();
    await expect(ping(target('A').targetIp)).resolves.toBeDefined();
  });
});

describe('delay accuracy (TCP-connect p50 from the client)', () => {
  for (const id of ['A', 'B', 'C', 'E']) {
    it(`path ${id}: the probe reads the round trip the lab applied (target ${target(id).rttMs} ms)`, async () => {
      const m = await p50WithTruth(id);
      // A lab that strays from its target is the lab's error, said here and noted in a run's summary.
      const stray = Math.abs(m.achieved - m.target) > labTolerance(m.target) ? ' (lab error)' : '';
      console.log(`path ${id}: probe ${m.p50} ms, lab achieved ${m.achieved} ms, target ${m.target} ms${stray}`);
      expect(Math.abs(m.p50 - m.achieved), `probe ${m.p50} ms, lab ${m.achieved} ms`).toBeLessThanOrEqual(
        Math.max(0.03 * m.achieved, 0.02),
      );
    });
  }
});

describe('route swap', () => {
  const routes = new LabRoutes(OPTS);
  const tokyo = { region: 'lab', routeTableId: `${PREFIX}router`, destination: '10.1.0.0/16' };
  const osaka = { region: 'lab', routeTableId: `${PREFIX}osaka`, destination: '10.0.0.0/16' };

  it('pointing both regions at tgw moves Osaka from the C to the D round trip; restore returns', async () => {
    expect(await routes.read(tokyo)).toBe('labNextHop:peering');
    const viaPeering = await p50(target('C').targetIp);
    try {
      await routes.point(tokyo, 'labNextHop:tgw');
      await routes.point(osaka, 'labNextHop:tgw');
      expect(await routes.read(tokyo)).toBe('labNextHop:tgw');
      expect(await routes.verify(tokyo, 'labNextHop:tgw')).toBe(true);
      expect(await routes.verify(tokyo, 'labNextHop:peering')).toBe(false);
      const d = await p50InBand(target('D').targetIp, target('D').rttMs);
      const viaTgw = d.last;
      expect(Math.abs(viaTgw - target('D').rttMs), `measured ${d.all.join(', ')} ms`).toBeLessThanOrEqual(
        band(target('D').rttMs),
      );
      const expected = target('D').rttMs - target('C').rttMs;
      expect(Math.abs(viaTgw - viaPeering - expected), `D−C ${viaTgw - viaPeering} ms`).toBeLessThan(0.5);
    } finally {
      await routes.point(tokyo, 'labNextHop:peering');
      await routes.point(osaka, 'labNextHop:peering');
    }
    expect(await routes.read(osaka)).toBe('labNextHop:peering');
    const restored = await p50(target('C').targetIp);
    expect(Math.abs(restored - viaPeering)).toBeLessThan(0.3);
  });

  it('remove deletes the route and read says none; bad targets are clear errors', async () => {
    try {
      await routes.remove(tokyo);
      expect(await routes.read(tokyo)).toBe('none');
      await routes.point(tokyo, 'labNextHop:peering'); // creates it when missing
      expect(await routes.read(tokyo)).toBe('labNextHop:peering');
    } finally {
      await routes.point(tokyo, 'labNextHop:peering');
    }
    await expect(routes.point(tokyo, 'transitGatewayId:tgw-1')).rejects.toThrow(/labNextHop/);
    await expect(routes.point(tokyo, 'labNextHop:nope')).rejects.toThrow(/unknown lab next hop "nope"/);
    await expect(routes.read({ ...tokyo, routeTableId: 'pb-elsewhere' })).rejects.toThrow(/not a lab router/);
  });
});

describe('lab calibrate', () => {
  const routes = new LabRoutes(OPTS);
  const tokyo = { region: 'lab', routeTableId: `${PREFIX}router`, destination: '10.1.0.0/16' };

  it('brings a drifted path back into its band, and refuses while a route is swapped', async () => {
    // A drift as the VM host makes one: 0.4 ms more on path A than the calibration set.
    await labShiftDelay(OPTS, 'A', 400);
    expect(await p50(target('A').targetIp)).toBeGreaterThan(target('A').rttMs + band(target('A').rttMs));
    try {
      await routes.point(tokyo, 'labNextHop:tgw');
      await expect(labCalibrate(OPTS)).rejects.toThrow(/not at the default next hop.*tgw/);
    } finally {
      await routes.point(tokyo, 'labNextHop:peering');
    }
    await expect(labCalibrate({ ...OPTS, paths: ['Z'] })).rejects.toThrow(/has no path Z: its paths are A, B, C, D, E/);
    const before = (await labStatus(OPTS)).delay?.calibration;
    const lines: string[] = [];
    // the drifted path alone: measured and tuned in each round, the others kept as calibrated
    const s = await labCalibrate({ ...OPTS, paths: ['A'], onProgress: (l) => lines.push(l) });
    expect(
      lines.some((l) => /^calibration round 1 \(.*\): A [\d.]+\/0\.21( \(applied [\d.]+\))? ms$/.test(l)),
      lines.join('\n'),
    ).toBe(true);
    expect(s.healthy, s.problems.join('; ')).toBe(true);
    expect(s.delay?.calibration?.A?.targetMs).toBe(target('A').rttMs);
    expect(s.delay?.calibration?.B).toEqual(before?.B);
    const m = await p50InBand(target('A').targetIp, target('A').rttMs);
    expect(Math.abs(m.last - target('A').rttMs), `measured ${m.all.join(', ')} ms`).toBeLessThanOrEqual(
      band(target('A').rttMs),
    );
  });
});

describe('burst credits and LabFleet', () => {
  const fleet = new LabFleet({ ...OPTS, transitionMs: 800 });

  async function waitState(want: string): Promise<string[]> {
    const seenStates: string[] = [];
    for (let i = 0; i < 50; i++) {
      const d = await fleet.describe(CLIENT);
      seenStates.push(d.state);
      if (d.state === want) return seenStates;
      await sleep(100);
    }
    throw new Error(`client never reached ${want}: ${seenStates.join(',')}`);
  }

  it('drains the bucket, stays low, and a stop/start refills it', async () => {
    const peak = 1e9;
    const rate = 200e6;
    // Drain: high while the bucket lasts (~5 s at the peak rate; longer when a busy machine sends
    // below it: a run with 7 intervals once ended at 398 Mbit/s, still draining), then the
    // sustained rate.
    const first = await iperf3Intervals(9);
    expect(first[0]).toBeGreaterThan(0.7 * peak);
    expect(first[first.length - 1]).toBeLessThan(1.5 * rate);
    // Without a reboot the next run starts low.
    const again = await iperf3Intervals(2);
    expect(again[0]).toBeLessThan(0.5 * peak);

    await fleet.stop(CLIENT);
    expect((await fleet.describe(CLIENT)).commandReady).toBe(false);
    expect(await waitState('stopped')).toContain('stopping');
    await fleet.start(CLIENT);
    expect(await waitState('running')).toContain('pending');
    expect((await fleet.describe(CLIENT)).commandReady).toBe(true);

    const refilled = await iperf3Intervals(2);
    expect(refilled[0]).toBeGreaterThan(0.7 * peak);
  });
});

describe('repair and teardown', () => {
  it('up repairs a lab whose server died', async () => {
    const st = readState(defaultStateDir(PREFIX))!;
    const victim = st.processes.find((p) => p.role === 'iperf3')!;
    process.kill(victim.pid, 'SIGKILL');
    for (let i = 0; i < 40 && isAlive(victim); i++) await sleep(25);
    const broken = await labStatus(OPTS);
    expect(broken.healthy).toBe(false);
    expect(broken.problems.join(' ')).toMatch(/iperf3/);
    remember();
    const s = await labUp(OPTS);
    remember();
    expect(s.healthy, s.problems.join('; ')).toBe(true);
  });

  it('down removes everything, and a second down is a no-op', async () => {
    remember();
    const r = await labDown(OPTS);
    expect(r.removed.filter((x) => x.startsWith('netns'))).toHaveLength(8);
    expect(await leftovers()).toEqual([]);
    expect((await labDown(OPTS)).removed).toEqual([]);
    const s = await labStatus(OPTS);
    expect(s.up).toBe(false);
  });
});
