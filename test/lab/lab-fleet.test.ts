/**
 * LabFleet.network reads the lab state file only (no namespace, no root): the burst-credit token
 * bucket the lab configured is the client's baseline (rate) and peak (peakrate) bandwidth.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LabStateError } from '../../lab/lab-errors.js';
import { LabFleet } from '../../lab/lab-fleet.js';
import { type LabState, statePath } from '../../lab/lab-state.js';
import { seed000Profile } from '../../lab/profiles/seed-000-profile.js';

const fixture = join(import.meta.dirname, '../fixtures/lab/state.json');
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function stateDir(change?: (s: LabState) => void): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pb-lab-fleet-'));
  dirs.push(dir);
  if (!change) await copyFile(fixture, statePath(dir));
  else {
    const s = JSON.parse(await readFile(fixture, 'utf8')) as LabState;
    change(s);
    await writeFile(statePath(dir), JSON.stringify(s));
  }
  return dir;
}

describe('LabFleet.network', () => {
  const client = { instanceId: 'pb-client', region: 'lab' };

  it('reports the seed-000 token bucket: baseline 200 Mbit/s (rate), peak 1 Gbit/s (peakrate)', async () => {
    const fleet = new LabFleet({ prefix: 'pb-', stateDir: await stateDir() });
    expect(await fleet.network(client)).toEqual({
      instanceType: 'netns',
      azId: 'lab-az1',
      baselineBps: 200e6,
      peakBps: 1e9,
    });
    // The fixture holds what `lab up` records: the profile's credits.
    expect(seed000Profile().credits).toMatchObject({ rate: '200mbit', peakrate: '1gbit' });
  });

  it('follows whatever rates the lab state holds', async () => {
    const dir = await stateDir((s) => {
      s.credits = { ...s.credits, rate: '781mbit', peakrate: '12.5gbit' };
    });
    expect(await new LabFleet({ prefix: 'pb-', stateDir: dir }).network(client)).toMatchObject({
      baselineBps: 781e6,
      peakBps: 12.5e9,
    });
  });

  it('refuses an unknown client and a lab that is not up', async () => {
    const fleet = new LabFleet({ prefix: 'pb-', stateDir: await stateDir() });
    await expect(fleet.network({ instanceId: 'i-0abc', region: 'lab' })).rejects.toBeInstanceOf(LabStateError);
    const empty = await mkdtemp(join(tmpdir(), 'pb-lab-fleet-'));
    dirs.push(empty);
    await expect(new LabFleet({ prefix: 'pb-', stateDir: empty }).network(client)).rejects.toThrow(/not up/);
  });
});
