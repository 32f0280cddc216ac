/** The CleanupAfterExecution Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */

import { athenaQuery } from '../adapters/aws/athena-query.js';
import { dynamoLock } from '../adapters/aws/dynamodb-lock.js';
import { ec2Routes } from '../adapters/aws/ec2-routes.js';
import { s3Store } from '../adapters/aws/s3-store.js';
import { ssmRunner } from '../adapters/aws/ssm-runner.js';
import { lambdaHandler } from '../lambda-handler.js';
import { cleanupAfterExecution } from './cleanup-after-execution.js';

export const handler = lambdaHandler('CleanupAfterExecution', cleanupAfterExecution, {
  store: s3Store,
  routes: ec2Routes,
  runner: ssmRunner,
  query: athenaQuery,
  lock: dynamoLock,
});
