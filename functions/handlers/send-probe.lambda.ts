/** The SendProbe Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */

import { dynamoLock } from '../adapters/aws/dynamodb-lock.js';
import { s3Store } from '../adapters/aws/s3-store.js';
import { ssmRunner } from '../adapters/aws/ssm-runner.js';
import { lambdaHandler } from '../lambda-handler.js';
import { sendProbe } from './send-probe.js';

export const handler = lambdaHandler('SendProbe', sendProbe, { store: s3Store, runner: ssmRunner, lock: dynamoLock });
