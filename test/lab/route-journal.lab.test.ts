/**
 * The route journal, locally: a run killed with SIGKILL in the middle of a route swap leaves the lab
 * route changed; the host-wide journal next to the lab state lets the next run (or `pathbench
 * lab up/status`) put it back before anything records an original. Real network namespace and
 * `ip route` (needs root; run under the lab flock), a real child process killed with SIGKILL.
 * Its own namespace and state directory; afterAll proves nothing is left.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { labAvailable } from '../../lab/availability.js';
import { LabRoutes, readLabJournal } from '../../lab/lab-routes.js';
import { listNamespaces } from '../../lab/sys.js';

const sh = promisify(execFile);
const PREFIX = 'pb-rj-';
const NS = `${PREFIX}router`;
const stateDir = mkdtempSync(join(tmpdir(), 'pb-rj-state-'));
const OPTS = { prefix: PREFIX, stateDir };
const ROUTE = { region: 'lab', routeTableId: NS, destination: '10.50.0.0/16' };
const ip = (...a: string[]) => sh('ip', ['-n', NS, ...a]);

let available = false;

beforeAll(async () => {
  available = (await labAvailable()).ok;
  if (!available) return;
  await sh('ip', ['netns', 'add', NS]);
  for (const [dev, addr] of [
    ['d0', '10.99.1.1/24'],
    ['d1', '10.99.2.1/24'],
  ]) {
    // A veth pair with both ends in the namespace (this kernel has no dummy driver).
    await ip('link', 'add', dev, 'type', 'veth', 'peer', 'name', `${dev}p`);
    await ip('addr', 'add', addr, 'dev', dev);
    await ip('link', 'set', dev, 'up');
    await ip('link', 'set', `${dev}p`, 'up');
  }
  // A lab state as lab up writes it (the fixture), its routers this namespace's next hops:
  // the routes read nothing else of it.
  const state = JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/lab/state.json'), 'utf8'));
  writeFileSync(
    join(stateDir, 'state.json'),
    JSON.stringify({ ...state, processes: [], routers: { [NS]: { peering: '10.99.1.2', tgw: '10.99.2.2' } } }),
  );
});

beforeEach(async () => {
  if (!available) return;
  await ip('route', 'replace', ROUTE.destination, 'via', '10.99.1.2');
  rmSync(join(stateDir, 'route-journal.json'), { force: true });
});

afterAll(async () => {
  if (available) await sh('ip', ['netns', 'del', NS]).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  if (available) expect((await listNamespaces()).filter((n) => n.startsWith(PREFIX))).toEqual([]);
});

/** A process that swaps the route through LabRoutes and is killed with SIGKILL right after. */
async function killedMidRun(): Promise<number> {
  const script = `
    import { LabRoutes } from ${JSON.stringify(join(process.cwd(), 'lab/lab-routes.ts'))};
    const routes = new LabRoutes(${JSON.stringify(OPTS)});
    await routes.point(${JSON.stringify(ROUTE)}, 'labNextHop:tgw');
    process.kill(process.pid, 'SIGKILL');
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, s) => resolve(s)));
  expect(signal).toBe('SIGKILL');
  return child.pid!;
}

describe.runIf(process.getuid?.() === 0)('lab route journal', () => {
  it('after kill -9 mid-run, the next run puts the route back before reading originals, and says so', async () => {
    const pid = await killedMidRun();
    const routes = new LabRoutes(OPTS);
    // Left swapped by the killed run, and journaled with its original.
    expect(await routes.read(ROUTE)).toBe('labNextHop:tgw');
    expect(readLabJournal(stateDir)).toMatchObject([{ routeTableId: NS, original: 'labNextHop:peering', pid }]);
    const said = await routes.recoverLeftovers();
    expect(said).toEqual([
      `${NS} 10.50.0.0/16: put back via labNextHop:peering (left by process ${pid}, which is gone)`,
    ]);
    expect(await routes.read(ROUTE)).toBe('labNextHop:peering');
    expect((await ip('route', 'show', ROUTE.destination)).stdout).toContain('via 10.99.1.2');
    expect(readLabJournal(stateDir)).toEqual([]);
    // The next run now records the real original.
    expect(await routes.recoverLeftovers()).toEqual([]);
  });

  it("leaves a live run's changes alone, and forgets a route once its original is back", async () => {
    const routes = new LabRoutes(OPTS);
    await routes.point(ROUTE, 'labNextHop:tgw');
    expect(await routes.recoverLeftovers()).toEqual([]);
    expect(await routes.read(ROUTE)).toBe('labNextHop:tgw');
    expect(readLabJournal(stateDir)).toHaveLength(1);
    await routes.point(ROUTE, 'labNextHop:peering');
    expect(readLabJournal(stateDir)).toEqual([]);
  });

  it('puts back originals of every form the lab reports: blackhole, a foreign gateway, none', async () => {
    const routes = new LabRoutes(OPTS);
    for (const [setup, original] of [
      [['route', 'replace', 'blackhole', ROUTE.destination], 'blackhole'],
      [['route', 'replace', ROUTE.destination, 'via', '10.99.2.7'], 'via:10.99.2.7'],
      [['route', 'del', ROUTE.destination], 'none'],
    ] as [string[], string][]) {
      await ip(...setup);
      expect(await routes.read(ROUTE)).toBe(original);
      await routes.point(ROUTE, 'labNextHop:tgw');
      await routes.point(ROUTE, original);
      expect(await routes.read(ROUTE)).toBe(original);
      expect(readLabJournal(stateDir)).toEqual([]);
    }
  });
});
