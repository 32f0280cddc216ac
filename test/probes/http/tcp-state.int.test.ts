/**
 * TIME_WAIT counted towards one destination, on real sockets over loopback: connections the
 * client closes first leave the client's end in TIME_WAIT; those to the target's port are
 * counted towards it, those to another port of the same address are not (they hold no port a
 * connection to the target needs), and the namespace's total counts both.
 */
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timeWaitCounts } from '../../../probes/http/tcp-state.js';

const servers: net.Server[] = [];

/** A server that closes its end only after the client closed its own (the client waits out TIME_WAIT). */
async function serverAt(): Promise<number> {
  const s = net.createServer((c) => {
    c.on('end', () => c.end());
    c.on('error', () => {});
  });
  servers.push(s);
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  return (s.address() as net.AddressInfo).port;
}

/** `n` connections to `port`, each closed by the client first and fully closed. */
async function closeFirst(port: number, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const c = net.connect(port, '127.0.0.1');
    await once(c, 'connect');
    c.end();
    c.resume();
    await once(c, 'close');
  }
}

let target: number;
let other: number;
beforeAll(async () => {
  [target, other] = [await serverAt(), await serverAt()];
});
afterAll(() => {
  for (const s of servers) s.close();
});

describe('timeWaitCounts', () => {
  it('counts the client’s TIME_WAIT towards the target apart from the rest', async () => {
    const before = await timeWaitCounts({ address: '127.0.0.1', port: target });
    expect(before?.toTarget).toBe(0);
    await closeFirst(target, 7);
    await closeFirst(other, 5);
    const after = await timeWaitCounts({ address: '127.0.0.1', port: target });
    expect(after?.toTarget).toBe(7);
    expect((await timeWaitCounts({ address: '127.0.0.1', port: other }))?.toTarget).toBe(5);
    // the same address in its IPv4-mapped IPv6 spelling is the same destination
    expect((await timeWaitCounts({ address: '::ffff:127.0.0.1', port: target }))?.toTarget).toBe(7);
    // the namespace's total holds them all (other tests' sockets too)
    expect(after!.all).toBeGreaterThanOrEqual(12);
    expect(await timeWaitCounts()).not.toHaveProperty('toTarget');
  });
});
