/**
 * The optional testbed: seed 000's Tokyo/Osaka topology (paths A–E) as three stacks.
 * `infra/app.ts` calls {@link addTestbed} when context `testbed=true`.
 * Order: Peer (Osaka) → Client (Tokyo) → PeerRoutes (Osaka); values cross regions through
 * CDK `crossRegionReferences` (SSM parameters written into the consuming region).
 */
import type { App } from 'aws-cdk-lib';
import { TestbedClientStack } from './client-stack.js';
import { TestbedPeerRoutesStack } from './peer-routes-stack.js';
import { TestbedPeerStack } from './peer-stack.js';
import { resolveTestbedProps, type TestbedProps } from './props.js';

export { outputsParameterName } from './outputs.js';
export { resolveTestbedProps, TESTBED_DEFAULTS, type TestbedProps } from './props.js';
export { TestbedClientStack, TestbedPeerRoutesStack, TestbedPeerStack };

export interface TestbedStacks {
  props: TestbedProps;
  peer: TestbedPeerStack;
  client: TestbedClientStack;
  peerRoutes: TestbedPeerRoutesStack;
}

/** Stack names for a prefix, in deploy order (destroy in reverse). */
export function testbedStackNames(prefix = 'PathbenchTestbed'): { peer: string; client: string; peerRoutes: string } {
  return { peer: `${prefix}Peer`, client: `${prefix}Client`, peerRoutes: `${prefix}PeerRoutes` };
}

/**
 * Add the testbed stacks to `app`. Settings: defaults < context (`testbedClientRegion`,
 * `testbedPeerRegion`, `testbedAccount`, …) < `props`.
 * @throws ConfigError for settings that could only fail at deploy time, or a missing agent bundle.
 */
export function addTestbed(app: App, props: Partial<TestbedProps> = {}): TestbedStacks {
  const tb = resolveTestbedProps(app, props);
  const names = testbedStackNames(tb.stackPrefix);
  const env = (region: string) => ({ account: tb.account, region });
  const common = { crossRegionReferences: true, testbed: tb };
  const peer = new TestbedPeerStack(app, names.peer, {
    ...common,
    env: env(tb.peerRegion),
    description: `pathbench testbed: peer region ${tb.peerRegion} (target, TGW, PrivateLink provider)`,
  });
  const client = new TestbedClientStack(app, names.client, {
    ...common,
    env: env(tb.clientRegion),
    peer,
    description: `pathbench testbed: client region ${tb.clientRegion} (client, peers, peering, TGW, PrivateLink consumer)`,
  });
  const peerRoutes = new TestbedPeerRoutesStack(app, names.peerRoutes, {
    ...common,
    env: env(tb.peerRegion),
    peer,
    client,
    description: `pathbench testbed: routes in ${tb.peerRegion} back to ${tb.clientRegion}`,
  });
  return { props: tb, peer, client, peerRoutes };
}
