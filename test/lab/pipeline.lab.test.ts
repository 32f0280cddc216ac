/**
 * The pipeline on the lab (needs root): the real ASL, agent and adapters against namespaces
 * with real route swaps and a real token bucket. Covers what only a whole run can show: the
 * credit on/off contrast (reboot before each path vs back to back) and routes restored after a
 * path fails mid-run. Own prefix; proves in afterAll that nothing it made is left.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentReport } from '../../core/agent-report.js';
import { keys } from '../../core/keys.js';
import { nicTrialOf } from '../../core/nic-allowance.js';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import type { Summary } from '../../core/run-summary.js';
import { silentLogger } from '../../functions/log.js';
import { createLabPorts } from '../../lab/index.js';
import { labAvailable, labDown, labUp } from '../../lab/lab.js';
import { seed000Profile } from '../../lab/profiles/seed-000-profile.js';
import { listNamespaces } from '../../lab/sys.js';
import { DirStore } from '../../local/dir-store.js';
import { runLocal } from '../../local/local-driver.js';
import { sh } from '../helpers/sh.js';

const P = 'pb-tp-';
const OPTS = { prefix: P };
const profile = seed000Profile();
const ip = (id: string) => profile.paths.find((p) => p.id === id)!.targetIp;
let dir: string;

beforeAll(async () => {
  const a = await labAvailable();
  expect(a, a.reason).toEqual({ ok: true });
  await labDown(OPTS);
  // Delay accuracy is lab.test.ts's business; these runs need the topology and the bucket.
  await labUp({ ...OPTS, calibrate: false });
  dir = await mkdtemp(join(tmpdir(), 'pathbench-lab-run-'));
});

afterAll(async () => {
  await labDown(OPTS);
  await rm(dir, { recursive: true, force: true });
  expect((await listNamespaces()).filter((n) => n.startsWith(P))).toEqual([]);
});

/**
 * Two paths, iperf3 only, at 0.5 s intervals: 4 s each. The lab bucket (4 Gbit above the
 * 0.2 Gbit/s base rate) lasts ~5 s at the peak rate, so a 4 s run fits in a full bucket.
 * Back to back, path A leaves ~1.1 Gbit of it, and B starts after the 3 s credit wait plus
 * A's last poll and collect (0–2 s more): 1.7–2.5 Gbit, ~2.4–3.5 s at the peak. B therefore
 * runs 8 s back to back, so its cliff falls well inside the trial wherever in that range the gap
 * ends (with 4 s it fell at interval 6 of 8 once, two low intervals where the rule needs three).
 */
function creditPlan(reboot: boolean, first: Record<string, unknown>[] = []) {
  const iperf = (durationSeconds: number) => ({
    kind: 'iperf3',
    mode: 'tcp',
    durationSeconds,
    intervalSeconds: 0.5,
    port: profile.ports.iperf3,
  });
  return {
    name: `lab-credits-${reboot ? 'reboot' : 'no-reboot'}`,
    defaults: {
      client: { instanceId: `${P}client`, region: 'lab' },
      reboot,
      creditWaitSeconds: 3,
      probes: [...first, iperf(4)],
    },
    paths: [
      { id: 'A', target: { host: ip('A'), port: profile.ports.tcp } },
      { id: 'B', target: { host: ip('B'), port: profile.ports.tcp }, ...(reboot ? {} : { probes: [iperf(8)] }) },
    ],
  };
}

async function run(plan: unknown, runId: string, over: { wrap?: (argv: string[]) => string[] } = {}) {
  const ports = await createLabPorts(OPTS);
  return runLocal({
    plan,
    dataDir: dir,
    runId,
    log: silentLogger,
    fleet: ports.fleet,
    routes: ports.routes,
    wrap: over.wrap ?? ports.wrap,
  });
}

const throughput = (s: Summary, id: string) =>
  s.paths.find((p) => p.id === id)?.results.find((r) => r.metric === 'throughput_bps');

/**
 * The client's token bucket as the test reads it itself (`tc -s -j qdisc`): overlimits plus
 * drops of the root tbf on the client's eth0, the lab's stand-in for ENA's bw_out counter.
 */
