/**
 * A plan's rules across fields: unique path ids (also by case), comparisons that name paths of
 * the plan, all-or-none mesh pairs with one test per region a round, a client for every path,
 * probe names (explicit, defaulted, matrix cells) unique per path, skips that match a probe.
 * They run on the raw input so they still report when other fields are bad.
 */
import { type MatrixAxes, matrixCells } from '../probes/http/http.schema.js';
import { PROBE_KINDS, type ProbeKind } from '../probes/index.js';
import { quoted, SAFE_ID } from './fields.js';
import { printable } from './printable.js';
import { formatPath, isRecord, type Key, type Problem, type Rec } from './zod-problems.js';

/** At most this many names in a message's list ("paths: a, b, … and 190 more"). */
const MAX_LISTED = 10;

/** Names for a message: the first few, then how many more; "none" for an empty list. */
export function listed(names: readonly string[]): string {
  if (names.length === 0) return 'none';
  const shown = names.slice(0, MAX_LISTED).map((n) => printable(n.length > 63 ? `${n.slice(0, 60)}...` : n));
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}

const isKind = (v: unknown): v is ProbeKind => typeof v === 'string' && (PROBE_KINDS as readonly string[]).includes(v);

/**
 * Names for a path's probes: an explicit name wins; an unnamed probe gets its kind, then
 * "kind-2", "kind-3" … for further unnamed probes of that kind, skipping names already taken
 * explicitly. Entries without a usable kind get undefined.
 */
export function probeNames(probes: readonly unknown[]): (string | undefined)[] {
  const taken = new Set<string>();
  for (const p of probes) if (isRecord(p) && typeof p.name === 'string') taken.add(p.name);
  const next = new Map<string, number>();
  return probes.map((p) => {
    if (!isRecord(p)) return undefined;
    if (typeof p.name === 'string') return p.name;
    if (!isKind(p.kind)) return undefined;
    let n = next.get(p.kind) ?? 1;
    let name = n === 1 ? p.kind : `${p.kind}-${n}`;
    while (taken.has(name)) {
      n += 1;
      name = `${p.kind}-${n}`;
    }
    next.set(p.kind, n + 1);
    taken.add(name);
    return name;
  });
}

/** The probes a path ends up with (its own replace the defaults entirely) and where they came from. */
function effectiveProbes(path: Rec, defaults: Rec | undefined): { items: unknown; base: Key[] } | undefined {
  if (path.probes !== undefined) return { items: path.probes, base: ['probes'] };
  if (defaults?.probes !== undefined) return { items: defaults.probes, base: ['defaults', 'probes'] };
  return undefined;
}

