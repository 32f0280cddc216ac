/** The SwapRoutes Lambda: its handler and the AWS adapters of its needs (functions/wiring.ts), nothing else. */

import { dynamoLock } from '../adapters/aws/dynamodb-lock.js';
import { ec2Routes } from '../adapters/aws/ec2-routes.js';
import { s3Store } from '../adapters/aws/s3-store.js';
import { lambdaHandler } from '../lambda-handler.js';
import { swapRoutes } from './swap-routes.js';

export const handler = lambdaHandler('SwapRoutes', swapRoutes, { store: s3Store, routes: ec2Routes, lock: dynamoLock });
