/**
 * `pathbench parse <kind> <file>`: run one raw probe output through the same parser the
 * pipeline uses and print the normalized sample records as JSONL. Handy for checking a raw
 * file by hand, or for feeding records to other tools.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Command } from 'commander';
import { errorMessage } from '../../core/errors.js';
import { printable } from '../../core/printable.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { assertProbeKind, PROBE_KINDS, parseRawLenient } from '../../probes/index.js';

/** Exit code for unusable input (unknown kind, unreadable file, no line of it usable). */
const EXIT_BAD_INPUT = 2;
/** Exit code when some lines were bad: the good ones are printed, each bad one named on stderr. */
const EXIT_BAD_LINES = 1;

interface ParseOptions {
  run: string;
  path: string;
  probe?: string;
  trial?: string;
}

/**
 * Register `parse <kind> <file> [--run ID] [--path ID] [--probe NAME] [--trial N]` on the
 * program. Probe and trial default to the raw layout `<probe>/<trial>.<ext>` when the file
 * follows it, else to the kind and 1. Every good record is printed; each bad line is named on
 * stderr and the exit code is 1. Unusable input (unknown kind, unreadable file, not one usable
 * line): exit code 2, nothing on stdout.
 */
export function registerParse(program: Command): void {
  program
    .command('parse')
    .description('parse one raw probe output file and print normalized sample records as JSONL')
    .argument('<kind>', `probe kind: ${PROBE_KINDS.join(', ')}`)
    .argument(
      '<file>',
      'raw output file (plain or .gz), e.g. .pathbench/raw/path=a/run=r/client=c/tcp-connect/1.jsonl.gz',
    )
    .option('--run <id>', 'run id written into each record', 'local')
    .option('--path <id>', 'path id written into each record', 'local')
    .option('--probe <name>', 'probe name (default: the file’s directory name, else the kind)')
    .option('--trial <n>', 'trial number (default: the file’s base name when numeric, else 1)')
    .action((kind: string, file: string, opts: ParseOptions) => {
      const say = (line: string) => process.stderr.write(`pathbench parse: ${printable(line.split('\n')[0])}\n`);
      try {
        const r = parseFile(kind, file, opts);
        const bad = [...r.rejections, ...(r.truncation ? [r.truncation] : [])];
        if (r.records.length === 0 && bad.length > 0) {
          for (const b of bad) say(`${file}: ${b}`);
          say(`${file}: no usable ${kind} line`);
          process.exitCode = EXIT_BAD_INPUT;
          return;
        }
        process.stdout.write(r.records.map((x) => `${JSON.stringify(x)}\n`).join(''));
        for (const b of bad) say(`${file}: ${b}`);
        if (bad.length > 0) {
          say(`${file}: ${r.records.length} record(s) printed, ${bad.length} bad line(s) left out`);
          process.exitCode = EXIT_BAD_LINES;
        }
      } catch (e) {
        say(errorMessage(e));
        process.exitCode = EXIT_BAD_INPUT;
      }
    });
}

function parseFile(
  kind: string,
  file: string,
  opts: ParseOptions,
): { records: SampleRecord[]; rejections: string[]; truncation?: string } {
  // Check the kind first: it is the cheaper mistake to report.
  assertProbeKind(kind);
  const base = path.basename(file).replace(/\..*$/, '');
  const numbered = /^\d+$/.test(base);
  let trial = numbered ? Number(base) : 1;
  if (opts.trial !== undefined) {
    if (!/^\d+$/.test(opts.trial) || Number(opts.trial) < 1) throw new Error(`--trial must be a positive integer`);
    trial = Number(opts.trial);
  }
  const dir = path.basename(path.dirname(path.resolve(file)));
  const probe = opts.probe ?? (numbered && /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(dir) ? dir : kind);
  let raw: string;
  try {
    // Raw files are stored gzipped (`1.jsonl.gz`): read them as the collect step does.
    const bytes = readFileSync(file);
    raw = (file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`);
  }
  // As the collect step does: every good line's records, each bad line's reason.
  const rejections: string[] = [];
  const { records, stats } = parseRawLenient(
    kind,
    raw,
    { runId: opts.run, pathId: opts.path, probe, trial },
    (reason) => rejections.push(reason),
  );
  return { records, rejections, truncation: stats.truncated ? stats.truncation : undefined };
}
