/**
 * The run summary (contract in the foundation issue): percentiles from the same SQL on Athena
 * and DuckDB, path status and steps from the manifest when there is one, and renderings for
 * people (console table, Markdown, CSV).
 */
import { formatCreditFlag } from '../core/credit.js';
import { keys } from '../core/keys.js';
import type { ProbeOverhead, ResultRow, RunManifest, Summary, SummaryPath } from '../core/model.js';
import type { Deps } from '../ports.js';
import { loadQuery } from '../sql.js';

type Row = Record<string, unknown>;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Notes about the run as a whole (e.g. that nothing was measured). */
export function runNotes(s: Summary): string[] {
  return Array.isArray(s.notes) ? (s.notes as string[]) : [];
}

/** Final status of a run from its manifest. */
export function runStatus(m: RunManifest): RunManifest['status'] {
  const failed = m.paths.filter((p) => p.status !== 'succeeded').length;
  if (m.restore?.status === 'failed') return 'failed';
  if (failed === 0) return 'succeeded';
  return failed === m.paths.length ? 'failed' : 'partial';
}

export function formatFlag(flag: string, row: Row): string {
  return `${flag}(trial ${num(row.trial)} @ interval ${num(row.first_seq)}, ${num(row.intervals)} intervals)`;
}

/**
 * Build the summary of a run from the samples (and the manifest when present). Works for
 * samples that arrived by other means too: then path ids become the labels and status is
 * inferred from the data.
 */
export async function buildSummary(deps: Pick<Deps, 'store' | 'query'>, runId: string): Promise<Summary> {
  const manifestText = await deps.store.getText(keys.manifest(runId));
  const manifest = manifestText ? (JSON.parse(manifestText) as RunManifest) : undefined;
  const rows = await deps.query.query(loadQuery('percentiles'), [runId], `percentiles-${runId}`);
  const flagRows = await deps.query.query(loadQuery('flags'), [runId], `flags-${runId}`);

  const byPath = new Map<string, ResultRow[]>();
  const figures = (r: Row) => ({
    n: Number(r.n),
    loss: r.loss === null ? 0 : Number(r.loss),
    p50: num(r.p50),
    p95: num(r.p95),
    p99: num(r.p99),
    p999: num(r.p999),
    max: num(r.max),
  });
  // 'all' rows come first for each (path, probe, metric) in the query's order.
  for (const r of rows.filter((x) => x.subset === 'all')) {
    const path = String(r.path);
    const isThroughput = r.metric === 'throughput_bps';
    // The manifest knows the levels before/after a cliff; samples alone only know where.
    const cliffs = manifest?.paths.find((p) => p.id === path)?.probes.find((p) => p.probe === r.probe)?.credit;
    const flags = !isThroughput
      ? []
      : cliffs
        ? cliffs.map((c) => formatCreditFlag(c))
        : flagRows.filter((f) => f.path === r.path && f.probe === r.probe).map((f) => formatFlag(String(f.flag), f));
    const result: ResultRow = {
      probe: String(r.probe),
      metric: String(r.metric),
      unit: String(r.unit),
      ...figures(r),
      flags,
    };
    const unflagged = rows.find(
      (x) =>
        x.subset === 'unflagged' &&
        x.path === r.path &&
        x.probe === r.probe &&
        x.metric === r.metric &&
        x.unit === r.unit,
    );
    if (unflagged) result.unflagged = figures(unflagged);
    if (!byPath.has(path)) byPath.set(path, []);
    byPath.get(path)?.push(result);
  }

  const ids = manifest ? manifest.paths.map((p) => p.id) : [...byPath.keys()].sort();
  const paths: SummaryPath[] = ids.map((id) => {
    const mp = manifest?.paths.find((p) => p.id === id);
    const results = byPath.get(id) ?? [];
    const sp: SummaryPath = {
      id,
      label: mp?.label ?? id,
      status: mp?.status ?? (results.length ? 'succeeded' : 'failed'),
      steps: (mp?.steps ?? []).map((s) => ({ name: s.name, status: s.status, ms: s.ms ?? 0 })),
      results,
    };
    if (mp?.failedStep) sp.failedStep = mp.failedStep;
    if (mp?.error) sp.error = mp.error;
    if (mp?.probe_overhead_us) sp.probe_overhead_us = mp.probe_overhead_us;
    const skipped = mp?.probes.filter((p) => p.status === 'skipped').map((p) => ({ probe: p.probe, reason: p.reason }));
    if (skipped?.length) sp.skipped = skipped;
    if (mp?.notes.length) sp.notes = mp.notes;
    return sp;
  });
  const summary: Summary = {
    runId,
    status: manifest ? (manifest.status === 'running' ? runStatus(manifest) : manifest.status) : 'succeeded',
    paths,
  };
  if (manifest) {
    summary.planName = manifest.planName;
    summary.startedAt = manifest.startedAt;
    if (manifest.endedAt) summary.endedAt = manifest.endedAt;
    if (manifest.restore) summary.routesRestored = manifest.restore;
  }
  if (!paths.some((p) => p.results.some((r) => r.n > 0))) {
    // Nothing was measured: say so, with the likely cause, instead of a table of 100 % loss.
    const attempted = paths.some((p) => p.results.length > 0);
    const errors = attempted ? await deps.query.query(loadQuery('errors'), [runId], `errors-${runId}`) : [];
    summary.notes = [nothingMeasuredNote(paths, errors)];
  }
  return summary;
}

