/**
 * globalSetup of the faults project: starts the loopback targets on the suite's ports, gives the test files a directory for their table rows
 * (test/faults/invariants.ts recordRow) and, at teardown, prints the table: fault class, cases,
 * samples measured / stored, routes left swapped, locks left held.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { silentLogger } from '../../functions/log.js';
import { startLoopbackTargets } from '../../local/targets.js';
import { FAULT_PORTS } from './ports.js';

interface Row {
  faultClass: string;
  caseName: string;
  measured: number;
  stored: number;
  routesLeftSwapped: number;
  locksHeld: number;
  problems: number;
  hole?: string;
}

export function formatTable(rows: Row[]): string {
  const by = new Map<string, Row[]>();
  for (const r of rows) by.set(r.faultClass, [...(by.get(r.faultClass) ?? []), r]);
  const head = [
    'fault class',
    'cases',
    'samples measured / stored',
    'routes left swapped',
    'locks left held',
    'known holes',
  ];
  const body = [...by].map(([k, rs]) => [
    k,
    String(rs.length),
    `${rs.reduce((s, r) => s + r.measured, 0)} / ${rs.reduce((s, r) => s + r.stored, 0)}`,
    String(rs.reduce((s, r) => s + r.routesLeftSwapped, 0)),
    String(rs.reduce((s, r) => s + r.locksHeld, 0)),
    String(rs.filter((r) => r.hole).length),
  ]);
  const total = [
    'total',
    String(rows.length),
    `${rows.reduce((s, r) => s + r.measured, 0)} / ${rows.reduce((s, r) => s + r.stored, 0)}`,
    String(rows.reduce((s, r) => s + r.routesLeftSwapped, 0)),
    String(rows.reduce((s, r) => s + r.locksHeld, 0)),
    String(rows.filter((r) => r.hole).length),
  ];
  const all = [head, ...body, total];
  const w = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join(' | ')} |`;
  return [
    line(head),
    `|${w.map((n, i) => `${i === 0 ? ':' : '-'}${'-'.repeat(n)}${i === 0 ? '-' : ':'}`).join('|')}|`,
    ...body.map(line),
    line(total),
  ].join('\n');
}

/** Starts the loopback targets every case probes (once for the suite), and the table. */
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'pathbench-faults-table-'));
  project.provide('faultsTableDir' as never, dir as never);
  const targets = await startLoopbackTargets(silentLogger, FAULT_PORTS);
  return async () => {
    await targets.stop();
    let rows: Row[] = [];
    try {
      rows = readFileSync(join(dir, 'rows.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Row);
    } catch {
      // no case recorded a row
    }
    rmSync(dir, { recursive: true, force: true });
    if (!rows.length) return;
    const open = rows.filter((r) => r.hole).map((r) => `  - ${r.faultClass}: ${r.caseName}\n      ${r.hole}`);
    process.stdout.write(`\nfault suite:\n${formatTable(rows)}\n`);
    if (open.length) process.stdout.write(`still open (test/faults/known-holes.ts):\n${open.join('\n')}\n`);
  };
}
