/**
 * The SSM document's shell script, run for real with bash. Only the `aws` CLI (and `sleep`, to
 * keep the test fast; the 2 s upload period becomes 0.2 s) are stand-ins on PATH: `aws s3 cp` copies from and to a local "bucket"
 * directory and can be told to fail the upload a number of times. The agent is a tiny script that
 * writes one raw file, like the real one.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkProbeParameters,
  PENDING_DIR,
  PROBE_DOCUMENT_PATTERNS,
  probeDocumentContent,
} from '../../../../functions/adapters/aws/probe-document.js';

const values = {
  bucket: 'pb-data',
  specKey: 'specs/run=run-1/path=C/client=i-0123456789abcdef0/spec.json',
  rawPrefix: 'raw/path=C/run=run-1/client=i-0123456789abcdef0/',
  runId: 'run-1',
  pathId: 'C',
  agentBucket: 'cdk-assets',
  agentKey: 'a'.repeat(64).concat('.cjs'),
  executionTimeout: '600',
};

const AWS_STUB = `#!/bin/bash
# aws s3 cp [--only-show-errors] [--recursive] SRC DST, with s3://bucket/key mapped to $FAKE_S3/bucket/key
args=(); recursive=0
for a in "$@"; do case "$a" in s3|cp|--only-show-errors) ;; --recursive) recursive=1 ;; *) args+=("$a") ;; esac; done
map() { case "$1" in s3://*) echo "$FAKE_S3/\${1#s3://}" ;; *) echo "$1" ;; esac; }
src="$(map "\${args[0]}")"; dst="$(map "\${args[1]}")"
if [ "$recursive" = 1 ]; then
  n=$(cat "$FAKE_S3/.upload-failures" 2>/dev/null || echo 0)
  if [ "$n" -gt 0 ]; then echo $((n - 1)) > "$FAKE_S3/.upload-failures"; echo "upload failed: network" >&2; exit 1; fi
  mkdir -p "$dst" && cp -R "$src". "$dst"
else
  mkdir -p "$(dirname "$dst")" && cp "$src" "$dst"
fi
`;

const AGENT = `const fs = require('node:fs');
const out = process.argv[process.argv.indexOf('--out') + 1];
fs.mkdirSync(out + '/tcp', { recursive: true });
fs.writeFileSync(out + '/tcp/1.jsonl', '{"seq":0,"rtt_ms":0.2}\\n');
process.exit(Number(process.env.AGENT_EXIT || 0));
`;

/** The upload loop's period (2 s) sleeps 0.2 s for real; other sleeps (retry back-off) are recorded only. */
const SLEEP_STUB = (root: string) =>
  `#!/bin/bash\nif [ "$1" = 2 ]; then exec /bin/sleep 0.2; fi\necho "$1" >> "${root}/sleeps"\n`;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Run the document's script as SSM would after substituting the parameters. */
function runScript(opts: { uploadFailures: number; agentExit?: number }) {
  const root = mkdtempSync(path.join(tmpdir(), 'pb-ssmdoc-'));
  dirs.push(root);
  const bin = path.join(root, 'bin');
  const s3 = path.join(root, 's3');
  const pending = path.join(root, 'pending');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'aws'), AWS_STUB);
  writeFileSync(path.join(bin, 'sleep'), SLEEP_STUB(root));
  chmodSync(path.join(bin, 'aws'), 0o755);
  chmodSync(path.join(bin, 'sleep'), 0o755);
  mkdirSync(path.join(s3, values.agentBucket), { recursive: true });
  writeFileSync(path.join(s3, values.agentBucket, values.agentKey), AGENT);
  mkdirSync(path.dirname(path.join(s3, values.bucket, values.specKey)), { recursive: true });
  writeFileSync(path.join(s3, values.bucket, values.specKey), '{}');
  writeFileSync(path.join(s3, '.upload-failures'), String(opts.uploadFailures));

  const steps = probeDocumentContent().mainSteps as { inputs: { runCommand: string[] } }[];
  const script = steps[0].inputs.runCommand
    .join('\n')
    .replace(/\{\{ (\w+) \}\}/g, (_, k: string) => values[k as keyof typeof values])
    .replaceAll(PENDING_DIR, pending);
  const r = spawnSync('bash', ['-c', script], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FAKE_S3: s3, AGENT_EXIT: String(opts.agentExit ?? 0) },
  });
  const sleeps = existsSync(path.join(root, 'sleeps')) ? readFileSync(path.join(root, 'sleeps'), 'utf8') : '';
  return { ...r, s3, pending, sleeps: sleeps.split('\n').filter(Boolean) };
}

describe('probe document script', () => {
  it('uploads the raw output and exits with the agent status', () => {
    const r = runScript({ uploadFailures: 0, agentExit: 3 });
    expect(r.status).toBe(3);
    expect(readFileSync(path.join(r.s3, values.bucket, values.rawPrefix, 'tcp/1.jsonl'), 'utf8')).toContain('rtt_ms');
    expect(r.stdout).toContain('pathbench run=run-1 path=C agent exit 3');
    expect(r.sleeps).toEqual([]);
  });

  it('retries a failed upload', () => {
    const r = runScript({ uploadFailures: 2 });
    expect(r.status).toBe(0);
    expect(existsSync(path.join(r.s3, values.bucket, values.rawPrefix, 'tcp/1.jsonl'))).toBe(true);
    expect(r.sleeps).toEqual(['5', '10']);
    expect(existsSync(r.pending)).toBe(false);
  });

  it('keeps the raw output in the pending directory when every upload fails, and fails', () => {
    const r = runScript({ uploadFailures: 3 });
    expect(r.status).toBe(75);
    const kept = path.join(r.pending, 'run-1-C');
    expect(readFileSync(path.join(kept, 'tcp/1.jsonl'), 'utf8')).toContain('rtt_ms');
    expect(r.stderr).toContain(`raw output kept in ${kept}`);
    expect(existsSync(path.join(r.s3, values.bucket, values.rawPrefix))).toBe(false);
  });
});

