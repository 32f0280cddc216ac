/**
 * Progress on long work, on stderr. On a terminal: one live line per path (step, elapsed,
 * samples so far / expected, time left), redrawn in place by log-update; a finished path's
 * line stays. Elsewhere (CI logs, pipes): plain lines, one when a path enters a new step, never
 * repeated for the poll loop's Wait/Poll round trips.
 */
import { createLogUpdate } from 'log-update';
import { printable } from '../core/printable.js';
import type { ResolvedPlan } from '../core/resolved-plan.js';
import type { ExecutionEvent } from '../local/local-execution.js';
import type { ProbeSpec } from '../probes/index.js';

/** What a person calls each state of the per-path iteration (statemachine/measurement.asl.json). */
const STEP: Record<string, string> = {
  BeginPath: 'starting',
  StopClient: 'rebooting: stopping',
  WaitForStop: 'rebooting: stopping',
  CheckStopped: 'rebooting: stopping',
  StartClient: 'rebooting: starting',
  WaitForReady: 'rebooting: starting',
  CheckReady: 'rebooting: starting',
  WaitForCredits: 'waiting for burst credits',
  SwapRoutes: 'swapping routes',
  SendProbe: 'probing',
  WaitForProbe: 'probing',
  PollProbe: 'probing',
  CollectOutput: 'collecting',
  CopyToParquet: 'writing the Parquet copy',
  RecordPathFailure: 'recording the failure',
  CopyFailedPath: 'writing the kept samples’ Parquet copy',
};
const RUN_STEP: Record<string, string> = {
  ValidatePlan: 'validating the plan',
  RestoreRoutes: 'restoring routes',
  SummaryQueries: 'summarizing: running the queries',
  SummarizeRun: 'summarizing: writing the reports',
  ReleaseLock: 'releasing the lock',
  ReleaseLockAfterSummaryFailure: 'the summary failed: releasing the lock',
};

/** Samples a probe writes one line each for (tcp-connect, http); others report at the end. */
export function expectedLineSamples(probes: readonly ProbeSpec[]): number {
  let n = 0;
  for (const p of probes) {
    if (p.kind === 'tcp-connect') n += p.count;
    else if (p.kind === 'http') n += p.count * p.trials;
  }
  return n;
}

export interface ProgressStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

interface PathState {
  index: number;
  id: string;
  step: string;
  startedAt: number;
  stepEndsAt?: number;
  samples: number;
  expected: number;
  outcome?: 'done' | 'failed';
  endedAt?: number;
}

type StateInput = {
  path?: { id?: string; creditWaitSeconds?: number };
  probe?: { sentAt?: string; expectedSeconds?: number };
};

