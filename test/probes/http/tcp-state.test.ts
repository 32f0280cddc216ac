/** The addresses of /proc/net/tcp and tcp6 as the kernel prints them, read back as IPs and ports. */
import { endianness } from 'node:os';
import { describe, expect, it } from 'vitest';
import { canonicalIp, procAddress } from '../../../probes/http/tcp-state.js';

/** The kernel's spelling of an address: each 32-bit word as a number in host order, `%08X`. */
function procField(bytes: number[], port: number): string {
  const b = Buffer.from(bytes);
  const words = Array.from({ length: b.length / 4 }, (_, i) =>
    (endianness() === 'LE' ? b.readUInt32LE(i * 4) : b.readUInt32BE(i * 4)).toString(16).toUpperCase().padStart(8, '0'),
  );
  return `${words.join('')}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
}

describe('procAddress', () => {
  it('reads IPv4, IPv4-mapped IPv6 and IPv6 addresses with their ports', () => {
    expect(procAddress(procField([127, 0, 0, 1], 8080))).toEqual({ ip: '127.0.0.1', port: 8080 });
    expect(procAddress(procField([10, 1, 2, 10], 7000))).toEqual({ ip: '10.1.2.10', port: 7000 });
    const mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 0, 7];
    expect(procAddress(procField(mapped, 443))).toEqual({ ip: '192.168.0.7', port: 443 });
    const loop6 = [...new Array(15).fill(0), 1];
    expect(procAddress(procField(loop6, 80))).toEqual({ ip: '::1', port: 80 });
    const doc = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a, 0x0b];
    expect(procAddress(procField(doc, 1))).toEqual({ ip: '2001:db8::a0b', port: 1 });
  });

  it('reads lines as this machine’s kernel printed them (little-endian x86)', () => {
    if (endianness() !== 'LE') return;
    expect(procAddress('0100007F:1F90')).toEqual({ ip: '127.0.0.1', port: 8080 });
    expect(procAddress('0000000000000000FFFF00000100007F:1F90')).toEqual({ ip: '127.0.0.1', port: 8080 });
    expect(procAddress('00000000000000000000000001000000:0050')).toEqual({ ip: '::1', port: 80 });
  });

  it('refuses what is not an address', () => {
    for (const bad of ['', '0100007F', '0100007F:1F9', 'ZZ00007F:1F90', '0100007F0:1F90'])
      expect(procAddress(bad)).toBeUndefined();
  });
});

describe('canonicalIp', () => {
  it('spells each address one way', () => {
    expect(canonicalIp('10.0.0.1')).toBe('10.0.0.1');
    expect(canonicalIp('2001:DB8:0:0::A0B')).toBe('2001:db8::a0b');
    expect(canonicalIp('::ffff:10.1.2.10')).toBe('10.1.2.10');
    expect(canonicalIp('0:0:0:0:0:0:0:1')).toBe('::1');
  });
});
