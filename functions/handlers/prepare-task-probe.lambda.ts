/** The PrepareTaskProbe Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */

import { dynamoLock } from '../adapters/aws/dynamodb-lock.js';
import { s3Store } from '../adapters/aws/s3-store.js';
import { lambdaHandler } from '../lambda-handler.js';
import { prepareTaskProbe } from './prepare-task-probe.js';

export const handler = lambdaHandler('PrepareTaskProbe', prepareTaskProbe, { store: s3Store, lock: dynamoLock });
