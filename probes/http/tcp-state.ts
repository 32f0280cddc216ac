/**
 * The client's TCP state around an http trial: how many of its sockets sit in TIME_WAIT (the
 * kernel's own tables, /proc/net/tcp and tcp6 — what `ss -tan state time-wait` counts), in all
 * and towards the trial's target (its address and port: only those hold ports a new connection
 * to the target cannot take, as a connection is unique by its four-tuple), and the
 * sysctls that decide whether TIME_WAIT can exhaust its ephemeral ports: `net.ipv4.tcp_tw_reuse`
 * and `net.ipv4.ip_local_port_range`. All three are per network namespace, so in the lab they are
 * the client namespace's own. Read without a subprocess (cheap enough to run around every trial).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';

/** TCP_TIME_WAIT in the kernel's state numbering (include/net/tcp_states.h), hex in /proc/net/tcp. */
const TIME_WAIT_HEX = '06';

const sysctlPath = (name: string): string => `/proc/sys/${name.replace(/\./g, '/')}`;

/**
 * An address of /proc/net/tcp or tcp6 (`0100007F:1F90`): the IP as text (IPv4-mapped IPv6 as
 * IPv4, IPv6 in URL-canonical form) and the port. The kernel prints each 32-bit word of the
 * address as a number in the host's byte order, the port in network order. Undefined if malformed.
 */
export function procAddress(field: string): { ip: string; port: number } | undefined {
  const m = /^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}):([0-9A-Fa-f]{4})$/.exec(field);
  if (!m) return undefined;
  const words = m[1].match(/.{8}/g)!.map((w) => Number.parseInt(w, 16));
  const bytes = Buffer.alloc(words.length * 4);
  const le = endianness() === 'LE';
  for (const [i, w] of words.entries()) {
    if (le) bytes.writeUInt32LE(w, i * 4);
    else bytes.writeUInt32BE(w, i * 4);
  }
  const port = Number.parseInt(m[2], 16);
  const v4 = (b: Buffer) => [...b].join('.');
  if (bytes.length === 4) return { ip: v4(bytes), port };
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff)
    return { ip: v4(bytes.subarray(12)), port };
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16));
  return { ip: canonicalIp(groups.join(':')), port };
}

/** An IP address in one spelling: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 as a URL writes it. */
export function canonicalIp(ip: string): string {
  if (!ip.includes(':')) return ip;
  const host = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!mapped) return host;
  const [hi, lo] = [Number.parseInt(mapped[1], 16), Number.parseInt(mapped[2], 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

export interface TimeWaitCounts {
  /** Every socket of the namespace in TIME_WAIT. */
  all: number;
  /** Those whose remote end is the target (when one was given). */
  toTarget?: number;
}

/**
 * Sockets in TIME_WAIT over IPv4 and IPv6, in all and towards `target`; undefined when
 * /proc/net/tcp cannot be read.
 */
export async function timeWaitCounts(target?: { address: string; port: number }): Promise<TimeWaitCounts | undefined> {
  const want = target && { ip: canonicalIp(target.address), port: target.port };
  let all = 0;
  let toTarget = 0;
  let any = false;
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = await readFile(f, 'utf8');
    } catch {
      continue;
    }
    any = true;
    // "  sl  local_address rem_address   st …": the 3rd field is the remote end, the 4th the state.
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== TIME_WAIT_HEX) continue;
      all++;
      if (!want) continue;
      const rem = procAddress(fields[2]);
      if (rem && rem.port === want.port && rem.ip === want.ip) toTarget++;
    }
  }
  if (!any) return undefined;
  return want ? { all, toTarget } : { all };
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
