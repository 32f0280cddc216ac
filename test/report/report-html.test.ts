/** summary.html from a hand-made summary with every contract field, and from a minimal one. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { renderHtml } from '../../report/report-html.js';
import { FIXTURES } from '../helpers/repo.js';
import { chartsIn } from '../helpers/report-html.js';

const fixture = (): Summary & Record<string, unknown> =>
  JSON.parse(readFileSync(join(FIXTURES, 'summary-full.json'), 'utf8'));
const full = fixture();
const html = await renderHtml(full);
const charts = chartsIn(html);
const ofKind = (k: string) => charts.filter((c) => c.kind === k);

describe('summary.html of a full summary', () => {
  it('has one relative chart per probe and metric compared, with p50, p95 and p99 as bar series', () => {
    const rel = ofKind('relative');
    expect(rel).toHaveLength(1);
    expect(rel[0]).toMatchObject({ legend: 3, drawn: 3, names: ['p50', 'p95', 'p99'] });
  });

  it('has a CDF with a line per path and a histogram per path', () => {
    const paths = full.paths.map((p) => p.id);
    const [cdf, ...more] = ofKind('cdf');
    expect(more).toHaveLength(0);
    expect(cdf).toMatchObject({ legend: 5, lines: 5, names: paths });
    const hist = ofKind('histogram');
    expect(hist.map((h) => h.names)).toEqual(paths.map((p) => [p]));
    for (const h of hist) expect(h).toMatchObject({ legend: 1, drawn: 1 });
    // The bimodal path names both modes; a unimodal one names one.
    expect(hist[2].caption).toMatch(/2 modes: 2\.550 \(62%\), 3\.450 \(38%\)/);
    expect(hist[0].caption).toMatch(/1 mode: /);
  });

  it('draws throughput per interval with a line per trial, naming the cliff and the plateau', () => {
    const series = ofKind('series');
    expect(series).toHaveLength(5);
    for (const s of series) expect(s).toMatchObject({ legend: 3, lines: 3 });
    const d = series[3];
    expect(d.names).toEqual(['trial 1', 'trial 2 · credit-exhausted', 'trial 3 · at-baseline']);
    expect(series[4].names.every((n) => n.endsWith('· at-baseline'))).toBe(true);
    expect(series[0].names).toEqual(['trial 1', 'trial 2', 'trial 3']);
    expect(d.caption).toContain('c6i.large: baseline 0.781 Gbit/s, peak 12.500 Gbit/s');
    // The cliff's start is a marked line where the flag starts.
    expect(html).toContain('cliff (trial 2)');
  });

  it('shows each percentile with its interval and tail, thin tails marked, and the trial spread', () => {
    const d = full.paths[3].results[0] as unknown as { ci95: { p50: number[] }; tail: { p50: number } };
    expect(html).toContain(
      `[${d.ci95.p50[0].toFixed(3)}, ${d.ci95.p50[1].toFixed(3)}]</small><small>${d.tail.p50} beyond</small>`,
    );
    expect(html).toMatch(/<td class="n thin">0\.350/); // A's p99.9 from 3,000 samples
    expect(html).toContain('<span class="flag warn">thin-tail:p999</span>');
    expect(html).toMatch(/p50 spread [\d.]+%<\/small><small>p99 spread [\d.]+%/);
  });

  it('has the difference table with verdicts', () => {
    expect(html).toMatch(/<th scope="row">D − C<\/th>.*\+2\.115 \(\+80\.1%\).*slower/);
    expect(html).toMatch(/<th scope="row">A − A<\/th>.*±0\.000 \(0\.0%\).*no clear difference/);
  });

  it("shows the probes' own cost and provenance", () => {
    expect(html).toContain("The probes' own cost");
    expect(html).toMatch(
      /<td>c6i\.large<\/td><td>use1-az2<\/td><td>0\.781 Gbit\/s<\/td><td>12\.500 Gbit\/s<\/td><td>0\.13\.0<\/td>/,
    );
    expect(html).toContain('tcp-connect kernel-tcpi_rtt, iperf3 tool');
  });

  it('is self-contained: no script, no external reference', () => {
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import/i);
    expect(html).not.toMatch(/\b(src|href)=/i);
    // URLs only as SVG namespace names, and url() only to the page's own clip paths.
    expect(html.match(/https?:\/\/[^"'\s)]+/g)?.filter((u) => !/^http:\/\/www\.w3\.org\//.test(u)) ?? []).toEqual([]);
    expect(html.match(/url\([^)]*\)/g)?.every((u) => u.startsWith('url(#')) ?? true).toBe(true);
  });
});

describe('summary.html escapes what the data says', () => {
  it('escapes labels, path ids and notes in tables and charts alike', async () => {
    const s = fixture();
    const bad = '<img src=x onerror=alert(1)>&"';
    const rename = (x: { path?: string; baseline?: string; id?: string }) => {
      if (x.path === 'C') x.path = bad;
      if (x.baseline === 'C') x.baseline = bad;
      if (x.id === 'C') x.id = bad;
    };
    for (const list of [s.paths, s.comparisons, s.distributions, s.series] as { path?: string }[][])
      list.forEach(rename);
    s.paths[0].label = '<b>label</b>';
    s.paths[1].notes = ['<script>alert(1)</script>'];
    const page = await renderHtml(s);
    expect(page).not.toContain('<img');
    expect(page).not.toContain('<b>label');
    expect(page).not.toContain('<script');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;&amp;');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    // The escaped name is still a legend entry of the CDF and the histogram title.
    const cdf = chartsIn(page).find((c) => c.kind === 'cdf');
    expect(cdf?.names[2]).toMatch(/^&lt;img src=x onerror=alert\(1\)&gt;&amp;/);
  });
});

describe('summary.html of a minimal summary', () => {
  it('renders the table without charts or empty sections', async () => {
    const s: Summary = {
      runId: 'r1',
      status: 'succeeded',
      paths: [
        {
          id: 'A',
          label: 'A',
          status: 'succeeded',
          steps: [],
          results: [
            {
              probe: 'tcp-connect',
              metric: 'connect_rtt_ms',
              unit: 'ms',
              n: 200,
              loss: 0,
              p50: 0.1,
              p95: 0.2,
              p99: 0.3,
              p999: 0.3,
              max: 0.4,
              flags: [],
            },
          ],
        },
        {
          id: 'B',
          label: 'B',
          status: 'failed',
          failedStep: 'SendProbe',
          error: 'agent exited 1',
          steps: [],
          results: [],
        },
      ],
    };
    const page = await renderHtml(s);
    expect(page).not.toMatch(/<figure|<svg/);
    expect(page).not.toMatch(
      /Differences|Relative to|Latency distributions|Throughput per interval|Provenance|own cost/,
    );
    expect(page).toMatch(/<th scope="row">A<\/th><td>tcp-connect<\/td>.*<td class="n">200<\/td>.*0\.100/);
    expect(page).toContain('failed at SendProbe');
    expect(page).toContain('B failed at SendProbe: agent exited 1');
  });
});
