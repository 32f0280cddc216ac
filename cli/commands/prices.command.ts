/**
 * `pathbench prices refresh [--out FILE]`: rewrite the price table from the AWS Price List API
 * (cli/aws/pricing.ts; needs credentials allowed pricing:GetProducts).
 * `pathbench prices estimate --plan FILE`: the cost guard's table for a plan, without running it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { applicableBudget, estimateRun, formatEstimate } from '../../core/cost.js';
import { formatProblems } from '../../core/plan.js';
import { shippedPrices } from '../../core/prices.js';
import { printable } from '../../core/printable.js';
import { parseSettings } from '../../core/settings.js';
import { guarded } from '../aws/aws-errors.js';
import { ROOT } from '../cli-root.js';
import { fail } from '../local.js';
import { loadPlanFile } from '../plan-file.js';
import { SETTINGS_OPTIONS, type SettingsFlags } from '../run-settings.js';

export const PRICE_TABLE_FILE = join(ROOT, 'core', 'prices.json');

export function registerPrices(program: Command): void {
  const prices = program.command('prices').description('the dated price table the cost guard uses');
  prices
    .command('refresh')
    .description('rewrite the price table from the AWS Price List API (GetProducts)')
    .option('--out <file>', 'where to write the table', PRICE_TABLE_FILE)
    .action((o: { out: string }) =>
      guarded(async () => {
        // Loaded here: the rest of the CLI does not need the Price List client.
        const { PricingClient } = await import('@aws-sdk/client-pricing');
        const { PRICING_REGION, refreshPrices } = await import('../aws/pricing.js');
        const client = new PricingClient({ region: PRICING_REGION });
        const { table, counts } = await refreshPrices(client, shippedPrices(), new Date());
        writeFileSync(o.out, `${JSON.stringify(table, null, 2)}\n`);
        const found = Object.entries(counts)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ');
        process.stdout.write(`prices of ${table.asOf} written to ${o.out} (${found})\n`);
        return 0;
      }),
    );
  const estimate = prices
    .command('estimate')
    .description("print a plan's cost estimate and budget (what `run` and `start` check)")
    .requiredOption('--plan <file>', 'plan JSON file');
  for (const [flag, help] of SETTINGS_OPTIONS.filter(([f]) => f !== '--allow-over-budget')) estimate.option(flag, help);
  estimate.action(async (o: SettingsFlags & { plan: string }) => {
    const loaded = await loadPlanFile(o.plan);
    if (!loaded.ok) fail(`plan ${o.plan} is invalid:\n${formatProblems(loaded.problems)}`);
    let defaults: ReturnType<typeof parseSettings>;
    try {
      defaults = parseSettings(o, process.env);
    } catch (e) {
      fail((e as Error).message);
    }
    const est = estimateRun(loaded.plan, defaults);
    process.stdout.write(
      printable(`${formatEstimate(est, applicableBudget(loaded.plan, defaults.budgetUsd), 1000)}\n`),
    );
  });
}
