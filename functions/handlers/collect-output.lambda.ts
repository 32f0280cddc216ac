/** The CollectOutput Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */

import { athenaQuery } from '../adapters/aws/athena-query.js';
import { s3Store } from '../adapters/aws/s3-store.js';
import { lambdaHandler } from '../lambda-handler.js';
import { collectOutput } from './collect-output.js';

export const handler = lambdaHandler('CollectOutput', collectOutput, { store: s3Store, query: athenaQuery });
