// s3rver in its own process, for test/helpers/emulators.ts: node --openssl-legacy-provider, since
// s3rver's ListObjectsV2 continuation tokens use DES, which OpenSSL 3 keeps in its legacy provider.
// Prints the port, serves DIRECTORY on 127.0.0.1 until its stdin closes.
import { createRequire } from 'node:module';

const S3rver = createRequire(import.meta.url)('s3rver');
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: process.argv[2] });
const { port } = await server.run();
process.stdout.write(`${port}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  await server.close();
  process.exit(0);
});
