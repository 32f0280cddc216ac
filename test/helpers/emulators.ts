/**
 * Real servers for the AWS adapters, started by the emulator tests on loopback (port 0):
 * dynalite (DynamoDB) and s3rver (S3). The real SDK clients talk to them over HTTP.
 */

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CreateTableCommand, DynamoDBClient, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

const require = createRequire(import.meta.url);
const SERVER = join(import.meta.dirname, 's3rver-server.mjs');
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface Dynamo {
  client: DynamoDBClient;
  endpoint: string;
  close(): Promise<void>;
}

/** dynalite in memory; `table` is created with the lock table's key schema (pk: S). */
export async function startDynalite(table?: string): Promise<Dynamo> {
  const dynalite = require('dynalite') as (o: Record<string, unknown>) => Server;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({ endpoint, region: 'ap-northeast-1', credentials, maxAttempts: 1 });
  if (table) {
    await client.send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1, maxDelay: 2 }, { TableName: table });
  }
  return {
    client,
    endpoint,
    close: async () => {
      client.destroy();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
}

export interface S3 {
  client: S3Client;
  endpoint: string;
  close(): Promise<void>;
}

/** s3rver (its own process, see s3rver-server.mjs) over a temporary directory, with `bucket` created. */
export async function startS3rver(bucket: string): Promise<S3> {
  const directory = await mkdtemp(join(tmpdir(), 'pathbench-s3rver-'));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', SERVER, directory], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  const first = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
  const port = Number(first.value);
  if (first.done || !Number.isInteger(port)) {
    child.kill();
    throw new Error('s3rver did not start');
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'ap-northeast-1',
    credentials,
    forcePathStyle: true,
    maxAttempts: 1,
    // s3rver predates the SDK's default CRC32 trailers (aws-chunked uploads); S3 itself needs none.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    client,
    endpoint,
    close: async () => {
      client.destroy();
      child.stdin.end();
      await exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}
