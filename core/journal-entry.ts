/**
 * The route journal's records (functions/pipeline/route-journal.ts): before SwapRoutes changes a
 * route it writes the route's original target to a write-once object of the run
 * (`runs/run=<id>/route-journal/<route hash>.json`), and the same entry with the run and its new
 * target to the route's index across runs (`runs/route-index/<route hash>/run=<id>.json`).
 */
import { z } from 'zod';
import { keys } from './keys.js';
import type { RouteEntry } from './resolved-plan.js';
import { type DocumentStore, type ListingStore, parseDocument, readStored } from './stored-document.js';

type RouteKey = Omit<RouteEntry, 'via'>;

export const journalEntrySchema = z.object({
  region: z.string(),
  routeTableId: z.string(),
  destination: z.string(),
  /** The target before the run touched the route ("none" when it did not exist). */
  original: z.string(),
  /** Whether the original was usable (active) then: a blackholed original is restored as blackholed. */
  originalUsable: z.boolean(),
  at: z.string(),
  pathId: z.string(),
});
export type JournalEntry = z.output<typeof journalEntrySchema>;

/** A journal entry as the route index holds it: which run changed the route, and to what. */
export const routeIndexEntrySchema = journalEntrySchema.extend({ runId: z.string(), via: z.string() });
export type RouteIndexEntry = z.output<typeof routeIndexEntrySchema>;

/** The run's journal entry of one route; undefined when the run has not changed it. */
export function readJournalEntry(
  store: DocumentStore,
  runId: string,
  route: RouteKey,
): Promise<JournalEntry | undefined> {
  return readStored(store, keys.routeJournal(runId, route), journalEntrySchema, 'route journal entry');
}

/** Every journal entry of the run, in key order. */
export async function readJournalEntries(store: ListingStore, runId: string): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for (const key of await store.list(keys.routeJournalPrefix(runId))) {
    const text = await store.getText(key);
    if (text !== undefined) out.push(parseDocument(key, text, journalEntrySchema, 'route journal entry'));
  }
  return out;
}

/** Every run's index entry for one route, in key order. */
export async function readRouteIndex(store: ListingStore, route: RouteKey): Promise<RouteIndexEntry[]> {
  const out: RouteIndexEntry[] = [];
  for (const key of await store.list(keys.routeIndexPrefix(route))) {
    const text = await store.getText(key);
    if (text !== undefined) out.push(parseDocument(key, text, routeIndexEntrySchema, 'route index entry'));
  }
  return out;
}
