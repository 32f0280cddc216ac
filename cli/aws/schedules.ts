/**
 * `pathbench schedule create|list|pause|resume|rm` on EventBridge Scheduler: one schedule per
 * plan (input `{ "planName": … }`), starting the measurement state machine or, for a mesh plan,
 * the mesh state machine, in the stack's schedule group, with the stack's scheduler
 * role, retries and dead-letter queue (infra/constructs/schedule.ts; their ARNs come from the
 * stack outputs). Pause and resume read the schedule and write it back with only its state
 * changed (UpdateSchedule replaces the whole definition).
 */

import { join } from 'node:path';
import {
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import { z } from 'zod';
import { keys } from '../../core/keys.js';
import { parseDocument } from '../../core/stored-document.js';
import { PIPELINE_OUTPUTS_FILE, readOutputsFile } from '../outputs-file.js';
import { AwsCliError, explainAwsError } from './aws-errors.js';
import { type ClientsFor, makeClients } from './clients.js';
import { type CommonFlags, DEFAULT_STACK, resolveStackConfig, stackConfigSchema } from './stack-config.js';

/** A schedule's target input: the execution input `{ "planName": … }` (createSchedule). */
const scheduleInputSchema = z.object({ planName: z.string().optional() });

export interface ScheduleTargets {
  region: string;
  stateMachineArn: string;
  /** The mesh state machine (stack output MeshStateMachineArn): mesh plans' schedules start it. */
  meshStateMachineArn?: string;
  roleArn: string;
  dlqArn: string;
  group: string;
}

/** A schedule expression EventBridge Scheduler takes: cron(6 fields), rate(n unit) or at(…). */
export function checkExpression(expr: string): string {
  const cron = /^cron\(([^)]+)\)$/.exec(expr);
  if (cron) {
    const fields = cron[1].trim().split(/\s+/);
    if (fields.length !== 6)
      throw new AwsCliError(
        `--cron: EventBridge cron has 6 fields (minutes hours day-of-month month day-of-week year), got ${fields.length} in ${JSON.stringify(expr)}`,
      );
    // Digits, names and cron's * ? , - / L W #: nothing a crontab line would read otherwise (%).
    const bad = fields.find((f) => !/^[0-9A-Za-z*?,/#-]+$/.test(f));
    if (bad !== undefined)
      throw new AwsCliError(
        `--cron: field ${JSON.stringify(bad)} has a character cron does not take, in ${JSON.stringify(expr)}`,
      );
    return expr;
  }
  if (/^rate\(\s*[1-9]\d*\s+(minute|minutes|hour|hours|day|days)\s*\)$/.test(expr)) return expr;
  throw new AwsCliError(
    `schedule expression: expected cron(…) with 6 fields or rate(n minutes|hours|days), got ${JSON.stringify(expr)}`,
  );
}

/** Schedule names: the plan's name made safe for Scheduler (letters, digits, - _ .; ≤ 64). */
export function scheduleName(planName: string): string {
  const n = planName.replace(/[^A-Za-z0-9_.-]+/g, '-').slice(0, 64);
  if (!n) throw new AwsCliError(`plan name ${JSON.stringify(planName)} gives no schedule name`);
  return n;
}

/** The stack's scheduler role, DLQ and group: flags, then the saved outputs, then /pathbench/config. */
export async function resolveScheduleTargets(
  flags: CommonFlags & { roleArn?: string; dlqArn?: string },
  env: Record<string, string | undefined>,
  clientsFor: ClientsFor = makeClients,
): Promise<ScheduleTargets> {
  const cfg = await resolveStackConfig(flags, env, clientsFor);
  let outputs: Record<string, string> | undefined;
  try {
    outputs = (await readOutputsFile(PIPELINE_OUTPUTS_FILE))[flags.stack ?? DEFAULT_STACK];
  } catch {
    outputs = undefined;
  }
  if (!outputs?.SchedulerRoleArn && !(flags.roleArn && flags.dlqArn)) {
    try {
      const out = await clientsFor(cfg.region).ssm.send(new GetParameterCommand({ Name: '/pathbench/config' }));
      outputs = parseDocument(
        '/pathbench/config',
        out.Parameter?.Value ?? '{}',
        stackConfigSchema,
        'stack configuration',
      );
    } catch (e) {
      throw explainAwsError(e);
    }
  }
  const roleArn = flags.roleArn ?? outputs?.SchedulerRoleArn;
  const dlqArn = flags.dlqArn ?? outputs?.ScheduleDlqArn;
  if (!roleArn || !dlqArn)
    throw new AwsCliError(
      'the deployed stack has no scheduler role or dead-letter queue (SchedulerRoleArn, ScheduleDlqArn): redeploy with `pathbench deploy`, or pass --role-arn and --dlq-arn',
    );
  return {
    region: cfg.region,
    stateMachineArn: cfg.stateMachineArn,
    ...(cfg.meshStateMachineArn ? { meshStateMachineArn: cfg.meshStateMachineArn } : {}),
    roleArn,
    dlqArn,
    group: outputs?.ScheduleGroupName ?? 'pathbench',
  };
}

export interface CreateScheduleOptions {
  planName: string;
  expression: string;
  timezone?: string;
  description?: string;
  paused?: boolean;
  /** A mesh plan (its paths carry `mesh`): the schedule starts the mesh state machine. */
  mesh?: boolean;
}

/** The CreateSchedule request for a plan (the same shape UpdateSchedule takes). */
export function scheduleRequest(t: ScheduleTargets, o: CreateScheduleOptions): CreateScheduleCommandInput {
  const machine = o.mesh ? t.meshStateMachineArn : t.stateMachineArn;
  if (!machine)
    throw new AwsCliError(
      `plan ${o.planName} is a mesh plan, which runs on the mesh state machine, and none is known for ${t.stateMachineArn}: pass --mesh-state-machine ARN (stack output MeshStateMachineArn)`,
    );
  return {
    Name: scheduleName(o.planName),
    GroupName: t.group,
    Description: o.description ?? `pathbench: run plan ${o.planName}`,
    ScheduleExpression: checkExpression(o.expression),
    ScheduleExpressionTimezone: o.timezone ?? 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' },
    State: o.paused ? 'DISABLED' : 'ENABLED',
    Target: {
      Arn: machine,
      RoleArn: t.roleArn,
      Input: JSON.stringify({ planName: o.planName, trigger: 'schedule' }),
      DeadLetterConfig: { Arn: t.dlqArn },
      RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
    },
  };
}

export interface ScheduleRow {
  name: string;
  state: string;
  expression?: string;
  timezone?: string;
  planName?: string;
  /** The state machine it starts: `mesh` when it is the stack's mesh machine. */
  machine?: 'measurement' | 'mesh';
}

export class Schedules {
  constructor(
    private readonly client: SchedulerClient,
    private readonly group: string,
    private readonly machines: Pick<ScheduleTargets, 'stateMachineArn' | 'meshStateMachineArn'> | undefined = undefined,
  ) {}

  static for(t: ScheduleTargets): Schedules {
    return new Schedules(new SchedulerClient({ region: t.region }), t.group, t);
  }

  async create(t: ScheduleTargets, o: CreateScheduleOptions): Promise<string> {
    const out = await this.client.send(new CreateScheduleCommand(scheduleRequest(t, o)));
    return out.ScheduleArn ?? scheduleName(o.planName);
  }

  async list(): Promise<ScheduleRow[]> {
    const rows: ScheduleRow[] = [];
    let token: string | undefined;
    do {
      const out = await this.client.send(new ListSchedulesCommand({ GroupName: this.group, NextToken: token }));
      for (const s of out.Schedules ?? []) {
        if (!s.Name) continue;
        // The list has no expression or input: one GetSchedule each (a handful of plans).
        const g = await this.client.send(new GetScheduleCommand({ Name: s.Name, GroupName: this.group }));
        let planName: string | undefined;
        try {
          const input = scheduleInputSchema.safeParse(JSON.parse(g.Target?.Input ?? '{}'));
          planName = input.success ? input.data.planName : undefined;
        } catch {
          planName = undefined;
        }
        rows.push({
          name: s.Name,
          state: g.State ?? s.State ?? 'UNKNOWN',
          ...(g.ScheduleExpression ? { expression: g.ScheduleExpression } : {}),
          ...(g.ScheduleExpressionTimezone ? { timezone: g.ScheduleExpressionTimezone } : {}),
          ...(planName ? { planName } : {}),
          ...(this.machineOf(g.Target?.Arn) ? { machine: this.machineOf(g.Target?.Arn) } : {}),
        });
      }
      token = out.NextToken;
    } while (token);
    return rows;
  }

  private machineOf(arn: string | undefined): ScheduleRow['machine'] {
    if (!arn || !this.machines) return undefined;
    if (arn === this.machines.meshStateMachineArn) return 'mesh';
    return arn === this.machines.stateMachineArn ? 'measurement' : undefined;
  }

  /** ENABLED / DISABLED: the schedule as it is, with only its state changed. */
  async setState(name: string, state: 'ENABLED' | 'DISABLED'): Promise<void> {
    const g = await this.client.send(new GetScheduleCommand({ Name: name, GroupName: this.group }));
    if (!g.ScheduleExpression || !g.Target || !g.FlexibleTimeWindow)
      throw new AwsCliError(`schedule ${name} has no expression or target`);
    await this.client.send(
      new UpdateScheduleCommand({
        Name: name,
        GroupName: this.group,
        ScheduleExpression: g.ScheduleExpression,
        ...(g.ScheduleExpressionTimezone ? { ScheduleExpressionTimezone: g.ScheduleExpressionTimezone } : {}),
        ...(g.Description ? { Description: g.Description } : {}),
        ...(g.StartDate ? { StartDate: g.StartDate } : {}),
        ...(g.EndDate ? { EndDate: g.EndDate } : {}),
        FlexibleTimeWindow: g.FlexibleTimeWindow,
        Target: g.Target,
        State: state,
      }),
    );
  }

  async rm(name: string): Promise<void> {
    await this.client.send(new DeleteScheduleCommand({ Name: name, GroupName: this.group }));
  }
}

/**
 * Locally there is no scheduler: the crontab line that runs the plan (EventBridge's 6-field
 * cron without its year field; rate(n unit) as the nearest cron). Cron runs in the machine's
 * time zone, so a time zone other than it is stated in a comment.
 */
/**
 * `--timezone`: an IANA time zone name this Node knows (Europe/Berlin, UTC). Anything else — a
 * typo, or a newline that would add a line of its own to a crontab — is refused.
 */
export function checkTimeZone(tz: string): string {
  if (/^[A-Za-z0-9_+-]+(\/[A-Za-z0-9_+-]+)*$/.test(tz)) {
    try {
      // Node's ICU knows every IANA name and alias (US/Eastern too) and throws on others.
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      return tz;
    } catch {
      // not a time zone
    }
  }
  throw new AwsCliError(`--timezone: expected an IANA time zone such as Europe/Berlin, got ${JSON.stringify(tz)}`);
}

export function cronLine(expression: string, planName: string, dataDir: string, timezone?: string): string {
  checkExpression(expression);
  let five: string;
  const cron = /^cron\(([^)]+)\)$/.exec(expression);
  if (cron) {
    const [min, hour, dom, mon, dow] = cron[1].trim().split(/\s+/);
    // EventBridge wants "?" in one of day-of-month / day-of-week; cron wants "*".
    five = [min, hour, dom === '?' ? '*' : dom, mon, dow === '?' ? '*' : dow].join(' ');
  } else {
    const [, n, unit] = /^rate\(\s*(\d+)\s+(\w+?)s?\s*\)$/.exec(expression) ?? [];
    five = unit === 'minute' ? `*/${n} * * * *` : unit === 'hour' ? `0 */${n} * * *` : `0 0 */${n} * *`;
  }
  if (timezone !== undefined) checkTimeZone(timezone);
  const tz = timezone && timezone !== 'UTC' ? `CRON_TZ=${timezone}\n` : '';
  // Quoted for the shell, then % escaped: cron turns an unescaped % of the command into a newline.
  const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`.replace(/%/g, '\\%');
  // The stored plan is a plan file in the data directory (plans/<name>.json): `run` reads it as is.
  const file = join(dataDir, keys.namedPlan(planName));
  return `${tz}${five} cd ${q(process.cwd())} && npx pathbench run --local --plan ${q(file)} --data ${q(dataDir)} --trigger schedule\n`;
}
