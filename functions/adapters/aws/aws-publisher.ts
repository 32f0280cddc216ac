/**
 * RunPublisher on AWS: after the summary step, every judged percentile of the run as a
 * CloudWatch metric in embedded metric format (Powertools for AWS Lambda Metrics; the Lambda's
 * log line becomes the metric, no PutMetricData permission or call), the count of regressions
 * as one more metric (the regression alarm watches it), and one EventBridge event per
 * regression on the default bus (the rule in infra/constructs/trend-alerts.ts sends it to the
 * alarm topic, naming the path and the figures).
 *
 * CloudWatch's limits, kept here: at most 30 dimensions per metric (5 used), dimension values
 * non-empty and at most 1,024 characters (plan names ≤ 100, path ids ≤ 63), at most 100 metrics
 * per EMF document (Powertools flushes every 100); PutEvents takes at most 10 entries of 256 KB.
 */

import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { keys } from '../../../core/keys.js';
import type { Regression, Summary } from '../../../core/run-summary.js';
import { describeRegression, judgedPercentiles } from '../../pipeline/regressions.js';
import type { RunPublisher } from '../../ports.js';
import type { AwsPort } from './aws-deps.js';

export const METRIC_NAMESPACE = 'Pathbench';
export const METRIC_SERVICE = 'pathbench';
/** The one metric name for every figure; what it is lies in the dimensions. */
export const FIGURE_METRIC = 'PathFigure';
/** Regressions (not improvements) found in a run; the regression alarm fires when above 0. */
export const REGRESSIONS_METRIC = 'Regressions';
export const EVENT_SOURCE = 'pathbench';
export const REGRESSION_DETAIL_TYPE = 'Pathbench Regression';

const UNITS: Record<string, (typeof MetricUnit)[keyof typeof MetricUnit]> = {
  ms: MetricUnit.Milliseconds,
  us: MetricUnit.Microseconds,
  s: MetricUnit.Seconds,
  'bit/s': MetricUnit.BitsPerSecond,
};

/** A dimension value CloudWatch accepts: non-empty, at most 1,024 characters. */
function dim(v: string): string {
  const t = v.trim() === '' ? '-' : v;
  return t.length > 1024 ? t.slice(0, 1024) : t;
}

/** The event detail of one regression: the figures, the run and where its summary lies. */
export function regressionEvent(s: Summary, r: Regression, bus?: string): PutEventsRequestEntry {
  return {
    Source: EVENT_SOURCE,
    DetailType: REGRESSION_DETAIL_TYPE,
    ...(bus ? { EventBusName: bus } : {}),
    Detail: JSON.stringify({
      runId: s.runId,
      planName: s.planName,
      summaryKey: keys.report(s.runId, 'json'),
      text: describeRegression(r),
      ...r,
    }),
  };
}

export class AwsRunPublisher implements RunPublisher {
  constructor(
    private readonly events: EventBridgeClient,
    private readonly opts: { bus?: string; namespace?: string } = {},
  ) {}

  async publish(s: Summary): Promise<void> {
    this.emitMetrics(s);
    await this.putEvents(s);
  }

  /** The run's judged percentiles and its regression count, as EMF lines on stdout. */
  emitMetrics(s: Summary): void {
    const plan = dim(s.planName ?? 'unnamed');
    const metrics = new Metrics({ namespace: this.opts.namespace ?? METRIC_NAMESPACE, serviceName: METRIC_SERVICE });
    const at = s.startedAt ? Date.parse(s.startedAt) : Number.NaN;
    for (const p of s.paths) {
      if (p.status !== 'succeeded') continue;
      for (const r of p.results) {
        for (const percentile of judgedPercentiles(r.metric, r.unit)) {
          const v = r[percentile];
          if (v === null || r.n <= 0) continue;
          // One document per figure: dimensions apply to a whole document.
          const one = metrics.singleMetric();
          one.addDimensions({ plan, path: dim(p.id), probe: dim(r.probe), metric: dim(r.metric), percentile });
          if (Number.isFinite(at)) one.setTimestamp(at);
          one.addMetric(FIGURE_METRIC, UNITS[r.unit] ?? MetricUnit.NoUnit, v);
        }
      }
    }
    // Without a plan dimension, so one alarm covers every plan (the service dimension only).
    const count = metrics.singleMetric();
    count.addMetric(
      REGRESSIONS_METRIC,
      MetricUnit.Count,
      (s.regressions ?? []).filter((r) => r.direction === 'regression').length,
    );
  }

  /** One event per regression or improvement, 10 per PutEvents call; throws naming failed entries. */
  async putEvents(s: Summary): Promise<void> {
    const entries = (s.regressions ?? []).map((r) => regressionEvent(s, r, this.opts.bus));
    const failed: string[] = [];
    for (let i = 0; i < entries.length; i += 10) {
      const batch = entries.slice(i, i + 10);
      const out = await this.events.send(new PutEventsCommand({ Entries: batch }));
      if (out.FailedEntryCount) {
        (out.Entries ?? []).forEach((e, j) => {
          if (e.ErrorCode)
            failed.push(`${describeRegression(s.regressions![i + j])}: ${e.ErrorCode} ${e.ErrorMessage ?? ''}`.trim());
        });
      }
    }
    if (failed.length)
      throw new Error(`EventBridge refused ${failed.length} regression event(s): ${failed.join('; ')}`);
  }
}

/** The publisher port of a Lambda: EMF metrics on stdout, regression events on the default bus. */
export const awsPublisher: AwsPort<'publisher'> = ({ cfg }) =>
  new AwsRunPublisher(new EventBridgeClient({ region: cfg.region }));
