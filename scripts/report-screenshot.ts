/**
 * docs/report.png: the top of summary.html, as Chromium shows it, for a run's summary.json
 * (the README's picture is a real lab run: `npm start`, then
 * `npx tsx scripts/report-screenshot.ts .pathbench/reports/run=<id>/summary.json`), or, with no
 * argument, for the hand-made full summary (test/fixtures/summary-full.json).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { summarySchema } from '../core/run-summary.js';
import { parseDocument } from '../core/stored-document.js';
import { renderHtml } from '../report/report-html.js';

const root = join(import.meta.dirname, '..');
const dir = await mkdtemp(join(tmpdir(), 'pathbench-shot-'));
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
});
try {
  const source = process.argv[2] ?? join(root, 'test/fixtures/summary-full.json');
  const summary = parseDocument(source, await readFile(source, 'utf8'), summarySchema, 'run summary');
  const file = join(dir, 'summary.html');
  await writeFile(file, await renderHtml(summary));
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 }, deviceScaleFactor: 1 });
  await page.goto(pathToFileURL(file).href);
  // The differences, the relative chart and the CDF: the page's answers at a glance.
  const top = await page.evaluate(() => {
    const h = [...document.querySelectorAll('h2')].find((x) => x.textContent === 'Differences');
    return (h?.getBoundingClientRect().top ?? 0) + window.scrollY - 16;
  });
  await page.screenshot({
    path: join(root, 'docs/report.png'),
    clip: { x: 0, y: top, width: 1280, height: 1500 },
    fullPage: true,
  });
} finally {
  await browser.close();
  await rm(dir, { recursive: true, force: true });
}
