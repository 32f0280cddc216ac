/**
 * Cases of the fault suite that fail today because of a hole another change is fixing
 * (issue 17 item 1), keyed "<fault class>: <case name>" → the hole. A listed case runs as
 * `it.fails`: the suite stays green, and this list shows exactly what is still open. When a fix
 * lands the case passes, `it.fails` turns red, and its entry must be removed.
 */
export const KNOWN_HOLES: Record<string, string> = {
  'concurrent starts: a start refused for reusing a running run id leaves that run its lock':
    "locks: the refused start's ReleaseLockAfterReject deletes the first run's lock, a third run runs alongside",
  'Lambda throttling / 5xx: PollProbe: Lambda.Unknown once is retried, not a failed path':
    'orch: Lambda.Unknown is not retried, the path fails at once',
  'Lambda throttling / 5xx: PollProbe: Lambda.InternalError once is retried, not a failed path':
    'orch: Lambda.InternalError is not retried, the path fails at once',
  'capacity failure on start: the start fails once for capacity: retried or recorded, the next path still measures':
    'orch: a start failing for capacity leaves the client stopped; the next reboot: false path fails at SendProbe (InvalidInstanceId)',
  'routes pre-existing / blackholed / every kind: original via local gateway: swapped, then put back as it was':
    "routes: an original via a local gateway reads as 'none', so the restore deletes the route",
  'routes pre-existing / blackholed / every kind: original via carrier gateway: swapped, then put back as it was':
    "routes: an original via a carrier gateway reads as 'none', so the restore deletes the route",
  'routes pre-existing / blackholed / every kind: original via core network: swapped, then put back as it was':
    "routes: an original via a core network reads as 'none', so the restore deletes the route",
  'routes pre-existing / blackholed / every kind: the local route: refused before any change, naming the route, or pointed at an appliance and reset to local':
    "routes: a 'local' original cannot be restored (gatewayId:local is rejected; ReplaceRoute needs LocalTarget)",
  'routes pre-existing / blackholed / every kind: no route to the destination before: created for the run, removed after':
    'routes: EC2 answers ReplaceRoute on a missing route with InvalidParameterValue, not InvalidRoute.NotFound, so the adapter never falls back to CreateRoute',
  'routes pre-existing / blackholed / every kind: a blackholed original (its ENI detached): put back as it was and reported restored':
    'routes: a blackholed original is put back but verify wants it active, so the restore is reported failed',
  'routes pre-existing / blackholed / every kind: ReplaceRoute fails with a 5xx during the restore: retried until every route is back':
    'routes/orch: RestoreRoutes turns a transient EC2 error into RouteSwapError, which no Retry matches; locally nothing retries, the route stays swapped',
  'stop in every state, then rerun: StopExecution while ValidatePlan runs; its Lambda finishes after the cleanup':
    "locks: a ValidatePlan finishing after the stop's cleanup takes the lock for an execution that has ended; the next run is locked out",
  'stop in every state, then rerun: StopExecution while SwapRoutes runs; its Lambda finishes after the cleanup':
    'routes: a SwapRoutes finishing after the cleanup leaves its routes swapped, and the rerun records them as originals',
  'stop in every state, then rerun: StopExecution between the two route swaps of SwapRoutes (the cleanup runs in between)':
    'routes: the cleanup restored the first route and released the lock, then the running task swapped the second, which stays swapped',
  'stop in every state, then rerun: StopExecution while SendProbe runs; its Lambda finishes after the cleanup':
    "orch/locks: a SendProbe finishing after the stop's cleanup starts an agent (routes already put back) whose output nobody collects",
  'stop in every state, then rerun: StopExecution while PollProbe runs; its Lambda finishes after the cleanup':
    'the cleanup after a stop does not collect the raw output that reached the store: its samples never reach the sample files, the manifest or the query (no helper owns this yet)',
  'stop in every state, then rerun: StopExecution in WaitForProbe':
    'the cleanup after a stop does not collect the raw output that reached the store: its samples never reach the sample files, the manifest or the query (no helper owns this yet)',
  'stop in every state, then rerun: kill -9 in SwapRoutes: the rerun puts the routes back':
    'routes: after a kill -9 nothing cleans up locally and the next run records the swapped routes as the originals',
  'stop in every state, then rerun: kill -9 in WaitForProbe: the rerun puts the routes back':
    'routes: after a kill -9 nothing cleans up locally and the next run records the swapped routes as the originals; the cleanup after a stop does not collect the raw output that reached the store: its samples never reach the sample files, the manifest or the query (no helper owns this yet)',
  'malformed / truncated raw and manifests: one damaged line of twenty: the other nineteen are kept':
    'parse: one damaged line drops the whole raw file (19 measured, 0 stored)',
  'malformed / truncated raw and manifests: a raw file cut mid-line: its complete lines are kept':
    'parse: a raw file cut mid-line after a successful command is dropped whole',
  'malformed / truncated raw and manifests: a sequence number above 2^31: stored, and the run reports':
    'parse: a seq above 2^31 breaks the samples view (DuckDB cast), so SummarizeRun and the run fail',
  'Lambda crash after the side effect: SendProbe dies between SendCommand and the manifest write: the retry starts no second agent':
    'locks: SendCommand is not idempotent; the retried SendProbe starts a second agent writing the same raw keys',
  'history-limit pressure: a plan with more paths than one execution history holds is refused by ValidatePlan, naming the limit':
    'orch: no limit on path count (10,000 paths accepted; at >= 34 history events a path, 736 cannot fit)',
};
