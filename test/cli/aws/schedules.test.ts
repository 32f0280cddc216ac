/**
 * `pathbench schedule` on EventBridge Scheduler through the SDK's real commands
 * (aws-sdk-client-mock at the boundary; responses shaped as in the Scheduler API reference):
 * one schedule per plan with the stack's role, DLQ, retries and time zone; pause and resume
 * write the schedule back with only its state changed; the local crontab line.
 */
import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  checkExpression,
  cronLine,
  resolveScheduleTargets,
  Schedules,
  scheduleName,
  scheduleRequest,
} from '../../../cli/aws/schedules.js';

const sched = mockClient(SchedulerClient);
beforeEach(() => sched.reset());

const SM = 'arn:aws:states:ap-northeast-1:123456789012:stateMachine:pathbench';
const targets = {
  region: 'ap-northeast-1',
  stateMachineArn: SM,
  roleArn: 'arn:aws:iam::123456789012:role/Pathbench-SchedulerRole',
  dlqArn: 'arn:aws:sqs:ap-northeast-1:123456789012:Pathbench-ScheduleDlq',
  group: 'pathbench',
};

describe('schedule create', () => {
  it('sends one CreateSchedule for the plan with the role, DLQ, retries and time zone', async () => {
    sched.on(CreateScheduleCommand).resolves({
      ScheduleArn: 'arn:aws:scheduler:ap-northeast-1:123456789012:schedule/pathbench/weekly-tokyo',
    });
    const arn = await new Schedules(new SchedulerClient({ region: 'ap-northeast-1' }), 'pathbench').create(targets, {
      planName: 'weekly tokyo',
      expression: 'cron(0 18 ? * SUN *)',
      timezone: 'Asia/Tokyo',
    });
    expect(arn).toMatch(/schedule\/pathbench\/weekly-tokyo$/);
    const [call] = sched.commandCalls(CreateScheduleCommand);
    expect(call.args[0].input).toEqual({
      Name: 'weekly-tokyo',
      GroupName: 'pathbench',
      Description: 'pathbench: run plan weekly tokyo',
      ScheduleExpression: 'cron(0 18 ? * SUN *)',
      ScheduleExpressionTimezone: 'Asia/Tokyo',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: SM,
        RoleArn: targets.roleArn,
        Input: '{"planName":"weekly tokyo","trigger":"schedule"}',
        DeadLetterConfig: { Arn: targets.dlqArn },
        RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
      },
    });
  });

  it("starts a mesh plan's schedule on the mesh state machine, and refuses one when none is known", async () => {
    const MESH = `${SM}-Mesh`;
    sched.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn:aws:scheduler:…:schedule/pathbench/mesh' });
    await new Schedules(new SchedulerClient({ region: 'ap-northeast-1' }), 'pathbench').create(
      { ...targets, meshStateMachineArn: MESH },
      { planName: 'mesh', expression: 'rate(7 days)', mesh: true },
    );
    expect(sched.commandCalls(CreateScheduleCommand)[0].args[0].input.Target?.Arn).toBe(MESH);
    expect(() => scheduleRequest(targets, { planName: 'mesh', expression: 'rate(7 days)', mesh: true })).toThrow(
      /plan mesh is a mesh plan.*--mesh-state-machine ARN/,
    );
  });

  it('accepts rate() and 6-field cron(), and names what is wrong otherwise', () => {
    expect(checkExpression('rate(7 days)')).toBe('rate(7 days)');
    expect(scheduleRequest(targets, { planName: 'p', expression: 'rate(1 hour)', paused: true }).State).toBe(
      'DISABLED',
    );
    expect(() => checkExpression('cron(0 18 * * 0)')).toThrow(/6 fields .* got 5/);
    expect(() => checkExpression('every sunday')).toThrow(/expected cron\(…\) with 6 fields or rate/);
    expect(() => checkExpression('rate(0 days)')).toThrow(/rate/);
    expect(scheduleName('lab seed 000 / weekly')).toBe('lab-seed-000-weekly');
  });
});

