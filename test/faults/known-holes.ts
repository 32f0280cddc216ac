/**
 * Cases of the fault suite that fail today because of a hole not fixed yet,
 * keyed "<fault class>: <case name>" → the hole. A listed case runs as `it.fails`: the suite
 * stays green, and this list shows exactly what is still open. When a fix lands the case
 * passes, `it.fails` turns red, and its entry must be removed.
 */
export const KNOWN_HOLES: Record<string, string> = {};

/**
 * Cases skipped because they fail intermittently: a real loss to find, not a flaky harness.
 * Keyed like KNOWN_HOLES. Empty: the last one (the execution timeout storing 480 of 1,034
 * measured samples) was the local runner reporting a killed command ended before its files
 * were copied; fixed in local/child-command-runner.ts, and made certain by the case "the killed
 * agent's files are still being copied …".
 */
export const INTERMITTENT: Record<string, string> = {};
