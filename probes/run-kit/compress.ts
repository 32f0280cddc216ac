/**
 * Raw logs that grow with the run (sockperf's and pingpong's full logs: one line per exchange,
 * over a million a minute on a same-AZ path) are stored gzip-compressed, `<probe>/<trial>.<ext>.gz`;
 * CollectOutput decompresses them while it streams them (functions/pipeline/stream-io.ts).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { constants, createGzip } from 'node:zlib';

/**
 * Compress `file` into `file.gz` (streaming, never the whole file in memory) and remove `file`.
 * The .gz appears atomically (written under a temporary name, then renamed), so an upload never
 * sees half of it; on failure the plain file stays and the error is thrown.
 */
export async function gzipInPlace(file: string): Promise<string> {
  const gz = `${file}.gz`;
  const tmp = `${gz}.${process.pid}.tmp`;
  try {
    // Level 6 (zlib's default) keeps a 1 M-line log at ~1 s of one core; 9 gains a few percent.
    await pipeline(
      createReadStream(file),
      createGzip({ level: constants.Z_DEFAULT_COMPRESSION }),
      createWriteStream(tmp),
    );
    await rename(tmp, gz);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  await rm(file, { force: true });
  return gz;
}
