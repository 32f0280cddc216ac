/** classifyPing on real ping texts and parseMtu on files that are not the mtu runner's output (no ping, no network). */
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../core/errors.js';
import { parseMtu } from '../../../probes/mtu/mtu.parser.js';
import { classifyPing } from '../../../probes/mtu/mtu.runner.js';

const meta = { runId: 'r1', pathId: 'p1', probe: 'mtu', trial: 1 };

describe('classifyPing / parseMtu edge cases', () => {
  it('reads real ping texts', () => {
    expect(classifyPing('', 'ping: local error: message too long, mtu=1400\n', 1)).toEqual({
      outcome: 'too-big',
      localMtu: 1400,
    });
    expect(classifyPing('From 10.0.0.1 icmp_seq=1 Frag needed and DF set (mtu = 8500)\n', '', 1)).toEqual({
      outcome: 'too-big',
      localMtu: 8500,
    });
    expect(classifyPing('1 packets transmitted, 0 received, 100% packet loss', '', 1)).toEqual({ outcome: 'no-reply' });
  });

  it('rejects files that are not the mtu runner output', () => {
    expect(() => parseMtu('PING 127.0.0.1', meta)).toThrow(ParseError);
    expect(() => parseMtu('{"tool":"ping","result":{"status":"ok","mtu":0}}', meta)).toThrow(/positive integer/);
    expect(() => parseMtu('{"tool":"ping","result":{"status":"weird"}}', meta)).toThrow(/unknown mtu result/);
  });
});
