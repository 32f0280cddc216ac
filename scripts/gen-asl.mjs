// One-off generator kept for reviewers: writes statemachine/measurement.asl.json.
// The ASL file is the single definition; this script only saves typing the repetitive
// Retry/Catch blocks. Re-run after editing and commit both.
import { writeFileSync } from 'node:fs';

const RETRY = [
  {
    ErrorEquals: [
      'Lambda.ServiceException',
      'Lambda.AWSLambdaException',
      'Lambda.SdkClientException',
      'Lambda.TooManyRequestsException',
      'ThrottlingException',
      'ServiceUnavailable',
    ],
    IntervalSeconds: 2,
    MaxAttempts: 4,
    BackoffRate: 2,
    MaxDelaySeconds: 30,
    JitterStrategy: 'FULL',
  },
];

const ids = { 'runId.$': '$.runId', 'pathId.$': '$.path.id' };
const failedSteps = [];

/** A Task inside the path iteration: retried on service errors, caught into Failed<step>. */
function pathTask(name, resource, parameters, resultPath, next) {
  failedSteps.push(name);
  return {
    Type: 'Task',
    Comment: `placeholder ${resource} is resolved from functions/wiring.ts`,
    Resource: `\${${resource}}`,
    Parameters: parameters,
    ResultPath: resultPath,
    Retry: RETRY,
    Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: `Failed${name}` }],
    Next: next,
  };
}

const iteration = {
  BeginPath: pathTask('BeginPath', 'BeginPath', { ...ids }, null, 'RebootChoice'),
  RebootChoice: {
    Type: 'Choice',
    Comment: 'reboot (stop + start) refills the burst credits the previous path spent',
    Choices: [{ Variable: '$.path.reboot', BooleanEquals: true, Next: 'StopClient' }],
    Default: 'WaitForCredits',
  },
  StopClient: pathTask('StopClient', 'StopClient', { ...ids, 'client.$': '$.path.client' }, '$.poll', 'WaitForStop'),
  WaitForStop: { Type: 'Wait', SecondsPath: '$.poll.waitSeconds', Next: 'CheckStopped' },
  CheckStopped: pathTask(
    'CheckStopped',
    'DescribeClient',
    { ...ids, 'client.$': '$.path.client', want: 'stopped', 'poll.$': '$.poll' },
    '$.poll',
    'IsStopped',
  ),
  IsStopped: {
    Type: 'Choice',
    Choices: [{ Variable: '$.poll.done', BooleanEquals: true, Next: 'StartClient' }],
    Default: 'WaitForStop',
  },
  StartClient: pathTask(
    'StartClient',
    'StartClient',
    { ...ids, 'client.$': '$.path.client' },
    '$.poll',
    'WaitForReady',
  ),
  WaitForReady: { Type: 'Wait', SecondsPath: '$.poll.waitSeconds', Next: 'CheckReady' },
  CheckReady: pathTask(
    'CheckReady',
    'DescribeClient',
    { ...ids, 'client.$': '$.path.client', want: 'ready', 'poll.$': '$.poll' },
    '$.poll',
    'IsReady',
  ),
  IsReady: {
    Type: 'Choice',
    Choices: [{ Variable: '$.poll.done', BooleanEquals: true, Next: 'WaitForCredits' }],
    Default: 'WaitForReady',
  },
  WaitForCredits: { Type: 'Wait', SecondsPath: '$.path.creditWaitSeconds', Next: 'RoutesChoice' },
  RoutesChoice: {
    Type: 'Choice',
    Choices: [{ Variable: '$.path.hasRoutes', BooleanEquals: true, Next: 'SwapRoutes' }],
    Default: 'SendProbe',
  },
  SwapRoutes: pathTask('SwapRoutes', 'SwapRoutes', { ...ids }, null, 'SendProbe'),
  SendProbe: pathTask(
    'SendProbe',
    'SendProbe',
    { ...ids, 'client.$': '$.path.client' },
    '$.probe',
    'WaitForProbe',
  ),
  WaitForProbe: { Type: 'Wait', SecondsPath: '$.probe.waitSeconds', Next: 'PollProbe' },
  PollProbe: pathTask(
    'PollProbe',
    'PollProbe',
    { ...ids, 'client.$': '$.path.client', 'probe.$': '$.probe' },
    '$.probe',
    'IsProbeDone',
  ),
  IsProbeDone: {
    Type: 'Choice',
    Choices: [{ Variable: '$.probe.done', BooleanEquals: true, Next: 'CollectOutput' }],
    Default: 'WaitForProbe',
  },
  CollectOutput: pathTask('CollectOutput', 'CollectOutput', { ...ids }, null, 'PathSucceeded'),
  PathSucceeded: { Type: 'Succeed' },
};

