/**
 * Cases of the fault suite that fail today because of a hole not fixed yet (issue 17 item 1),
 * keyed "<fault class>: <case name>" → the hole. A listed case runs as `it.fails`: the suite
 * stays green, and this list shows exactly what is still open. When a fix lands the case
 * passes, `it.fails` turns red, and its entry must be removed.
 */
const NOT_COLLECTED =
  'the cleanup after a stop does not collect the raw output that reached the store: its samples never reach the sample files, the manifest or the query';
export const KNOWN_HOLES: Record<string, string> = {
  'stop in every state, then rerun: StopExecution while SendProbe runs; its Lambda finishes after the cleanup':
    "orch/locks: a SendProbe finishing after the stop's cleanup starts an agent (routes already put back) whose output nobody collects",
  'stop in every state, then rerun: StopExecution while PollProbe runs; its Lambda finishes after the cleanup':
    NOT_COLLECTED,
  'stop in every state, then rerun: StopExecution in WaitForProbe': NOT_COLLECTED,
  'stop in every state, then rerun: kill -9 in WaitForProbe: the rerun puts the routes back': `${NOT_COLLECTED} (routes: the local driver now cleans up after the abandoned run and puts them back)`,
};
