/**
 * Writes statemachine/mesh.asl.json from statemachine/measurement.asl.json
 * (statemachine/mesh-definition.ts). Run after changing the measurement definition:
 * `npx tsx scripts/mesh-asl.ts`; test/statemachine/mesh-asl.test.ts fails while they differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { meshDefinition } from '../statemachine/mesh-definition.js';

const dir = fileURLToPath(new URL('../statemachine/', import.meta.url));
const measurement = JSON.parse(readFileSync(`${dir}measurement.asl.json`, 'utf8'));
writeFileSync(`${dir}mesh.asl.json`, `${JSON.stringify(meshDefinition(measurement), null, 2)}\n`);
process.stdout.write('wrote statemachine/mesh.asl.json\n');
