/**
 * Each Lambda's bundle, read from the synthesized pipeline stack's assets, holds what its own entry
 * (functions/wiring.ts LAMBDAS[name].entry) imports and nothing else: every file in its source map
 * is in the entry's import closure (an esbuild metafile of that entry alone); no agent, local
 * runner, lab, CLI or infra code and no probe runner in any (the layering rule functions/ obeys,
 * .dependency-cruiser.cjs); ECharts only where reports are rendered (SummarizeRun); an EC2 client
 * only where the needs touch instances or routes, Athena only where they query (the Parquet copy
 * too: Athena writes it), no Parquet writer in any. Prints each function's bundle size.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Capability, LAMBDA_NAMES, LAMBDAS, type LambdaName } from '../../../functions/wiring.js';
import { PipelineStack } from '../../../infra/pipeline-stack.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** What functions/ may never import (.dependency-cruiser.cjs, rule functions-stay-in-lambda). */
const NOT_IN_LAMBDA = (() => {
  const config = createRequire(import.meta.url)('../../../.dependency-cruiser.cjs') as {
    forbidden: { name: string; to: { path?: string } }[];
  };
  const rule = config.forbidden.find((r) => r.name === 'functions-stay-in-lambda');
  if (!rule?.to.path) throw new Error('.dependency-cruiser.cjs has no rule functions-stay-in-lambda');
  return new RegExp(rule.to.path);
})();

/** A file of a bundle or closure: repository-relative, or `node_modules/<package path>`. */
type Files = Set<string>;

interface Bundle {
  name: LambdaName;
  bytes: number;
  /** The files the source map names (what the bundle's code came from). */
  sources: Files;
  /** Every file the entry imports, directly or not (before tree shaking). */
  closure: Files;
}

let outdir: string;
const bundles = new Map<LambdaName, Bundle>();
/** Each function's asset directory (index.mjs and its map). */
const bundleDirs = new Map<LambdaName, string>();

const inNodeModules = (f: string) => {
  const i = f.lastIndexOf('node_modules/');
  return i < 0 ? undefined : f.slice(i);
};

