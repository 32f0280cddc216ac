/**
 * The run summary for people: the console table, Markdown and CSV (the HTML page is
 * report-html.ts). Every rendering reads only the summary JSON (summary.ts builds it).
 */
import type { ProbeOverhead, ResultRow, Summary, SummaryPath } from '../core/model.js';

/** Notes about the run as a whole (e.g. that nothing was measured). */
export function runNotes(s: Summary): string[] {
  return Array.isArray(s.notes) ? (s.notes as string[]) : [];
}

/**
 * "tcp-connect p50 2.0 µs / p99 5.0 µs (method)" per calibrated kind: shown next to the results
 * so a reader sees when a path's latency is within the probe's own noise.
 */
export function overheadLines(p: SummaryPath): string[] {
  const o = (p.probe_overhead_us ?? {}) as Record<string, ProbeOverhead>;
  return Object.entries(o).map(
    ([kind, c]) => `${kind} p50 ${c.p50_us.toFixed(1)} µs / p99 ${c.p99_us.toFixed(1)} µs (${c.method})`,
  );
}

/** A figure as the tables show it: throughput in Gbit/s, three significant-ish digits otherwise. */
export function fmt(v: number | null, metric: string): string {
  if (v === null) return '–';
  if (metric === 'throughput_bps') return (v / 1e9).toFixed(2);
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(2);
  return v.toFixed(3);
}

/** The unit the tables show a result in (throughput in Gbit/s). */
export const unitOf = (r: Pick<ResultRow, 'metric' | 'unit'>) => (r.metric === 'throughput_bps' ? 'Gbit/s' : r.unit);

/** Rows of the human tables: one per path × result (the seed's layout: path, n, loss, p50…). */
export function tableRows(s: Summary): string[][] {
  const out: string[][] = [];
  for (const p of s.paths) {
    if (p.results.length === 0) {
      out.push([p.id, '', '', '', '', '', '', '', '', `${p.status}${p.failedStep ? ` at ${p.failedStep}` : ''}`]);
      continue;
    }
    for (const r of p.results) {
      const rowsOf: [string, ResultRow | NonNullable<ResultRow['unflagged']>, string[]][] = [[r.probe, r, r.flags]];
      if (r.unflagged) rowsOf.push([`${r.probe} (unflagged)`, r.unflagged, []]);
      for (const [label, f, flags] of rowsOf) out.push(tableRow(p, r, label, f, flags));
    }
  }
  return out;
}

function tableRow(
  p: SummaryPath,
  r: ResultRow,
  label: string,
  f: Pick<ResultRow, 'n' | 'loss' | 'p50' | 'p95' | 'p99' | 'max'>,
  flags: string[],
): string[] {
  return [
    p.id,
    label,
    `${r.metric} [${unitOf(r)}]`,
    String(f.n),
    `${(f.loss * 100).toFixed(1)}%`,
    fmt(f.p50, r.metric),
    fmt(f.p95, r.metric),
    fmt(f.p99, r.metric),
    fmt(f.max, r.metric),
    [p.status === 'succeeded' ? '' : `${p.status}${p.failedStep ? ` at ${p.failedStep}` : ''}`, ...flags]
      .filter(Boolean)
      .join(' '),
  ];
}

export const HEAD = ['path', 'probe', 'metric', 'n', 'loss', 'p50', 'p95', 'p99', 'max', 'notes'];

export function renderTable(s: Summary): string {
  const rows = [HEAD, ...tableRows(s)];
  const widths = HEAD.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i >= 3 && i <= 8 ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const text = [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)];
  const overhead = s.paths.flatMap((p) => overheadLines(p).map((l) => `  ${p.id}: ${l}`));
  if (overhead.length)
    text.push('', "the probes' own cost (self-calibrated on loopback before each path):", ...overhead);
  const failed = s.paths.filter((p) => p.error);
  for (const p of failed) text.push(`${p.id} failed at ${p.failedStep}: ${p.error}`);
  for (const n of runNotes(s)) text.push(`note: ${n}`);
  for (const p of s.paths) for (const n of (p.notes as string[] | undefined) ?? []) text.push(`${p.id} note: ${n}`);
  return `${text.join('\n')}\n`;
}

export function renderMarkdown(s: Summary): string {
  const rows = tableRows(s);
  const md = [
    `# pathbench run ${s.runId}`,
    '',
    `status: **${s.status}**${s.planName ? ` · plan: ${s.planName}` : ''}${s.startedAt ? ` · started ${s.startedAt}` : ''}`,
    '',
    `| ${HEAD.join(' | ')} |`,
    `|${HEAD.map((_, i) => (i >= 3 && i <= 8 ? '---:' : '---')).join('|')}|`,
    ...rows.map((r) => `| ${r.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`),
    '',
    ...runNotes(s).map((n) => `**note:** ${n}\n`),
  ];
  for (const p of s.paths) {
    if (p.error) md.push(`- **${p.id}** failed at \`${p.failedStep}\`: ${p.error}`);
    for (const l of overheadLines(p)) md.push(`- **${p.id}** probe's own cost: ${l}`);
    for (const n of (p.notes as string[] | undefined) ?? []) md.push(`- **${p.id}** note: ${n}`);
    if (Array.isArray(p.skipped))
      for (const k of p.skipped as { probe: string; reason: string }[])
        md.push(`- **${p.id}** skipped ${k.probe}: ${k.reason}`);
  }
  return `${md.join('\n')}\n`;
}

export function renderCsv(s: Summary): string {
  const head = [
    'run_id',
    'path',
    'label',
    'status',
    'probe',
    'subset',
    'metric',
    'unit',
    'n',
    'loss',
    'p50',
    'p95',
    'p99',
    'p999',
    'max',
    'flags',
  ];
  const q = (v: unknown) => {
    const t = v === null || v === undefined ? '' : String(v);
    return /[",\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
  };
  const lines = [head.join(',')];
  for (const p of s.paths) {
    for (const r of p.results) {
      const subsets: [string, NonNullable<ResultRow['unflagged']>, string][] = [['all', r, r.flags.join(' ')]];
      if (r.unflagged) subsets.push(['unflagged', r.unflagged, '']);
      for (const [subset, f, flags] of subsets) {
        lines.push(
          [
            s.runId,
            p.id,
            p.label,
            p.status,
            r.probe,
            subset,
            r.metric,
            r.unit,
            f.n,
            f.loss,
            f.p50,
            f.p95,
            f.p99,
            f.p999,
            f.max,
            flags,
          ]
            .map(q)
            .join(','),
        );
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
