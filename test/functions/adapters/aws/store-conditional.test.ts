/**
 * The run manifest on S3 under parallel writers (a mesh round's Lambdas): S3ObjectStore's
 * conditional read/write (ETag, If-Match) and updateManifest's compare-and-swap over it, against
 * a mocked S3 client that plays another writer winning the race once.
 */
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RunManifest } from '../../../../core/run-manifest.js';
import { S3ObjectStore } from '../../../../functions/adapters/aws/s3-store.js';
import {
  MANIFEST_CAS_ATTEMPTS,
  pathEntry,
  updateManifest,
  updatePath,
} from '../../../../functions/pipeline/manifest.js';

const s3 = mockClient(S3Client);
const store = new S3ObjectStore(new S3Client({ region: 'ap-northeast-1' }), 'pb-data');
const KEY = 'runs/run=r1/manifest.json';

beforeEach(() => s3.reset());

const manifest = (notes: Record<string, string[]>): string =>
  JSON.stringify({
    runId: 'r1',
    planName: 'p',
    driver: 'aws',
    status: 'running',
    startedAt: '2026-12-01T00:00:00.000Z',
    paths: Object.entries(notes).map(([id, n]) => ({
      id,
      label: id,
      status: 'pending',
      steps: [],
      probes: [],
      notes: n,
    })),
    routeChanges: [],
  } satisfies RunManifest);

const body = (text: string) => ({ transformToByteArray: async () => new TextEncoder().encode(text) }) as never;
const preconditionFailed = () =>
  Object.assign(new Error('At least one of the pre-conditions you specified did not hold'), {
    name: 'PreconditionFailed',
    $metadata: { httpStatusCode: 412 },
  });

describe('S3 conditional writes', () => {
  it('reads the ETag and writes with If-Match; a 412 reads as "another writer won"', async () => {
    s3.on(GetObjectCommand).resolves({ Body: body('{}'), ETag: '"e1"' });
    expect(await store.getVersioned(KEY)).toEqual({ text: '{}', version: '"e1"' });
    s3.on(PutObjectCommand).rejectsOnce(preconditionFailed()).resolves({});
    expect(await store.putIfVersion(KEY, '{}', '"e1"')).toBe(false);
    expect(await store.putIfVersion(KEY, '{}', '"e1"')).toBe(true);
    expect(s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input.IfMatch)).toEqual(['"e1"', '"e1"']);
  });

  it("updateManifest keeps both writers' changes: the loser reads again and retries", async () => {
    // Another Lambda writes p0's note between our read and our write; our write is refused once.
    s3.on(GetObjectCommand)
      .resolvesOnce({ Body: body(manifest({ p0: [], p1: [] })), ETag: '"e1"' })
      .resolves({ Body: body(manifest({ p0: ['theirs'], p1: [] })), ETag: '"e2"' });
    s3.on(PutObjectCommand, { IfMatch: '"e1"' }).rejects(preconditionFailed());
    s3.on(PutObjectCommand, { IfMatch: '"e2"' }).resolves({});
    const m = await updateManifest(store, 'r1', (x) => {
      pathEntry(x, 'p1').notes.push('ours');
    });
    expect(m.paths.map((p) => p.notes)).toEqual([['theirs'], ['ours']]);
    const puts = s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
    expect(puts.map((p) => p.IfMatch)).toEqual(['"e1"', '"e2"']);
    expect(JSON.parse(String(puts[1].Body)).paths.map((p: { notes: string[] }) => p.notes)).toEqual([
      ['theirs'],
      ['ours'],
    ]);
  });

  it("updatePath reads and writes the path's own object alone: a lost race there is read again and retried", async () => {
    const entry = (notes: string[]) =>
      JSON.stringify({ id: 'p1', label: 'p1', status: 'running', steps: [], probes: [], notes });
    const PATH_KEY = 'runs/run=r1/paths/path=p1.json';
    s3.on(GetObjectCommand, { Key: PATH_KEY })
      .resolvesOnce({ Body: body(entry([])), ETag: '"p1"' })
      .resolves({ Body: body(entry(['theirs'])), ETag: '"p2"' });
    s3.on(PutObjectCommand, { Key: PATH_KEY, IfMatch: '"p1"' }).rejects(preconditionFailed());
    s3.on(PutObjectCommand, { Key: PATH_KEY, IfMatch: '"p2"' }).resolves({});
    const p = await updatePath(store, 'r1', 'p1', (x) => void x.notes.push('ours'));
    expect(p.notes).toEqual(['theirs', 'ours']);
    expect(s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input.Key)).toEqual([PATH_KEY, PATH_KEY]);
    const puts = s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
    expect(puts.map((x) => [x.Key, x.IfMatch])).toEqual([
      [PATH_KEY, '"p1"'],
      [PATH_KEY, '"p2"'],
    ]);
    expect(JSON.parse(String(puts[1].Body)).notes).toEqual(['theirs', 'ours']);
  });

  it('gives up after a bounded number of lost races, saying so', async () => {
    s3.on(GetObjectCommand).resolves({ Body: body(manifest({ p0: [] })), ETag: '"e1"' });
    s3.on(PutObjectCommand).rejects(preconditionFailed());
    await expect(
      updateManifest(store, 'r1', (x) => {
        pathEntry(x, 'p0').notes.push('ours');
      }),
    ).rejects.toThrow(/kept changing under 12 conditional writes/);
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(MANIFEST_CAS_ATTEMPTS);
  });
});
