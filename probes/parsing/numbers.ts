/**
 * Numbers in tools' text output are decimal. JavaScript's Number() also reads "0x1f", "0b11",
 * "0o7" and "Infinity", which no tool writes: a raw file saying so is damaged or forged, so such
 * a field reads as not a number (NaN) and its line is rejected naming the field.
 */
const DECIMAL = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/** `text` as a decimal number (surrounding spaces allowed), else NaN. */
export function decimal(text: string): number {
  return DECIMAL.test(text) ? Number(text) : Number.NaN;
}
