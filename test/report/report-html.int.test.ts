/**
 * summary.html as a person opens it: headless Chromium (Debian's chromium, driven by
 * playwright-core) loads the file from disk — the full fixture's page and the page of a real
 * local run of plans/local-loopback.json — with no console error, no request but the file, each
 * chart present with its series, and a screenshot that shows something.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { silentLogger } from '../../functions/log.js';
import { runLocal } from '../../local/local-driver.js';
import { type LoopbackTargets, startLoopbackTargets } from '../../local/targets.js';
import { renderHtml } from '../../report/report-html.js';
import { ROOT } from '../helpers/repo.js';
import { expectedCharts } from '../helpers/report-html.js';

let browser: Browser;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-html-'));
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
});

afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Opened {
  errors: string[];
  requests: string[];
  charts: { kind: string; series: number; svg: boolean }[];
  headings: string[];
  rows: number;
  png: Buffer;
}

/** Open a report file the way a person does and read what the page shows. */
async function open(file: string): Promise<Opened> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('requestfailed', (r) => errors.push(`failed: ${r.url()}`));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  const read = await page.evaluate(() => ({
    charts: [...document.querySelectorAll('figure[data-chart]')].map((f) => ({
      kind: f.getAttribute('data-chart') ?? '',
      // Distinct series among the legend's entries of the chart's own SVG.
      series: new Set(
        [...f.querySelectorAll('svg [ecmeta_ssr_type="legend"]')].map((e) => e.getAttribute('ecmeta_series_index')),
      ).size,
      svg: (f.querySelector('svg')?.getBoundingClientRect().height ?? 0) > 100,
    })),
    headings: [...document.querySelectorAll('h2')].map((h) => h.textContent ?? ''),
    rows: document.querySelectorAll('table.results tbody tr').length,
  }));
  const png = await page.screenshot({ fullPage: true });
  await page.close();
  return { errors, requests, png, ...read };
}

/** Decode a PNG in a blank page's canvas: distinct colours and the share of non-white pixels. */
async function pixels(png: Buffer): Promise<{ width: number; height: number; colours: number; inked: number }> {
  const page = await browser.newPage();
  try {
    return await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d');
      if (!ctx) throw new Error('no 2d context');
      ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      const colours = new Set<number>();
      let inked = 0;
      for (let i = 0; i < d.length; i += 4) {
        colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        if (d[i] < 245 || d[i + 1] < 245 || d[i + 2] < 245) inked++;
      }
      return { width: c.width, height: c.height, colours: colours.size, inked: inked / (d.length / 4) };
    }, png.toString('base64'));
  } finally {
    await page.close();
  }
}

describe('the full fixture page in Chromium', () => {
  let opened: Opened;
  let summary: Summary;
  let file: string;
  beforeAll(async () => {
    summary = JSON.parse(await readFile(join(ROOT, 'test/fixtures/summary-full.json'), 'utf8'));
    file = join(dir, 'summary.html');
    await writeFile(file, await renderHtml(summary));
    opened = await open(file);
  });

  it('loads without console errors and requests nothing but itself', () => {
    expect(opened.errors).toEqual([]);
    expect(opened.requests).toEqual([pathToFileURL(file).href]);
  });

  it('shows every chart with the right number of series', () => {
    const want = expectedCharts(summary);
    expect(want.map((c) => c.kind)).toEqual([
      'relative',
      'cdf',
      ...Array(5).fill('histogram'),
      ...Array(5).fill('series'),
    ]);
    expect(opened.charts.map(({ kind, series }) => ({ kind, series }))).toEqual(want);
    expect(opened.charts.every((c) => c.svg)).toBe(true);
    expect(opened.headings).toEqual([
      'Results',
      'Differences',
      'Relative to the baseline',
      'Latency distributions',
      'Throughput per interval',
      "The probes' own cost",
      'Provenance',
    ]);
    expect(opened.rows).toBe(10);
  });

  it('renders a screenshot that is not blank', async () => {
    const p = await pixels(opened.png);
    expect(p.width).toBe(1280);
    expect(p.height).toBeGreaterThan(3000);
    // Text, grid lines and the series palette: hundreds of colours, a real share of the page inked.
    expect(p.colours).toBeGreaterThan(200);
    expect(p.inked).toBeGreaterThan(0.05);
  });
});

describe('the page of a real local run in Chromium', () => {
  let targets: LoopbackTargets;
  let opened: Opened;
  let summary: Summary;
  let file: string;
  beforeAll(async () => {
    targets = await startLoopbackTargets(silentLogger);
    const plan = JSON.parse(await readFile(join(ROOT, 'plans', 'local-loopback.json'), 'utf8'));
    const data = join(dir, 'data');
    await runLocal({ plan, dataDir: data, runId: 'it-html', log: silentLogger });
    summary = JSON.parse(await readFile(join(data, 'reports/run=it-html/summary.json'), 'utf8'));
    file = join(data, 'reports/run=it-html/summary.html');
    opened = await open(file);
  });
  afterAll(async () => {
    await targets?.stop();
  });

  it('carries each path’s provenance: agent, tool and the clock of its figures', () => {
    const plain = summary.paths.find((p) => p.id === 'plain');
    expect(plain?.provenance).toMatchObject({ agentVersion: expect.any(String), kernel: expect.any(String) });
    expect(plain?.provenance?.clocks?.['tcp-connect']).toMatch(/\S/);
  });

  it('loads without console errors, requests nothing but itself, and shows what the summary holds', async () => {
    expect(opened.errors).toEqual([]);
    expect(opened.requests).toEqual([pathToFileURL(file).href]);
    expect(opened.rows).toBe(summary.paths.reduce((n, p) => n + Math.max(1, p.results.length), 0));
    expect(opened.headings).toContain('Provenance');
    expect(opened.charts.map(({ kind, series }) => ({ kind, series }))).toEqual(expectedCharts(summary));
    const p = await pixels(opened.png);
    expect(p.colours).toBeGreaterThan(50);
    expect(p.inked).toBeGreaterThan(0.03);
  });
});
