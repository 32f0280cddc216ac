/**
 * Port fakes for in-process state machine scenarios. Only the parts that would touch instances,
 * route tables or remote commands are faked; the store (a temp directory), DuckDB and the lock
 * are the real local adapters.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentSpec } from '../../core/agent-spec.js';
import type { ClientNetwork } from '../../core/client-network.js';
import { InstanceCapacityError } from '../../core/errors.js';
import { RAW_EXT, routeKey } from '../../core/keys.js';
import type { ClientRef, RouteEntry } from '../../core/resolved-plan.js';
import { silentLogger } from '../../functions/log.js';
import type {
  CommandInvocation,
  CommandRunner,
  Deps,
  Fleet,
  InstanceInfo,
  InstanceState,
  ProbeCommand,
  Routes,
} from '../../functions/ports.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { FileLock } from '../../local/file-lock.js';
import type { ProbeKind } from '../../probes/index.js';
import { runStates } from '../../statemachine/asl.js';

/** Every Wait state of the real definition, overridden to 0 ms: fake time. */
export function noWaits(): Record<string, number> {
  return Object.fromEntries(
    runStates()
      .filter(([, s]) => s.Type === 'Wait')
      .map(([n]) => [n, 0]),
  );
}

/** Every retrier of the real definition waits 0 ms (fake time for Retry backoff). */
export function noRetryWaits(): Record<string, number> {
  return Object.fromEntries(
    runStates()
      .filter(([, s]) => (s as { Retry?: unknown[] }).Retry !== undefined)
      .map(([n]) => [n, 0]),
  );
}

/** An instance that takes `pollsToSettle` describes to reach the target state. */
export class FakeFleet implements Fleet {
  readonly rebootable = true;
  readonly pollSeconds = 5;
  state: InstanceState = 'running';
  private pending = 0;
  private starts = 0;
  calls: string[] = [];
  constructor(
    private readonly opts: {
      pollsToSettle?: number;
      neverStops?: boolean;
      startFails?: boolean;
      /** The first n starts fail for capacity (then capacity is back). */
      startFailures?: number;
      /** What network() answers (default: nothing known); an Error is thrown instead. */
      network?: ClientNetwork | Error;
    } = {},
  ) {}
  async stop(c: ClientRef) {
    this.calls.push(`stop ${c.instanceId}`);
    this.state = 'stopping';
    this.pending = this.opts.pollsToSettle ?? 2;
  }
  async start(c: ClientRef) {
    this.calls.push(`start ${c.instanceId}`);
    const failing = this.opts.startFails || this.starts++ < (this.opts.startFailures ?? 0);
    if (failing) throw new InstanceCapacityError(`InsufficientInstanceCapacity for ${c.instanceId}`);
    this.state = 'pending';
    this.pending = this.opts.pollsToSettle ?? 2;
  }
  async describe(c: ClientRef): Promise<InstanceInfo> {
    this.calls.push(`describe ${c.instanceId}`);
    if (this.pending > 0 && --this.pending === 0) {
      if (this.state === 'stopping' && !this.opts.neverStops) this.state = 'stopped';
      if (this.state === 'pending') this.state = 'running';
    }
    return { instanceId: c.instanceId, state: this.state, commandReady: this.state === 'running', azId: 'apne1-az4' };
  }
  async network(c: ClientRef): Promise<ClientNetwork | undefined> {
    this.calls.push(`network ${c.instanceId}`);
    if (this.opts.network instanceof Error) throw this.opts.network;
    return this.opts.network;
  }
}

/** Route tables in memory; `failVerify` makes the swap of one target never become active. */
export class FakeRoutes implements Routes {
  table = new Map<string, string>();
  calls: string[] = [];
  constructor(private readonly failVerify?: string) {}
  key(r: Omit<RouteEntry, 'via'>) {
    return routeKey(r);
  }
  async read(r: Omit<RouteEntry, 'via'>) {
    return this.table.get(this.key(r)) ?? 'none';
  }
  async point(r: Omit<RouteEntry, 'via'>, t: string) {
    this.calls.push(`point ${this.key(r)} ${t}`);
    this.table.set(this.key(r), t);
  }
  async verify(r: Omit<RouteEntry, 'via'>, t: string) {
    return t !== this.failVerify && this.table.get(this.key(r)) === t;
  }
  async remove(r: Omit<RouteEntry, 'via'>) {
    this.calls.push(`remove ${this.key(r)}`);
    this.table.delete(this.key(r));
  }
}

