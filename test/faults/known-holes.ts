/**
 * Cases of the fault suite that fail today because of a hole not fixed yet (issue 17 item 1),
 * keyed "<fault class>: <case name>" → the hole. A listed case runs as `it.fails`: the suite
 * stays green, and this list shows exactly what is still open. When a fix lands the case
 * passes, `it.fails` turns red, and its entry must be removed.
 */
const NOT_COLLECTED =
  'the cleanup after a stop does not collect the raw output that reached the store: its samples never reach the sample files, the manifest or the query';
const KILLED =
  'after a kill -9 nothing cleans up AWS-kind routes locally (the route journal covers the lab), so the rerun records the swapped routes as the originals';

export const KNOWN_HOLES: Record<string, string> = {
  'routes pre-existing / blackholed / every kind: no route to the destination before: created for the run, removed after':
    'routes: EC2 answers ReplaceRoute on a missing route with InvalidParameterValue, not InvalidRoute.NotFound, so the adapter never falls back to CreateRoute',
  'routes pre-existing / blackholed / every kind: ReplaceRoute fails with a 5xx during the restore: retried until every route is back':
    'routes/orch: RestoreRoutes turns a transient EC2 error into RouteSwapError, which no Retry matches; locally nothing retries, the route stays swapped',
  'stop in every state, then rerun: kill -9 in SwapRoutes: the rerun puts the routes back': `routes: ${KILLED}`,
  'stop in every state, then rerun: kill -9 in WaitForProbe: the rerun puts the routes back': `routes: ${KILLED}; ${NOT_COLLECTED}`,
};
