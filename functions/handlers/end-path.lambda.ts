/** The EndPath Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */

import { s3Store } from '../adapters/aws/s3-store.js';
import { lambdaHandler } from '../lambda-handler.js';
import { endPath } from './end-path.js';

export const handler = lambdaHandler('EndPath', endPath, { store: s3Store });
