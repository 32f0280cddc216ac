/**
 * Rows of the summary's queries (queries/*.sql), as the QueryEngine port returns them, and the
 * one key every step uses for a group of samples: (path, probe, metric, unit).
 */
import type { QueryEngine } from '../ports.js';

export type Row = Record<string, unknown>;

/** `engine` with its `query` answered by `query` instead; every other call goes to the engine. */
export function withQuery(engine: QueryEngine, query: QueryEngine['query']): QueryEngine {
  return {
    query,
    registerPartition: (p, r) => engine.registerPartition(p, r),
    copyCall: (p, r) => engine.copyCall(p, r),
    execute: (c) => engine.execute(c),
    settle: (c) => engine.settle(c),
    selectCall: (sql, params) => engine.selectCall(sql, params),
    resultRows: (id) => engine.resultRows(id),
  };
}

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