/**
 * Writes what the agent would have written (raw tcp-connect JSONL + agent.json) into the store.
 * Per path: 'ok' (default), 'fail' (command Failed), 'hang' (InProgress forever), 'garbage'
 * (raw output that does not parse), 'stopped-upload' (TimedOut; like the SSM document's stop trap,
 * the killed agent's lines and then interrupted.json arrive only at the third poll after that),
 * 'stopped-silent' (TimedOut, nothing ever uploaded: a KILL, not a TERM).
 */
export class FakeRunner implements CommandRunner {
  sent: ProbeCommand[] = [];
  polls = 0;
  /** As the AWS runner's (CommandRunner.stopUploadGraceSeconds); unset: none. */
  stopUploadGraceSeconds?: number;
  private stoppedPolls = new Map<string, number>();
  constructor(
    private readonly store: DirStore,
    /** 'crash': the first probe wrote 3 lines and half of a fourth, then the agent died. */
    private readonly behaviour: Record<
      string,
      'ok' | 'fail' | 'hang' | 'garbage' | 'crash' | 'stopped-upload' | 'stopped-silent'
    > = {},
    private readonly rttMs: Record<string, number> = {},
    /** Raw tool output per path and probe kind (e.g. a captured iperf3 JSON), instead of tcp-connect lines. */
    private readonly raw: Record<string, Partial<Record<ProbeKind, string>>> = {},
  ) {}
  private byId = new Map<string, ProbeCommand>();
  async send(cmd: ProbeCommand) {
    this.sent.push(cmd);
    const id = `cmd-${this.sent.length}`;
    this.byId.set(id, cmd);
    const b = this.behaviour[cmd.pathId] ?? 'ok';
    if (b === 'ok' || b === 'garbage') {
      const spec = JSON.parse((await this.store.getText(cmd.specKey)) ?? '{}') as AgentSpec;
      const t0 = Date.parse('2026-11-30T00:00:00Z');
      for (const p of spec.probes) {
        const captured = b === 'ok' ? this.raw[cmd.pathId]?.[p.kind] : undefined;
        if (captured !== undefined) {
          await this.store.put(`${cmd.rawPrefix}${p.name}/1.${RAW_EXT[p.kind]}`, captured);
          continue;
        }
        const lines =
          b === 'garbage'
            ? 'this is not JSON\n'
            : Array.from({ length: 10 }, (_, i) =>
                JSON.stringify({
                  seq: i,
                  t_start: t0 + i,
                  t_end: t0 + i + 1,
                  ok: i !== 9,
                  rtt_ms: i === 9 ? null : (this.rttMs[cmd.pathId] ?? 1) + i / 100,
                  ...(i === 9 ? { error: 'timeout' } : {}),
                  clock: 'app-hrtime',
                }),
              ).join('\n');
        await this.store.put(`${cmd.rawPrefix}${p.name}/1.jsonl`, lines);
      }
      await this.store.put(
        `${cmd.rawPrefix}agent.json`,
        JSON.stringify({
          agentVersion: 'test',
          host: 'fake',
          kernel: 'k',
          platform: 'linux',
          node: 'v20',
          startedAt: new Date(t0).toISOString(),
          endedAt: new Date(t0 + 10).toISOString(),
          probes: spec.probes.map((p) => ({
            probe: p.name,
            kind: p.kind,
            status: 'ok',
            trials: 1,
            files: [`${p.name}/1.${RAW_EXT[p.kind]}`],
            startedAt: new Date(t0).toISOString(),
            endedAt: new Date(t0 + 10).toISOString(),
          })),
        }),
      );
    }
    if (b === 'crash') {
      const spec = JSON.parse((await this.store.getText(cmd.specKey)) ?? '{}') as AgentSpec;
      const t0 = Date.parse('2026-11-30T00:00:00Z');
      const line = (i: number) =>
        JSON.stringify({
          seq: i,
          t_start: t0 + i,
          t_end: t0 + i + 1,
          ok: true,
          rtt_ms: 2 + i / 100,
          clock: 'app-hrtime',
        });
      const cut = line(3).slice(0, 20);
      await this.store.put(
        `${cmd.rawPrefix}${spec.probes[0].name}/1.jsonl`,
        `${line(0)}\n${line(1)}\n${line(2)}\n${cut}`,
      );
    }
    return { commandId: id };
  }
  cancelled: string[] = [];
  async cancel(commandId: string) {
    this.cancelled.push(commandId);
  }
  async status(commandId: string): Promise<CommandInvocation> {
    this.polls++;
    const cmd = this.byId.get(commandId);
    const b = this.behaviour[cmd?.pathId ?? ''] ?? 'ok';
    if (b === 'fail') return { status: 'Failed', detail: 'agent exited 1' };
    if (b === 'crash') return { status: 'Failed', detail: 'agent killed by signal 9' };
    if (b === 'hang') return { status: 'InProgress' };
    if ((b === 'stopped-upload' || b === 'stopped-silent') && cmd) {
      const n = (this.stoppedPolls.get(commandId) ?? 0) + 1;
      this.stoppedPolls.set(commandId, n);
      if (b === 'stopped-upload' && n === 3) {
        const t0 = Date.parse('2026-11-30T00:00:00Z');
        const spec = JSON.parse((await this.store.getText(cmd.specKey)) ?? '{}') as AgentSpec;
        const lines = [0, 1, 2, 3].map((i) =>
          JSON.stringify({ seq: i, t_start: t0 + i, t_end: t0 + i + 1, ok: true, rtt_ms: 3, clock: 'app-hrtime' }),
        );
        await this.store.put(`${cmd.rawPrefix}${spec.probes[0].name}/1.jsonl`, `${lines.join('\n')}\n`);
        await this.store.put(
          `${cmd.rawPrefix}interrupted.json`,
          JSON.stringify({ signal: 'TERM', at: new Date(t0 + 5).toISOString(), incomplete: [spec.probes[0].name] }),
        );
      }
      return { status: 'TimedOut', detail: 'execution timed out' };
    }
    return { status: 'Success' };
  }
}

