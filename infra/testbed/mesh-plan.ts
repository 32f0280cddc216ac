/**
 * The mesh testbed's names, address plan and cost, and the mesh plan made from its saved outputs:
 * the part of the mesh testbed the CLI needs (`plan from-testbed`, `testbed` cost notes), kept
 * apart from the CDK stack (infra/testbed/mesh-testbed.ts) so the CLI does not load aws-cdk-lib.
 */
import { z } from 'zod';
import { type MeshLayout, meshLayout, meshPlanInput } from '../../core/mesh-schedule.js';
import { instancePerHour, shippedPrices } from '../../core/prices.js';
import { regionByCode } from '../../core/regions.js';
import { TARGET_PORTS } from '../../core/target-ports.js';

/** The output each mesh region stack lists its host in. */
export const MESH_HOST_OUTPUT = 'TestbedMeshHost';
export const MESH_STACK_PREFIX = 'PathbenchMesh';
/** The instance type a mesh host is when context testbedInstanceType is not given. */
export const MESH_DEFAULT_INSTANCE_TYPE = 't3.micro';
/** A public IPv4 address, per hour (charged since 2024-02). */
export const PUBLIC_IPV4_PER_HOUR = 0.005;

/** The i-th mesh region's CIDR: 10.(100+i).0.0/16, non-overlapping for up to 100 regions. */
export function meshCidr(i: number): string {
  if (!Number.isInteger(i) || i < 0 || i > 99) throw new Error(`mesh testbed: region index ${i} outside 0–99`);
  return `10.${100 + i}.0.0/16`;
}

const meshHostSchema = z.strictObject({
  region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/),
  instanceId: z.string().regex(/^i-[0-9a-f]{8,17}$/),
  ip: z.string().regex(/^\d{1,3}(\.\d{1,3}){3}$/),
  cidr: z.string(),
});
export type MeshHost = z.output<typeof meshHostSchema>;

/** The mesh hosts listed in saved outputs (`cdk deploy --outputs-file`), in stack order. */
export function meshHostsFromOutputs(outputs: Record<string, Record<string, string>>): MeshHost[] {
  const hosts: MeshHost[] = [];
  for (const [stack, values] of Object.entries(outputs)) {
    const text = values?.[MESH_HOST_OUTPUT];
    if (typeof text !== 'string') continue;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(
        `${stack}.${MESH_HOST_OUTPUT}: expected JSON { region, instanceId, ip, cidr }, got ${text.slice(0, 80)}`,
      );
    }
    const r = meshHostSchema.safeParse(json);
    if (!r.success) {
      throw new Error(
        `${stack}.${MESH_HOST_OUTPUT}: expected { region, instanceId, ip, cidr }, got ${text.slice(0, 120)} (${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message})`,
      );
    }
    hosts.push(r.data);
  }
  const seen = new Set<string>();
  for (const h of hosts) {
    if (seen.has(h.region)) throw new Error(`mesh outputs: two hosts in ${h.region}; expected one per region`);
    seen.add(h.region);
  }
  return hosts;
}

/** The mesh plan (as written) of the testbed's hosts: every directed pair, in rounds. */
export function meshPlanFromOutputs(
  outputs: Record<string, Record<string, string>>,
  name = 'mesh-testbed',
): { plan: Record<string, unknown>; layout: MeshLayout; hosts: MeshHost[] } {
  const hosts = meshHostsFromOutputs(outputs);
  if (hosts.length < 2)
    throw new Error(`mesh outputs: expected ${MESH_HOST_OUTPUT} from at least two stacks, got ${hosts.length}`);
  const sites = hosts.map((h) => {
    const r = regionByCode(h.region);
    if (!r) throw new Error(`mesh outputs: unknown region ${h.region}`);
    return { code: h.region, lat: r.lat, lon: r.lon };
  });
  const layout = meshLayout(sites);
  const byRegion = new Map(hosts.map((h) => [h.region, h]));
  const plan = meshPlanInput(name, layout, (code) => {
    const h = byRegion.get(code)!;
    return { instanceId: h.instanceId, region: h.region, host: h.ip, port: TARGET_PORTS.tcp };
  });
  return { plan, layout, hosts };
}

/** What the mesh testbed costs while it stands: instances and public IPv4 addresses (peering has no hourly charge), per hour and per day. */
export function meshCostNote(regions: readonly string[], instanceType: string): string {
  const t = shippedPrices();
  const lines: string[] = [];
  let perHour = 0;
  for (const r of regions) {
    const p = instancePerHour(t, instanceType, r);
    if (p === undefined)
      throw new Error(`mesh cost: no price for ${instanceType} in the price table (core/prices.json)`);
    perHour += p + PUBLIC_IPV4_PER_HOUR;
    lines.push(
      `  ${r.padEnd(16)} ${instanceType} $${p.toFixed(4)}/h + public IPv4 $${PUBLIC_IPV4_PER_HOUR.toFixed(3)}/h`,
    );
  }
  return [
    `mesh testbed standing cost (prices of ${t.asOf}): ${regions.length} hosts`,
    ...lines,
    `  inter-region VPC peering: ${(regions.length * (regions.length - 1)) / 2} connections, no hourly charge`,
    `  total $${perHour.toFixed(4)}/h, $${(perHour * 24).toFixed(2)}/day; transfer is the run's (pathbench start prints its estimate)`,
  ].join('\n');
}
