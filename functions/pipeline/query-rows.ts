/**
 * Rows of the summary's queries (queries/*.sql), as the QueryEngine port returns them, and the
 * one key every step uses for a group of samples: (path, probe, metric, unit).
 */
export type Row = Record<string, unknown>;

/** A group of samples: (path, probe, metric, unit). */
export const groupKey = (path: unknown, probe: unknown, metric: unknown, unit: unknown): string =>
  JSON.stringify([String(path), String(probe), String(metric), String(unit)]);

/** The group a query row belongs to. */
export const rowKey = (r: Row): string => groupKey(r.path, r.probe, r.metric, r.unit);

/** Rows grouped by a key, in their order. */
export function groupRows(rows: readonly Row[], key: (r: Row) => string): Map<string, Row[]> {
  const m = new Map<string, Row[]>();
  for (const r of rows) {
    const k = key(r);
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  }
  return m;
}
