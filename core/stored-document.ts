/**
 * Reading what pathbench stored, checked: each stored document has one zod schema (its own module
 * in core/), and every read parses the JSON with it once. A document that does not match fails
 * with the key and the first field that is wrong, instead of flowing on as a lie about its type.
 * The same parse serves other JSON pathbench reads (a service's answer, a local state file).
 */
import { z } from 'zod';
import { DocumentInvalidError } from './errors.js';
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
 * Parse `text`, found at `where` (a stored document's key), as `what` (e.g. "run manifest").
 * Throws DocumentInvalidError naming where and the first wrong field (and how many more there are).
 */
export function parseDocument<S extends z.ZodType>(where: string, text: string, schema: S, what: string): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new DocumentInvalidError(
      `${where} is not valid JSON (${printable(e instanceof Error ? e.message : String(e))}): not a readable ${what}`,
    );
  }
  return checkDocument(where, json, schema, what);
}

/** Like {@link parseDocument}, for JSON already parsed. */
export function checkDocument<S extends z.ZodType>(where: string, json: unknown, schema: S, what: string): z.output<S> {
  const parsed = schema.safeParse(json, { error: fallbackMessage });
  if (parsed.success) return parsed.data;
  const lines = problemLines(json, issueProblems(parsed.error.issues), 'document');
  const more = lines.length > 1 ? ` (and ${lines.length - 1} more problem${lines.length > 2 ? 's' : ''})` : '';
  throw new DocumentInvalidError(`${where} is not a valid ${what}: ${lines[0]}${more}`);
}

/** The document at `key`, parsed and checked; undefined when there is none. */
export async function readStored<S extends z.ZodType>(
  store: DocumentStore,
  key: string,
  schema: S,
  what: string,
): Promise<z.output<S> | undefined> {
  const text = await store.getText(key);
  return text === undefined ? undefined : parseDocument(key, text, schema, what);
}
