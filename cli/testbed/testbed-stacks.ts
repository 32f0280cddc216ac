/** The testbed's stack names, default regions and the SSM parameter each stack writes its outputs to. */

// Kept in step with infra/testbed (TESTBED_DEFAULTS, testbedStackNames, outputsParameterName);
// the CLI does not import the CDK app so that it starts without loading aws-cdk-lib.
export const DEFAULT_PREFIX = 'PathbenchTestbed';
export const DEFAULT_CLIENT_REGION = 'ap-northeast-1';
export const DEFAULT_PEER_REGION = 'ap-northeast-3';
export const stackNames = (prefix: string) => ({
  peer: `${prefix}Peer`,
  client: `${prefix}Client`,
  peerRoutes: `${prefix}PeerRoutes`,
});
export const outputsParameter = (stack: string) => `/pathbench/testbed/outputs/${stack}`;
