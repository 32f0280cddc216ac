/**
 * Cases of the fault suite that fail today because of a hole not fixed yet (issue 17 item 1),
 * keyed "<fault class>: <case name>" → the hole. A listed case runs as `it.fails`: the suite
 * stays green, and this list shows exactly what is still open. When a fix lands the case
 * passes, `it.fails` turns red, and its entry must be removed.
 */
export const KNOWN_HOLES: Record<string, string> = {};
