/**
 * Cases of the fault suite that fail today because of a hole not fixed yet (issue 17 item 1),
 * keyed "<fault class>: <case name>" → the hole. A listed case runs as `it.fails`: the suite
 * stays green, and this list shows exactly what is still open. When a fix lands the case
 * passes, `it.fails` turns red, and its entry must be removed.
 */
export const KNOWN_HOLES: Record<string, string> = {};

/**
 * Cases skipped because they fail intermittently: a real loss to find, not a flaky harness
 * (the last CI run stored 480 of 1,034 measured samples once). Open: see the closing note.
 */
export const INTERMITTENT: Record<string, string> = {};
