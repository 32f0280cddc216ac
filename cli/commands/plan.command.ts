/**
 * `pathbench plan put|get|list|rm` and `pathbench schedule create|list|pause|resume|rm`. Plans:
 * locally in the data directory (plans/<name>.json, replaced versions under plans/history/),
 * with --aws in the stack's data bucket (plans/<name>.json, its history the bucket's versions),
 * validated before storing (functions/pipeline/plan-store.ts). Schedules: EventBridge Scheduler
 * with --aws (cli/aws/schedules.ts); locally `schedule create` prints the crontab line to use.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { errorMessage, PlanInvalidError } from '../../core/errors.js';
import { type MeshEndpoint, meshLayout, meshPlanInput, meshRoundLowerBound } from '../../core/mesh-schedule.js';
import { parsePlan, parsePlanText } from '../../core/plan.js';
import { COMMERCIAL_REGIONS, REGIONS, regionByCode } from '../../core/regions.js';
import { checkDocument } from '../../core/stored-document.js';
import { TARGET_PORTS } from '../../core/target-ports.js';
import { AWS_POLL_SECONDS } from '../../functions/adapters/aws/aws-deps.js';
import { S3ObjectStore } from '../../functions/adapters/aws/s3-store.js';
import { PlanStore } from '../../functions/pipeline/plan-store.js';
import { DirStore } from '../../local/dir-store.js';
import { DEFAULT_DATA_DIR } from '../../local/local-driver.js';
import { guarded } from '../aws/aws-errors.js';
import { makeClients } from '../aws/clients.js';
import { checkTimeZone, cronLine, resolveScheduleTargets, Schedules, scheduleName } from '../aws/schedules.js';
import { type CommonFlags, commonOptions, resolveStackConfig } from '../aws/stack-config.js';
import { exitAfterFlush } from '../exit.js';

interface PlanFlags extends CommonFlags {
  aws?: boolean;
  data: string;
}

const out = (t: string) => process.stdout.write(t);

/** `plan mesh --endpoints FILE`: region code → the real instance, host and port of that region (any part). */
const endpointsFileSchema = z.record(
  z.string(),
  z.object({ instanceId: z.string(), region: z.string(), host: z.string(), port: z.number() }).partial(),
);

/** The plan store of the side the flags pick. */
export async function planStoreFor(o: PlanFlags, env = process.env): Promise<{ plans: PlanStore; where: string }> {
  if (o.aws) {
    const cfg = await resolveStackConfig(o, env);
    const store = new S3ObjectStore(makeClients(cfg.region).s3, cfg.bucket);
    return { plans: new PlanStore(store, { pollSeconds: AWS_POLL_SECONDS }), where: store.location };
  }
  const store = new DirStore(resolve(o.data));
  return { plans: new PlanStore(store, { copyHistory: true }), where: store.location };
}

/** One action's body: 0, or a clear one-line error (exit 2 for bad input, 1 otherwise). */
async function run(fn: () => Promise<void>): Promise<number> {
  try {
    await fn();
    return 0;
  } catch (e) {
    if (e instanceof PlanInvalidError) {
      // One problem is one line (`plan get` of a name that is not stored); a bad plan lists each.
      process.stderr.write(`pathbench: ${e.problems.length === 1 ? e.problems[0] : e.message}\n`);
      return 2;
    }
    throw e;
  }
}

const exitWith = (o: { aws?: boolean }, fn: () => Promise<void>) =>
  o.aws ? guarded(() => run(fn)) : run(fn).then(exitAfterFlush);

function planOptions(cmd: Command): Command {
  return commonOptions(
    cmd
      .option('--aws', "the deployed stack's data bucket (default: the local data directory)")
      .option('--data <dir>', 'data directory', DEFAULT_DATA_DIR),
  );
}

interface MeshFlags {
  regions: string;
  minKm?: string;
  maxKm?: string;
  maxRegions?: string;
  endpoints?: string;
  name: string;
  out?: string;
}

