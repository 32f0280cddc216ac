/**
 * ObjectStore on S3: one bucket, the key layout of core/keys.ts, NoSuchKey → undefined.
 * Streaming: reads iterate GetObject's Body stream; writes buffer PART_BYTES at a time and go
 * up as one PutObject when the body is smaller than that, else as a multipart upload
 * (CreateMultipartUpload / UploadPart / CompleteMultipartUpload with the plain S3 client, since
 * @aws-sdk/lib-storage is not a dependency; aborted on any error so no parts are left behind).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { ObjectStore } from '../../ports.js';
import type { AwsPort } from './aws-deps.js';
import { isAwsError } from './sdk-errors.js';

/** Multipart part size: S3's minimum is 5 MiB (except the last part); 8 MiB keeps the heap small. */
export const PART_BYTES = 8 * 1024 * 1024;

export class S3ObjectStore implements ObjectStore {
  readonly location: string;

  constructor(
    private readonly s3: S3Client,
    /** The bucket (a mesh run's Distributed Map reads its round lists from it). */
    readonly bucket: string,
    /** Part size of streaming writes (tests use S3's 5 MiB minimum to keep bodies small). */
    private readonly partBytes = PART_BYTES,
  ) {
    this.location = `s3://${bucket}`;
  }

  async getStream(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) return (async function* () {})();
      // In Node the Body is an http.IncomingMessage (a Readable): async-iterable in chunks.
      return out.Body as unknown as AsyncIterable<Uint8Array>;
    } catch (e) {
      if (isAwsError(e, 'NoSuchKey', 'NotFound')) return undefined;
      throw e;
    }
  }

  async putStream(key: string, body: AsyncIterable<string | Uint8Array>, contentType?: string): Promise<void> {
    const type = contentType ?? guessContentType(key);
    const encoder = new TextEncoder();
    let pending: Uint8Array[] = [];
    let size = 0;
    let uploadId: string | undefined;
    const parts: { ETag?: string; PartNumber: number }[] = [];
    const take = (): Buffer => {
      const b = Buffer.concat(pending, size);
      pending = [];
      size = 0;
      return b;
    };
    const uploadPart = async (bytes: Buffer): Promise<void> => {
      if (uploadId === undefined) {
        const created = await this.s3.send(
          new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: type }),
        );
        uploadId = created.UploadId;
      }
      const PartNumber = parts.length + 1;
      const out = await this.s3.send(
        new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber, Body: bytes }),
      );
      parts.push({ ETag: out.ETag, PartNumber });
    };
    try {
      for await (const chunk of body) {
        const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
        pending.push(bytes);
        size += bytes.byteLength;
        if (size >= this.partBytes) await uploadPart(take());
      }
      if (uploadId === undefined) {
        await this.put(key, take(), type);
        return;
      }
      if (size > 0) await uploadPart(take());
      await this.s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (e) {
      if (uploadId !== undefined) {
        await this.s3
          .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }))
          .catch(() => undefined);
      }
      throw e;
    }
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

  async getVersioned(key: string): Promise<{ text: string; version: string } | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const text = out.Body ? new TextDecoder().decode(await out.Body.transformToByteArray()) : '';
      if (!out.ETag) throw new Error(`s3://${this.bucket}/${key}: GetObject returned no ETag`);
      return { text, version: out.ETag };
    } catch (e) {
      if (isAwsError(e, 'NoSuchKey', 'NotFound')) return undefined;
      throw e;
    }
  }

  /** PutObject with If-Match: 412 PreconditionFailed (or 409 ConditionalRequestConflict) means another writer won. */
  async putIfVersion(key: string, body: string, version: string, contentType?: string): Promise<boolean> {
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          IfMatch: version,
          ContentType: contentType ?? guessContentType(key),
        }),
      );
      return true;
    } catch (e) {
      if (isAwsError(e, 'PreconditionFailed', 'ConditionalRequestConflict')) return false;
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

/** The store port of a Lambda: the data bucket. */
export const s3Store: AwsPort<'store'> = ({ cfg }) =>
  new S3ObjectStore(new S3Client({ region: cfg.region }), cfg.bucket);