/** Why a run measured nothing, from its most common sample errors (queries/errors.sql) or path errors. */
export function nothingMeasuredNote(paths: SummaryPath[], errors: Record<string, unknown>[]): string {
  if (errors.length === 0) {
    const failed = paths.find((p) => p.error);
    return `nothing was measured: no path produced a sample${failed ? ` (${failed.id} failed at ${failed.failedStep}: ${failed.error})` : ''}`;
  }
  const top = errors.map((e) => `${String(e.error)} ×${Number(e.samples)}`).join(', ');
  const main = String(errors[0].error);
  return `nothing was measured: every sample of every path failed (${top}); likely cause: ${likelyCause(main)}`;
}

function likelyCause(error: string): string {
  if (/refused/i.test(error))
    return "nothing listens at the targets (connection refused): start a server on each target (pathbench starts its own only on the loopback plans' ports)";
  if (/timeout|timed out/i.test(error))
    return 'the targets do not answer (timeouts): a wrong address, a firewall or security group, or a route that goes nowhere';
  if (/unreachable|no route/i.test(error)) return 'no route to the targets (unreachable)';
  if (/ephemeral/i.test(error))
    return 'the client ran out of ephemeral ports (TIME_WAIT); enable tcp_tw_reuse or use keep-alive';
  if (/icmp/i.test(error)) return 'ICMP is blocked on the path (an NLB or a security group drops it)';
  return `the most common error is "${error}"`;
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

function fmt(v: number | null, metric: string): string {
  if (v === null) return '–';
  if (metric === 'throughput_bps') return (v / 1e9).toFixed(2);
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(2);
  return v.toFixed(3);
}

const unitOf = (r: ResultRow) => (r.metric === 'throughput_bps' ? 'Gbit/s' : r.unit);

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

const HEAD = ['path', 'probe', 'metric', 'n', 'loss', 'p50', 'p95', 'p99', 'max', 'notes'];

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

const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A self-contained page (no scripts, no external assets) for people who open reports in a browser. */
export function renderHtml(s: Summary): string {
  const rows = tableRows(s)
    .map((r) => `<tr>${r.map((c, i) => `<td${i >= 3 && i <= 8 ? ' class="n"' : ''}>${esc(c)}</td>`).join('')}</tr>`)
    .join('\n');
  const notes = [
    ...runNotes(s),
    ...s.paths.flatMap((p) => [
      ...(p.error ? [`${p.id} failed at ${p.failedStep}: ${p.error}`] : []),
      ...overheadLines(p).map((l) => `${p.id} probe's own cost: ${l}`),
      ...((p.notes as string[] | undefined) ?? []).map((n) => `${p.id} note: ${n}`),
    ]),
  ]
    .map((n) => `<li>${esc(n)}</li>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pathbench run ${esc(s.runId)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{padding:.25rem .6rem;border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}</style>
</head><body>
<h1>pathbench run ${esc(s.runId)}</h1>
<p>status: <strong>${esc(s.status)}</strong>${s.planName ? ` · plan ${esc(String(s.planName))}` : ''}${s.startedAt ? ` · started ${esc(String(s.startedAt))}` : ''}${s.endedAt ? ` · ended ${esc(String(s.endedAt))}` : ''}</p>
<table><thead><tr>${HEAD.map((h) => `<th>${h}</th>`).join('')}</tr></thead>
<tbody>
${rows}
</tbody></table>
${notes ? `<ul>\n${notes}\n</ul>` : ''}
</body></html>
`;
}

/** Store summary.json / .md / .csv / .html under reports/run=<id>/. */
export async function storeReports(deps: Pick<Deps, 'store'>, summary: Summary): Promise<void> {
  const id = summary.runId;
  await deps.store.put(keys.report(id, 'json'), `${JSON.stringify(summary, null, 2)}\n`, 'application/json');
  await deps.store.put(keys.report(id, 'md'), renderMarkdown(summary), 'text/markdown');
  await deps.store.put(keys.report(id, 'csv'), renderCsv(summary), 'text/csv');
  await deps.store.put(keys.report(id, 'html'), renderHtml(summary), 'text/html');
}

/** Compute the summary of a run and store its reports. */
export async function writeReports(deps: Pick<Deps, 'store' | 'query'>, runId: string): Promise<Summary> {
  const summary = await buildSummary(deps, runId);
  await storeReports(deps, summary);
  return summary;
}
