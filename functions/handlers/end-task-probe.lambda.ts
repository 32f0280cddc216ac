/** The EndTaskProbe Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */
import { s3Store } from '../adapters/aws/s3-store.js';
import { lambdaHandler } from '../lambda-handler.js';
import { endTaskProbe } from './end-task-probe.js';

export const handler = lambdaHandler('EndTaskProbe', endTaskProbe, { store: s3Store });
