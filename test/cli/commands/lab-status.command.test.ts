/** `pathbench lab status` as text (formatLabStatus): what it says about calibration and routes. */
import { describe, expect, it } from 'vitest';
import { formatLabStatus } from '../../../cli/commands/lab.command.js';
import type { LabStatus } from '../../../lab/status.js';

const status = (over: Partial<LabStatus>): LabStatus => ({
  up: true,
  healthy: true,
  prefix: 'pb-',
  stateFile: '/run/pathbench-lab/pb/state.json',
  profile: 'one-way',
  namespaces: [],
  processes: [],
  delay: { mechanism: 'nfqueue', addedRttUs: { A: 420 }, clock: 'kernel-tcpi_rtt' },
  server: 'agent',
  routes: {},
  targets: [{ id: 'A', host: '10.0.2.10', ns: 'pb-a', rttMs: 0.5, label: 'symmetric' }],
  ports: { tcp: 7000, http: 8080, iperf3: 5201, sockperf: 11111, pingpong: 7007 },
  problems: [],
  notes: [],
  ...over,
});

describe('formatLabStatus', () => {
  it('an uncalibrated profile says its delays are as set, a star has no routes line, and the pingpong port is listed', () => {
    const text = formatLabStatus(status({}));
    expect(text).toContain('delay mechanism: nfqueue; delays as set (not calibrated); target servers: agent');
    expect(text).not.toContain('calibrated with');
    expect(text).not.toMatch(/^routes:/m);
    expect(text).toContain('pingpong 7007');
  });

  it('a calibrated lab names its clock and its routes', () => {
    const text = formatLabStatus(
      status({
        profile: 'seed-000',
        delay: {
          mechanism: 'nfqueue',
          addedRttUs: { A: 130 },
          clock: 'kernel-tcpi_rtt',
          calibration: { A: { targetMs: 0.21, measuredMs: 0.205 } },
        },
        routes: { 'pb-router': 'peering' } as LabStatus['routes'],
      }),
    );
    expect(text).toContain('delay mechanism: nfqueue; calibrated with kernel-tcpi_rtt;');
    expect(text).toMatch(/^routes: pb-router → peering$/m);
  });
});
