/**
 * The profile's real proxies (seed 002: Service Connect sidecars, the NLB, the PrivateLink
 * endpoint, VPC Lattice), one haproxy process each inside its namespace. Configs are written next
 * to the state file; each process is recorded in the state (role `proxy-<name>`) before it is
 * waited for, so `lab down` stops it by PID whatever happens.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LabBuilder } from './builder.js';
import { haproxyConfig } from './haproxy-config.js';
import { LabCommandError, LabUnavailableError } from './lab-errors.js';
import { isAlive, listening, tail, tryRun, waitFor } from './sys.js';

export async function startProxies(b: LabBuilder): Promise<void> {
  const proxies = b.profile.proxies ?? [];
  if (proxies.length === 0) return;
  if (!(await tryRun(['sh', '-c', 'command -v haproxy'])))
    throw new LabUnavailableError(`lab profile ${b.profile.name} needs haproxy (apt-get install haproxy)`);
  for (const p of proxies) {
    const cfg = join(b.dir, `haproxy-${p.name}.cfg`);
    writeFileSync(cfg, haproxyConfig(p));
    const ns = b.ns(p.role);
    // -db: foreground, no daemon fork, so the recorded PID is haproxy's own.
    const proc = b.spawn(`proxy-${p.name}`, ns, ['haproxy', '-db', '-f', cfg]);
    await waitFor(
      `haproxy ${p.name} in ${ns}`,
      async () => {
        if (!isAlive(proc)) throw new LabCommandError(`haproxy ${p.name} exited in ${ns}: ${tail(proc.log)}`);
        return listening(ns, p.listen.port);
      },
      10_000,
    );
  }
  b.log(
    `proxies: ${proxies.map((p) => `${p.name} (${p.mode}, ${b.ns(p.role)} ${p.listen.ip}:${p.listen.port})`).join(', ')}`,
  );
}
