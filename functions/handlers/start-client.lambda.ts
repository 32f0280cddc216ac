/** The StartClient Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */

import { ec2Fleet } from '../adapters/aws/ec2-fleet.js';
import { s3Store } from '../adapters/aws/s3-store.js';
import { lambdaHandler } from '../lambda-handler.js';
import { startClient } from './start-client.js';

export const handler = lambdaHandler('StartClient', startClient, { store: s3Store, fleet: ec2Fleet });
