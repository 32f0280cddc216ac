/** S3ObjectStore against a mocked S3 client. */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../../../functions/adapters/aws/s3-store.js';

const s3 = mockClient(S3Client);
const store = new S3ObjectStore(new S3Client({ region: 'ap-northeast-1' }), 'pb-data');

beforeEach(() => s3.reset());

describe('S3ObjectStore', () => {
  it('puts with a content type from the key', async () => {
    s3.on(PutObjectCommand).resolves({});
    await store.put('runs/run=r/manifest.json', '{}');
    await store.put('x.bin', new Uint8Array([1]), 'application/x-thing');
    expect(s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input)).toEqual([
      { Bucket: 'pb-data', Key: 'runs/run=r/manifest.json', Body: '{}', ContentType: 'application/json' },
      { Bucket: 'pb-data', Key: 'x.bin', Body: new Uint8Array([1]), ContentType: 'application/x-thing' },
    ]);
    expect(store.location).toBe('s3://pb-data');
  });

  it('gets bytes and text; NoSuchKey is undefined; other errors propagate', async () => {
    s3.on(GetObjectCommand, { Key: 'a' }).resolves({
      // The SDK's streaming body: only transformToByteArray is used.
      Body: { transformToByteArray: async () => new TextEncoder().encode('héllo') } as never,
    });
    s3.on(GetObjectCommand, { Key: 'missing' }).rejects(new NoSuchKey({ $metadata: {}, message: 'gone' }));
    s3.on(GetObjectCommand, { Key: 'denied' }).rejects(Object.assign(new Error('denied'), { name: 'AccessDenied' }));
    expect(await store.getText('a')).toBe('héllo');
    expect(await store.get('missing')).toBeUndefined();
    expect(await store.getText('missing')).toBeUndefined();
    await expect(store.get('denied')).rejects.toThrow('denied');
  });

  it('lists across pages, sorted', async () => {
    s3.on(ListObjectsV2Command)
      .resolvesOnce({ Contents: [{ Key: 'p/c' }, { Key: 'p/a' }], IsTruncated: true, NextContinuationToken: 't1' })
      .resolvesOnce({ Contents: [{ Key: 'p/b' }], IsTruncated: false });
    expect(await store.list('p/')).toEqual(['p/a', 'p/b', 'p/c']);
    expect(s3.commandCalls(ListObjectsV2Command).map((c) => c.args[0].input)).toEqual([
      { Bucket: 'pb-data', Prefix: 'p/', ContinuationToken: undefined },
      { Bucket: 'pb-data', Prefix: 'p/', ContinuationToken: 't1' },
    ]);
  });

  it('deletes', async () => {
    s3.on(DeleteObjectCommand).resolves({});
    await store.delete('k');
    expect(s3.commandCalls(DeleteObjectCommand)[0].args[0].input).toEqual({ Bucket: 'pb-data', Key: 'k' });
  });
});