function bucketShaped(): number {
  const q = (
    JSON.parse(sh('tc', '-n', `${P}client`, '-s', '-j', 'qdisc', 'show', 'dev', 'eth0')) as Record<string, unknown>[]
  ).find((x) => x.kind === 'tbf' && x.root === true);
  expect(q, 'the lab client has its token bucket').toBeDefined();
  return Number(q?.overlimits) + Number(q?.drops);
}

/**
 * Each probe's trials of a path as the agent read the NIC around them (the sidecars' `nic`), the
 * trials the collect step recorded as throttled, and the agent's report of where it read them.
 */
async function nicOf(runId: string, pathId: string) {
  const store = new DirStore(dir);
  const m = (await readManifest(store, runId)) as RunManifest;
  const path = m.paths.find((p) => p.id === pathId)!;
  const agent = JSON.parse(
    (await store.getText(`${keys.clientRawPrefix(pathId, runId, `${P}client`)}agent.json`)) ?? '{}',
  ) as AgentReport;
  const probes = [];
  for (const prov of path.probes) {
    const trials = [];
    for (const key of prov.rawKeys) {
      const nic = nicTrialOf((await store.getText(key.replace(/\.[a-z]+(\.gz)?$/, '.meta.json'))) ?? undefined);
      trials.push({ key, nic, grew: nic ? (nic.after.bw_out ?? 0) - (nic.before.bw_out ?? 0) : undefined });
    }
    probes.push({ probe: prov.probe, kind: prov.kind, trials, throttled: prov.throttled });
  }
  return { agent: agent.nic, probes, notes: path.notes };
}

/** A result's flags other than sample-size ones (a handful of iperf3 intervals always has a thin p99 and p99.9, and under 6 a few-samples p50). */
const notThin = (flags: string[] | undefined) =>
  flags?.filter((f) => !f.startsWith('thin-tail:') && !f.startsWith('few-samples:'));

describe('burst credits through the pipeline', () => {
  it('back to back (reboot: false) the second path hits the cliff and is flagged', async () => {
    const shapedBefore = bucketShaped();
    const r = await run(creditPlan(false), 'credits-off');
    const shapedOverRun = bucketShaped() - shapedBefore;
    expect(r.execution.status).toBe('SUCCEEDED');
    const s = r.summary as Summary;
    // A ran in a full bucket: shaped at the peak rate (throttled), not out of credits
    expect(notThin(throughput(s, 'A')?.flags)).toEqual(['throttled:bw_out']);
    const b = throughput(s, 'B');
    expect(b?.flags.join(' ')).toMatch(/^credit-exhausted\(trial 1 @ interval \d+:/);
    // the cliff is the bucket running dry: from the peak rate down to the tbf rate
    const [, before, after] = /: ([\d.]+)G→([\d.]+)G\)/.exec(b?.flags[0] ?? '') ?? [];
    expect(Number(before)).toBeGreaterThan(3 * Number(after));
    // the unflagged intervals are the ones before the cliff, at the peak rate
    expect(b?.unflagged?.p50).toBeGreaterThan(0.8e9);
    // The NIC's own counters (here the bucket's): the agent read them around each iperf3 trial; every
    // trial the bucket shaped is throttled:bw_out, by the growth the agent read, and what it read is
    // within what the bucket counted over the whole run by the test's own reading.
    let agentTotal = 0;
    for (const id of ['A', 'B']) {
      const nic = await nicOf('credits-off', id);
      expect(nic.agent, id).toEqual({ source: 'tbf', dev: 'eth0' });
      const [iperf] = nic.probes;
      expect(iperf.trials.map((t) => t.nic?.source)).toEqual(['tbf']);
      const grew = iperf.trials[0].grew as number;
      console.log(`credits-off ${id}: the bucket shaped ${grew} times during its iperf3 trial`);
      expect(grew, `${id}: an iperf3 trial at the peak rate is shaped`).toBeGreaterThan(0);
      expect(iperf.throttled).toEqual([{ trial: 1, source: 'tbf', dev: 'eth0', grew: { bw_out: grew } }]);
      expect(throughput(s, id)?.flags, id).toContain('throttled:bw_out');
      expect(
        nic.notes.some((n) => n.startsWith(`${iperf.probe} trial 1: the NIC throttled it`)),
        id,
      ).toBe(true);
      agentTotal += grew;
    }
    console.log(
      `credits-off: the agent read ${agentTotal} over its trials; the test read ${shapedOverRun} over the run`,
    );
    expect(agentTotal).toBeLessThanOrEqual(shapedOverRun);
  });

  it('with a reboot before each path (reboot: true) no path is flagged for credits', async () => {
    // A short TCP connect series first (a full bucket, a handful of packets): not shaped.
    const r = await run(creditPlan(true, [{ kind: 'tcp-connect', count: 20, intervalMs: 10 }]), 'credits-on');
    expect(r.execution.status).toBe('SUCCEEDED');
    const s = r.summary as Summary;
    for (const id of ['A', 'B']) {
      // The bucket shapes iperf3 at its peak rate (the instance's burst allowance): throttled, not out of credits.
      expect(notThin(throughput(s, id)?.flags), id).toEqual(['throttled:bw_out']);
      const nic = await nicOf('credits-on', id);
      const connect = nic.probes.find((p) => p.kind === 'tcp-connect')!;
      expect(
        connect.trials.map((t) => [t.nic?.source, t.grew]),
        id,
      ).toEqual([['tbf', 0]]);
      expect(connect.throttled, id).toBeUndefined();
      const connectResult = s.paths.find((p) => p.id === id)?.results.find((x) => x.probe === connect.probe);
      expect(
        connectResult?.flags.filter((f) => f.startsWith('throttled:')),
        id,
      ).toEqual([]);
      expect(nic.probes.find((p) => p.kind === 'iperf3')?.throttled?.[0]?.grew.bw_out, id).toBeGreaterThan(0);
      expect(throughput(s, id)?.flags, id).toContain('thin-tail:p99');
      expect(throughput(s, id)?.unflagged, id).toBeUndefined();
    }
    // the reboot really ran: stop, stopped, start, ready for each path
    expect(s.paths.map((p) => p.steps[0]?.name)).toEqual(['Reboot', 'Reboot']);
  });
});

