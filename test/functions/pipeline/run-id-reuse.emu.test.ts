/**
 * ValidatePlan and ReleaseLock (as the ASL's ReleaseLockAfterReject calls it) with the AWS adapters
 * on dynalite and s3rver: a second execution that reuses a running run's id is refused and does
 * not free the first run's lock; its cleanup event leaves the first run alone too.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import { DynamoRunLock } from '../../../functions/adapters/aws/dynamodb-lock.js';
import { S3ObjectStore } from '../../../functions/adapters/aws/s3-store.js';
import { cleanupAfterExecution } from '../../../functions/pipeline/abandoned-run.js';
import { releaseLock } from '../../../functions/pipeline/run-end.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import type { Deps } from '../../../functions/ports.js';
import { type Dynamo, type S3, startDynalite, startS3rver } from '../../helpers/emulators.js';
import { scenarioPlan } from '../../helpers/fakes.js';

let db: Dynamo;
let s3: S3;
let deps: Deps;
beforeAll(async () => {
  [db, s3] = await Promise.all([startDynalite('locks'), startS3rver('data')]);
  const quiet = { info() {}, warn() {}, error() {} };
  deps = {
    store: new S3ObjectStore(s3.client, 'data'),
    lock: new DynamoRunLock(db.client, { table: 'locks', holder: 'lambda' }),
    log: quiet,
    driver: 'aws',
    fleet: { pollSeconds: 10 },
    now: () => new Date(),
  } as unknown as Deps;
});
afterAll(async () => {
  await Promise.all([db?.close(), s3?.close()]);
});

it('RunIdReused on AWS: the refused execution leaves the first its lock and manifest; a third run is refused', async () => {
  const S1 = '2026-12-01T00:00:00.000Z';
  const S2 = '2026-12-01T00:10:00.000Z';
  const plan = { plan: scenarioPlan(['A']) };
  await validatePlanStep(deps, { input: plan, runId: 'same', startedAt: S1 });
  const manifest = await deps.store.getText(keys.manifest('same'));

  await expect(validatePlanStep(deps, { input: plan, runId: 'same', startedAt: S2 })).rejects.toThrow(
    /choose another run id/,
  );
  await releaseLock(deps, { runId: 'same', rejected: true });
  const c = await cleanupAfterExecution(deps, { runId: 'same', status: 'FAILED', startedAt: S2 });
  expect(c.released).toBe(false);
  expect(await deps.lock.current()).toMatchObject({ runId: 'same', startedAt: S1 });
  expect(await deps.store.getText(keys.manifest('same'))).toBe(manifest);
  await expect(
    validatePlanStep(deps, { input: plan, runId: 'third', startedAt: '2026-12-01T00:11:00.000Z' }),
  ).rejects.toThrow(/run same/);

  // A ValidatePlan that died after taking the lock (no manifest of its own): the rejected path frees it.
  await releaseLock(deps, { runId: 'same' });
  expect(await deps.lock.current()).toBeUndefined();
  await deps.lock.acquire('crashed', S2);
  await releaseLock(deps, { runId: 'crashed', rejected: true });
  expect(await deps.lock.current()).toBeUndefined();
});
