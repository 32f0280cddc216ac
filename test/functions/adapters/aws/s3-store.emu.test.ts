/**
 * S3ObjectStore with the real SDK against s3rver (an S3 server) on loopback: puts, gets,
 * listing across pages, missing keys, deletes and S3's error codes. s3rver ignores
 * If-None-Match on PUT, so conditional writes keep their aws-sdk-client-mock test (store.test.ts).
 */
import { GetObjectCommand, HeadObjectCommand, NoSuchBucket, NoSuchKey, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../../../functions/adapters/aws/s3-store.js';
import { type S3, startS3rver } from '../../../helpers/emulators.js';

const BUCKET = 'pathbench-data';
let s3: S3;
let store: S3ObjectStore;
beforeAll(async () => {
  s3 = await startS3rver(BUCKET);
  store = new S3ObjectStore(s3.client, BUCKET);
});
afterAll(async () => {
  await s3?.close();
});

describe('s3rver answers as S3 does (checked before trusting it)', () => {
  it('a missing key is NoSuchKey (404), a missing bucket NoSuchBucket', async () => {
    const e = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'nope' })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(NoSuchKey);
    expect(e).toMatchObject({ $metadata: { httpStatusCode: 404 } });
    const b = await s3.client
      .send(new PutObjectCommand({ Bucket: 'no-such-bucket', Key: 'k', Body: 'x' }))
      .catch((x: unknown) => x);
    expect(b).toBeInstanceOf(NoSuchBucket);
  });
});

describe('where s3rver differs from S3', () => {
  it('ignores If-None-Match on PUT (S3 answers 412 PreconditionFailed): conditional writes are tested with a mock', async () => {
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'cond.json', Body: 'first' }));
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'cond.json', Body: 'second', IfNoneMatch: '*' }));
    expect(await store.getText('cond.json')).toBe('second');
  });
});

describe('S3ObjectStore on s3rver', () => {
  it('puts and gets text and bytes, with the content type from the key', async () => {
    await store.put('runs/run=r1/manifest.json', '{"a":1}\n');
    expect(await store.getText('runs/run=r1/manifest.json')).toBe('{"a":1}\n');
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'runs/run=r1/manifest.json' }));
    expect(head.ContentType).toBe('application/json');
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    await store.put('raw/path=A/run=r1/p/1.bin', bytes);
    expect(Array.from((await store.get('raw/path=A/run=r1/p/1.bin')) ?? [])).toEqual(Array.from(bytes));
    await store.put('empty.txt', '');
    expect(await store.getText('empty.txt')).toBe('');
  });

  it('a missing key reads as undefined; delete is idempotent', async () => {
    expect(await store.get('runs/run=none/manifest.json')).toBeUndefined();
    await store.put('gone.json', '{}');
    await store.delete('gone.json');
    await store.delete('gone.json');
    expect(await store.getText('gone.json')).toBeUndefined();
  });

  it('overwrites in place (a retried step rewrites the same key)', async () => {
    await store.put('runs/run=r2/manifest.json', 'first');
    await store.put('runs/run=r2/manifest.json', 'second');
    expect(await store.getText('runs/run=r2/manifest.json')).toBe('second');
  });

  it('lists by prefix, sorted, across more than one page (1,000 keys a page)', async () => {
    const keys = Array.from({ length: 1005 }, (_, i) => `raw/path=B/run=r3/p/${i}.jsonl`);
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => store.put(k, 'x')));
    await store.put('raw/path=B/run=r4/p/0.jsonl', 'other run');
    const listed = await store.list('raw/path=B/run=r3/');
    expect(listed).toHaveLength(1005);
    expect(listed).toEqual([...keys].sort());
    expect(await store.list('raw/path=Z/')).toEqual([]);
  });
});
