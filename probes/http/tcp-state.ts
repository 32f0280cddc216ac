/**
 * The client's TCP state around an http trial: how many of its sockets sit in TIME_WAIT (the
 * kernel's own tables, /proc/net/tcp and tcp6 — what `ss -tan state time-wait` counts), and the
 * sysctls that decide whether TIME_WAIT can exhaust its ephemeral ports: `net.ipv4.tcp_tw_reuse`
 * and `net.ipv4.ip_local_port_range`. All three are per network namespace, so in the lab they are
 * the client namespace's own. Read without a subprocess (cheap enough to run around every trial).
 */
import { readFile, writeFile } from 'node:fs/promises';

/** TCP_TIME_WAIT in the kernel's state numbering (include/net/tcp_states.h), hex in /proc/net/tcp. */
const TIME_WAIT_HEX = '06';

const sysctlPath = (name: string): string => `/proc/sys/${name.replace(/\./g, '/')}`;

/** Sockets in TIME_WAIT over IPv4 and IPv6; undefined when /proc/net/tcp cannot be read. */
export async function timeWaitCount(): Promise<number | undefined> {
  let total = 0;
  let any = false;
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = await readFile(f, 'utf8');
    } catch {
      continue;
    }
    any = true;
    // "  sl  local_address rem_address   st …": the 4th field is the state.
    for (const line of text.split('\n').slice(1)) {
      const st = line.trim().split(/\s+/)[3];
      if (st === TIME_WAIT_HEX) total++;
    }
  }
  return any ? total : undefined;
}

export async function readSysctl(name: string): Promise<string | undefined> {
  try {
    return (await readFile(sysctlPath(name), 'utf8')).trim();
  } catch {
    return undefined;
  }
}

export async function writeSysctl(name: string, value: string): Promise<void> {
  await writeFile(sysctlPath(name), `${value}\n`);
}

export interface TcpFacts {
  tcpTwReuse?: number;
  portRange?: [number, number];
  ephemeralPorts?: number;
}

/** tcp_tw_reuse and the ephemeral port range, as far as they can be read. */
export async function tcpFacts(): Promise<TcpFacts> {
  const out: TcpFacts = {};
  const reuse = Number(await readSysctl('net.ipv4.tcp_tw_reuse'));
  if (Number.isInteger(reuse)) out.tcpTwReuse = reuse;
  const range = (await readSysctl('net.ipv4.ip_local_port_range'))?.split(/\s+/).map(Number);
  if (range?.length === 2 && range.every(Number.isInteger)) {
    out.portRange = [range[0], range[1]];
    out.ephemeralPorts = range[1] - range[0] + 1;
  }
  return out;
}

/**
 * Run `fn` with `net.ipv4.tcp_tw_reuse` set to `value` (undefined: left alone), putting the
 * previous value back afterwards, also when `fn` throws. Returns fn's result and, when the
 * setting could not be changed, why (the probe still runs, and records the value in force).
 */
export async function withTwReuse<T>(
  value: number | undefined,
  fn: (problem: string | undefined) => Promise<T>,
): Promise<T> {
  if (value === undefined) return fn(undefined);
  const before = await readSysctl('net.ipv4.tcp_tw_reuse');
  if (before === undefined) return fn('net.ipv4.tcp_tw_reuse cannot be read');
  if (before === String(value)) return fn(undefined);
  try {
    await writeSysctl('net.ipv4.tcp_tw_reuse', String(value));
  } catch (e) {
    return fn(`net.ipv4.tcp_tw_reuse could not be set to ${value}: ${(e as Error).message}`);
  }
  try {
    return await fn(undefined);
  } finally {
    await writeSysctl('net.ipv4.tcp_tw_reuse', before);
  }
}