/** The plan's problems across fields (on the raw input, so they still report when other fields are bad). */
export function crossProblems(raw: unknown): Problem[] {
  const out: Problem[] = [];
  if (!isRecord(raw)) return out;
  const defaults = isRecord(raw.defaults) ? raw.defaults : undefined;
  const paths = Array.isArray(raw.paths) ? raw.paths : [];

  // Path ids become S3 keys and local directory names; the latter collide by case on macOS.
  const seen = new Map<string, { index: number; id: string }>();
  paths.forEach((p, i) => {
    if (!isRecord(p) || typeof p.id !== 'string') return;
    const prev = seen.get(p.id.toLowerCase());
    if (!prev) seen.set(p.id.toLowerCase(), { index: i, id: p.id });
    else if (prev.id === p.id)
      out.push({ path: ['paths', i, 'id'], message: `duplicate path id ${quoted(p.id)} (also paths[${prev.index}])` });
    else
      out.push({
        path: ['paths', i, 'id'],
        message: `path id ${quoted(p.id)} differs from ${quoted(prev.id)} (paths[${prev.index}]) only by case`,
      });
  });

  out.push(...compareProblems(raw.compare, paths));
  if (raw.orderSeed !== undefined && raw.order !== 'shuffled')
    out.push({
      path: ['orderSeed'],
      message: `applies only to "order": "shuffled" (order is ${raw.order === undefined ? 'as-written' : printable(JSON.stringify(raw.order))})`,
    });
  out.push(...meshProblems(paths));
  const reference = isRecord(raw.regression) ? raw.regression.reference : undefined;
  if (typeof reference === 'string' && reference !== '') {
    const ids = paths
      .filter(isRecord)
      .map((p) => p.id)
      .filter((x): x is string => typeof x === 'string');
    if (!ids.includes(reference))
      out.push({
        path: ['regression', 'reference'],
        message: `${quoted(reference)} is not a path of this plan (paths: ${listed(ids)})`,
      });
  }

  if (isRecord(raw.regression) && raw.regression.paired === true && typeof reference !== 'string')
    out.push({
      path: ['regression', 'paired'],
      message: 'needs regression.reference: the path whose target every other path measures beside its own',
    });

  paths.forEach((p, i) => {
    if (!isRecord(p)) return;
    const at = (...rest: Key[]): Key[] => ['paths', i, ...rest];

    if (p.client === undefined && defaults?.client === undefined)
      out.push({ path: at('client'), message: 'required (set it on the path or in defaults.client)' });
    const client = isRecord(p.client) ? p.client : isRecord(defaults?.client) ? defaults.client : undefined;
    const reboots = p.reboot ?? defaults?.reboot;
    if (client?.kind === 'ecs-task' && reboots === true)
      out.push({
        path: at('reboot'),
        message:
          'a task client (kind "ecs-task") cannot be rebooted: its task is replaced, not restarted, and its host is shared; set reboot: false (a credit wait still applies)',
      });

    const eff = effectiveProbes(p, defaults);
    if (!eff) {
      out.push({ path: at('probes'), message: 'required (set probes on the path or in defaults.probes)' });
      return;
    }
    if (!Array.isArray(eff.items)) return; // a type problem zod already reported
    const fromPath = eff.base.length === 1;
    const base = fromPath ? at('probes') : eff.base;
    if (eff.items.length === 0) {
      out.push({
        path: at('probes'),
        message: fromPath
          ? 'no probes (an empty list replaces defaults.probes)'
          : 'no probes (defaults.probes is empty)',
      });
      return;
    }

    const names = probeNames(eff.items);
    const firstByName = new Map<string, number>();
    names.forEach((name, j) => {
      if (name === undefined) return;
      const item = eff.items as unknown[];
      const kind = isRecord(item[j]) ? item[j].kind : undefined;
      // A name equal to another kind would make skipProbes ambiguous ("http" = name or kind?).
      if (isKind(name) && isKind(kind) && name !== kind)
        out.push({ path: [...base, j, 'name'], message: `name ${quoted(name)} is a probe kind; use another name` });
      const prev = firstByName.get(name);
      if (prev === undefined) firstByName.set(name, j);
      else
        out.push({
          path: [...base, j, 'name'],
          message: `duplicate probe name ${quoted(name)} (also ${formatPath([...base, prev])})`,
        });
    });

    // A matrix's cells are probes named `<name>-<cell>`: each must be a safe name, and unique.
    names.forEach((name, j) => {
      const item = (eff.items as unknown[])[j];
      if (name === undefined || !isRecord(item) || item.kind !== 'http' || !isRecord(item.matrix)) return;
      const axes = item.matrix as MatrixAxes;
      const ok = (v: unknown) => v === undefined || Array.isArray(v);
      if (!ok(axes.keepAlive) || !ok(axes.concurrency) || !ok(axes.payloadBytes)) return; // zod says why
      const cells = matrixCells(
        {
          keepAlive: typeof item.keepAlive === 'boolean' ? item.keepAlive : true,
          concurrency: typeof item.concurrency === 'number' ? item.concurrency : 1,
          payloadBytes: typeof item.payloadBytes === 'number' ? item.payloadBytes : 1024,
        },
        axes,
      );
      for (const c of cells) {
        const full = `${name}-${c.cell}`;
        if (!SAFE_ID.test(full))
          out.push({
            path: [...base, j, 'name'],
            message: `matrix cell name ${quoted(full)} is longer than 63 characters; use a shorter probe name`,
          });
        else if (firstByName.has(full))
          out.push({
            path: [...base, j, 'matrix'],
            message: `matrix cell ${quoted(full)} has the name of another probe (${formatPath([...base, firstByName.get(full)!])})`,
          });
      }
    });

    if (!Array.isArray(p.skipProbes)) return;
    const items = eff.items as unknown[];
    const known = names.filter((n): n is string => n !== undefined);
    const matchable = new Set<unknown>([...known, ...items.map((item) => (isRecord(item) ? item.kind : undefined))]);
    p.skipProbes.forEach((skip, j) => {
      if (!isRecord(skip) || typeof skip.probe !== 'string' || skip.probe === '') return;
      const target = skip.probe;
      if (!matchable.has(target))
        out.push({
          path: at('skipProbes', j, 'probe'),
          message: `${quoted(target)} matches no probe name or kind in this path (probes: ${listed(known)})`,
        });
    });
  });
  return out;
}

