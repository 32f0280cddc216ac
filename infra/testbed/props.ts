/**
 * Testbed settings: defaults (seed 000's Tokyo/Osaka topology), context overrides, validation.
 * AZs are pinned by AZ ID, never by name: names are shuffled per account (seed 004), IDs are not.
 */
import { existsSync } from 'node:fs';
import type { App } from 'aws-cdk-lib';
import { ConfigError } from '../../core/errors.js';
import { agentBundle } from '../infra-paths.js';

export interface TestbedProps {
  /** Account for both stacks; CDK_DEFAULT_ACCOUNT or context `testbedAccount`. Unset = environment-agnostic account. */
  account?: string;
  /** Region of the client and its two in-region peers (context `testbedClientRegion`). */
  clientRegion: string;
  /** Region of the remote target (context `testbedPeerRegion`). */
  peerRegion: string;
  /** AZ ID of the client and the same-AZ peer (context `testbedClientAzId`). */
  clientAzId: string;
  /** AZ ID of the cross-AZ peer (context `testbedCrossAzId`). */
  crossAzId: string;
  /**
   * Two AZ IDs in the peer region (context `testbedPeerAzIds`, comma-separated): the target
   * lives in the first; the NLB spans both because cross-region PrivateLink needs ≥ 2 AZs.
   */
  peerAzIds: [string, string];
  /** VPC CIDRs (each a /16; subnets are the first /24s). */
  clientCidr: string;
  peerCidr: string;
  /** Instance type of all four hosts (context `testbedInstanceType`). */
  instanceType: string;
  /** AZ IDs of the client-side PrivateLink endpoint; default the client AZ only (docs/testbed.md, "PrivateLink"). */
  privateLinkEndpointAzIds?: string[];
  /** The probe agent bundle shipped to the hosts as an asset; default dist/agent.cjs, built when missing or stale. */
  agentPath: string;
  /** Stack name prefix: <prefix>Client, <prefix>Peer, <prefix>PeerRoutes. */
  stackPrefix: string;
  /** Pipeline results bucket the client may read specs from and write raw output to (context `testbedPipelineBucket`). */
  pipelineBucketName?: string;
}

export const TESTBED_DEFAULTS: Omit<TestbedProps, 'agentPath'> = {
  clientRegion: 'ap-northeast-1',
  peerRegion: 'ap-northeast-3',
  clientAzId: 'apne1-az4',
  crossAzId: 'apne1-az1',
  peerAzIds: ['apne3-az1', 'apne3-az2'],
  clientCidr: '10.0.0.0/16',
  peerCidr: '10.1.0.0/16',
  instanceType: 'c6i.large',
  stackPrefix: 'PathbenchTestbed',
};

const AZ_ID = /^[a-z]{2,8}\d+-az\d+$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;
const CIDR16 = /^(\d{1,3})\.(\d{1,3})\.0\.0\/16$/;

