/** The RecordPathFailure Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */

import { athenaQuery } from '../adapters/aws/athena-query.js';
import { s3Store } from '../adapters/aws/s3-store.js';
import { lambdaHandler } from '../lambda-handler.js';
import { recordPathFailure } from './record-path-failure.js';

export const handler = lambdaHandler('RecordPathFailure', recordPathFailure, { store: s3Store, query: athenaQuery });
