/** Helpers shared by the benches. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { nearestRank } from '../../core/stats.js';
import { labClientWrap } from '../../lab/index.js';

export interface Stat {
  n: number;
  p50: number;
  p99: number;
}

/** n, p50 and p99 (nearest rank, as the SQL) of a series; NaN when empty. */
export function stat(values: number[]): Stat {
  const s = [...values].sort((a, b) => a - b);
  return {
    n: s.length,
    p50: s.length ? (nearestRank(s, 500) as number) : Number.NaN,
    p99: s.length ? (nearestRank(s, 990) as number) : Number.NaN,
  };
}

/** A figure with one decimal for the bench tables; n/a when there is none (NaN). */
export const f1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');

/**
 * The argv prefix that runs a command inside a running lab's client namespace — the same wrap
 * the lab gives the pipeline's agent (pinned to the delay helpers' CPU: a cross-CPU wake-up adds
 * ~0.18 ms to every handshake here) — or why the lab rows are skipped.
 * PATHBENCH_LAB_PREFIX points at a lab built with another prefix than the default "pb-".
 */
export async function labClientPrefix(): Promise<{ prefix: string[]; lab: string } | { skipped: string }> {
  const lab = process.env.PATHBENCH_LAB_PREFIX ?? 'pb-';
  if (!/^pb-[a-z0-9-]{0,6}$/.test(lab)) return { skipped: `bad PATHBENCH_LAB_PREFIX ${JSON.stringify(lab)}` };
  const { stdout } = await promisify(execFile)('ip', ['netns', 'list']).catch(() => ({ stdout: '' }));
  const names = stdout.split('\n').map((l) => l.split(' ')[0]);
  if (!names.includes(`${lab}client`) || !names.includes(`${lab}a`)) {
    return { skipped: `lab not up: no ${lab}client/${lab}a namespaces; \`pathbench lab up\`` };
  }
  return { lab, prefix: labClientWrap({ instanceId: `${lab}client`, region: 'lab' })([]) };
}
