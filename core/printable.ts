/**
 * Text that echoes user input, made safe for a terminal and a log line: control characters
 * (C0 but newline, DEL, C1 — ESC and CSI start terminal escape sequences), Unicode format
 * characters (bidi overrides and isolates, zero-width characters), line and paragraph
 * separators and lone surrogates are shown as `\uXXXX` escapes instead of acting on the display.
 * Node's util.stripVTControlCharacters removes ANSI sequences only, not bidi or C1 characters,
 * hence this one regular expression.
 */
const UNPRINTABLE = /(?![\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}]/gu;

/** Escapes what could act on a terminal; newlines are kept (messages span lines), JSON stays JSON. */
export function printable(text: string): string {
  // \uXXXX per UTF-16 unit: readable, and still valid inside a JSON string.
  return text.replace(UNPRINTABLE, (c) =>
    [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}

/** The first unprintable character of `text` (as "U+202E at position 3"), or undefined. */
export function firstUnprintable(text: string): string | undefined {
  const re = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}]/u;
  const m = re.exec(text);
  if (!m) return undefined;
  const code = m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `U+${code} at position ${m.index + 1}`;
}
