// A module-resolution hook (node --import test/helpers/resolve-log.mjs): appends every module URL
// the process resolves to the file named by PATHBENCH_RESOLVE_LOG, one per line.
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.PATHBENCH_RESOLVE_LOG, `${r.url}\n`);
  return r;
}
