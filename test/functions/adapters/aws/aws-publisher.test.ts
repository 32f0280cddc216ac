/**
 * The AWS run publisher: the judged percentiles as CloudWatch embedded-metric-format documents
 * written by Powertools itself (captured from stdout and parsed as CloudWatch would), the
 * regression count, and one EventBridge event per regression through the SDK's real
 * PutEventsCommand (aws-sdk-client-mock at the boundary; responses as in the PutEvents docs).
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Regression, ResultRow, Summary } from '../../../../core/run-summary.js';
import {
  AwsRunPublisher,
  EVENT_SOURCE,
  FIGURE_METRIC,
  METRIC_NAMESPACE,
  REGRESSION_DETAIL_TYPE,
  REGRESSIONS_METRIC,
} from '../../../../functions/adapters/aws/aws-publisher.js';
import { publishSummary } from '../../../../functions/pipeline/regressions.js';

const eb = mockClient(EventBridgeClient);
let lines: string[];
beforeEach(() => {
  eb.reset();
  lines = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
});
afterEach(() => vi.restoreAllMocks());

const result = (over: Partial<ResultRow>): ResultRow => ({
  probe: 'tcp-connect',
  metric: 'connect_rtt_ms',
  unit: 'ms',
  n: 2000,
  loss: 0,
  p50: 8.9,
  p95: 9.5,
  p99: 10.2,
  p999: 11,
  max: 12,
  flags: [],
  ...over,
});
const regression = (path: string, direction: Regression['direction'] = 'regression'): Regression => ({
  path,
  probe: 'tcp-connect',
  metric: 'connect_rtt_ms',
  unit: 'ms',
  percentile: 'p50',
  value: 9.9,
  ci95: [9.85, 9.95],
  baseline: 8.9,
  band: [8.45, 9.35],
  runsInBaseline: 6,
  change_pct: 11.2,
  direction,
});
const summary = (regressions: Regression[]): Summary => ({
  runId: '20261201T060000Z-abcdef',
  planName: 'weekly tokyo',
  startedAt: '2026-12-01T06:00:00.000Z',
  status: 'partial',
  paths: [
    {
      id: 'C',
      label: 'C',
      status: 'succeeded',
      steps: [],
      results: [
        result({}),
        result({ probe: 'iperf3', metric: 'throughput_bps', unit: 'bit/s', p50: 4.9e9, p99: 5e9 }),
        result({ probe: 'mtu', metric: 'path_mtu_bytes', unit: 'bytes', p50: 9001 }),
      ],
    },
    { id: 'D', label: 'D', status: 'failed', steps: [], results: [result({})] },
  ],
  regressions,
});

const emf = () => lines.map((l) => JSON.parse(l));

describe('AwsRunPublisher metrics', () => {
  it('writes one EMF document per judged figure with plan/path/probe/metric/percentile, and the regression count', async () => {
    eb.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] });
    await new AwsRunPublisher(new EventBridgeClient({ region: 'ap-northeast-1' })).publish(summary([regression('C')]));
    const docs = emf();
    const figures = docs.filter((d) => FIGURE_METRIC in d);
    // C: connect p50 + p99, throughput p50; mtu is not a time or rate; failed D is not a figure
    expect(figures.map((d) => [d.path, d.probe, d.metric, d.percentile, d[FIGURE_METRIC]])).toEqual([
      ['C', 'tcp-connect', 'connect_rtt_ms', 'p50', 8.9],
      ['C', 'tcp-connect', 'connect_rtt_ms', 'p99', 10.2],
      ['C', 'iperf3', 'throughput_bps', 'p50', 4.9e9],
    ]);
    for (const d of figures) {
      const [def] = d._aws.CloudWatchMetrics;
      expect(def.Namespace).toBe(METRIC_NAMESPACE);
      expect(def.Dimensions[0].sort()).toEqual(['metric', 'path', 'percentile', 'plan', 'probe', 'service'].sort());
      expect(d.plan).toBe('weekly tokyo');
      expect(d._aws.Timestamp).toBe(Date.parse('2026-12-01T06:00:00.000Z'));
      // CloudWatch: at most 30 dimensions per metric
      expect(def.Dimensions[0].length).toBeLessThanOrEqual(30);
    }
    expect(figures[0]._aws.CloudWatchMetrics[0].Metrics).toEqual([{ Name: FIGURE_METRIC, Unit: 'Milliseconds' }]);
    expect(figures[2]._aws.CloudWatchMetrics[0].Metrics).toEqual([{ Name: FIGURE_METRIC, Unit: 'Bits/Second' }]);
    const count = docs.find((d) => REGRESSIONS_METRIC in d);
    expect(count?.[REGRESSIONS_METRIC]).toBe(1);
    expect(count?._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service']]);
  });

  it('counts only regressions (an improvement is an event, not an alarm)', async () => {
    eb.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] });
    await new AwsRunPublisher(new EventBridgeClient({})).publish(summary([regression('C', 'improvement')]));
    expect(emf().find((d) => REGRESSIONS_METRIC in d)?.[REGRESSIONS_METRIC]).toBe(0);
    expect(eb.commandCalls(PutEventsCommand)).toHaveLength(1);
  });
});

describe('AwsRunPublisher events', () => {
  it('puts one event per regression on the default bus, 10 per call, naming the path and figures', async () => {
    eb.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
      FailedEntryCount: 0,
      Entries: input.Entries.map((_, i) => ({ EventId: `e-${i}` })),
    }));
    const many = Array.from({ length: 12 }, (_, i) => regression(`P${i}`));
    await new AwsRunPublisher(new EventBridgeClient({})).publish(summary(many));
    const calls = eb.commandCalls(PutEventsCommand);
    expect(calls.map((c) => c.args[0].input.Entries?.length)).toEqual([10, 2]);
    const first = calls[0].args[0].input.Entries![0];
    expect(first.Source).toBe(EVENT_SOURCE);
    expect(first.DetailType).toBe(REGRESSION_DETAIL_TYPE);
    expect(first.EventBusName).toBeUndefined();
    const detail = JSON.parse(first.Detail!);
    expect(detail).toMatchObject({
      runId: '20261201T060000Z-abcdef',
      planName: 'weekly tokyo',
      summaryKey: 'reports/run=20261201T060000Z-abcdef/summary.json',
      path: 'P0',
      percentile: 'p50',
      value: 9.9,
      baseline: 8.9,
      band: [8.45, 9.35],
      runsInBaseline: 6,
    });
    expect(detail.text).toMatch(
      /^P0 tcp-connect connect_rtt_ms p50 9\.900 ms vs 8\.900 \[8\.450, 9\.350\] over 6 runs/,
    );
  });

  it('names refused entries, and the summary step only logs the failure', async () => {
    eb.on(PutEventsCommand).resolves({
      FailedEntryCount: 1,
      Entries: [{ ErrorCode: 'InternalFailure', ErrorMessage: 'try again' }],
    });
    const pub = new AwsRunPublisher(new EventBridgeClient({}));
    await expect(pub.putEvents(summary([regression('C')]))).rejects.toThrow(
      /EventBridge refused 1 regression event\(s\): C tcp-connect .* InternalFailure try again/,
    );
    const warn = vi.fn();
    await publishSummary({ publisher: pub, log: { info: vi.fn(), warn, error: vi.fn() } }, summary([regression('C')]));
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/could not publish/),
      expect.objectContaining({ error: expect.stringMatching(/InternalFailure/) }),
    );
  });

  it('sends nothing to EventBridge for a run without regressions', async () => {
    await new AwsRunPublisher(new EventBridgeClient({})).publish(summary([]));
    expect(eb.commandCalls(PutEventsCommand)).toHaveLength(0);
  });
});
