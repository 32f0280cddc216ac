/**
 * ObjectStore on S3: one bucket, the key layout of core/keys.ts, NoSuchKey → undefined.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { ObjectStore } from '../../ports.js';
import { isAwsError } from './util.js';

export class S3ObjectStore implements ObjectStore {
  readonly location: string;

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {
    this.location = `s3://${bucket}`;
  }

  async put(key: string, body: string | Uint8Array, contentType?: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: contentType ?? guessContentType(key),
      }),
    );
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) return new Uint8Array();
      return await out.Body.transformToByteArray();
    } catch (e) {
      if (isAwsError(e, 'NoSuchKey', 'NotFound')) return undefined;
      throw e;
    }
  }

  async getText(key: string): Promise<string | undefined> {
    const bytes = await this.get(key);
    return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const out = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of out.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async delete(key: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}

function guessContentType(key: string): string {
  if (key.endsWith('.json')) return 'application/json';
  if (key.endsWith('.jsonl')) return 'application/x-ndjson';
  if (key.endsWith('.csv')) return 'text/csv';
  if (key.endsWith('.md')) return 'text/markdown';
  if (key.endsWith('.html')) return 'text/html';
  return 'application/octet-stream';
}
