/**
 * Writes plans/lab-mesh.json: the lab mesh's plan (lab/lab-mesh.ts), built by the same code as
 * `pathbench plan mesh` (core/mesh-schedule.ts) with the lab's namespaces as clients.
 * Run: npx tsx scripts/lab-mesh-plan.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../cli/cli-root.js';
import { labMeshPlan } from '../lab/lab-mesh.js';

const file = join(ROOT, 'plans', 'lab-mesh.json');
writeFileSync(file, `${JSON.stringify(labMeshPlan(), null, 2)}\n`);
process.stderr.write(`wrote ${file}\n`);
