/**
 * The analysts' views of queries/views/ as the stack stores them (infra/constructs/data-lake.ts
 * makes each a Glue view from viewDefinitions()): the name, the SELECT and the `-- columns:` line
 * of each file, the line held to DuckDB's own DESCRIBE of the view over the empty tables.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { queryNames, trinoType, viewDefinitions } from '../../queries/sql.js';
import { tempDataDir } from '../helpers/samples.js';

let dir: string;
let engine: DuckDbQueryEngine;
beforeAll(async () => {
  dir = await tempDataDir('views');
  engine = await DuckDbQueryEngine.open(dir);
});
afterAll(async () => {
  await engine?.close();
  await rm(dir, { recursive: true, force: true });
});

/** DuckDB's type names as the Hive (Glue) names the DDL uses. */
const HIVE: Record<string, string> = {
  VARCHAR: 'string',
  INTEGER: 'int',
  BIGINT: 'bigint',
  DOUBLE: 'double',
  BOOLEAN: 'boolean',
  FLOAT: 'float',
};

describe('viewDefinitions', () => {
  it('reads every file of queries/views/: its name, its SELECT, its columns', () => {
    const views = viewDefinitions();
    expect(views.map((v) => `views/${v.name}`)).toEqual(queryNames().filter((n) => n.startsWith('views/')));
    for (const v of views) {
      expect(v.select).toMatch(/^SELECT\s/);
      expect(v.select).not.toMatch(/;\s*$/);
      expect(v.columns.length).toBeGreaterThan(0);
    }
  });

  it.each(viewDefinitions().map((v) => [v.name, v]))('%s: the columns line is what DuckDB describes', async (_n, v) => {
    const described = await engine.query(`DESCRIBE ${v.name}`, [], 'describe view');
    expect(described.map((r) => ({ name: r.column_name, type: HIVE[String(r.column_type)] ?? r.column_type }))).toEqual(
      v.columns,
    );
  });

  it('names each Hive type as Trino does, and refuses one it does not know', () => {
    expect(['string', 'int', 'bigint', 'double', 'boolean', 'float'].map(trinoType)).toEqual([
      'varchar',
      'integer',
      'bigint',
      'double',
      'boolean',
      'real',
    ]);
    expect(() => trinoType('map<string,int>')).toThrow(/no Trino type for the Hive type map<string,int>/);
  });
});
