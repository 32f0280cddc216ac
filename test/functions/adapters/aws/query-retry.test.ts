/**
 * The real Athena client's own retries of one StartQueryExecution keep its ClientRequestToken
 * (so they start one execution), while a second query() call sends a new one. No network: the
 * client's HTTP handler is replaced by an in-process one that fails the first start with a 500.
 */
import { AthenaClient } from '@aws-sdk/client-athena';
import { describe, expect, it } from 'vitest';
import { AthenaQueryEngine } from '../../../../functions/adapters/aws/athena-query.js';

interface SentRequest {
  headers: Record<string, string>;
  body?: unknown;
}

/** Answers Athena JSON calls by operation; records every StartQueryExecution body. */
function fakeAthenaHttp(starts: { ClientRequestToken: string }[]) {
  let failNextStart = true;
  const reply = (statusCode: number, body: unknown) => ({
    response: {
      statusCode,
      reason: statusCode === 200 ? 'OK' : 'Internal Server Error',
      headers: { 'content-type': 'application/x-amz-json-1.1' },
      body: new TextEncoder().encode(JSON.stringify(body)),
    },
  });
  return {
    handle: async (req: SentRequest) => {
      const target = req.headers['x-amz-target'] ?? req.headers['X-Amz-Target'];
      if (target === 'AmazonAthena.StartQueryExecution') {
        starts.push(JSON.parse(String(req.body)) as { ClientRequestToken: string });
        if (failNextStart) {
          failNextStart = false;
          return reply(500, { __type: 'InternalServerException', Message: 'try again' });
        }
        return reply(200, { QueryExecutionId: `q-${starts.length}` });
      }
      if (target === 'AmazonAthena.GetQueryExecution') {
        return reply(200, { QueryExecution: { Status: { State: 'SUCCEEDED' } } });
      }
      if (target === 'AmazonAthena.GetQueryResults') {
        return reply(200, { ResultSet: { ResultSetMetadata: { ColumnInfo: [] }, Rows: [] } });
      }
      return reply(400, { __type: 'InvalidRequestException', Message: `unexpected ${target}` });
    },
    updateHttpClientConfig: () => {},
    httpHandlerConfigs: () => ({}),
  };
}

describe('AthenaQueryEngine with the real SDK retry', () => {
  it('reuses the token across SDK retries of one call and sends a new one for the next call', async () => {
    const starts: { ClientRequestToken: string }[] = [];
    const client = new AthenaClient({
      region: 'ap-northeast-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      maxAttempts: 3,
      requestHandler: fakeAthenaHttp(starts),
    });
    const engine = new AthenaQueryEngine(client, {
      workgroup: 'pathbench',
      database: 'pathbench',
      bucket: 'pb-data',
      sleep: async () => {},
    });
    await engine.query('SELECT 1', [], 'one');
    // First call: a 500, then the SDK's retry with the very same token.
    expect(starts).toHaveLength(2);
    expect(starts[1].ClientRequestToken).toBe(starts[0].ClientRequestToken);
    await engine.query('SELECT 1', [], 'one');
    expect(starts).toHaveLength(3);
    expect(starts[2].ClientRequestToken).not.toBe(starts[0].ClientRequestToken);
    expect(starts[2].ClientRequestToken).toMatch(/^[0-9a-f]{64}$/);
  });
});
