/** What a local execution of a state machine records and returns (local/asl-interpreter.ts). */

export interface ExecutionEvent {
  type: string;
  timestamp: number;
  state?: { name: string; type: string };
  Error?: string;
  Cause?: string;
  index?: number;
  /**
   * Set on events of a child execution: its name (a Distributed Map's `<run>/<map label>/<round
   * key>/<index>`, a started execution's `<parent>/<state>/<index>`).
   */
  execution?: string;
  /** Order of arrival over the parent and all its child executions (timestamps tie at 1 ms). */
  seq?: number;
}

/** One child execution: of an emulated Distributed Map, or started by a `.sync:2` Task. */
export interface ChildExecution {
  name: string;
  /** The state that ran it (the Distributed Map, or the Task). */
  state: string;
  index: number;
  status: 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  events: ExecutionEvent[];
  error?: { name: string; message: string };
}

export interface RunMachineResult {
  status: 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  output?: unknown;
  error?: { name: string; message: string };
  /** The execution's own events (a Distributed Map's children have theirs in `children`). */
  events: ExecutionEvent[];
  /** Child executions (Distributed Maps', started executions' and theirs), in the order they finished. */
  children: ChildExecution[];
}

/**
 * Step Functions history events an interpreter event log stands for: each event is one, and a
 * Task visit adds scheduled, started and succeeded (AWS writes 5 events where the interpreter
 * logs entered and exited), a retry adds 3 (scheduled, started, failed).
 */
export function awsEventsOf(events: readonly ExecutionEvent[]): number {
  let n = 0;
  for (const e of events) {
    n++;
    if (e.type === 'StateEntered' && e.state?.type === 'Task') n += 3;
    if (e.type === 'StateRetried') n += 3;
  }
  return n;
}

/** An execution's events with those of every child execution it started, in order of arrival. */
export function allEvents(r: Pick<RunMachineResult, 'events' | 'children'>): ExecutionEvent[] {
  return [...r.events, ...r.children.flatMap((c) => c.events)].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
}
