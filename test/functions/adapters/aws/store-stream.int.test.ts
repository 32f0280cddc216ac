/**
 * S3ObjectStore's streaming read and write against a real S3 server (s3rver on loopback) with
 * the real SDK over HTTP: a body over one part goes up as a multipart upload and comes back
 * byte for byte as lines; a small body is one PutObject; a body that fails part-way leaves no
 * object (the upload is aborted).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { S3ObjectStore } from '../../../../functions/adapters/aws/s3-store.js';
import { splitLines } from '../../../../probes/parsing/lines.js';

const PART = 5 * 1024 * 1024;
/** The part of s3rver used here (it ships no type declarations). */
interface S3rverServer {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
let server: S3rverServer;
let dir: string;
let s3: S3Client;
let store: S3ObjectStore;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-s3rver-'));
  const name = 's3rver';
  const { default: S3rver } = (await import(name)) as { default: new (o: object) => S3rverServer };
  server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir });
  const { port } = await server.run();
  s3 = new S3Client({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'pb-data' }));
  store = new S3ObjectStore(s3, 'pb-data', PART);
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  s3?.destroy();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The names of the commands the store sends from now on (the real client still sends them). */
function spySent(): string[] {
  const names: string[] = [];
  const real = s3.send.bind(s3);
  vi.spyOn(s3, 'send').mockImplementation(((cmd: { constructor: { name: string } }) => {
    names.push(cmd.constructor.name);
    return real(cmd as never);
  }) as never);
  return names;
}

async function* lines(n: number, failAt?: number): AsyncGenerator<string> {
  for (let i = 0; i < n; i++) {
    if (i === failAt) throw new Error('producer failed');
    yield `${JSON.stringify({ seq: i, pad: 'x'.repeat(100) })}\n`;
  }
}

describe('S3ObjectStore streaming on s3rver', () => {
  it('writes a body of several parts as a multipart upload and reads it back line by line', async () => {
    const n = 120_000; // ≈ 14 MB: three parts of 5 MiB
    const sent = spySent();
    await store.putStream('samples/path=A/run=r/big.jsonl', lines(n));
    expect(sent.splice(0)).toEqual([
      'CreateMultipartUploadCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'CompleteMultipartUploadCommand',
    ]);
    const chunks = await store.getStream('samples/path=A/run=r/big.jsonl');
    expect(chunks).toBeDefined();
    let count = 0;
    let lastSeq = -1;
    for await (const l of splitLines(chunks as AsyncIterable<Uint8Array>)) {
      const o = JSON.parse(l.text) as { seq: number };
      expect(o.seq).toBe(lastSeq + 1);
      lastSeq = o.seq;
      count++;
    }
    expect(count).toBe(n);
  }, 60_000);

  it('writes a small body as one object, and a missing key streams as undefined', async () => {
    await store.putStream('small.jsonl', lines(3));
    expect((await store.getText('small.jsonl'))?.split('\n').length).toBe(4);
    expect(await store.getStream('nope.jsonl')).toBeUndefined();
  });

  it('a body that fails part-way leaves no object and no open upload', async () => {
    const sent = spySent();
    await expect(store.putStream('failed.jsonl', lines(120_000, 80_000))).rejects.toThrow('producer failed');
    // s3rver has no ListMultipartUploads: the abort is checked as the command the store sent.
    expect(sent.splice(0)).toEqual([
      'CreateMultipartUploadCommand',
      'UploadPartCommand', // ≈ 9.6 MB made before the failure: one full part up, the rest dropped
      'AbortMultipartUploadCommand',
    ]);
    expect(await store.get('failed.jsonl')).toBeUndefined();
  }, 60_000);
});