/**
 * A mesh plan (paths with `mesh`) is all mesh: its paths run in rounds, and a round must not
 * put one region in two tests at once.
 */
function meshProblems(paths: unknown[]): Problem[] {
  const meshOf = (p: unknown) => (isRecord(p) && isRecord(p.mesh) ? p.mesh : undefined);
  const withMesh = paths.filter((p) => meshOf(p) !== undefined).length;
  if (withMesh === 0) return [];
  const out: Problem[] = [];
  const busy = new Map<string, number>(); // "round region" → path index
  paths.forEach((p, i) => {
    const m = meshOf(p);
    if (!m) {
      out.push({
        path: ['paths', i, 'mesh'],
        message: `required: ${withMesh} of ${paths.length} paths are mesh pairs, and a plan is all mesh or none`,
      });
      return;
    }
    if (typeof m.round !== 'number') return;
    for (const side of ['from', 'to'] as const) {
      const region = m[side];
      if (typeof region !== 'string') continue;
      const key = `${m.round} ${region}`;
      const prev = busy.get(key);
      if (prev === undefined) busy.set(key, i);
      else if (prev !== i)
        out.push({
          path: ['paths', i, 'mesh', side],
          message: `${quoted(region)} is already in a test of round ${m.round} (paths[${prev}]); a region takes part in one test a round`,
        });
    }
    if (m.from === m.to && typeof m.from === 'string')
      out.push({
        path: ['paths', i, 'mesh', 'to'],
        message: `expected another region than the client's, got ${quoted(m.from)}`,
      });
  });
  return out;
}

/** Each comparison names two different paths of this plan, once. */
function compareProblems(compare: unknown, paths: unknown[]): Problem[] {
  if (!Array.isArray(compare)) return [];
  const ids = paths
    .filter(isRecord)
    .map((p) => p.id)
    .filter((id): id is string => typeof id === 'string');
  const known = new Set(ids);
  const shownIds = listed(ids);
  const out: Problem[] = [];
  const first = new Map<string, number>();
  compare.forEach((c, i) => {
    if (!isRecord(c)) return;
    for (const field of ['path', 'baseline'] as const) {
      const id = c[field];
      if (typeof id === 'string' && id !== '' && !known.has(id))
        out.push({
          path: ['compare', i, field],
          message: `${quoted(id)} is not a path of this plan (paths: ${shownIds})`,
        });
    }
    if (typeof c.path === 'string' && c.path !== '' && c.path === c.baseline)
      out.push({
        path: ['compare', i],
        message: `compares ${quoted(c.path)} with itself (its difference is 0 by construction); name another path as the baseline`,
      });
    const key = JSON.stringify([c.path, c.baseline]);
    const prev = first.get(key);
    if (prev === undefined) first.set(key, i);
    else out.push({ path: ['compare', i], message: `duplicate comparison (also compare[${prev}])` });
  });
  return out;
}
