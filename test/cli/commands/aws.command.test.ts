/** The AWS commands as a user runs them: one-line errors and exit 2 without credentials or region. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SM = 'arn:aws:states:ap-northeast-1:123456789012:stateMachine:Measurement';

const bare = {
  PATH: process.env.PATH ?? '',
  HOME: mkdtempSync(path.join(tmpdir(), 'pb-home-')),
  AWS_EC2_METADATA_DISABLED: 'true',
};
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, 'cli/pathbench.mjs'), ...args], {
    env: bare,
    encoding: 'utf8',
    timeout: 60_000,
  });

describe('aws cli without credentials or region', () => {
  it('prints one line and exits 2 when credentials are missing', () => {
    const r = cli('start', '--plan-name', 'weekly', '--state-machine', SM, '--bucket', 'b');
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^pathbench: no usable AWS credentials/);
  });

  it('prints one line and exits 2 when the region is missing', () => {
    const r = cli('status', 'run-1', '--stack', 'PbNoSuchStack');
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^pathbench: no AWS region/);
  });
});

describe('aws cli with unusable input', () => {
  it('rejects a state machine ARN that is not one, before calling AWS', () => {
    const r = cli('status', 'run-1', '--state-machine', 'arn:aws:s3:::bucket', '--bucket', 'b', '--region', 'x');
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^pathbench: not a state machine ARN/);
  });

  it('rejects an unsafe run id, before calling AWS', () => {
    const r = cli('status', 'run/1', '--state-machine', SM, '--bucket', 'b');
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^pathbench: unsafe run id/);
  });
});
