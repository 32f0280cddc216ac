/**
 * Text that echoes user input, made safe for a terminal and a log line: control characters
 * (C0 but newline, DEL, C1 — ESC and CSI start terminal escape sequences), Unicode format
 * characters (bidi overrides and isolates, zero-width characters), line and paragraph
 * separators and lone surrogates are shown as `\u{…}` escapes instead of acting on the display.
 * Node's util.stripVTControlCharacters removes ANSI sequences only, not bidi or C1 characters,
 * hence this one regular expression.
 */
const UNPRINTABLE = /(?![\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}]/gu;

/** Escapes what could act on a terminal; newlines are kept (messages span lines). */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`);
}

/** The first unprintable character of `text` (as "U+202E at position 3"), or undefined. */
export function firstUnprintable(text: string): string | undefined {
  const re = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}]/u;
  const m = re.exec(text);
  if (!m) return undefined;
  const code = m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `U+${code} at position ${m.index + 1}`;
}
