/**
 * The percentiles and unit labels the HTML page and its charts share, apart from the charts
 * (report/html-charts.ts) so the page's tables do not load ECharts.
 */
import { unitOf } from './report-rows.js';

export type Pct = 'p50' | 'p95' | 'p99';

export const PCTS: Pct[] = ['p50', 'p95', 'p99'];

export const unitLabel = (metric: string, unit: string) => unitOf({ metric, unit });
export const gbps = (bps: number) => `${(bps / 1e9).toFixed(3)} Gbit/s`;