function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export class RunProgress {
  private readonly paths: PathState[] = [];
  private readonly expected = new Map<string, number>();
  private current?: PathState;
  private readonly live?: ReturnType<typeof createLogUpdate>;
  private readonly timer?: NodeJS.Timeout;
  private lastPlain = '';

  constructor(
    plan: ResolvedPlan,
    private readonly stream: ProgressStream = process.stderr,
    private readonly now: () => number = Date.now,
  ) {
    for (const p of plan.paths) this.expected.set(p.id, expectedLineSamples(p.probes));
    this.total = plan.paths.length;
    if (stream.isTTY) {
      this.live = createLogUpdate(stream as NodeJS.WriteStream, { showCursor: true });
      this.timer = setInterval(() => this.render(), 250);
      this.timer.unref();
    }
  }

  private readonly total: number;

  /** Feed every state machine event (runLocal's onEvent). */
  onEvent = (e: ExecutionEvent): void => {
    if (e.type !== 'StateEntered' || !e.state) return;
    const input = (e.state as { input?: StateInput }).input;
    const name = e.state.name;
    const pathId = input?.path?.id;
    if (name === 'PathSucceeded' || name === 'PathFailed') {
      if (this.current && (!pathId || pathId === this.current.id))
        this.finish(name === 'PathSucceeded' ? 'done' : 'failed');
      return;
    }
    if (pathId && STEP[name]) {
      if (this.current?.id !== pathId) this.begin(pathId);
      const p = this.current as PathState;
      const step = STEP[name];
      if (name === 'WaitForCredits') p.stepEndsAt = this.now() + (input?.path?.creditWaitSeconds ?? 0) * 1000;
      else if (step === 'probing' && input?.probe?.sentAt && input.probe.expectedSeconds !== undefined)
        p.stepEndsAt = Date.parse(input.probe.sentAt) + input.probe.expectedSeconds * 1000;
      else if (step !== p.step) p.stepEndsAt = undefined;
      if (name.startsWith('Failed')) return;
      this.setStep(p, step);
      return;
    }
    if (!pathId && RUN_STEP[name]) {
      if (this.current) this.finish(this.current.outcome ?? 'done');
      this.plain(RUN_STEP[name]);
    }
  };

  /** Feed the running agent's sample count (runLocal's onSamples). */
  onSamples = (s: { pathId: string; samples: number }): void => {
    if (this.current?.id === s.pathId) this.current.samples = s.samples;
  };

  /** Stop redrawing; leaves the last lines on the terminal. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.current && !this.current.outcome) this.render();
    this.live?.done();
  }

  private begin(pathId: string): void {
    if (this.current && !this.current.outcome) this.finish('done');
    const p: PathState = {
      index: this.paths.length + 1,
      id: pathId,
      step: '',
      startedAt: this.now(),
      samples: 0,
      expected: this.expected.get(pathId) ?? 0,
    };
    this.paths.push(p);
    this.current = p;
  }

  private setStep(p: PathState, step: string): void {
    if (step === p.step) return;
    p.step = step;
    if (this.live) this.render();
    else this.plain(`${this.tag(p)} ${step}${p.stepEndsAt ? ` (about ${clock(p.stepEndsAt - this.now())})` : ''}`);
  }

  private finish(outcome: 'done' | 'failed'): void {
    const p = this.current;
    if (!p || p.outcome) return;
    p.outcome = outcome;
    p.endedAt = this.now();
    if (this.live) {
      this.render();
      this.live.done();
    } else this.plain(this.line(p));
  }

  private tag(p: PathState): string {
    return `[${p.index}/${this.total} ${p.id}]`;
  }

  /** One path's line: live while it runs, final once it ended. */
  line(p: PathState): string {
    const elapsed = clock((p.endedAt ?? this.now()) - p.startedAt);
    const samples = p.expected > 0 ? `${p.samples}/${p.expected} samples` : p.samples > 0 ? `${p.samples} samples` : '';
    if (p.outcome) {
      const mark = p.outcome === 'done' ? '✓' : '✗';
      return [`${mark} ${this.tag(p)}`, p.outcome === 'done' ? 'done' : 'failed', `in ${elapsed}`, samples]
        .filter(Boolean)
        .join('  ');
    }
    const left = p.stepEndsAt !== undefined ? `~${clock(p.stepEndsAt - this.now())} left` : '';
    return [`▶ ${this.tag(p)}`, p.step || 'starting', elapsed, samples, left].filter(Boolean).join('  ');
  }

  private render(): void {
    if (!this.live || !this.current) return;
    const text = printable(this.line(this.current));
    const width = this.stream.columns ?? 120;
    this.live(text.length > width ? `${text.slice(0, width - 1)}…` : text);
  }

  private plain(line: string): void {
    // Lines show path labels, notes and errors: nothing in them may act on the terminal.
    const text = printable(line);
    if (this.live) {
      if (this.current && !this.current.outcome) return;
      this.stream.write(`${text}\n`);
      return;
    }
    if (text === this.lastPlain) return;
    this.lastPlain = text;
    this.stream.write(`${text}\n`);
  }
}

/**
 * A status that changes over long work (lab up, calibration, bench phases): redrawn in place
 * on a terminal, one plain line per distinct message elsewhere.
 */
export function liveStatus(
  prefix: string,
  stream: ProgressStream = process.stderr,
): {
  update(message: string): void;
  done(final?: string): void;
} {
  let last = '';
  if (stream.isTTY) {
    const live = createLogUpdate(stream as NodeJS.WriteStream, { showCursor: true });
    return {
      update: (m) => live(`${prefix}${m}`),
      done: (final) => {
        if (final) live(`${prefix}${final}`);
        live.done();
      },
    };
  }
  return {
    update: (m) => {
      if (m === last) return;
      last = m;
      stream.write(`${prefix}${m}\n`);
    },
    done: (final) => {
      if (final && final !== last) stream.write(`${prefix}${final}\n`);
    },
  };
}
