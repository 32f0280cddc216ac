/**
 * `pathbench sql` (cli/commands/sql.command.ts): the rows as a table, CSV and JSON, and the Athena
 * engine it uses with --aws, against the SDK's real command shapes (mocked at the AWS boundary).
 * The local engine, as typed, is in test/local/pipeline.int.test.ts and the acceptance suite.
 */
import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { formatRows, runSql, runSqlOn } from '../../../cli/commands/sql.command.js';
import { AthenaQueryEngine } from '../../../functions/adapters/aws/athena-query.js';

const athena = mockClient(AthenaClient);
const engine = new AthenaQueryEngine(new AthenaClient({ region: 'ap-northeast-1' }), {
  workgroup: 'pathbench',
  database: 'pathbench',
  bucket: 'pb-data',
  maxWaitMs: 1_000,
  sleep: async () => {},
});
const row = (...v: (string | undefined)[]) => ({ Data: v.map((x) => (x === undefined ? {} : { VarCharValue: x })) });

beforeEach(() => athena.reset());

describe('pathbench sql', () => {
  const rows = [
    { path_id: 'A', method: 'transit-gateway', n: 300, note: null },
    { path_id: 'B,2', method: '=cmd', n: 12, note: 'say "hi"' },
  ];

  it('prints a table with numbers right-aligned and the row count', () => {
    expect(formatRows(rows, 'table')).toBe(
      [
        'path_id  method             n  note',
        '-------  ---------------  ---  --------',
        'A        transit-gateway  300',
        'B,2      =cmd              12  say "hi"',
        '(2 rows)',
        '',
      ].join('\n'),
    );
    expect(formatRows([], 'table')).toBe('(no rows)\n');
  });

  it('prints CSV a spreadsheet reads as data, and JSON that parses back to the rows', () => {
    expect(formatRows(rows, 'csv')).toBe(
      'path_id,method,n,note\nA,transit-gateway,300,\n"B,2",\'=cmd,12,"say ""hi"""\n',
    );
    expect(JSON.parse(formatRows(rows, 'json'))).toEqual(rows);
  });

  it('with --aws sends the statement to Athena in the pathbench workgroup and prints its typed rows', async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
    athena.on(GetQueryExecutionCommand).resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
    athena.on(GetQueryResultsCommand).resolves({
      ResultSet: {
        ResultSetMetadata: {
          ColumnInfo: [
            { Name: 'path_id', Type: 'varchar' },
            { Name: 'n', Type: 'bigint' },
          ],
        },
        Rows: [row('path_id', 'n'), row('A', '300')],
      },
    });
    let printed = '';
    const sql = "SELECT path_id, count(*) AS n FROM paths WHERE method = 'transit-gateway' GROUP BY 1";
    expect(await runSqlOn(sql, engine, 'json', (t) => (printed += t))).toBe(0);
    expect(JSON.parse(printed)).toEqual([{ path_id: 'A', n: 300 }]);
    const start = athena.commandCalls(StartQueryExecutionCommand)[0].args[0].input;
    expect(start).toMatchObject({
      QueryString: sql,
      WorkGroup: 'pathbench',
      QueryExecutionContext: { Database: 'pathbench' },
    });
    // no parameters: Athena refuses an empty ExecutionParameters list
    expect(start.ExecutionParameters).toBeUndefined();
  });

  it('says why Athena refused the SQL, as Athena said it', async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-2' });
    athena.on(GetQueryExecutionCommand).resolves({
      QueryExecution: {
        Status: { State: 'FAILED', StateChangeReason: "COLUMN_NOT_FOUND: line 1:8: Column 'nope' cannot be resolved" },
      },
    });
    await expect(runSqlOn('SELECT nope FROM paths', engine, 'table', () => {})).rejects.toThrow(
      /query sql FAILED: COLUMN_NOT_FOUND: .*'nope'/,
    );
  });

  it('refuses --csv with --json and an empty statement before opening any engine', async () => {
    await expect(runSql('SELECT 1', { data: '/nonexistent', csv: true, json: true }, {}, () => {})).rejects.toThrow(
      '--csv and --json: choose one',
    );
    await expect(runSql('  ', { data: '/nonexistent' }, {}, () => {})).rejects.toThrow(/no SQL given/);
  });
});
