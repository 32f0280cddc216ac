/**
 * The agent's reader of the NIC's allowance counters (core/nic-allowance.ts): on EC2 `ethtool -S`
 * of the device the default route leaves by (ENA), else the root tbf of that device (the lab's
 * burst-credit bucket); none when neither has them. Runners take a reading before and after each
 * trial (`readNic`; no second reading when the first gave none) and keep both in the trial's
 * sidecar as `nic` (`nicTrial`).
 */
import { z } from 'zod';
import {
  type NicCounters,
  type NicSnapshot,
  type NicTrial,
  parseEthtoolStats,
  parseTbfStats,
} from '../../core/nic-allowance.js';
import { runTool } from './run-tool.js';

export type NicReader = () => Promise<NicSnapshot | undefined>;

const TOOL_TIMEOUT_MS = 3000;

/** The device of the default route (`ip -j route show default`), or undefined. */
async function defaultDevice(): Promise<string | undefined> {
  const r = await runTool('ip', ['-j', 'route', 'show', 'default'], { timeoutMs: TOOL_TIMEOUT_MS });
  if (r.exitCode !== 0) return undefined;
  try {
    const routes = z.array(z.object({ dev: z.string().optional() })).safeParse(JSON.parse(r.stdout));
    return routes.success ? routes.data.find((x) => x.dev)?.dev : undefined;
  } catch {
    return undefined;
  }
}

async function readEna(dev: string): Promise<NicCounters | undefined> {
  const r = await runTool('ethtool', ['-S', dev], { timeoutMs: TOOL_TIMEOUT_MS });
  return r.exitCode === 0 ? parseEthtoolStats(r.stdout) : undefined;
}

async function readTbf(dev: string): Promise<NicCounters | undefined> {
  const r = await runTool('tc', ['-s', '-j', 'qdisc', 'show', 'dev', dev], { timeoutMs: TOOL_TIMEOUT_MS });
  return r.exitCode === 0 ? parseTbfStats(r.stdout) : undefined;
}

/**
 * A reader for this host: the device and the source are found at the first reading (the ENA
 * counters win; `device` overrides the default route's) and kept. Without either it reads
 * nothing, and says why once through `onUnavailable`.
 */
export function nicReader(opts: { device?: string; onUnavailable?: (why: string) => void } = {}): NicReader {
  let found: Promise<{ dev: string; source: NicSnapshot['source'] } | undefined> | undefined;
  const find = async () => {
    const dev = opts.device ?? (await defaultDevice());
    if (!dev) {
      opts.onUnavailable?.('no default route to read a device from');
      return undefined;
    }
    if (await readEna(dev)) return { dev, source: 'ena' as const };
    if (await readTbf(dev)) return { dev, source: 'tbf' as const };
    opts.onUnavailable?.(`${dev}: no ENA allowance counters (ethtool -S) and no tbf qdisc at its root`);
    return undefined;
  };
  return async () => {
    found ??= find();
    const f = await found;
    if (!f) return undefined;
    const counters = f.source === 'ena' ? await readEna(f.dev) : await readTbf(f.dev);
    return counters ? { source: f.source, dev: f.dev, counters } : undefined;
  };
}

/** A reading of `nic`, or none without a reader. */
export async function readNic(nic: NicReader | undefined): Promise<NicSnapshot | undefined> {
  return nic ? nic() : undefined;
}

/** The sidecar's `nic` from the readings before and after a trial: both from one source and device, else none. */
export function nicTrial(before: NicSnapshot | undefined, after: NicSnapshot | undefined): { nic?: NicTrial } {
  if (!before || !after || before.source !== after.source || before.dev !== after.dev) return {};
  return { nic: { source: before.source, dev: before.dev, before: before.counters, after: after.counters } };
}
