/**
 * `pathbench prices refresh` against the Price List API's real command shapes (GetProducts:
 * PriceList of JSON documents, NextToken pages), with the SDK mocked at the AWS boundary.
 */
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { firstPaidUsd, refreshPrices } from '../../../cli/aws/pricing.js';
import { shippedPrices } from '../../../core/prices.js';

const pricing = mockClient(PricingClient);

/** A product document as GetProducts returns it (one string per product). */
function doc(family: string, attributes: Record<string, string>, tiers: [string, string][]): string {
  const dims = Object.fromEntries(
    tiers.map(([begin, usd], i) => [
      `SKU.TERM.DIM${i}`,
      { unit: 'GB', beginRange: begin, endRange: 'Inf', pricePerUnit: { USD: usd }, description: '' },
    ]),
  );
  return JSON.stringify({
    product: { productFamily: family, attributes, sku: 'SKU' },
    serviceCode: attributes.servicecode ?? 'AWSDataTransfer',
    terms: { OnDemand: { 'SKU.TERM': { priceDimensions: dims, sku: 'SKU', effectiveDate: '2024-06-01T00:00:00Z' } } },
    version: '20240601',
    publicationDate: '2024-06-01T00:00:00Z',
  });
}

const pair = (from: string, to: string, usd: string) =>
  doc('Data Transfer', { transferType: 'InterRegion Outbound', fromRegionCode: from, toRegionCode: to }, [['0', usd]]);

beforeEach(() => pricing.reset());

describe('refreshPrices', () => {
  it('reads every page and every section into a new dated table', async () => {
    const filtersOf = (input: { Filters?: { Field?: string; Value?: string }[] }) =>
      Object.fromEntries((input.Filters ?? []).map((f) => [f.Field, f.Value]));
    pricing.on(GetProductsCommand).callsFake((input) => {
      const f = filtersOf(input);
      if (f.transferType === 'InterRegion Outbound') {
        if (!input.NextToken)
          return {
            FormatVersion: 'aws_v1',
            PriceList: [pair('eu-west-1', 'us-east-1', '0.0200000000'), pair('eu-west-1', 'eu-west-2', '0.0200000000')],
            NextToken: 'page2',
          };
        return {
          FormatVersion: 'aws_v1',
          PriceList: [
            pair('eu-west-1', 'eu-central-1', '0.0150000000'),
            pair('ap-northeast-1', 'us-east-1', '0.0900000000'),
          ],
        };
      }
      if (f.transferType === 'IntraRegion')
        return { PriceList: [doc('Data Transfer', { transferType: 'IntraRegion' }, [['0', '0.0100000000']])] };
      if (f.transferType === 'AWS Outbound')
        return {
          PriceList: [
            doc('Data Transfer', { transferType: 'AWS Outbound', fromRegionCode: 'eu-west-1' }, [
              ['0', '0.0000000000'],
              ['1', '0.0900000000'],
              ['10240', '0.0850000000'],
            ]),
          ],
        };
      if (f.productFamily === 'NAT Gateway')
        return {
          PriceList: [
            doc(
              'NAT Gateway',
              { regionCode: 'eu-west-1', usagetype: 'EU-NatGateway-Bytes', servicecode: 'AmazonEC2' },
              [['0', '0.0480000000']],
            ),
            doc(
              'NAT Gateway',
              { regionCode: 'eu-west-1', usagetype: 'EU-NatGateway-Hours', servicecode: 'AmazonEC2' },
              [['0', '0.0480000000']],
            ),
          ],
        };
      if (f.instanceType === 't3.micro')
        return {
          PriceList: [
            doc('Compute Instance', { instanceType: 't3.micro', regionCode: 'eu-west-1' }, [['0', '0.0114000000']]),
          ],
        };
      return { PriceList: [] };
    });
    const { table, counts } = await refreshPrices(
      new PricingClient({ region: 'us-east-1' }),
      shippedPrices(),
      new Date('2026-12-01T10:00:00Z'),
    );
    expect(table.asOf).toBe('2026-12-01');
    expect(table.source).toMatch(/Price List API/);
    expect(table.interRegionOutPerGb['eu-west-1']).toBe(0.02);
    expect(table.interRegionPairPerGb).toEqual({ 'eu-west-1>eu-central-1': 0.015 });
    expect(table.interRegionOutPerGb['ap-northeast-1']).toBe(0.09);
    expect(table.crossAzPerGb).toBe(0.01);
    expect(table.internetOutPerGb['eu-west-1']).toBe(0.09);
    expect(table.natProcessingPerGb['eu-west-1']).toBe(0.048);
    expect(table.instancePerHour['t3.micro']['eu-west-1']).toBe(0.0114);
    // Entries the API did not return are kept.
    expect(table.instancePerHour['c6i.large']['ap-northeast-1']).toBe(0.107);
    expect(counts).toMatchObject({ interRegionPairs: 4, crossAz: 1, internet: 1, nat: 1 });
    // The real command shapes: service code, TERM_MATCH filters, aws_v1, pages by NextToken.
    const calls = pricing.commandCalls(GetProductsCommand).map((c) => c.args[0].input);
    expect(calls[0]).toMatchObject({
      ServiceCode: 'AWSDataTransfer',
      FormatVersion: 'aws_v1',
      Filters: [{ Type: 'TERM_MATCH', Field: 'transferType', Value: 'InterRegion Outbound' }],
    });
    expect(calls[1].NextToken).toBe('page2');
    expect(calls.some((c) => c.ServiceCode === 'AmazonEC2')).toBe(true);
  });

  it('skips free first tiers', () => {
    const d = JSON.parse(
      doc('Data Transfer', {}, [
        ['1', '0.09'],
        ['0', '0'],
      ]),
    );
    expect(firstPaidUsd(d)).toBe(0.09);
  });

  it('passes an API error through', async () => {
    pricing.on(GetProductsCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    await expect(
      refreshPrices(new PricingClient({ region: 'us-east-1' }), shippedPrices(), new Date()),
    ).rejects.toThrow('denied');
  });
});
