/**
 * Every command block of the covered docs is run: each of its commands appears in a case
 * (`docCommand(doc, '<command>')` in a test/accept/*.accept.test.ts file) or is listed with its
 * reason in NOT_RUN_HERE, or the block is marked `<!-- not run: REASON -->` (printed here).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.js';
import { COVERED_DOCS, NOT_RUN_HERE } from './claims.js';
import { docBlocks } from './docs-blocks.js';

const HERE = join(ROOT, 'test', 'accept');
const cases = readdirSync(HERE)
  .filter((f) => f.endsWith('.accept.test.ts') && f !== 'coverage.accept.test.ts')
  .map((f) => readFileSync(join(HERE, f), 'utf8'))
  .join('\n');

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('every command block of the covered docs', () => {
  it.each(COVERED_DOCS)('%s: each block run by a case or marked not run', (doc) => {
    const unrun: string[] = [];
    for (const b of docBlocks(ROOT, doc)) {
      if (b.notRun) {
        process.stdout.write(`accept: ${doc}:${b.line} not run: ${b.notRun}\n`);
        continue;
      }
      for (const c of b.commands) {
        if (NOT_RUN_HERE[c]) {
          process.stdout.write(`accept: ${doc}:${b.line} \`${c}\` not run here: ${NOT_RUN_HERE[c]}\n`);
          continue;
        }
        const call = new RegExp(`docCommand\\(\\s*'${esc(doc)}',\\s*'${esc(c)}',?\\s*\\)`);
        if (!call.test(cases)) unrun.push(`${doc}:${b.line}: ${c}`);
      }
    }
    expect(unrun, 'neither run by a case nor marked <!-- not run: REASON -->').toEqual([]);
  });
});
