/**
 * Entry point of the probe agent bundle (dist/agent.cjs). It runs on the client instance
 * (through SSM Run Command) and locally as a child process, with node built-ins only.
 *
 *   agent.cjs run --spec FILE --out DIR [--with-parent]
 *   agent.cjs serve [--host H] [--tcp PORT] [--http PORT] [--slow-accept PORT:MS] [--pingpong PORT] [--ready-file F]
 *   agent.cjs version
 *
 * `run` exits 0 whenever the agent itself worked — failed probes are data in agent.json — and
 * 1 only for agent errors (bad spec, unwritable output). Progress goes to stderr; stdout
 * carries only the one-line result (agent.json path, or "ready" for serve).
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AgentReport } from '../core/agent-report.js';
import type { AgentSpec } from '../core/agent-spec.js';
import { parseAgentSpec } from '../core/agent-spec.js';
import { ConfigError, errorMessage } from '../core/errors.js';
import { AGENT_VERSION, type AgentLog, runSpec } from './run.js';
import { type ServeOptions, startServers } from './server.js';

const USAGE = `usage:
  agent run --spec FILE --out DIR [--with-parent]
  agent serve [--host H] [--tcp PORT] [--http PORT] [--slow-accept PORT:MS] [--pingpong PORT] [--ready-file F]
  agent version`;

/** Exit code for agent errors (probe failures are not agent errors). */
const EXIT_AGENT_ERROR = 1;

const log: AgentLog = (message, data) => {
  const tail = data === undefined ? '' : ` ${JSON.stringify(data)}`;
  process.stderr.write(`[agent ${new Date().toISOString()}] ${message}${tail}\n`);
};

/**
 * The spec, validated with the core's schemas (the probes are exactly what a plan resolves
 * into), so the agent cannot write outside DIR or misread an option. Throws a ConfigError
 * naming every bad field: "bad spec: pathId: expected a safe id …, got "../etc"".
 */
export function checkSpec(x: unknown): AgentSpec {
  const result = parseAgentSpec(x);
  if (!result.ok) throw new ConfigError(`bad spec: ${result.problems.join('; ')}`);
  return result.spec;
}

/**
 * mkdir -p without `{ recursive: true }`: Node's recursive mkdir spins forever where mkdir(2)
 * answers ENOENT for a path whose parent exists (seen under /proc), and the agent must fail
 * with a message there, not hang until SSM kills it.
 */
async function ensureDir(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if (!(await stat(dir)).isDirectory()) throw e;
      return;
    }
    const parent = path.dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw e;
    await ensureDir(parent);
    await mkdir(dir);
  }
}

