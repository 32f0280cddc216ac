/**
 * Writes statemachine/mesh.asl.json from statemachine/measurement.asl.json and
 * statemachine/path.asl.json (statemachine/mesh-definition.ts). Run after changing the measurement definition:
 * `npx tsx scripts/mesh-asl.ts`; test/statemachine/mesh-asl.test.ts fails while they differ.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadDefinition } from '../statemachine/asl.js';
import { meshDefinition } from '../statemachine/mesh-definition.js';

const file = fileURLToPath(new URL('../statemachine/mesh.asl.json', import.meta.url));
writeFileSync(
  file,
  `${JSON.stringify(meshDefinition(loadDefinition('measurement'), loadDefinition('path')), null, 2)}\n`,
);
process.stdout.write('wrote statemachine/mesh.asl.json\n');