/** A non-negative number flag, or a one-line error naming it. */
function numberFlag(flag: string, v: string | undefined, integer = false): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n)))
    throw new PlanInvalidError([
      `${flag}: expected a non-negative ${integer ? 'integer' : 'number'}, got ${JSON.stringify(v)}`,
    ]);
  return n;
}

/**
 * `plan mesh`: the plan of every directed pair of the regions (docs/data.md, "Plan file").
 * Endpoints (instance id, SSM region, target host and port per region) come from a JSON file
 * (`--endpoints`; `plan from-testbed` writes the testbed's); without it each region gets a
 * placeholder (`i-mesh-<region>`, `<region>.mesh.invalid`) to be filled in before running.
 */
export function meshPlanFromFlags(o: MeshFlags): { plan: Record<string, unknown>; lines: string[] } {
  const codes =
    o.regions === 'all'
      ? COMMERCIAL_REGIONS.map((r) => r.code)
      : o.regions
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
  const unknown = codes.filter((c) => !regionByCode(c));
  if (unknown.length > 0)
    throw new PlanInvalidError([
      `--regions: unknown region ${unknown.map((c) => JSON.stringify(c)).join(', ')} (known: all, ${REGIONS.map((r) => r.code).join(', ')})`,
    ]);
  const dup = codes.find((c, i) => codes.indexOf(c) !== i);
  if (dup) throw new PlanInvalidError([`--regions: ${JSON.stringify(dup)} is listed twice`]);
  const maxRegions = numberFlag('--max-regions', o.maxRegions, true);
  const layout = meshLayout(
    codes.map((c) => regionByCode(c)!),
    { minKm: numberFlag('--min-km', o.minKm), maxKm: numberFlag('--max-km', o.maxKm), maxRegions },
  );
  if (layout.pairs.length === 0)
    throw new PlanInvalidError([
      `--regions: no pair of ${layout.sites.length} region(s) within the distance range; give at least two regions or widen --min-km/--max-km`,
    ]);
  let endpoints: Record<string, Partial<MeshEndpoint>> = {};
  if (o.endpoints) {
    if (!existsSync(o.endpoints)) throw new PlanInvalidError([`--endpoints: no such file ${o.endpoints}`]);
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(o.endpoints, 'utf8'));
    } catch (e) {
      throw new PlanInvalidError([`--endpoints: not valid JSON (${(e as Error).message})`]);
    }
    try {
      endpoints = checkDocument(o.endpoints, json, endpointsFileSchema, 'endpoints file');
    } catch (e) {
      throw new PlanInvalidError([`--endpoints: ${errorMessage(e)}`]);
    }
  }
  const endpoint = (code: string): MeshEndpoint => ({
    instanceId: endpoints[code]?.instanceId ?? `i-mesh-${code}`,
    region: endpoints[code]?.region ?? code,
    host: endpoints[code]?.host ?? `${code}.mesh.invalid`,
    // the tcp-connect probe's port (the agent's TCP listener); iperf3 names its own (MESH_PROBES)
    port: endpoints[code]?.port ?? TARGET_PORTS.tcp,
  });
  const plan = meshPlanInput(o.name, layout, endpoint);
  const checked = parsePlan(plan);
  if (!checked.ok) throw new PlanInvalidError(checked.problems);
  const full = layout.sites.length * (layout.sites.length - 1) === layout.pairs.length;
  const placeholders = layout.sites.filter((s) => !endpoints[s.code]).map((s) => s.code);
  return {
    plan,
    lines: [
      `mesh of ${layout.sites.length} regions: ${layout.pairs.length} directed pairs in ${layout.rounds} rounds (lower bound ${full ? meshRoundLowerBound(layout.sites.length) : layout.lowerBound}), ${Math.min(...layout.pairs.map((p) => p.distanceKm)).toFixed(0)}–${Math.max(...layout.pairs.map((p) => p.distanceKm)).toFixed(0)} km`,
      ...(placeholders.length > 0
        ? [
            `placeholder endpoints for ${placeholders.length} region(s) (${placeholders.slice(0, 5).join(', ')}${placeholders.length > 5 ? ', …' : ''}): give --endpoints before running`,
          ]
        : []),
    ],
  };
}

