/**
 * The ICMP ping probe in the lab (needs root): plans/lab-ping.json pings seed 000's paths A–E and
 * the NLB-direct C-NLB through the real ASL, agent (iputils ping in the client namespace) and
 * adapters, beside a TCP connect of the same paths. Where ICMP passes, ping's p50 is the path's
 * round trip: within max(3 %, 30 µs) of the tcp-connect p50 of the same path and of what the lab
 * applied. Through PrivateLink (E) and the NLB (C-NLB) no echo comes back, as seed 000 found
 * (ping 100 % loss): the path reports loss 1, not a failure, and its TCP connect still measures.
 * Own prefix; nothing left afterwards.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { silentLogger } from '../../functions/log.js';
import { createLabPorts } from '../../lab/index.js';
import { labAvailable, labDown, labUp } from '../../lab/lab.js';
import { listNamespaces } from '../../lab/sys.js';
import { runLocal } from '../../local/local-driver.js';
import { ROOT } from '../helpers/repo.js';

const P = 'pb-pg-';
const OPTS = { prefix: P };
let dir: string;

beforeAll(async () => {
  const a = await labAvailable();
  expect(a, a.reason).toEqual({ ok: true });
  await labDown(OPTS);
  await labUp({ ...OPTS, delay: 'nfqueue' });
  dir = await mkdtemp(join(tmpdir(), 'pathbench-lab-ping-'));
}, 300_000);

afterAll(async () => {
  await labDown(OPTS);
  await rm(dir, { recursive: true, force: true });
  expect((await listNamespaces()).filter((n) => n.startsWith(P))).toEqual([]);
});

async function labPlan() {
  const plan = JSON.parse(await readFile(join(ROOT, 'plans', 'lab-ping.json'), 'utf8'));
  plan.defaults.client.instanceId = `${P}client`;
  for (const p of plan.paths) for (const r of p.routes ?? []) r.routeTableId = r.routeTableId.replace(/^pb-/, P);
  return plan;
}

describe('the ping probe in the lab', () => {
  it('measures each path’s round trip where ICMP passes, and 100 % loss through PrivateLink and the NLB', {
    timeout: 240_000,
  }, async () => {
    const ports = await createLabPorts(OPTS);
    const r = await runLocal({
      plan: await labPlan(),
      dataDir: dir,
      log: silentLogger,
      fleet: ports.fleet,
      routes: ports.routes,
      wrap: ports.wrap,
      labTruth: ports.truth,
      waitTimeOverrides: { WaitForProbe: 250 },
    });
    expect(r.execution.status).toBe('SUCCEEDED');
    const s = r.summary as Summary;
    const rows = s.paths.map((p) => {
      const ping = p.results.find((x) => x.probe === 'ping');
      const tcp = p.results.find((x) => x.probe === 'tcp-connect');
      return { id: p.id, status: p.status, ping, tcp, achieved: p.lab?.achievedRttMs };
    });
    console.log('path   ping p50  loss   tcp p50  applied');
    for (const x of rows)
      console.log(
        `${x.id.padEnd(6)} ${String(x.ping?.p50?.toFixed(3) ?? '—').padStart(8)}  ${String(x.ping?.loss ?? '—').padStart(4)}  ${x.tcp?.p50?.toFixed(3).padStart(8)}  ${x.achieved?.toFixed(3)}`,
      );
    expect(rows.map((x) => x.id)).toEqual(['A', 'B', 'C', 'C-NLB', 'D', 'E']);
    for (const x of rows) {
      expect(x.status, x.id).toBe('succeeded');
      expect(x.tcp?.p50, `${x.id} tcp-connect`).toBeGreaterThan(0);
      if (x.id === 'E' || x.id === 'C-NLB') {
        // no echo crosses an NLB or PrivateLink: every request lost, none measured
        expect(x.ping?.loss, x.id).toBe(1);
        expect(x.ping?.p50 ?? null, x.id).toBeNull();
        continue;
      }
      expect(x.ping?.loss, x.id).toBe(0);
      const p50 = x.ping?.p50 as number;
      const tcp = x.tcp?.p50 as number;
      const near = (a: number, b: number) => Math.abs(a - b) <= Math.max(0.03 * b, 0.03);
      expect(near(p50, tcp), `${x.id}: ping ${p50} ms, tcp-connect ${tcp} ms`).toBe(true);
      if (x.achieved !== undefined)
        expect(near(p50, x.achieved), `${x.id}: ping ${p50} ms, applied ${x.achieved} ms`).toBe(true);
    }
  });
});