function ctx(app: App, key: string): string | undefined {
  const v: unknown = app.node.tryGetContext(key);
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/**
 * Defaults < context < explicit props. Throws ConfigError for values that would only fail at
 * deploy time (bad region or AZ ID, overlapping CIDRs, a moved region with Tokyo/Osaka AZ IDs).
 */
export function resolveTestbedProps(app: App, props: Partial<TestbedProps> = {}): TestbedProps {
  const peerAzCtx = ctx(app, 'testbedPeerAzIds')
    ?.split(',')
    .map((s) => s.trim());
  const fromContext: Partial<TestbedProps> = {
    account: ctx(app, 'testbedAccount') ?? process.env.CDK_DEFAULT_ACCOUNT,
    clientRegion: ctx(app, 'testbedClientRegion'),
    peerRegion: ctx(app, 'testbedPeerRegion'),
    clientAzId: ctx(app, 'testbedClientAzId'),
    crossAzId: ctx(app, 'testbedCrossAzId'),
    peerAzIds: peerAzCtx && peerAzCtx.length === 2 ? [peerAzCtx[0], peerAzCtx[1]] : undefined,
    instanceType: ctx(app, 'testbedInstanceType'),
    pipelineBucketName: ctx(app, 'testbedPipelineBucket'),
  };
  if (peerAzCtx && peerAzCtx.length !== 2)
    throw new ConfigError(`context testbedPeerAzIds: expected two comma-separated AZ IDs, got ${peerAzCtx.length}`);
  const merged: Omit<TestbedProps, 'agentPath'> & { agentPath?: string } = { ...TESTBED_DEFAULTS };
  for (const layer of [fromContext, props])
    for (const [k, v] of Object.entries(layer)) if (v !== undefined) Object.assign(merged, { [k]: v });
  validate(merged);
  // The project's bundle only once the settings are known good, and only when none was given.
  const resolved = { ...merged, agentPath: merged.agentPath ?? agentBundle() };
  if (!existsSync(resolved.agentPath)) throw new ConfigError(`testbed: agent bundle ${resolved.agentPath} is missing`);
  return resolved;
}

function validate(p: Omit<TestbedProps, 'agentPath'>): void {
  const problems: string[] = [];
  for (const key of ['clientRegion', 'peerRegion'] as const)
    if (!REGION.test(p[key])) problems.push(`${key}: expected a region such as "ap-northeast-1", got "${p[key]}"`);
  if (p.clientRegion === p.peerRegion) problems.push('peerRegion: must differ from clientRegion');
  for (const [key, az] of [
    ['clientAzId', p.clientAzId],
    ['crossAzId', p.crossAzId],
    ['peerAzIds[0]', p.peerAzIds[0]],
    ['peerAzIds[1]', p.peerAzIds[1]],
  ] as const)
    if (!AZ_ID.test(az))
      problems.push(`${key}: expected an AZ ID such as "apne1-az4" (not a name like "ap-northeast-1a"), got "${az}"`);
  if (p.clientAzId === p.crossAzId) problems.push('crossAzId: must differ from clientAzId');
  if (p.peerAzIds[0] === p.peerAzIds[1]) problems.push('peerAzIds: need two different AZs (cross-region PrivateLink)');
  // The AZ defaults belong to Tokyo/Osaka; moving a region without new AZ IDs fails at deploy.
  if (p.clientRegion !== TESTBED_DEFAULTS.clientRegion && p.clientAzId === TESTBED_DEFAULTS.clientAzId)
    problems.push(`clientAzId: set AZ IDs of ${p.clientRegion} (context testbedClientAzId, testbedCrossAzId)`);
  if (p.peerRegion !== TESTBED_DEFAULTS.peerRegion && p.peerAzIds[0] === TESTBED_DEFAULTS.peerAzIds[0])
    problems.push(`peerAzIds: set AZ IDs of ${p.peerRegion} (context testbedPeerAzIds)`);
  for (const key of ['clientCidr', 'peerCidr'] as const)
    if (!CIDR16.test(p[key])) problems.push(`${key}: expected a /16 such as "10.0.0.0/16", got "${p[key]}"`);
  if (p.clientCidr === p.peerCidr)
    problems.push('peerCidr: must not overlap clientCidr (peering and TGW need distinct CIDRs)');
  if (!/^[a-z][a-z0-9-]*\.[a-z0-9]+$/.test(p.instanceType))
    problems.push(`instanceType: expected a type such as "c6i.large", got "${p.instanceType}"`);
  if (problems.length > 0) throw new ConfigError(`testbed settings are invalid:\n  ${problems.join('\n  ')}`);
}

/** The i-th /24 of a /16 ("10.1.0.0/16", 0 → "10.1.1.0/24"); index 0 is kept free. */
export function subnetCidr(vpcCidr: string, index: number): string {
  const m = CIDR16.exec(vpcCidr);
  if (!m) throw new ConfigError(`expected a /16 CIDR, got "${vpcCidr}"`);
  return `${m[1]}.${m[2]}.${index + 1}.0/24`;
}

/** Graviton families carry a "g" after the generation digit (c7g, m6gd, t4g). */
export function isArmInstanceType(instanceType: string): boolean {
  return /^[a-z]+\d+g/.test(instanceType.split('.')[0]);
}
