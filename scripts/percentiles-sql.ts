/**
 * Writes queries/percentiles.sql from functions/core/percentiles-sql.ts. Run after changing the
 * generator: `npx tsx scripts/percentiles-sql.ts`; test/functions/sql.test.ts fails while they differ.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { percentilesSql } from '../functions/core/percentiles-sql.js';

writeFileSync(fileURLToPath(new URL('../queries/percentiles.sql', import.meta.url)), percentilesSql());
process.stdout.write('wrote queries/percentiles.sql\n');
