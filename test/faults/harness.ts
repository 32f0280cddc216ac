/**
 * One fault case: a temp data directory, an in-memory AWS world (route tables, the client
 * instance, its SSM agent), a fault set, and runs of the REAL ASL through the local driver
 * (local/local-driver.ts → local/asl-interpreter.ts) with the real local adapters wrapped by the faults:
 * the directory store (recording what the agent measured), DuckDB, the child-process command
 * runner, the file lock, and the AWS Routes / Fleet adapters over the mocked SDK clients.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import type { ClientRef } from '../../core/resolved-plan.js';
import { silentLogger } from '../../functions/log.js';
import type { CommandRunner, Deps, ProbeCommand } from '../../functions/ports.js';
import { FileLock } from '../../local/file-lock.js';
import { type LocalRunResult, runLocal } from '../../local/local-driver.js';
import type { ExecutionEvent } from '../../local/local-execution.js';
import { LoopbackFleet, LoopbackRoutes } from '../../local/loopback.js';
import { runStates } from '../../statemachine/asl.js';
import { AwsWorld, type WorldRoute } from './aws-world.js';
import { awsError, Faults } from './inject.js';
import { checkInvariants, type Outcome, RecordingStore, recordRow } from './invariants.js';
import { INTERMITTENT, KNOWN_HOLES } from './known-holes.js';
import { FAULT_PORTS } from './ports.js';

/**
 * Fake time: every Wait 0 ms except the probe poll, 1 s (the agent is real and takes real time).
 * PollProbe bounds a probe by its deadline and by a poll count that assumes at least 1 s between
 * polls (probePollBound, functions/pipeline/limits.ts); a shorter poll wait here would shrink the
 * real time that count covers (at 100 ms, 76 polls were 7.6 s, and an iperf3 probe retried after
 * "server busy" was cancelled before its deadline in a CI rehearsal).
 */
const WAITS = Object.fromEntries(
  runStates()
    .filter(([, s]) => s.Type === 'Wait')
    .map(([n]) => [n, n === 'WaitForProbe' ? 1000 : 0]),
);
/** ASL retries without their 2 s–30 s back-off. */
const RETRIES = Object.fromEntries(
  runStates()
    .filter(([, s]) => (s as { Retry?: unknown[] }).Retry?.length)
    .map(([n]) => [n, 0]),
);

export interface PathOpts {
  id: string;
  count?: number;
  reboot?: boolean;
  routes?: { routeTableId: string; destination: string; via: Record<string, string> }[];
  probes?: unknown[];
  port?: number;
}

export interface FaultCase {
  dir: string;
  faults: Faults;
  aws: AwsWorld;
  measured: Map<string, number>;
  runIds: string[];
  routesBefore: Record<string, WorldRoute[]>;
  /** Added to the wall clock the handlers see (a clock jump past a deadline). */
  skewMs: number;
  /** Build a plan over the suite's loopback targets with the AWS-shaped client. */
  plan(paths: PathOpts[], defaults?: Record<string, unknown>): unknown;
  run(plan: unknown, opts?: RunOpts): Promise<LocalRunResult>;
  /** Every invariant, over every run of the case; also one row of the printed table. */
  check(): Promise<Outcome>;
  /** The ports of the latest run, as its handlers saw them (for the cleanup after a stop). */
  deps?: Deps;
  /** Every command id the real runner handed out (one per agent started; a resumed command repeats its id). */
  commandIds: string[];
  /** Resolves when no Task invocation is running any more (a stopped execution's Lambdas finish on their own). */
  settled(): Promise<void>;
}

export interface RunOpts {
  runId?: string;
  /** The client is the AWS-world instance (EC2 + SSM adapter); default: the loopback fleet. */
  awsFleet?: boolean;
  signal?: AbortSignal;
  interrupt?: AbortSignal;
  onEvent?: (e: ExecutionEvent) => void;
  /** Wait state → ms, over the suite's fake time (to stop a run inside a Wait). */
  waits?: Record<string, number>;
}

/**
 * SSM's view of the client: a command is delivered only while the instance runs and its agent
 * is online (SendCommand answers InvalidInstanceId otherwise), like the AWS runner would see.
 */
function ssmGate(inner: CommandRunner, aws: AwsWorld): CommandRunner {
  return {
    send: async (cmd: ProbeCommand) => {
      if (!aws.commandReady()) {
        throw awsError(
          'InvalidInstanceId',
          `Instances [[${aws.instance.id}]] not in a valid state for account 000000000000`,
          400,
        );
      }
      return inner.send(cmd);
    },
    status: (id: string, c: ClientRef) => inner.status(id, c),
    cancel: (id: string, c: ClientRef) => inner.cancel(id, c),
  };
}

/** The runner, noting the id of every command it really sends. */
function recordSends(inner: CommandRunner, ids: string[]): CommandRunner {
  return {
    send: async (cmd: ProbeCommand) => {
      const out = await inner.send(cmd);
      ids.push(out.commandId);
      return out;
    },
    status: (id: string, cl: ClientRef) => inner.status(id, cl),
    cancel: (id: string, cl: ClientRef) => inner.cancel(id, cl),
  };
}

