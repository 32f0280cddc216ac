/**
 * Resolving a valid plan: defaults merged into every path, probes named (matrix cells expanded),
 * skipped probes set aside with their reason, the client resolved, comparisons defaulted to
 * every other path vs the first. Only reached when the plan has no problems (core/plan.ts).
 */
import { matrixCells } from '../probes/http/http.schema.js';
import type { ProbeInput, ProbeSpec } from '../probes/index.js';
import { IPERF3_UDP_DEFAULT_BITRATE } from '../probes/iperf3/iperf3.schema.js';
import { type PlanClient, resolveClient } from './ecs-client.js';
import { quoted } from './fields.js';
import { probeNames } from './plan-checks.js';
import type { PlanInput } from './plan-input.js';
import { printable } from './printable.js';
import type { PathPair, ProbePair, ResolvedPath, ResolvedPlan, SkippedProbe } from './resolved-plan.js';
import type { Problem } from './zod-problems.js';

/** The plan's comparisons, or every other path vs the first path. */
function resolveCompare(plan: PlanInput): PathPair[] {
  if (plan.compare) return plan.compare.map((c) => ({ path: c.path, baseline: c.baseline }));
  const [first, ...rest] = plan.paths;
  return rest.map((p) => ({ path: p.id, baseline: first.id }));
}

function resolveProbe(p: ProbeInput, name: string): ProbeSpec[] {
  if (p.kind === 'http' && p.matrix) {
    const { matrix, cell: _cell, ...rest } = p;
    return matrixCells(rest, matrix).map(({ cell, ...axes }) =>
      Object.assign({ kind: p.kind, name: `${name}-${cell}` }, rest, axes, {
        name: `${name}-${cell}`,
        matrix: name,
        cell,
      }),
    );
  }
  // kind and name lead so specs and reports read naturally; the spread keeps every defaulted option.
  const probe: ProbeSpec = Object.assign({ kind: p.kind, name }, p, { name }) as ProbeSpec;
  if (probe.kind === 'iperf3' && probe.mode === 'udp' && probe.bitrate === undefined)
    probe.bitrate = IPERF3_UDP_DEFAULT_BITRATE;
  return [probe];
}

function resolvePaths(plan: PlanInput): ResolvedPath[] {
  const d = plan.defaults ?? {};
  return plan.paths.map((p): ResolvedPath => {
    const inputs = p.probes ?? d.probes ?? [];
    const names = probeNames(inputs);
    const all = inputs.flatMap((probe, j) => resolveProbe(probe, names[j]!));
    const skips = p.skipProbes ?? [];
    const probes: ProbeSpec[] = [];
    const skipped: SkippedProbe[] = [];
    for (const probe of all) {
      // A skip by exact name is more specific than a skip by kind, so its reason wins.
      // A matrix's cells are skipped by the matrix's name too.
      const skip =
        skips.find((s) => s.probe === probe.name) ??
        (probe.kind === 'http' && probe.matrix ? skips.find((s) => s.probe === probe.matrix) : undefined) ??
        skips.find((s) => s.probe === probe.kind);
      if (skip) skipped.push({ name: probe.name, kind: probe.kind, reason: skip.reason });
      else probes.push(probe);
    }
    const client = resolveClient((p.client ?? d.client) as PlanClient);
    const path: ResolvedPath = {
      id: p.id,
      label: p.label ?? p.id,
      client,
      target: { host: p.target.host, port: p.target.port },
      routes: p.routes ?? [],
      probes,
      skipped,
      reboot: p.reboot ?? d.reboot ?? false,
      creditWaitSeconds: p.creditWaitSeconds ?? d.creditWaitSeconds ?? 0,
      ...(p.mesh ? { mesh: { ...p.mesh } } : {}),
    };
    if (p.mesh) path.mesh = { ...p.mesh };
    if (p.az) path.az = { from: { ...p.az.from }, to: { ...p.az.to } };
    if (p.method) path.method = p.method;
    return path;
  });
}

/**
 * The plan's `ratios`, one per path that has both probes (a ratio with `path`: that path's), and
 * the problems: a path not in the plan, a probe or baseline no path (or not the named path) has,
 * a probe divided by itself, a duplicate. A skipped probe counts as the path's (its ratio is
 * simply not measured).
 */