describe('routes after a failing path', () => {
  it('a path that swapped routes and then failed has them restored at the end of the run', async () => {
    const ports = await createLabPorts(OPTS);
    const tokyo = { region: 'lab', routeTableId: `${P}router`, destination: '10.1.0.0/16' };
    const osaka = { region: 'lab', routeTableId: `${P}osaka`, destination: '10.0.0.0/16' };
    const before = [await ports.routes.read(tokyo), await ports.routes.read(osaka)];
    expect(before).toEqual(['labNextHop:peering', 'labNextHop:peering']);
    const plan = {
      name: 'lab-route-restore',
      defaults: {
        client: { instanceId: `${P}client`, region: 'lab' },
        probes: [{ kind: 'tcp-connect', count: 20, intervalMs: 10 }],
      },
      paths: [
        {
          id: 'D',
          target: { host: ip('D'), port: profile.ports.tcp },
          routes: [
            { ...tokyo, via: { labNextHop: 'tgw' } },
            { ...osaka, via: { labNextHop: 'tgw' } },
          ],
        },
      ],
    };
    // The agent "crashes" (exit 1) after the swap: the path fails at PollProbe.
    const r = await run(plan, 'route-restore', { wrap: () => ['false'] });
    expect(r.execution.status).toBe('SUCCEEDED');
    const d = (r.summary as Summary).paths[0];
    expect(d).toMatchObject({ status: 'failed', failedStep: 'PollProbe' });
    expect([await ports.routes.read(tokyo), await ports.routes.read(osaka)]).toEqual(before);
    const m = (await readManifest(new DirStore(dir), 'route-restore')) as RunManifest;
    expect(m.restore).toMatchObject({ status: 'ok', errors: [] });
    expect(m.routeChanges.map((c) => [c.original, c.current])).toEqual([
      ['labNextHop:peering', 'labNextHop:peering'],
      ['labNextHop:peering', 'labNextHop:peering'],
    ]);
  });
});
