/**
 * Reading what pathbench stored, checked: each stored document has one zod schema (its own module
 * in core/), and every read parses the JSON with it once. A document that does not match fails
 * with the key and the first field that is wrong, instead of flowing on as a lie about its type.
 */
import { z } from 'zod';
import { StoredDocumentError } from './errors.js';
import { printable } from './printable.js';
import { fallbackMessage, issueProblems, problemLines } from './zod-problems.js';

/**
 * What a reader needs of the store: the ObjectStore port's (core/ports.ts) text read. Its own
 * interface, since the port names documents (the summary) and so imports their modules.
 */
export interface DocumentStore {
  getText(key: string): Promise<string | undefined>;
}
/** What a reader of all the documents under a prefix needs (ObjectStore's list). */
export interface ListingStore extends DocumentStore {
  list(prefix: string): Promise<string[]>;
}

/**
 * A number as JSON.stringify wrote it: a NaN or an infinity (a ratio over zero, a statistic of
 * nothing) was written as null, and reads back as NaN rather than failing the whole document.
 */
export const jsonNumber = z.union([z.number(), z.null().transform(() => Number.NaN)]);

/**
 * Parse `text`, stored at `key`, as `what` (e.g. "run manifest"). Throws StoredDocumentError
 * naming the key and the first wrong field (and how many more there are).
 */
export function parseStored<S extends z.ZodType>(key: string, text: string, schema: S, what: string): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new StoredDocumentError(
      `${key} is not valid JSON (${printable(e instanceof Error ? e.message : String(e))}): not a readable ${what}`,
    );
  }
  return checkStored(key, json, schema, what);
}

/** Like {@link parseStored}, for JSON already parsed. */
export function checkStored<S extends z.ZodType>(key: string, json: unknown, schema: S, what: string): z.output<S> {
  const parsed = schema.safeParse(json, { error: fallbackMessage });
  if (parsed.success) return parsed.data;
  const lines = problemLines(json, issueProblems(parsed.error.issues), 'document');
  const more = lines.length > 1 ? ` (and ${lines.length - 1} more problem${lines.length > 2 ? 's' : ''})` : '';
  throw new StoredDocumentError(`${key} is not a valid ${what}: ${lines[0]}${more}`);
}

/** The document at `key`, parsed and checked; undefined when there is none. */
export async function readStored<S extends z.ZodType>(
  store: DocumentStore,
  key: string,
  schema: S,
  what: string,
): Promise<z.output<S> | undefined> {
  const text = await store.getText(key);
  return text === undefined ? undefined : parseStored(key, text, schema, what);
}