/** An agent that finishes a trial every 3 s and is still writing the third when stopped. */
const SLOW_AGENT = `const fs = require('node:fs');
const out = process.argv[process.argv.indexOf('--out') + 1];
fs.mkdirSync(out + '/tcp', { recursive: true });
const line = (i) => JSON.stringify({ seq: i, rtt_ms: 0.2 }) + '\\n';
fs.writeFileSync(out + '/tcp/1.jsonl', line(0) + line(1));
setTimeout(() => {
  fs.writeFileSync(out + '/tcp/2.jsonl', line(0) + line(1));
  let i = 0;
  setInterval(() => fs.appendFileSync(out + '/tcp/3.jsonl', line(i++)), 100);
}, 3000);
`;

async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('probe document script, stopped mid-run (execution timeout or cancel: SIGTERM)', () => {
  it.each([
    ['the whole command (process group)', true],
    ['the shell only', false],
  ])(
    'uploads each trial as it is finished; on TERM to %s, uploads the rest and says which trial is incomplete',
    async (_, group) => {
      const root = mkdtempSync(path.join(tmpdir(), 'pb-ssmdoc-'));
      dirs.push(root);
      const bin = path.join(root, 'bin');
      const s3 = path.join(root, 's3');
      const pending = path.join(root, 'pending');
      mkdirSync(bin);
      writeFileSync(path.join(bin, 'aws'), AWS_STUB);
      writeFileSync(path.join(bin, 'sleep'), SLEEP_STUB(root));
      chmodSync(path.join(bin, 'aws'), 0o755);
      chmodSync(path.join(bin, 'sleep'), 0o755);
      mkdirSync(path.join(s3, values.agentBucket), { recursive: true });
      writeFileSync(path.join(s3, values.agentBucket, values.agentKey), SLOW_AGENT);
      mkdirSync(path.dirname(path.join(s3, values.bucket, values.specKey)), { recursive: true });
      writeFileSync(path.join(s3, values.bucket, values.specKey), '{}');
      const steps = probeDocumentContent().mainSteps as { inputs: { runCommand: string[] } }[];
      const script = steps[0].inputs.runCommand
        .join('\n')
        .replace(/\{\{ (\w+) \}\}/g, (_m, k: string) => values[k as keyof typeof values])
        .replaceAll(PENDING_DIR, pending);
      const child = spawn('bash', ['-c', script], {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FAKE_S3: s3 },
      });
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const exited = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
      const raw = (f: string) => path.join(s3, values.bucket, values.rawPrefix, f);
      try {
        // Uploaded while the agent still runs, as soon as each trial's file is finished.
        await until('trial 1 in S3', () => existsSync(raw('tcp/1.jsonl')));
        expect(existsSync(raw('tcp/2.jsonl'))).toBe(false);
        await until('trial 2 in S3', () => existsSync(raw('tcp/2.jsonl')));
        // Trial 2 settled 2 s ago: trial 3 has been under way since.
        await new Promise((r) => setTimeout(r, 500));
        process.kill(group ? -(child.pid as number) : (child.pid as number), 'SIGTERM');
        expect(await exited).toBe(143);
      } finally {
        try {
          process.kill(-(child.pid as number), 'SIGKILL');
        } catch {
          // already gone
        }
      }
      expect(readFileSync(raw('tcp/1.jsonl'), 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
      expect(readFileSync(raw('tcp/2.jsonl'), 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
      // The trial in progress is uploaded as far as it got, and named incomplete.
      expect(readFileSync(raw('tcp/3.jsonl'), 'utf8')).toMatch(/^\{"seq":0/);
      const marker = JSON.parse(readFileSync(raw('interrupted.json'), 'utf8'));
      expect(marker).toMatchObject({ signal: 'TERM', incomplete: ['tcp/3.jsonl'] });
      expect(stderr).toContain('stopped by TERM; incomplete: "tcp/3.jsonl"');
      expect(existsSync(pending)).toBe(false);
    },
    30_000,
  );
});

describe('probe document parameters', () => {
  it('accepts CDK asset keys and refuses keys with empty, "." or ".." segments', () => {
    expect(() => checkProbeParameters(values)).not.toThrow();
    const key = new RegExp(PROBE_DOCUMENT_PATTERNS.agentKey);
    expect(key.test('0d1a7b2c3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b.cjs')).toBe(true);
    expect(key.test('agents/v1.2/agent.cjs')).toBe(true);
    for (const bad of [
      '../agent.cjs',
      'a/../agent.cjs',
      'a/./agent.cjs',
      'a//agent.cjs',
      '/agent.cjs',
      'a..cjs',
      '.cjs',
    ]) {
      expect(key.test(bad), bad).toBe(false);
    }
  });
});