export function registerPlan(program: Command): void {
  const plan = program.command('plan').description('named plans: validated, stored with their history');
  plan
    .command('mesh')
    .description('a plan of every directed pair of regions, scheduled in rounds (no region in two tests at once)')
    .requiredOption('--regions <list>', 'comma-separated region codes, or "all" (every commercial region)')
    .option('--min-km <km>', 'leave out pairs closer than this (great-circle km)')
    .option('--max-km <km>', 'leave out pairs farther than this')
    .option('--max-regions <n>', 'use only the first n regions of the list')
    .option('--endpoints <file>', 'JSON: region → { instanceId, region, host, port } (default: placeholders)')
    .option('--name <name>', 'the plan name', 'region mesh')
    .option('--out <file>', 'write the plan here (default: stdout)')
    .action((o: MeshFlags) =>
      run(async () => {
        const { plan: p, lines } = meshPlanFromFlags(o);
        const text = `${JSON.stringify(p, null, 2)}\n`;
        if (o.out) (await import('node:fs')).writeFileSync(o.out, text);
        else out(text);
        for (const l of lines) process.stderr.write(`pathbench: ${l}\n`);
      }).then(exitAfterFlush),
    );
  planOptions(plan.command('put').description('validate a plan file and store it under its name'))
    .argument('<name>', 'the plan\'s name (as in its "name" field)')
    .argument('<file>', 'plan JSON file')
    .action((name: string, file: string, o: PlanFlags) =>
      exitWith(o, async () => {
        if (!existsSync(file)) throw new PlanInvalidError([`file: no such file ${file}`]);
        const { plans, where } = await planStoreFor(o);
        const r = await plans.put(name, readFileSync(file, 'utf8'));
        out(`plan ${JSON.stringify(name)} ${r.replaced ? 'replaced' : 'stored'} in ${where} (${r.bytes} bytes)\n`);
      }),
    );
  planOptions(plan.command('get').description('print a stored plan'))
    .argument('<name>')
    .action((name: string, o: PlanFlags) =>
      exitWith(o, async () => {
        const text = await (await planStoreFor(o)).plans.text(name);
        if (text === undefined) throw new PlanInvalidError([`name: no plan named ${JSON.stringify(name)}`]);
        out(text.endsWith('\n') ? text : `${text}\n`);
      }),
    );
  planOptions(plan.command('list').description('the stored plans')).action((o: PlanFlags) =>
    exitWith(o, async () => {
      for (const n of await (await planStoreFor(o)).plans.list()) out(`${n}\n`);
    }),
  );
  planOptions(plan.command('rm').description('remove a stored plan (its history stays)'))
    .argument('<name>')
    .action((name: string, o: PlanFlags) =>
      exitWith(o, async () => {
        const { plans } = await planStoreFor(o);
        if (!(await plans.rm(name))) throw new PlanInvalidError([`name: no plan named ${JSON.stringify(name)}`]);
        out(`plan ${JSON.stringify(name)} removed\n`);
      }),
    );

  const schedule = program
    .command('schedule')
    .description('run a named plan on a schedule: EventBridge Scheduler with --aws, a crontab line locally');
  const awsOnly = (cmd: Command) =>
    commonOptions(
      cmd
        .option('--aws', 'EventBridge Scheduler in the deployed stack')
        .option('--role-arn <arn>', 'scheduler role (default: stack outputs)')
        .option('--dlq-arn <arn>', 'dead-letter queue (default: stack outputs)'),
    );
  awsOnly(schedule.command('create').description('one schedule per plan'))
    .argument('<plan>', 'a stored plan name')
    .option('--cron <expr>', 'cron(min hour day-of-month month day-of-week year), e.g. "cron(0 18 ? * SUN *)"')
    .option('--rate <expr>', 'rate(n minutes|hours|days), e.g. "rate(7 days)"')
    .option('--timezone <tz>', 'IANA time zone of the cron expression', 'UTC')
    .option('--paused', 'create it disabled')
    .option('--data <dir>', 'data directory (locally)', DEFAULT_DATA_DIR)
    .action(
      (
        planName: string,
        o: CommonFlags & {
          aws?: boolean;
          cron?: string;
          rate?: string;
          timezone: string;
          paused?: boolean;
          data: string;
          roleArn?: string;
          dlqArn?: string;
        },
      ) =>
        exitWith(o, async () => {
          if (!!o.cron === !!o.rate) throw new PlanInvalidError(['schedule: give exactly one of --cron or --rate']);
          checkTimeZone(o.timezone);
          const expression = o.cron ?? `rate(${String(o.rate).replace(/^rate\((.*)\)$/, '$1')})`;
          const { plans } = await planStoreFor({ ...o, data: o.data });
          const text = await plans.text(planName);
          if (text === undefined)
            throw new PlanInvalidError([
              `plan: no plan named ${JSON.stringify(planName)}; store it first with \`pathbench plan put\``,
            ]);
          // A mesh plan's schedule starts the mesh state machine (the stored plan was valid when put).
          const parsed = parsePlanText(text);
          const mesh = parsed.ok && parsed.plan.paths.some((p) => p.mesh);
          if (!o.aws) {
            out(cronLine(expression, planName, resolve(o.data), o.timezone));
            return;
          }
          const t = await resolveScheduleTargets(o, process.env);
          const arn = await Schedules.for(t).create(t, {
            planName,
            expression,
            timezone: o.timezone,
            paused: o.paused,
            mesh,
          });
          out(
            `schedule ${scheduleName(planName)} created (${expression} ${o.timezone}${mesh ? ', on the mesh state machine' : ''}): ${arn}\n`,
          );
        }),
    );
  awsOnly(schedule.command('list').description('the schedules of the stack')).action(
    (o: CommonFlags & { aws?: boolean }) =>
      exitWith(o, async () => {
        if (!o.aws) throw new PlanInvalidError(['schedule list: locally schedules are crontab lines; use --aws']);
        const t = await resolveScheduleTargets(o, process.env);
        for (const s of await Schedules.for(t).list())
          out(
            `${s.name}\t${s.state}\t${s.expression ?? ''} ${s.timezone ?? ''}\tplan ${s.planName ?? '?'}${s.machine === 'mesh' ? ' (mesh)' : ''}\n`,
          );
      }),
  );
  for (const [verb, state] of [
    ['pause', 'DISABLED'],
    ['resume', 'ENABLED'],
  ] as const) {
    awsOnly(schedule.command(verb).description(`${verb} a schedule`))
      .argument('<name>', 'schedule name (the plan name, made safe)')
      .action((name: string, o: CommonFlags & { aws?: boolean }) =>
        exitWith(o, async () => {
          if (!o.aws) throw new PlanInvalidError([`schedule ${verb}: locally edit the crontab; use --aws`]);
          const t = await resolveScheduleTargets(o, process.env);
          await Schedules.for(t).setState(name, state);
          out(`schedule ${name} ${state === 'ENABLED' ? 'resumed' : 'paused'}\n`);
        }),
      );
  }
  awsOnly(schedule.command('rm').description('delete a schedule'))
    .argument('<name>')
    .action((name: string, o: CommonFlags & { aws?: boolean }) =>
      exitWith(o, async () => {
        if (!o.aws) throw new PlanInvalidError(['schedule rm: locally edit the crontab; use --aws']);
        const t = await resolveScheduleTargets(o, process.env);
        await Schedules.for(t).rm(name);
        out(`schedule ${name} deleted\n`);
      }),
    );
}