/** Write JSON atomically (temp file + rename) so a reader never sees half a report. */
async function writeJson(file: string, value: unknown): Promise<void> {
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`);
  await rename(tmp, file);
}

/**
 * `--with-parent`: the process that started the agent holds its stdin open and nothing is ever
 * written there; end of file means that process is gone (a kill -9 runs no clean-up of its
 * own). The agent then ends at once with every tool it started (its process group, when it
 * leads one), so it does not probe on unwatched. What it wrote stays in its output directory
 * for the next run to collect.
 */
function endWithParent(): void {
  const leader = (() => {
    try {
      const stat = readFileSync('/proc/self/stat', 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === process.pid;
    } catch {
      return false;
    }
  })();
  const end = (): void => {
    log('parent gone: stopping', { pid: process.pid });
    if (leader) process.kill(-process.pid, 'SIGKILL');
    process.exit(EXIT_AGENT_ERROR);
  };
  process.stdin.on('end', end);
  process.stdin.on('error', end);
  process.stdin.resume();
}

async function cmdRun(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { spec: { type: 'string' }, out: { type: 'string' }, 'with-parent': { type: 'boolean' } },
    strict: true,
  });
  if (!values.spec || !values.out) throw new ConfigError('run needs --spec FILE and --out DIR');
  if (values['with-parent']) endWithParent();
  let raw: string;
  try {
    raw = await readFile(values.spec, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read spec ${values.spec}: ${errorMessage(e)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    throw new ConfigError(`spec ${values.spec} is not JSON: ${errorMessage(e)}`);
  }
  const spec = checkSpec(parsed);
  const outDir = path.resolve(values.out);
  try {
    await ensureDir(outDir);
  } catch (e) {
    throw new ConfigError(`cannot create output directory ${outDir}: ${(e as NodeJS.ErrnoException).code ?? e}`);
  }
  const reportFile = path.join(outDir, 'agent.json');
  log('run start', { runId: spec.runId, pathId: spec.pathId, target: spec.target, probes: spec.probes.length });
  const report: AgentReport = await runSpec(spec, outDir, log, (partial) =>
    // After each probe: a crash later still leaves the provenance of what was measured.
    writeJson(reportFile, { ...partial, partial: true }),
  );
  await writeJson(reportFile, report);
  const failed = report.probes.filter((p) => p.status === 'failed').length;
  log('run end', { probes: report.probes.length, failed });
  process.stdout.write(`${reportFile}\n`);
  return 0;
}

function portOpt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`--${name} must be a port 0-65535, got "${v}"`);
  return n;
}

async function cmdServe(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      tcp: { type: 'string' },
      http: { type: 'string' },
      'slow-accept': { type: 'string' },
      pingpong: { type: 'string' },
      'ready-file': { type: 'string' },
    },
    strict: true,
  });
  const opts: ServeOptions = { host: values.host ?? '127.0.0.1' };
  opts.tcp = portOpt('tcp', values.tcp);
  opts.http = portOpt('http', values.http);
  opts.pingpong = portOpt('pingpong', values.pingpong);
  if (values['slow-accept'] !== undefined) {
    const m = /^(\d+):(\d+)$/.exec(values['slow-accept']);
    if (!m) throw new ConfigError(`--slow-accept must be PORT:MS, got "${values['slow-accept']}"`);
    opts.slowAccept = { port: portOpt('slow-accept', m[1]) as number, ms: Number(m[2]) };
  }
  if (
    opts.tcp === undefined &&
    opts.http === undefined &&
    opts.slowAccept === undefined &&
    opts.pingpong === undefined
  ) {
    throw new ConfigError('serve needs at least one of --tcp, --http, --slow-accept, --pingpong');
  }
  const servers = await startServers(opts);
  for (const p of servers.problems) log('warning', { problem: p });
  log('serving', { host: opts.host, ...servers.ports });
  if (values['ready-file']) {
    await writeJson(values['ready-file'], { host: opts.host, pid: process.pid, ...servers.ports });
  }
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => {
    const stop = (sig: string): void => {
      log('stopping', { signal: sig });
      void servers.close().then(resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return 0;
}

/** Run the agent CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case 'run':
        return await cmdRun(rest);
      case 'serve':
        return await cmdServe(rest);
      case 'version':
      case '--version':
        process.stdout.write(`${AGENT_VERSION}\n`);
        return 0;
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        return 0;
      default:
        throw new ConfigError(cmd === undefined ? 'no command given' : `unknown command "${cmd}"`);
    }
  } catch (e) {
    const usage = e instanceof ConfigError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`agent: ${errorMessage(e)}\n${usage ? `${USAGE}\n` : ''}`);
    return EXIT_AGENT_ERROR;
  }
}

// Exit explicitly: a tool child or socket some probe forgot must not keep the agent (and the
// SSM command waiting for it) alive after the work is done. Writes to stdout/stderr on pipes
// and files are synchronous on Linux, so nothing printed is lost.
process.on('uncaughtException', (e) => {
  // A stray async error inside a probe: agent.json already holds the "interrupted" tombstone.
  process.stderr.write(`agent: fatal: ${errorMessage(e)}\n`);
  process.exit(EXIT_AGENT_ERROR);
});
void main(process.argv.slice(2)).then((code) => process.exit(code));
