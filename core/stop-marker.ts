/**
 * The stop marker (`runs/run=<id>/stopped.json`): written by the cleanup after an execution
 * ended FAILED, TIMED_OUT or ABORTED, before it restores routes (functions/pipeline/abandoned-run.ts).
 * A SwapRoutes or ValidatePlan still running finds it and stops; its presence is what counts.
 */
import { z } from 'zod';
import { keys } from './keys.js';
import { type DocumentStore, parseDocument, readStored } from './stored-document.js';

export const stopMarkerSchema = z.object({
  runId: z.string(),
  /** The execution's end status that made the cleanup stop the run (e.g. "ABORTED"). */
  status: z.string(),
  at: z.string(),
});
export type StopMarker = z.output<typeof stopMarkerSchema>;

/** A stop marker's text, parsed and checked. */
export function parseStopMarker(runId: string, text: string): StopMarker {
  return parseDocument(keys.runStopped(runId), text, stopMarkerSchema, 'stop marker');
}

/** The run's stop marker; undefined when the run was not stopped. */
export function readStopMarker(store: DocumentStore, runId: string): Promise<StopMarker | undefined> {
  return readStored(store, keys.runStopped(runId), stopMarkerSchema, 'stop marker');
}
