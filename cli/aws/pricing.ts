/**
 * Refresh the price table (core/prices.json) from the AWS Price List API: GetProducts
 * on AWSDataTransfer (inter-region pairs, cross-AZ, internet egress) and AmazonEC2 (NAT gateway
 * bytes, on-demand Linux instance prices for the table's instance types). Each product is a JSON
 * document; its first paid tier of on-demand USD per unit is the rate kept.
 */
import { type Filter, GetProductsCommand, type PricingClient } from '@aws-sdk/client-pricing';
import { z } from 'zod';
import { type PriceTable, priceTableSchema } from '../../core/prices.js';
import { parseDocument } from '../../core/stored-document.js';

/** The Price List API answers in us-east-1, eu-central-1 and ap-south-1 only. */
export const PRICING_REGION = 'us-east-1';

/** One Price List product (GetProducts' PriceList entries are JSON text): what the table needs of it. */
const productDocSchema = z.object({
  product: z
    .object({ productFamily: z.string().optional(), attributes: z.record(z.string(), z.string()).optional() })
    .optional(),
  terms: z
    .object({
      OnDemand: z
        .record(
          z.string(),
          z.object({
            priceDimensions: z
              .record(
                z.string(),
                z.object({
                  beginRange: z.string().optional(),
                  pricePerUnit: z.record(z.string(), z.string()).optional(),
                }),
              )
              .optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
type ProductDoc = z.output<typeof productDocSchema>;

const term = (Field: string, Value: string): Filter => ({ Type: 'TERM_MATCH', Field, Value });

/** Every product matching the filters (all pages), parsed. */
async function products(client: PricingClient, ServiceCode: string, Filters: Filter[]): Promise<ProductDoc[]> {
  const out: ProductDoc[] = [];
  let NextToken: string | undefined;
  do {
    const page = await client.send(
      new GetProductsCommand({ ServiceCode, Filters, FormatVersion: 'aws_v1', MaxResults: 100, NextToken }),
    );
    for (const item of page.PriceList ?? [])
      out.push(parseDocument(`${ServiceCode} price list product`, String(item), productDocSchema, 'product'));
    NextToken = page.NextToken;
  } while (NextToken);
  return out;
}

/** The on-demand USD rate of the lowest tier that costs anything (free first tiers are skipped). */
export function firstPaidUsd(doc: ProductDoc): number | undefined {
  const dims = Object.values(doc.terms?.OnDemand ?? {}).flatMap((t) => Object.values(t.priceDimensions ?? {}));
  const tiers = dims
    .map((d) => ({ begin: Number(d.beginRange ?? 0), usd: Number(d.pricePerUnit?.USD) }))
    .filter((d) => Number.isFinite(d.usd) && d.usd > 0)
    .sort((a, b) => a.begin - b.begin);
  return tiers[0]?.usd;
}

/** The most frequent value (ties: the larger), the per-region rate most pairs share. */
function mode(values: number[]): number | undefined {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]?.[0];
}

export interface RefreshResult {
  table: PriceTable;
  /** What was found, per section, for the command's report. */
  counts: Record<string, number>;
}

/**
 * A new table: the current one's entries replaced by what the Price List API says, entries it
 * does not return kept. `asOf` is the day of the refresh.
 */
export async function refreshPrices(client: PricingClient, current: PriceTable, now: Date): Promise<RefreshResult> {
  const table: PriceTable = structuredClone(current);
  const counts: Record<string, number> = {};

  // Inter-region: per pair; a region's rate is the one most of its pairs have, the rest are pairs.
  const pairs = new Map<string, Map<string, number>>();
  for (const doc of await products(client, 'AWSDataTransfer', [term('transferType', 'InterRegion Outbound')])) {
    const a = doc.product?.attributes ?? {};
    const usd = firstPaidUsd(doc);
    if (!a.fromRegionCode || !a.toRegionCode || usd === undefined) continue;
    const m = pairs.get(a.fromRegionCode) ?? new Map<string, number>();
    m.set(a.toRegionCode, usd);
    pairs.set(a.fromRegionCode, m);
  }
  if (pairs.size > 0) {
    table.interRegionPairPerGb = {};
    for (const [from, tos] of pairs) {
      const usual = mode([...tos.values()])!;
      table.interRegionOutPerGb[from] = usual;
      for (const [to, usd] of tos) if (usd !== usual) table.interRegionPairPerGb[`${from}>${to}`] = usd;
    }
  }
  counts.interRegionPairs = [...pairs.values()].reduce((s, m) => s + m.size, 0);

  const intra = (await products(client, 'AWSDataTransfer', [term('transferType', 'IntraRegion')]))
    .map(firstPaidUsd)
    .filter((x): x is number => x !== undefined);
  if (intra.length > 0) table.crossAzPerGb = mode(intra)!;
  counts.crossAz = intra.length;

  const internet = await products(client, 'AWSDataTransfer', [
    term('transferType', 'AWS Outbound'),
    term('toLocation', 'External'),
  ]);
  counts.internet = 0;
  for (const doc of internet) {
    const region = doc.product?.attributes?.fromRegionCode;
    const usd = firstPaidUsd(doc);
    if (region && usd !== undefined) {
      table.internetOutPerGb[region] = usd;
      counts.internet++;
    }
  }

  counts.nat = 0;
  for (const doc of await products(client, 'AmazonEC2', [term('productFamily', 'NAT Gateway')])) {
    const a = doc.product?.attributes ?? {};
    const usd = firstPaidUsd(doc);
    if (a.regionCode && usd !== undefined && a.usagetype?.endsWith('NatGateway-Bytes')) {
      table.natProcessingPerGb[a.regionCode] = usd;
      counts.nat++;
    }
  }

  counts.instances = 0;
  for (const type of Object.keys(current.instancePerHour)) {
    for (const doc of await products(client, 'AmazonEC2', [
      term('instanceType', type),
      term('operatingSystem', 'Linux'),
      term('tenancy', 'Shared'),
      term('preInstalledSw', 'NA'),
      term('capacitystatus', 'Used'),
      term('licenseModel', 'No License required'),
    ])) {
      const region = doc.product?.attributes?.regionCode;
      const usd = firstPaidUsd(doc);
      if (region && usd !== undefined) {
        table.instancePerHour[type]![region] = usd;
        counts.instances++;
      }
    }
  }

  table.asOf = now.toISOString().slice(0, 10);
  table.source = `AWS Price List API (GetProducts: AWSDataTransfer, AmazonEC2), refreshed ${table.asOf} with \`pathbench prices refresh\``;
  return { table: priceTableSchema.parse(table), counts };
}
