/** SDK errors as the mocked clients throw them: the adapters match on `name`. */
import { EC2ServiceException } from '@aws-sdk/client-ec2';

/** An EC2 client error with this name (the service's error code). */
export const ec2Err = (name: string, message = name) =>
  new EC2ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: 400 }, message });