for (const step of failedSteps) {
  iteration[`Failed${step}`] = {
    Type: 'Pass',
    Comment: `remember that ${step} failed, then record it`,
    Parameters: { ...ids, step, 'error.$': '$.error' },
    Next: 'RecordPathFailure',
  };
}
iteration.RecordPathFailure = {
  Type: 'Task',
  Comment: 'the failure is recorded and the Map goes on with the next path',
  Resource: '${RecordPathFailure}',
  Parameters: { 'runId.$': '$.runId', 'pathId.$': '$.pathId', 'step.$': '$.step', 'error.$': '$.error' },
  ResultPath: null,
  Retry: RETRY,
  Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.recordError', Next: 'PathFailed' }],
  Next: 'PathFailed',
};
iteration.PathFailed = { Type: 'Succeed', Comment: 'a failed path does not fail the run' };

const definition = {
  Comment:
    'pathbench: measure network paths one at a time (reboot, credit wait, route swap, probe, collect), restore routes, summarize.',
  StartAt: 'ValidatePlan',
  TimeoutSeconds: 86400,
  States: {
    ValidatePlan: {
      Type: 'Task',
      Comment: 'validates the plan, takes the run lock, writes plan, specs and manifest',
      Resource: '${ValidatePlan}',
      Parameters: { 'input.$': '$', 'runId.$': '$$.Execution.Name', 'startedAt.$': '$$.Execution.StartTime' },
      Retry: RETRY,
      Next: 'MeasurePaths',
    },
    MeasurePaths: {
      Type: 'Map',
      Comment: 'one path at a time, in plan order: paths share the client and its burst credits',
      ItemsPath: '$.paths',
      ItemSelector: { 'runId.$': '$.runId', 'path.$': '$$.Map.Item.Value' },
      MaxConcurrency: 1,
      ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: 'BeginPath', States: iteration },
      ResultPath: null,
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.mapError', Next: 'RestoreRoutes' }],
      Next: 'RestoreRoutes',
    },
    RestoreRoutes: {
      Type: 'Task',
      Comment: 'runs on every path out of the Map, also after a failure',
      Resource: '${RestoreRoutes}',
      Parameters: { 'runId.$': '$.runId' },
      ResultPath: '$.restore',
      Retry: RETRY,
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.restoreError', Next: 'SummarizeRun' }],
      Next: 'SummarizeRun',
    },
    SummarizeRun: {
      Type: 'Task',
      Resource: '${SummarizeRun}',
      Parameters: { 'runId.$': '$.runId' },
      ResultPath: '$.summary',
      Retry: RETRY,
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.summaryError', Next: 'ReleaseLock' }],
      Next: 'ReleaseLock',
    },
    ReleaseLock: {
      Type: 'Task',
      Comment: 'finishes the manifest and releases the run lock on every exit path after ValidatePlan',
      Resource: '${ReleaseLock}',
      Parameters: { 'runId.$': '$.runId' },
      ResultPath: '$.final',
      Retry: RETRY,
      Next: 'RunOutcome',
    },
    RunOutcome: {
      Type: 'Choice',
      Choices: [
        { Variable: '$.mapError', IsPresent: true, Next: 'RunFailed' },
        { Variable: '$.restoreError', IsPresent: true, Next: 'RunFailed' },
        { Variable: '$.summaryError', IsPresent: true, Next: 'RunFailed' },
      ],
      Default: 'RunSucceeded',
    },
    RunFailed: { Type: 'Fail', Error: 'RunFailedError', Cause: 'see the run manifest and the execution history' },
    RunSucceeded: { Type: 'Succeed', OutputPath: '$.final' },
  },
};

writeFileSync(new URL('../statemachine/measurement.asl.json', import.meta.url), `${JSON.stringify(definition, null, 2)}\n`);
console.log('wrote statemachine/measurement.asl.json');
