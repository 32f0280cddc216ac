/**
 * `pathbench lab up|calibrate|status|down`: build, inspect and remove the local seed-000 twin. Needs root;
 * a missing precondition is one line on stderr and exit code 2.
 */

import type { Command } from 'commander';
import { errorMessage } from '../../core/errors.js';
import { printable } from '../../core/printable.js';
import { type LabStatus, labAvailable, labCalibrate, labDown, labStatus, labUp } from '../../lab/lab.js';
import { LabInputError, LabUnavailableError } from '../../lab/lab-errors.js';
import { LabRoutes } from '../../lab/lab-routes.js';
import { LAB_PROFILES } from '../../lab/profiles/lab-profile.js';
import { exitWith } from '../exit.js';
import { liveStatus } from '../progress.js';

function fail(e: unknown): never {
  process.stderr.write(`pathbench lab: ${printable(errorMessage(e).split('\n')[0])}\n`);
  exitWith(e instanceof LabUnavailableError || e instanceof LabInputError ? 2 : 1);
}

async function requireLab(): Promise<void> {
  const a = await labAvailable();
  if (!a.ok) throw new LabUnavailableError(a.reason ?? 'lab unavailable');
}

/** "; calibrated with <clock>" when some path was calibrated, else "; delays as set" (an uncalibrated profile). */
function calibratedWith(s: LabStatus): string {
  if (Object.keys(s.delay?.calibration ?? {}).length === 0) return '; delays as set (not calibrated)';
  return s.delay?.clock ? `; calibrated with ${s.delay.clock}` : '';
}

/** Human-readable status: one line per fact, paths as a small table. */
export function formatLabStatus(s: LabStatus): string {
  if (!s.up) {
    return [`lab (${s.prefix}*) is down`, ...s.problems.map((p) => `  problem: ${p}`)].join('\n');
  }
  const lines = [
    `lab ${s.profile} (${s.prefix}*) is up — ${s.healthy ? 'healthy' : 'NOT healthy'}`,
    `state file: ${s.stateFile}`,
    `delay mechanism: ${s.delay?.mechanism}${calibratedWith(s)}; target servers: ${s.server}`,
    `client ${s.client?.ns}: ${s.client?.state}; credits: ${s.credits?.peakrate} burst ${s.credits?.burstBytes} B, then ${s.credits?.rate}`,
    // Star profiles (seed-004, mesh, one-way) have no routes to swap.
    ...(Object.keys(s.routes).length > 0
      ? [
          `routes: ${Object.entries(s.routes)
            .map(([k, v]) => `${k} → ${v}`)
            .join('; ')}`,
        ]
      : []),
    'paths:',
  ];
  for (const t of s.targets) {
    const cal = s.delay?.calibration?.[t.id];
    lines.push(
      `  ${t.id} ${t.host.padEnd(10)} target ${t.rttMs.toFixed(2)} ms${cal ? `, measured ${cal.measuredMs.toFixed(3)} ms` : ''}${t.nextHop ? ` (via ${t.nextHop})` : ''} — ${t.label}`,
    );
  }
  lines.push(
    `ports: tcp ${s.ports?.tcp}, http ${s.ports?.http}, iperf3 ${s.ports?.iperf3}, sockperf ${s.ports?.sockperf}, pingpong ${s.ports?.pingpong}`,
  );
  for (const n of s.notes ?? []) lines.push(`note: ${n}`);
  for (const p of s.problems) lines.push(`problem: ${p}`);
  return lines.join('\n');
}

/** Adds `lab up`, `lab calibrate`, `lab status` and `lab down` to the program. */
export function registerLab(program: Command): void {
  const lab = program.command('lab').description('local network-namespace twin of the seed paths (needs root)');
  lab
    .command('up')
    .description('build the lab (idempotent: reuses a healthy lab, repairs a broken one)')
    .option('--profile <name>', `lab profile (${LAB_PROFILES.join(', ')})`, 'seed-000')
    .option('--prefix <prefix>', 'namespace prefix', 'pb-')
    .option('--no-calibrate', 'skip measuring and tuning the delays')
    .action(async (o: { profile: string; prefix: string; calibrate: boolean }) => {
      try {
        if (!(LAB_PROFILES as readonly string[]).includes(o.profile)) {
          throw new LabInputError(`unknown lab profile "${o.profile}" (known: ${LAB_PROFILES.join(', ')})`);
        }
        await requireLab();
        const status = liveStatus('lab up: ');
        const s = await labUp({
          profile: o.profile as (typeof LAB_PROFILES)[number],
          prefix: o.prefix,
          calibrate: o.calibrate,
          onProgress: (l) => status.update(l),
        }).finally(() => status.done());
        await sayRecovered(o.prefix);
        process.stdout.write(`${formatLabStatus(s)}\n`);
      } catch (e: unknown) {
        fail(e);
      }
    });
  lab
    .command('calibrate')
    .description('re-tune the delays of a lab that is up (when its paths drifted from their targets)')
    .option('--prefix <prefix>', 'namespace prefix', 'pb-')
    .option('--path <ids>', 'only these paths, comma-separated (the others keep their delays)')
    .action(async (o: { prefix: string; path?: string }) => {
      try {
        await requireLab();
        const status = liveStatus('lab calibrate: ');
        const paths = o.path?.split(',').map((x) => x.trim());
        const s = await labCalibrate({
          prefix: o.prefix,
          onProgress: (l) => status.update(l),
          ...(paths ? { paths: paths.filter(Boolean) } : {}),
        }).finally(() => status.done());
        process.stdout.write(`${formatLabStatus(s)}\n`);
      } catch (e: unknown) {
        fail(e);
      }
    });
  lab
    .command('status')
    .description('what exists, which delay mechanism is in use, which next hop is active')
    .option('--prefix <prefix>', 'namespace prefix', 'pb-')
    .option('--json', 'machine-readable output')
    .action(async (o: { prefix: string; json?: boolean }) => {
      try {
        await requireLab();
        await sayRecovered(o.prefix);
        const s = await labStatus({ prefix: o.prefix });
        process.stdout.write(o.json ? `${JSON.stringify(s, null, 2)}\n` : `${formatLabStatus(s)}\n`);
      } catch (e: unknown) {
        fail(e);
      }
    });
  lab
    .command('down')
    .description('remove everything the lab made (also after a crash)')
    .option('--prefix <prefix>', 'namespace prefix', 'pb-')
    .action(async (o: { prefix: string }) => {
      try {
        await requireLab();
        const r = await labDown({ prefix: o.prefix });
        process.stdout.write(
          r.removed.length ? `${r.removed.map((x) => `removed ${x}`).join('\n')}\n` : 'nothing to remove\n',
        );
      } catch (e: unknown) {
        fail(e);
      }
    });
}

/** Put back lab routes a killed run left changed (lab/lab-routes.ts), and say so on stderr. */
async function sayRecovered(prefix: string): Promise<void> {
  for (const line of await new LabRoutes({ prefix }).recoverLeftovers()) {
    process.stderr.write(`pathbench lab: restored a route an interrupted run left changed: ${line}\n`);
  }
}