/** The source map's sources, made repository-relative by the prefix its own entry file has there. */
function sourcesOf(dir: string, entry: string): Files {
  const map = JSON.parse(readFileSync(path.join(dir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
  const own = map.sources.find((s) => s.endsWith(`/${entry}`));
  if (!own) throw new Error(`${dir}: the source map does not name ${entry}`);
  const prefix = own.slice(0, -entry.length);
  return new Set(
    map.sources.map((s) => inNodeModules(s) ?? (s.startsWith(prefix) ? s.slice(prefix.length) : `outside:${s}`)),
  );
}

/** The import closure of an entry, from esbuild's metafile of that entry bundled alone. */
function closureOf(entry: string): Files {
  const r = buildSync({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    mainFields: ['module', 'main'],
    outfile: 'closure.mjs',
    logLevel: 'silent',
  });
  return new Set(Object.keys(r.metafile.inputs).map((f) => inNodeModules(f) ?? f));
}

const needs = (name: LambdaName): readonly Capability[] => LAMBDAS[name].needs;
const has = (files: Files, pkg: string) => [...files].some((f) => f.startsWith(`node_modules/${pkg}/`));

beforeAll(() => {
  outdir = mkdtempSync(path.join(tmpdir(), 'pb-bundles-'));
  const app = new App({ outdir });
  const stack = new PipelineStack(app, 'Pathbench', { env: { account: '123456789012', region: 'ap-northeast-1' } });
  const assembly = app.synth();
  const template = assembly.getStackByName(stack.stackName).template as {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };
  for (const r of Object.values(template.Resources)) {
    if (r.Type !== 'AWS::Lambda::Function') continue;
    const name = /^pathbench (\w+): /.exec(r.Properties.Description as string)?.[1] as LambdaName;
    expect(LAMBDA_NAMES).toContain(name);
    const dir = path.join(outdir, `asset.${(r.Properties.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '')}`);
    const entry = LAMBDAS[name].entry;
    bundleDirs.set(name, dir);
    bundles.set(name, {
      name,
      bytes: statSync(path.join(dir, 'index.mjs')).size,
      sources: sourcesOf(dir, entry),
      closure: closureOf(entry),
    });
  }
  const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`.padStart(9);
  const lines = [...bundles.values()].map(
    (b) => `${b.name.padEnd(22)} ${kib(b.bytes)}  ${String(b.sources.size).padStart(4)} sources`,
  );
  console.log(`Lambda bundles (index.mjs, minified):\n${lines.join('\n')}`);
}, 600_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

describe("each Lambda's bundle", () => {
  it('exists for every function of the wiring table and holds nothing beside index.mjs and its map', () => {
    expect([...bundles.keys()].sort()).toEqual([...LAMBDA_NAMES].sort());
    for (const name of LAMBDA_NAMES) {
      const b = bundles.get(name);
      expect(b?.bytes, name).toBeGreaterThan(0);
    }
    const assets = readdirSync(outdir, { withFileTypes: true }).filter(
      (d) => d.isDirectory() && d.name.startsWith('asset.'),
    );
    for (const { name: dir } of assets) {
      const files = readdirSync(path.join(outdir, dir));
      if (files.includes('index.mjs')) expect(files.sort(), dir).toEqual(['index.mjs', 'index.mjs.map']);
    }
  });

  it("keeps error class names through minification (the ASL's Catch and Retry match on them)", () => {
    const dir = bundleDirs.get('ValidatePlan')!;
    expect(readFileSync(path.join(dir, 'index.mjs'), 'utf8')).toContain('"RunLockedError"');
  });

  it("holds only files of its own entry's import closure, its own handler and no other", () => {
    for (const b of bundles.values()) {
      const extra = [...b.sources].filter((f) => !b.closure.has(f));
      expect(extra, b.name).toEqual([]);
      const handlers = [...b.sources].filter((f) => /^functions\/handlers\/(?!task-input\.ts$)/.test(f));
      const own = LAMBDAS[b.name].entry;
      expect(handlers.sort(), b.name).toEqual([own.replace(/\.lambda\.ts$/, '.ts'), own].sort());
    }
  });

  it('holds no probe runner, agent, local runner, lab, CLI, infra or script code', () => {
    for (const b of bundles.values()) {
      expect(
        [...b.closure].filter((f) => NOT_IN_LAMBDA.test(f)),
        b.name,
      ).toEqual([]);
      expect(
        [...b.sources].filter((f) => f.startsWith('outside:')),
        b.name,
      ).toEqual([]);
    }
  });

  it('holds ECharts only where reports are rendered: SummarizeRun', () => {
    for (const b of bundles.values()) {
      const renders = b.name === 'SummarizeRun';
      expect(has(b.sources, 'echarts'), b.name).toBe(renders);
      expect(has(b.closure, 'echarts') || has(b.closure, 'zrender'), b.name).toBe(renders);
    }
  });

  it("holds each AWS SDK client only where the function's needs use it", () => {
    const uses = (name: LambdaName, ...caps: Capability[]) => caps.some((c) => needs(name).includes(c));
    for (const b of bundles.values()) {
      const clients: [string, boolean][] = [
        ['@aws-sdk/client-ec2', uses(b.name, 'fleet', 'fleet:read', 'routes', 'routes:read')],
        ['@aws-sdk/client-athena', uses(b.name, 'query')],
        ['@aws-sdk/client-ssm', uses(b.name, 'fleet', 'fleet:read', 'runner', 'runner:cancel', 'plans')],
        ['@aws-sdk/client-dynamodb', uses(b.name, 'lock', 'lock:read')],
        ['@aws-sdk/client-eventbridge', uses(b.name, 'publish')],
        ['@aws-sdk/client-s3', uses(b.name, 'store:read', 'store:write', 'parquet')],
      ];
      for (const [client, wanted] of clients) {
        expect(has(b.closure, client), `${b.name} imports ${client}`).toBe(wanted);
        expect(has(b.sources, client), `${b.name} ships ${client}`).toBe(wanted);
      }
    }
    // ReleaseLock finishes the manifest and frees the lock: no instance, no route, no query.
    const release = bundles.get('ReleaseLock');
    expect(has(release?.sources ?? new Set(), '@aws-sdk/client-ec2')).toBe(false);
    expect(has(release?.sources ?? new Set(), '@aws-sdk/client-athena')).toBe(false);
  });

  it('ships no Parquet writer: the query engine writes the Parquet copy', () => {
    for (const b of bundles.values()) expect(has(b.sources, 'hyparquet-writer'), b.name).toBe(false);
  });
});