describe('schedule list, pause, resume, rm', () => {
  const existing = {
    Arn: 'arn:aws:scheduler:ap-northeast-1:123456789012:schedule/pathbench/weekly',
    Name: 'weekly',
    GroupName: 'pathbench',
    Description: 'pathbench: run plan weekly',
    ScheduleExpression: 'cron(0 18 ? * SUN *)',
    ScheduleExpressionTimezone: 'Asia/Tokyo',
    FlexibleTimeWindow: { Mode: 'OFF' as const },
    State: 'ENABLED' as const,
    Target: {
      Arn: SM,
      RoleArn: targets.roleArn,
      Input: '{"planName":"weekly"}',
      DeadLetterConfig: { Arn: targets.dlqArn },
      RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
    },
  };

  it("lists the group across pages, with each schedule's expression and plan", async () => {
    sched
      .on(ListSchedulesCommand, { GroupName: 'pathbench', NextToken: undefined })
      .resolves({ Schedules: [{ Name: 'weekly', GroupName: 'pathbench', State: 'ENABLED' }], NextToken: 't1' })
      .on(ListSchedulesCommand, { GroupName: 'pathbench', NextToken: 't1' })
      .resolves({ Schedules: [{ Name: 'daily', GroupName: 'pathbench', State: 'DISABLED' }] });
    sched.on(GetScheduleCommand, { Name: 'weekly', GroupName: 'pathbench' }).resolves(existing);
    sched.on(GetScheduleCommand, { Name: 'daily', GroupName: 'pathbench' }).resolves({
      ...existing,
      Name: 'daily',
      State: 'DISABLED',
      ScheduleExpression: 'rate(1 day)',
      Target: { ...existing.Target, Input: '{"planName":"daily plan"}' },
    });
    const rows = await new Schedules(new SchedulerClient({}), 'pathbench').list();
    expect(rows).toEqual([
      {
        name: 'weekly',
        state: 'ENABLED',
        expression: 'cron(0 18 ? * SUN *)',
        timezone: 'Asia/Tokyo',
        planName: 'weekly',
      },
      { name: 'daily', state: 'DISABLED', expression: 'rate(1 day)', timezone: 'Asia/Tokyo', planName: 'daily plan' },
    ]);
    // Knowing the stack's machines, each row says which one it starts.
    sched.on(GetScheduleCommand, { Name: 'daily', GroupName: 'pathbench' }).resolves({
      ...existing,
      Name: 'daily',
      Target: { ...existing.Target, Arn: `${SM}-Mesh` },
    });
    const known = new Schedules(new SchedulerClient({}), 'pathbench', {
      stateMachineArn: SM,
      meshStateMachineArn: `${SM}-Mesh`,
    });
    expect((await known.list()).map((r) => [r.name, r.machine])).toEqual([
      ['weekly', 'measurement'],
      ['daily', 'mesh'],
    ]);
  });

  it('pauses and resumes by writing the schedule back with only its state changed', async () => {
    sched.on(GetScheduleCommand).resolves(existing);
    sched.on(UpdateScheduleCommand).resolves({ ScheduleArn: existing.Arn });
    const s = new Schedules(new SchedulerClient({}), 'pathbench');
    await s.setState('weekly', 'DISABLED');
    await s.setState('weekly', 'ENABLED');
    const updates = sched.commandCalls(UpdateScheduleCommand).map((c) => c.args[0].input);
    const { Arn: _, ...kept } = existing;
    expect(updates).toEqual([
      { ...kept, State: 'DISABLED' },
      { ...kept, State: 'ENABLED' },
    ]);
  });

  it('deletes by name in the group', async () => {
    sched.on(DeleteScheduleCommand).resolves({});
    await new Schedules(new SchedulerClient({}), 'pathbench').rm('weekly');
    expect(sched.commandCalls(DeleteScheduleCommand)[0].args[0].input).toEqual({
      Name: 'weekly',
      GroupName: 'pathbench',
    });
  });
});

describe('where the schedules come from', () => {
  it('takes the state machine from the environment and the role and DLQ from flags', async () => {
    const t = await resolveScheduleTargets(
      { roleArn: targets.roleArn, dlqArn: targets.dlqArn, stack: 'NoSuchStackHere' },
      { PATHBENCH_STATE_MACHINE_ARN: SM, PATHBENCH_BUCKET: 'data' },
    );
    expect(t).toEqual(targets);
  });
});

describe('schedule locally', () => {
  it('prints the crontab line that runs the stored plan file', () => {
    expect(cronLine('cron(0 18 ? * SUN *)', 'weekly tokyo', '/data')).toMatch(
      /^0 18 \* \* SUN cd '.*' && npx pathbench run --local --plan '\/data\/plans\/weekly\\%20tokyo\.json' --data '\/data' --trigger schedule\n$/,
    );
    expect(cronLine('rate(6 hours)', 'p', '/d', 'Asia/Tokyo')).toMatch(/^CRON_TZ=Asia\/Tokyo\n0 \*\/6 \* \* \* /);
    expect(cronLine('rate(15 minutes)', 'p', '/d')).toMatch(/^\*\/15 \* \* \* \* /);
    expect(() => cronLine('cron(1 2 3)', 'p', '/d')).toThrow(/6 fields/);
  });

  it('escapes % in the command (cron reads an unescaped one as a newline)', () => {
    const line = cronLine('rate(1 day)', 'weekly tokyo', '/data/50%');
    expect(line).toContain(`--plan '/data/50\\%/plans/weekly\\%20tokyo.json' --data '/data/50\\%'`);
    // Every % of the command is escaped, and the line is one line.
    expect(line.replace(/\\%/g, '')).not.toContain('%');
    expect(line.trimEnd().split('\n')).toHaveLength(1);
  });

  it('refuses a time zone that is not an IANA name (a newline would inject a second crontab line)', () => {
    expect(() => cronLine('rate(1 day)', 'p', '/d', 'UTC\n* * * * * rm -rf /')).toThrow(
      /--timezone: expected an IANA time zone such as Europe\/Berlin, got "UTC\\n\* \* \* \* \* rm -rf \/"/,
    );
    expect(() => cronLine('rate(1 day)', 'p', '/d', 'Mars/Olympus')).toThrow(/--timezone/);
    expect(cronLine('rate(1 day)', 'p', '/d', 'Europe/Berlin')).toMatch(/^CRON_TZ=Europe\/Berlin\n0 0 /);
  });

  it('refuses cron fields with characters cron does not take', () => {
    expect(() => cronLine('cron(0 18 ? * SUN% *)', 'p', '/d')).toThrow(/--cron/);
  });
});
