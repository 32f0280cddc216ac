/** The StopClient Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */

import { ec2Fleet } from '../adapters/aws/ec2-fleet.js';
import { s3Store } from '../adapters/aws/s3-store.js';
import { lambdaHandler } from '../lambda-handler.js';
import { stopClient } from './stop-client.js';

export const handler = lambdaHandler('StopClient', stopClient, { store: s3Store, fleet: ec2Fleet });
