/** The summary step over real DuckDB: a run that measured nothing says so, with the likely cause. */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import { parsePlan } from '../../../core/plan.js';
import { buildSummary, nothingMeasuredNote } from '../../../functions/pipeline/summary.js';
import { DirStore } from '../../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../../local/duckdb-query.js';
import { renderHtml } from '../../../report/report-html.js';
import { renderMarkdown } from '../../../report/report-markdown.js';
import { renderTable } from '../../../report/report-text.js';
import { expectOk } from '../../helpers/plans.js';
import { tempDataDir, writeSamples } from '../../helpers/samples.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const sample = (path: string, seq: number, ok: boolean, error?: string) => ({
  run_id: 'r1',
  path_id: path,
  probe: 'tcp-connect',
  kind: 'tcp-connect',
  trial: 1,
  seq,
  t_start: seq,
  t_end: seq + 0.001,
  metric: 'connect_rtt_ms',
  value: ok ? 0.2 + seq / 1000 : null,
  unit: 'ms',
  ok,
  ...(error ? { error } : {}),
});

async function summarize(records: Record<string, unknown>[]) {
  const dir = await tempDataDir('summary');
  dirs.push(dir);
  await writeSamples(dir, records);
  const query = await DuckDbQueryEngine.open(dir);
  try {
    return await buildSummary({ store: new DirStore(dir), query }, 'r1');
  } finally {
    query.close();
  }
}

describe('a run that measured nothing', () => {
  it('carries a note naming the errors and the likely cause, shown in every rendering', async () => {
    const records = [
      ...Array.from({ length: 6 }, (_, i) => sample('A', i, false, 'refused')),
      ...Array.from({ length: 4 }, (_, i) => sample('B', i, false, 'refused')),
      sample('B', 9, false, 'timeout'),
    ];
    const s = await summarize(records);
    expect(s.paths.map((p) => p.results[0].n)).toEqual([0, 0]);
    expect(s.notes).toEqual([
      expect.stringMatching(
        /^nothing was measured: every sample of every path failed \(refused ×10, timeout ×1\); likely cause: nothing listens/,
      ),
    ]);
    for (const text of [renderTable(s), renderMarkdown(s), await renderHtml(s)])
      expect(text).toContain('nothing was measured');
  });

  it('has no such note when one sample of one path succeeded', async () => {
    const s = await summarize([sample('A', 0, false, 'refused'), sample('B', 0, true)]);
    expect(s.notes).toBeUndefined();
    expect(renderTable(s)).not.toContain('nothing was measured');
  });
});

describe('a paired plan with a path judged without the pair', () => {
  it('says which and why once, in every rendering', async () => {
    const dir = await tempDataDir('summary');
    dirs.push(dir);
    const client = { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' };
    const plan = expectOk(
      parsePlan({
        name: 'paired',
        regression: { reference: 'A', paired: true },
        defaults: { client, probes: [{ kind: 'http' }] },
        paths: [
          { id: 'A', target: { host: '10.1.0.10', port: 80 } },
          {
            id: 'B',
            target: { host: '10.2.0.10', port: 80 },
            client: { ...client, instanceId: 'i-0fedcba9876543210' },
          },
        ],
      }),
    );
    await new DirStore(dir).put(keys.plan('r1'), JSON.stringify({ source: {}, resolved: plan }));
    await writeSamples(dir, [sample('A', 0, true), sample('B', 0, true)]);
    const query = await DuckDbQueryEngine.open(dir);
    try {
      const s = await buildSummary({ store: new DirStore(dir), query }, 'r1');
      const note =
        'regression.paired: judged without the pair (after the run\'s shift): B (another client than "A"\'s)';
      expect(s.notes).toEqual([note]);
      for (const text of [renderTable(s), renderMarkdown(s), await renderHtml(s)])
        expect(text).toContain('judged without the pair');
    } finally {
      query.close();
    }
  });
});

describe('nothingMeasuredNote', () => {
  const path = (id: string, error?: string) => ({
    id,
    label: id,
    status: 'failed' as const,
    steps: [],
    results: [],
    ...(error ? { error, failedStep: 'SendProbe' } : {}),
  });
  it('names the first path error when no path produced a sample at all', () => {
    expect(nothingMeasuredNote([path('A'), path('B', 'agent exited 1')], [])).toBe(
      'nothing was measured: no path produced a sample (B failed at SendProbe: agent exited 1)',
    );
  });
  it.each([
    ['timeout', /do not answer/],
    ['ephemeral-ports-exhausted', /ephemeral ports/],
    ['icmp-blocked', /ICMP is blocked/],
    ['weird', /the most common error is "weird"/],
  ])('reads %s as its likely cause', (error, cause) => {
    expect(nothingMeasuredNote([path('A')], [{ error, samples: 3, paths: 1 }])).toMatch(cause);
  });
});
