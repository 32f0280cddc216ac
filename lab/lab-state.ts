/**
 * The lab's state file (`<state dir>/state.json`): everything `down` needs after a crash and what
 * `status` and the adapters read, checked on reading and written atomically.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { errorMessage } from '../core/errors.js';
import { checkDocument } from '../core/stored-document.js';
import { targetPortsSchema } from '../core/target-ports.js';
import type { InstanceState } from '../functions/ports.js';
import { LabStateError } from './lab-errors.js';
import { LAB_PROFILES, labCreditsSchema } from './profiles/lab-profile.js';
import { labProcessSchema } from './sys.js';

export const delayMechanismSchema = z.enum(['netem', 'nfqueue']);
export type DelayMechanism = z.output<typeof delayMechanismSchema>;

export const labTargetInfoSchema = z.object({
  id: z.string(),
  label: z.string(),
  host: z.string(),
  ns: z.string(),
  rttMs: z.number(),
  nextHop: z.enum(['peering', 'tgw']).optional(),
});
export type LabTargetInfo = z.output<typeof labTargetInfoSchema>;

/** The lab client's instance states (the Fleet port's InstanceState). */
const instanceStateSchema = z.enum([
  'pending',
  'running',
  'stopping',
  'stopped',
  'shutting-down',
  'terminated',
]) satisfies z.ZodType<InstanceState>;

export const clientTrackSchema = z.object({
  state: instanceStateSchema,
  /** When a transitional state (stopping/pending) completes. */
  until: z.string().optional(),
  since: z.string(),
  starts: z.number(),
});
export type ClientTrack = z.output<typeof clientTrackSchema>;

/** Everything `down` needs after a crash, and what `status`/the adapters read (`<state dir>/state.json`). */
export const labStateSchema = z.object({
  version: z.literal(1),
  prefix: z.string(),
  profile: z.enum(LAB_PROFILES),
  createdAt: z.string(),
  phase: z.enum(['building', 'up']),
  namespaces: z.array(z.string()),
  processes: z.array(labProcessSchema),
  delay: z.object({
    mechanism: delayMechanismSchema,
    /** Round trip added per path on top of the bare topology, µs. */
    addedRttUs: z.record(z.string(), z.number()),
    /** Clock the delays were calibrated with: the precise helper's kernel RTT, or the C fallback. */
    clock: z.enum(['kernel-tcpi_rtt', 'tcp-rtt-c']).optional(),
    /** Why the fallback clock is in use (absent with the precise helper). */
    note: z.string().optional(),
    /**
     * Last calibration measurement per path: target and measured p50, and the delay the helper
     * applied meanwhile (ms; NFQUEUE only).
     */
    calibration: z
      .record(z.string(), z.object({ targetMs: z.number(), measuredMs: z.number(), appliedMs: z.number().optional() }))
      .optional(),
    /**
     * The bare topology's round trip per path (µs): probe p50 − applied delay at the last
     * calibration. A run's achieved round trip is this plus the delay applied during it.
     */
    bareRttUs: z.record(z.string(), z.number()).optional(),
    /**
     * The client's own link per path (µs): probe p50 − the median handshake through the delay
     * namespace (SYN arrival → SYN-ACK release) at the last calibration; paths whose helper holds
     * both directions only.
     */
    clientLegUs: z.record(z.string(), z.number()).optional(),
  }),
  /** Router namespace → next-hop name → gateway address (what LabRoutes maps). */
  routers: z.record(z.string(), z.record(z.string(), z.string())),
  credits: labCreditsSchema,
  client: clientTrackSchema,
  clientNs: z.string(),
  /** Further namespaces the pipeline may use as clients (seed-004: every host); not rebootable. */
  extraClients: z.array(z.string()).optional(),
  targets: z.array(labTargetInfoSchema),
  /** The targets' ports (a lab brought up before the pingpong probe has no pingpong server). */
  ports: targetPortsSchema.partial({ pingpong: true }),
  server: z.enum(['agent', 'fallback']),
  /** Role → namespace name. */
  roles: z.record(z.string(), z.string()),
});
export type LabState = z.output<typeof labStateSchema>;

/** Default state directory: tmpfs, survives a crash of the CLI, gone with a reboot (like the namespaces). */
export function defaultStateDir(prefix: string): string {
  const base = process.env.PATHBENCH_LAB_STATE_DIR ?? join('/run', 'pathbench-lab');
  return join(base, prefix.replace(/-+$/, ''));
}

export function statePath(dir: string): string {
  return join(dir, 'state.json');
}

/**
 * The lab's state, or undefined when there is none (or a torn file that is not JSON). A state
 * that is JSON but not a lab state is a LabStateError naming the file and the first wrong field.
 */
export function readState(dir: string): LabState | undefined {
  const file = statePath(dir);
  if (!existsSync(file)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  try {
    return checkDocument(file, json, labStateSchema, 'lab state');
  } catch (e) {
    throw new LabStateError(`${errorMessage(e)} (\`pathbench lab down\` takes the lab down without it)`);
  }
}

/** Atomic write (tmp + rename) so a crash never leaves a torn state file. */
export function writeState(dir: string, state: LabState): void {
  mkdirSync(dir, { recursive: true });
  const tmp = `${statePath(dir)}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(tmp, statePath(dir));
}

export function removeState(dir: string): void {
  rmSync(statePath(dir), { force: true });
}