export async function newCase(routes: Record<string, WorldRoute[]> = {}): Promise<FaultCase> {
  const dir = await mkdtemp(join(tmpdir(), 'pathbench-fault-'));
  const aws = new AwsWorld();
  for (const [t, rs] of Object.entries(routes)) aws.tables.set(t, structuredClone(rs));
  const faults = new Faults();
  const measured = new Map<string, number>();
  let n = 0;
  let inflight = 0;
  const idle: (() => void)[] = [];
  const c: FaultCase = {
    dir,
    faults,
    aws,
    measured,
    runIds: [],
    commandIds: [],
    routesBefore: aws.snapshot(),
    skewMs: 0,
    plan: (paths, defaults = {}) => ({
      name: 'faults',
      defaults: {
        client: { instanceId: aws.instance.id, region: 'ap-northeast-1' },
        reboot: false,
        creditWaitSeconds: 0,
        probes: [{ kind: 'tcp-connect', count: 20, intervalMs: 5, timeoutMs: 300 }],
        ...defaults,
      },
      paths: paths.map((p) => ({
        id: p.id,
        target: { host: '127.0.0.1', port: p.port ?? FAULT_PORTS.tcp },
        ...(p.reboot !== undefined ? { reboot: p.reboot } : {}),
        ...(p.count ? { probes: [{ kind: 'tcp-connect', count: p.count, intervalMs: 5, timeoutMs: 300 }] } : {}),
        ...(p.probes ? { probes: p.probes } : {}),
        ...(p.routes ? { routes: p.routes.map((r) => ({ region: 'ap-northeast-1', ...r })) } : {}),
      })),
    }),
    run: async (plan, opts = {}) => {
      const runId = opts.runId ?? `fault-${++n}`;
      if (!c.runIds.includes(runId)) c.runIds.push(runId);
      return runLocal({
        plan,
        dataDir: dir,
        runId,
        log: silentLogger,
        waitTimeOverrides: { ...WAITS, ...opts.waits },
        interrupt: opts.interrupt,
        machine: {
          retryIntervalOverrides: RETRIES,
          signal: opts.signal,
          invoke: async (call) => {
            inflight++;
            try {
              return await faults.call(`lambda.${call.state}`, [call.input], () => call.run());
            } finally {
              if (--inflight === 0) for (const f of idle.splice(0)) f();
            }
          },
        },
        decorate: {
          store: (s) => new RecordingStore(s, faults, measured),
          deps: (d): Deps =>
            (c.deps = {
              ...d,
              fleet: faults.wrap('fleet', opts.awsFleet ? aws.fleet() : new LoopbackFleet(silentLogger)),
              routes: faults.wrap(
                'routes',
                Object.keys(c.routesBefore).length ? aws.routes() : new LoopbackRoutes(silentLogger),
              ),
              runner: faults.wrap(
                'runner',
                recordSends(opts.awsFleet ? ssmGate(d.runner, aws) : d.runner, c.commandIds),
              ),
              query: faults.wrap('query', d.query, ['copyCall', 'selectCall']),
              lock: faults.wrap('lock', d.lock),
              now: () => new Date(Date.now() + c.skewMs),
              sleep: async () => {},
            }),
        },
        onEvent: opts.onEvent,
      });
    },
    settled: () => (inflight === 0 ? Promise.resolve() : new Promise<void>((r) => idle.push(r))),
    check: () => checkInvariants({ dir, runIds: c.runIds, measured, aws, routesBefore: c.routesBefore }),
  };
  return c;
}

/**
 * One case of a fault class: builds a case, runs `body`, checks the invariants, records the
 * table row and removes the data directory. A case named in KNOWN_HOLES is expected to fail
 * (`it.fails`) until the hole is fixed; then the entry must go.
 */
export function faultCase(
  faultClass: string,
  name: string,
  body: (c: FaultCase) => Promise<void>,
  opts: { routes?: Record<string, WorldRoute[]>; timeout?: number } = {},
): void {
  const hole = KNOWN_HOLES[`${faultClass}: ${name}`];
  const test = hole ? it.fails : INTERMITTENT[`${faultClass}: ${name}`] ? it.skip : it;
  test(
    name,
    async () => {
      const c = await newCase(opts.routes);
      try {
        // The invariants are checked and recorded even when the case's own expectations fail.
        let failed: unknown;
        try {
          await body(c);
        } catch (e) {
          failed = e;
        }
        const o = await c.check();
        recordRow(faultClass, name, o, hole);
        if (failed) throw failed;
        if (o.problems.length) throw new Error(`invariants broken:\n  ${o.problems.join('\n  ')}`);
      } finally {
        await rm(c.dir, { recursive: true, force: true });
      }
    },
    opts.timeout ?? 60_000,
  );
}

/**
 * The lock as a killed process leaves it: the data directory's newest lock generation
 * (`<data>/.lock/NNNNNNNNNNNN.json`, local/file-lock.ts) names `runId` and a pid that no longer exists.
 */
export async function lockOfDeadProcess(dir: string, runId: string): Promise<void> {
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const pid = Number(dead.stdout);
  const host = hostname();
  const lockDir = join(dir, '.lock');
  await mkdir(lockDir, { recursive: true });
  const gens = (await readdir(lockDir)).flatMap((n) => (/^\d{12}\.json$/.test(n) ? [Number(n.slice(0, 12))] : []));
  const gen = Math.max(0, ...gens) + 1;
  await writeFile(
    join(lockDir, `${String(gen).padStart(12, '0')}.json`),
    `${JSON.stringify({ runId, holder: `pid ${pid} on ${host}`, acquiredAt: new Date().toISOString(), pid, host })}\n`,
  );
  // What the lock reads now is that dead holder (a test of "stale" must not test a free lock).
  const top = await new FileLock(dir).current();
  if (top?.runId !== runId || !top.holder.includes(`pid ${pid} `))
    throw new Error(`lockOfDeadProcess: the lock reads ${JSON.stringify(top)}, not the dead holder`);
}