export async function scenarioDeps(
  over: Partial<Deps> & { dir?: string } = {},
): Promise<{ deps: Deps; store: DirStore; dir: string; query: DuckDbQueryEngine }> {
  const dir = over.dir ?? (await mkdtemp(join(tmpdir(), 'pathbench-scenario-')));
  const store = new DirStore(dir);
  const query = await DuckDbQueryEngine.open(dir);
  const deps: Deps = {
    store,
    fleet: over.fleet ?? new FakeFleet(),
    routes: over.routes ?? new FakeRoutes(),
    runner: over.runner ?? new FakeRunner(store),
    query,
    lock: over.lock ?? new FileLock(dir, silentLogger),
    log: silentLogger,
    driver: 'local',
    ...(over.cost ? { cost: over.cost } : {}),
    now: () => new Date(),
    sleep: async () => {},
  };
  return { deps, store, dir, query };
}

/** A two-to-three path plan in the contract shape; path B swaps routes in two regions. */
export function scenarioPlan(paths = ['A', 'B', 'C']) {
  return {
    name: 'scenario',
    defaults: {
      client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
      reboot: true,
      creditWaitSeconds: 60,
      probes: [{ kind: 'tcp-connect', count: 10, intervalMs: 10 }],
    },
    paths: paths.map((id) => ({
      id,
      target: { host: '10.1.0.10', port: 7000 },
      ...(id === 'B'
        ? {
            routes: [
              {
                region: 'ap-northeast-1',
                routeTableId: 'rtb-tokyo',
                destination: '10.1.0.0/16',
                via: { transitGatewayId: 'tgw-1' },
              },
              {
                region: 'ap-northeast-3',
                routeTableId: 'rtb-osaka',
                destination: '10.0.0.0/16',
                via: { transitGatewayId: 'tgw-3' },
              },
            ],
          }
        : {}),
    })),
  };
}