export function resolveRatios(
  input: PlanInput,
  paths: readonly ResolvedPath[],
): { pairs: ProbePair[]; problems: Problem[] } {
  const pairs: ProbePair[] = [];
  const problems: Problem[] = [];
  const names = (p: ResolvedPath) => [...p.probes.map((x) => x.name), ...p.skipped.map((x) => x.name)];
  const seen = new Map<string, number>();
  (input.ratios ?? []).forEach((r, i) => {
    if (r.probe === r.baseline) {
      problems.push({
        path: ['ratios', i],
        message: `divides ${quoted(r.probe)} by itself (1 by construction); name another probe as the baseline`,
      });
      return;
    }
    const key = JSON.stringify([r.path ?? null, r.probe, r.baseline]);
    const prev = seen.get(key);
    if (prev !== undefined) {
      problems.push({ path: ['ratios', i], message: `duplicate ratio (also ratios[${prev}])` });
      return;
    }
    seen.set(key, i);
    const chosen = r.path === undefined ? paths : paths.filter((p) => p.id === r.path);
    if (r.path !== undefined && chosen.length === 0) {
      problems.push({
        path: ['ratios', i, 'path'],
        message: `${quoted(r.path)} is not a path of this plan (paths: ${printable(paths.map((p) => p.id).join(', '))})`,
      });
      return;
    }
    const all = [...new Set(chosen.flatMap(names))];
    const where = r.path === undefined ? 'any path' : `path ${quoted(r.path)}`;
    let bad = false;
    for (const field of ['probe', 'baseline'] as const)
      if (!all.includes(r[field])) {
        bad = true;
        problems.push({
          path: ['ratios', i, field],
          message: `${quoted(r[field])} is not a probe of ${where} (probes: ${printable(all.join(', ')) || 'none'})`,
        });
      }
    if (bad) return;
    const both = chosen.filter((p) => names(p).includes(r.probe) && names(p).includes(r.baseline));
    if (both.length === 0)
      problems.push({ path: ['ratios', i], message: `no path has both ${quoted(r.probe)} and ${quoted(r.baseline)}` });
    for (const p of both) pairs.push({ path: p.id, probe: r.probe, baseline: r.baseline });
  });
  return { pairs, problems };
}

/** The resolved plan of a valid plan input. */
export function resolvePlan(input: PlanInput): ResolvedPlan {
  const plan: ResolvedPlan = { name: input.name, paths: resolvePaths(input) };
  const compare = resolveCompare(input);
  if (compare.length > 0) plan.compare = compare;
  const ratios = resolveRatios(input, plan.paths).pairs;
  if (ratios.length > 0) plan.ratios = ratios;
  if (input.order !== undefined && input.order !== 'as-written')
    plan.order = { mode: input.order, ...(input.orderSeed !== undefined ? { seed: input.orderSeed } : {}) };
  if (input.budgetUsd !== undefined) plan.budgetUsd = input.budgetUsd;
  if (input.regression && Object.keys(input.regression).length > 0) plan.regression = { ...input.regression };
  if (input.regression?.paired && input.regression.reference) pairWithReference(plan.paths, input.regression.reference);
  return plan;
}

/**
 * With `regression.paired`, the paths judged without the pair and why: a path from another client
 * than the reference's (its http probes are left unpaired), or one with no http probe (only http
 * probes pair). Said once in the run's summary, so a path judged alone is not taken for paired.
 */
export function unpairedPaths(plan: ResolvedPlan | undefined): { id: string; why: string }[] {
  const reference = plan?.regression?.paired ? plan.regression.reference : undefined;
  if (!plan || !reference || !plan.paths.some((p) => p.id === reference)) return [];
  return plan.paths.flatMap((p) => {
    if (p.id === reference) return [];
    const http = p.probes.filter((x) => x.kind === 'http');
    if (http.length === 0) return [{ id: p.id, why: 'no http probe (only http probes pair)' }];
    if (http.some((x) => x.kind === 'http' && !x.pair))
      return [{ id: p.id, why: `another client than ${quoted(reference)}'s` }];
    return [];
  });
}

/**
 * `regression.paired`: every http probe of every other path measured from the reference path's
 * client also measures the reference path's target (`pair`), at the port the reference's
 * same-named http probe uses, else its target's. A path from another client is left unpaired:
 * the reference's target is then measured from another host, and its moments are not the path's.
 */
function pairWithReference(paths: ResolvedPath[], reference: string): void {
  const ref = paths.find((p) => p.id === reference);
  if (!ref) return;
  const sameClient = (p: ResolvedPath) => JSON.stringify(p.client) === JSON.stringify(ref.client);
  for (const p of paths) {
    if (p === ref || !sameClient(p)) continue;
    for (const probe of p.probes) {
      if (probe.kind !== 'http') continue;
      const twin = ref.probes.find((x) => x.kind === 'http' && x.name === probe.name);
      const port = (twin?.kind === 'http' ? twin.port : undefined) ?? ref.target.port;
      probe.pair = { path: ref.id, host: ref.target.host, port };
    }
  }
}
