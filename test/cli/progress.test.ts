/** Progress on long work: live per-path lines on a terminal, plain unrepeated lines elsewhere. */
import { describe, expect, it } from 'vitest';
import { expectedLineSamples, liveStatus, RunProgress } from '../../cli/progress.js';
import { parsePlan } from '../../core/plan.js';
import type { ResolvedPlan } from '../../core/resolved-plan.js';

function plan(): ResolvedPlan {
  const r = parsePlan({
    name: 'p',
    defaults: {
      client: { instanceId: 'local', region: 'local' },
      reboot: false,
      creditWaitSeconds: 0,
      probes: [{ kind: 'tcp-connect', count: 200, intervalMs: 10, timeoutMs: 400 }],
    },
    paths: [
      { id: 'A', label: 'a', target: { host: '127.0.0.1', port: 29101 } },
      { id: 'B', label: 'b', target: { host: '127.0.0.1', port: 29102 }, creditWaitSeconds: 30 },
    ],
  });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.plan;
}

const entered = (name: string, input: unknown) => ({
  type: 'StateEntered',
  timestamp: 0,
  state: { name, type: 'Task', input },
});

class Capture {
  text = '';
  isTTY?: boolean;
  columns = 200;
  constructor(tty: boolean) {
    this.isTTY = tty;
  }
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

/** The per-path events of a two-path run, with a poll loop that repeats. */
function feed(p: RunProgress, clock: { t: number }) {
  const A = { path: { id: 'A', creditWaitSeconds: 0 } };
  p.onEvent(entered('ValidatePlan', {}));
  p.onEvent(entered('BeginPath', A));
  p.onEvent(entered('SendProbe', A));
  const probe = { sentAt: new Date(clock.t).toISOString(), expectedSeconds: 10 };
  for (let i = 0; i < 3; i++) {
    p.onEvent(entered('WaitForProbe', { ...A, probe }));
    clock.t += 2000;
    p.onSamples({ pathId: 'A', samples: 40 * (i + 1) });
    p.onEvent(entered('PollProbe', { ...A, probe }));
  }
  p.onEvent(entered('CollectOutput', { ...A, probe }));
  p.onSamples({ pathId: 'A', samples: 200 });
  p.onEvent(entered('PathSucceeded', A));
  const B = { path: { id: 'B', creditWaitSeconds: 30 } };
  p.onEvent(entered('BeginPath', B));
  p.onEvent(entered('WaitForCredits', B));
}

describe('RunProgress', () => {
  it('prints one plain line per step change, never the poll loop again, and a final line per path', () => {
    const out = new Capture(false);
    const clock = { t: Date.parse('2026-12-01T00:00:00Z') };
    const p = new RunProgress(plan(), out, () => clock.t);
    feed(p, clock);
    p.onEvent(entered('RecordPathFailure', { path: { id: 'B' } }));
    p.onEvent(entered('PathFailed', { path: { id: 'B' } }));
    p.onEvent(entered('RestoreRoutes', {}));
    p.stop();
    expect(out.text.split('\n').filter(Boolean)).toEqual([
      'validating the plan',
      '[1/2 A] starting',
      '[1/2 A] probing',
      '[1/2 A] collecting',
      '✓ [1/2 A]  done  in 0:06  200/200 samples',
      '[2/2 B] starting',
      '[2/2 B] waiting for burst credits (about 0:30)',
      '[2/2 B] recording the failure',
      '✗ [2/2 B]  failed  in 0:00  0/200 samples',
      'restoring routes',
    ]);
  });

  it('on a terminal redraws one live line per path with step, elapsed, samples and time left', () => {
    const out = new Capture(true);
    const clock = { t: Date.parse('2026-12-01T00:00:00Z') };
    const p = new RunProgress(plan(), out, () => clock.t);
    const A = { path: { id: 'A', creditWaitSeconds: 0 } };
    p.onEvent(entered('BeginPath', A));
    const probe = { sentAt: new Date(clock.t).toISOString(), expectedSeconds: 10 };
    p.onEvent(entered('SendProbe', A));
    p.onEvent(entered('WaitForProbe', { ...A, probe }));
    clock.t += 4000;
    p.onSamples({ pathId: 'A', samples: 80 });
    p.onEvent(entered('PollProbe', { ...A, probe }));
    p.onEvent(entered('CollectOutput', A));
    // CollectOutput is a new step: the live line is redrawn with it.
    expect(out.text).toContain('▶ [1/2 A]  collecting  0:04  80/200 samples');
    p.onEvent(entered('PathSucceeded', A));
    p.stop();
    expect(out.text).toContain('✓ [1/2 A]  done  in 0:04  80/200 samples');
    // Redrawn in place: log-update erases the previous line with ANSI escapes.
    expect(out.text).toContain('\u001b[');
  });

  it('shows time left while probing', () => {
    const out = new Capture(true);
    const clock = { t: Date.parse('2026-12-01T00:00:00Z') };
    const p = new RunProgress(plan(), out, () => clock.t);
    const A = { path: { id: 'A' } };
    const probe = { sentAt: new Date(clock.t).toISOString(), expectedSeconds: 10 };
    p.onEvent(entered('BeginPath', A));
    clock.t += 3000;
    p.onEvent(entered('WaitForProbe', { ...A, probe }));
    expect(out.text).toContain('probing  0:03  0/200 samples  ~0:07 left');
    p.stop();
  });
});

describe('expectedLineSamples', () => {
  it('counts the probes that write one line per sample', () => {
    expect(
      expectedLineSamples([
        { kind: 'tcp-connect', name: 't', count: 100, intervalMs: 10, timeoutMs: 100 },
        {
          kind: 'http',
          name: 'h',
          count: 50,
          trials: 3,
          concurrency: 1,
          keepAlive: true,
          payloadBytes: 0,
          timeoutMs: 100,
        },
        { kind: 'mtu', name: 'm', min: 1200, max: 9001, timeoutMs: 100 },
      ]),
    ).toBe(250);
  });
});

describe('liveStatus', () => {
  it('prints each distinct message once when not on a terminal', () => {
    const out = new Capture(false);
    const s = liveStatus('lab: ', out);
    for (const m of ['namespaces', 'namespaces', 'calibrating A', 'calibrating A', 'calibrating B']) s.update(m);
    s.done('up');
    expect(out.text).toBe('lab: namespaces\nlab: calibrating A\nlab: calibrating B\nlab: up\n');
  });
});
