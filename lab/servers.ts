/**
 * The servers in every target namespace: iperf3, sockperf (when installed) and the agent's own
 * target servers (`agent serve`: TCP, HTTP `/bytes/<n>` and the pingpong echo, agent/server.ts), the same ones
 * a real target instance runs.
 *
 * `agent serve` runs from the bundle (dist/agent.cjs, what real clients run; built first when it
 * is missing or stale). If it cannot be built or does not start, it runs from source
 * (agent/agent-main.ts through tsx) instead; the state then says server "fallback".
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AGENT_BUNDLE, ensureAgentBundle } from '../agent/bundle.js';
import type { LabBuilder } from './builder.js';
import type { LabState } from './lab-state.js';
import { targetRoles } from './profiles/lab-profile.js';
import { labCpu, listening, tryRun, waitFor } from './sys.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const AGENT_SOURCE = join(ROOT, 'agent', 'agent-main.ts');

/** `node … serve` argv: the bundle, or the agent's source through the tsx loader. */
function agentServeArgv(server: LabState['server'], serveArgs: string[]): string[] {
  if (server === 'agent') return [process.execPath, AGENT_BUNDLE, 'serve', ...serveArgs];
  // An absolute loader URL: the namespace's process may start in any working directory.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return [process.execPath, '--import', tsx, AGENT_SOURCE, 'serve', ...serveArgs];
}

/** Start every target namespace's servers and wait until they listen. */
export async function startServers(b: LabBuilder): Promise<void> {
  const ports = b.profile.ports;
  const haveSockperf = await tryRun(['sh', '-c', 'command -v sockperf']);
  let server: LabState['server'] = 'agent';
  try {
    ensureAgentBundle();
  } catch {
    server = 'fallback';
  }
  for (const role of targetRoles(b.profile)) {
    const ns = b.ns(role);
    b.spawn('iperf3', ns, ['iperf3', '-s', '-p', String(ports.iperf3)]);
    if (haveSockperf) {
      // Ping-pong servers on the client's and delay helpers' CPU (lab/client.ts): a reply from
      // the other CPU costs a cross-CPU wake-up (~0.1 ms on a VM) on some exchanges only, a
      // second host mode under every path's delay modes.
      const pin = ['taskset', '-c', String(labCpu())];
      b.spawn('sockperf-tcp', ns, [
        ...pin,
        'sockperf',
        'server',
        '--tcp',
        '-i',
        '0.0.0.0',
        '-p',
        String(ports.sockperf),
      ]);
      b.spawn('sockperf-udp', ns, [...pin, 'sockperf', 'server', '-i', '0.0.0.0', '-p', String(ports.sockperf)]);
    }
    const ready = join(b.dir, `${ns}.ready`);
    writeFileSync(ready, '');
    const serveArgs = [
      '--host',
      '0.0.0.0',
      '--tcp',
      String(ports.tcp),
      '--http',
      String(ports.http),
      '--pingpong',
      String(ports.pingpong),
      '--ready-file',
      ready,
    ];
    const readyNow = () => readFileSync(ready, 'utf8').length > 0 || false;
    let started = false;
    if (server === 'agent') {
      b.spawn('target', ns, agentServeArgv(server, serveArgs));
      try {
        await waitFor(`agent serve in ${ns}`, async () => readyNow() || (await listening(ns, ports.tcp)), 10_000);
        started = true;
      } catch {
        // The bundle exists but cannot serve yet: fall back for the whole lab, say so in the state.
        b.log(`agent serve did not become ready in ${ns}; running the agent's servers from source`);
        await b.stopRole('target');
        server = 'fallback';
      }
    }
    if (!started) {
      b.spawn('target', ns, agentServeArgv(server, serveArgs));
      await waitFor(`target server in ${ns}`, () => readyNow(), 10_000);
    }
    await waitFor(`iperf3 server in ${ns}`, () => listening(ns, ports.iperf3), 10_000);
  }
  b.state.server = server;
  b.save();
}
