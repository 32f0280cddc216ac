/**
 * Target servers for the loopback example plans (plans/local-*.json), started as child
 * processes on 127.0.0.1 and stopped by PID: the agent's own servers (plain TCP, slow-accept,
 * HTTP, the pingpong echo), plus iperf3 and sockperf servers where those tools are installed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureAgentBundle } from '../agent/bundle.js';
import type { ResolvedPlan } from '../core/resolved-plan.js';
import type { Logger } from '../functions/ports.js';

/**
 * Fixed ports of the loopback plans' targets (plans/local-*.json). Below Linux's ephemeral
 * range (32768–60999 by default): a port in it can be taken at any moment by some outgoing
 * connection's local end, which made a target fail to listen (EADDRINUSE) once in CI.
 */
export const LOOPBACK_PORTS = {
  tcp: 29101,
  slowAccept: 29102,
  http: 29180,
  iperf3: 29201,
  sockperf: 29301,
  pingpong: 29401,
} as const;
/** The loopback plan's "closed port (loss)" target: nothing ever listens there. */
export const LOOPBACK_CLOSED_PORT = 29103;
/**
 * Accept at most one connection per this many ms, on a clock: longer than the 1 s SYN
 * retransmission, so nearly every probe finds the accept queue full and waits ≈1 s.
 */
export const SLOW_ACCEPT_MS = 1200;

/** Whether an executable is on PATH (no shell involved). */
export function haveTool(name: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export interface LoopbackTargets {
  started: string[];
  missing: string[];
  stop(): Promise<void>;
}

function waitForLine(child: ChildProcess, re: RegExp, ms: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const t = setTimeout(() => reject(new Error(`${what} did not start within ${ms} ms: ${buf.slice(-300)}`)), ms);
    const on = (d: Buffer) => {
      buf = (buf + d.toString()).slice(-4096);
      if (re.test(buf)) {
        clearTimeout(t);
        // Keep draining the pipes so the child never blocks on a full one.
        child.stdout?.off('data', on).resume();
        child.stderr?.off('data', on).resume();
        resolve();
      }
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`${what} exited with ${code}: ${buf.slice(-300)}`));
    });
  });
}

/** The loopback target ports a plan aims at (paths to 127.0.0.1/localhost on LOOPBACK_PORTS). */
export function loopbackTargetPorts(plan: ResolvedPlan): number[] {
  const known = new Set<number>(Object.values(LOOPBACK_PORTS));
  const ports = new Set<number>();
  for (const p of plan.paths) {
    if (!['127.0.0.1', 'localhost'].includes(p.target.host)) continue;
    for (const port of [p.target.port, ...p.probes.map((x) => ('port' in x ? x.port : undefined))])
      if (port !== undefined && known.has(port)) ports.add(port);
  }
  return [...ports].sort((a, b) => a - b);
}

/** Whether something accepts connections on 127.0.0.1:port right now. */
export function listening(port: number): Promise<boolean> {
  return new Promise<boolean>((res) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      res(true);
    });
    s.on('error', () => res(false));
  });
}

async function waitForPort(port: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (await listening(port)) return;
    if (Date.now() > until) throw new Error(`nothing listening on 127.0.0.1:${port} after ${ms} ms`);
    await sleep(50);
  }
}

export async function startLoopbackTargets(log: Logger, ports = LOOPBACK_PORTS): Promise<LoopbackTargets> {
  const children: ChildProcess[] = [];
  const started: string[] = [];
  const missing: string[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((res) => {
            if (c.exitCode !== null || c.signalCode !== null) return res();
            c.once('exit', () => res());
            c.kill('SIGTERM');
            setTimeout(() => c.kill('SIGKILL'), 2000).unref();
          }),
      ),
    );
  };
  try {
    const agent = spawn(
      process.execPath,
      [
        ensureAgentBundle().path,
        'serve',
        '--host',
        '127.0.0.1',
        '--tcp',
        String(ports.tcp),
        '--http',
        String(ports.http),
        '--slow-accept',
        `${ports.slowAccept}:${SLOW_ACCEPT_MS}`,
        '--pingpong',
        String(ports.pingpong),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(agent);
    await waitForLine(agent, /^ready$/m, 10_000, 'agent serve');
    started.push(
      `agent serve: tcp ${ports.tcp}, slow-accept ${ports.slowAccept}, http ${ports.http}, pingpong ${ports.pingpong}`,
    );
    if (haveTool('iperf3')) {
      // Unread output would fill the pipe and stall a server mid-test: discard it.
      const ip = spawn('iperf3', ['-s', '-B', '127.0.0.1', '-p', String(ports.iperf3)], { stdio: 'ignore' });
      children.push(ip);
      await waitForPort(ports.iperf3, 5000);
      started.push(`iperf3 -s: ${ports.iperf3}`);
    } else missing.push('iperf3');
    if (haveTool('sockperf')) {
      const sp = spawn('sockperf', ['server', '-i', '127.0.0.1', '-p', String(ports.sockperf)], { stdio: 'ignore' });
      children.push(sp);
      await sleep(300);
      if (sp.exitCode !== null) throw new Error('sockperf server exited at start');
      started.push(`sockperf server: ${ports.sockperf}`);
    } else missing.push('sockperf');
  } catch (e) {
    await stop();
    throw e;
  }
  log.info('loopback targets started', { started, missing });
  return { started, missing, stop };
}
