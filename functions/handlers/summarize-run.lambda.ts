/** The SummarizeRun Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */

import { athenaQuery } from '../adapters/aws/athena-query.js';
import { awsPublisher } from '../adapters/aws/aws-publisher.js';
import { s3Store } from '../adapters/aws/s3-store.js';
import { lambdaHandler } from '../lambda-handler.js';
import { summarizeRun } from './summarize-run.js';

export const handler = lambdaHandler('SummarizeRun', summarizeRun, {
  store: s3Store,
  query: athenaQuery,
  publisher: awsPublisher,
});
