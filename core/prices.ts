/**
 * The dated price table shipped with the project (core/prices.json): data-transfer
 * rates per GB (inter-region by source region and by pair, cross-AZ, NAT processing, internet
 * egress), on-demand instance prices per hour and peak instance bandwidth. Refreshed from the
 * AWS Price List API by `pathbench prices refresh` (cli/aws/pricing.ts). Pure.
 */
import { z } from 'zod';
import shipped from './prices.json' with { type: 'json' };

const rate = z.number().nonnegative();
/** Rates by region code, with a `default` for regions not listed. */
const byRegion = z.record(z.string(), rate).refine((r) => r.default !== undefined, {
  error: 'expected a "default" rate for regions not listed',
});

export const priceTableSchema = z.strictObject({
  /** When the figures were taken (YYYY-MM-DD). */
  asOf: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'expected a date YYYY-MM-DD' }),
  /** Where they come from. */
  source: z.string().min(1),
  currency: z.literal('USD'),
  /** Inter-region transfer, billed at the sending region, per GB. */
  interRegionOutPerGb: byRegion,
  /** Pairs priced differently from their source region's rate, keyed "from>to". */
  interRegionPairPerGb: z.record(z.string(), rate),
  /** Cross-AZ transfer, per GB per direction (billed on both sides). */
  crossAzPerGb: rate,
  /** NAT gateway data processing, per GB, by the NAT's region. */
  natProcessingPerGb: byRegion,
  /** Internet egress (first tier), per GB, by the sending region. */
  internetOutPerGb: byRegion,
  /** Linux on-demand instance prices per hour, by instance type then region. */
  instancePerHour: z.record(z.string(), byRegion),
  /** Peak ("up to") network bandwidth per instance type, Gbps (EC2 instance type documentation). */
  instanceBandwidthGbps: z.record(z.string(), z.number().positive()),
  /**
   * A method's fixed hourly bill on top of the instances (Tokyo, seed 000 §3.6 and the public
   * price pages): Transit Gateway two VPC attachments, PrivateLink an endpoint in two AZs plus
   * its NLB, an NLB, a Lattice service, a NAT gateway. Methods not listed cost nothing fixed.
   */
  methodPerHour: z.record(z.string(), rate).optional(),
  /** A method's data processing per GB on top of the link's transfer (Transit Gateway, PrivateLink, Lattice). */
  methodPerGb: z.record(z.string(), rate).optional(),
});
export type PriceTable = z.output<typeof priceTableSchema>;

/** The table shipped with this version (validated once, when first used). */
let cached: PriceTable | undefined;
export function shippedPrices(): PriceTable {
  cached ??= priceTableSchema.parse(shipped);
  return cached;
}

/** AWS region codes ("us-east-1", "ap-northeast-3", "us-gov-west-1"); "lab" and "local" are not. */
export function isAwsRegion(region: string): boolean {
  return /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d+$/.test(region);
}

const pick = (r: Record<string, number>, region: string): number => r[region] ?? r.default!;

/** Inter-region $/GB from `from` to `to` (billed at the sender): the pair's own rate, else the source region's. */
export function interRegionPerGb(t: PriceTable, from: string, to: string): number {
  return t.interRegionPairPerGb[`${from}>${to}`] ?? pick(t.interRegionOutPerGb, from);
}

/** Cross-AZ $/GB for one GB moved: charged on the way out and on the way in. */
export function crossAzPerGb(t: PriceTable): number {
  return 2 * t.crossAzPerGb;
}

export function natPerGb(t: PriceTable, region: string): number {
  return pick(t.natProcessingPerGb, region);
}

export function internetPerGb(t: PriceTable, region: string): number {
  return pick(t.internetOutPerGb, region);
}

/** On-demand $/h of an instance type in a region, or undefined when the type is not in the table. */
export function instancePerHour(t: PriceTable, type: string, region: string): number | undefined {
  const r = t.instancePerHour[type];
  return r ? pick(r, region) : undefined;
}
