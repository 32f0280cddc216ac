/**
 * One probe trial's sample file: a raw file parsed line by line into sample records and streamed
 * to the store (iperf3's checked for burst-credit cliffs and baseline plateaus, core/credit.ts;
 * every kind's for a trial the NIC throttled, core/nic-allowance.ts), or the one failed record that stands for a trial that produced nothing.
 */
import type { ClientNetwork } from '../../core/client-network.js';
import { flagAtBaseline, flagCreditCliffs } from '../../core/credit.js';
import { allowanceGrowth, nicTrialOf, throttledAllowances, throttledFlag } from '../../core/nic-allowance.js';
import type { ProbeProvenance } from '../../core/path-manifest.js';
import type { SampleRecord } from '../../core/sample-record.js';
import type { HttpTrialTally } from '../../probes/http/http-trials.js';
import { fileParser, PROBES, type ProbeKind } from '../../probes/index.js';
import { splitLines } from '../../probes/parsing/lines.js';
import type { ParseMeta, ParseStats } from '../../probes/parsing/parser-types.js';
import type { Deps } from '../ports.js';
import { readRawChunks, writeIfAny } from './stream-io.js';

export function toJsonl(records: SampleRecord[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : '');
}

/** Flush the sample text written so far at about this size (bounded memory, few writes). */
const FLUSH_CHARS = 1 << 16;

/**
 * Parse one raw file into its sample file, streaming: lines from the store's read stream go
 * through the kind's line parser and out to the store's write as they come. iperf3's records
 * (one small document) are flagged for credit cliffs and baseline plateaus as a whole.
 */
export async function collectFile(
  deps: Deps,
  kind: ProbeKind,
  rawKey: string,
  sampleKey: string,
  meta: ParseMeta,
  network: ClientNetwork | undefined,
  prov: ProbeProvenance,
  tally?: HttpTrialTally,
): Promise<ParseStats> {
  const fp = fileParser(kind, meta);
  // The NIC's allowance counters grew over this trial: its samples say so (unless flagged already),
  // and leave the unflagged figures. Not iperf3's: a saturating trial is meant to reach the
  // allowance (its unflagged figures are those before a credit cliff); its result and the
  // path's notes carry the flag instead.
  const throttle = throttledTrial(meta, prov);
  const flagSamples = throttle !== undefined && kind !== 'iperf3';
  let damage: string | undefined;
  const chunks = await readRawChunks(deps.store, rawKey, (reason) => {
    damage = reason;
  });
  const clocks = new Set(prov.clocks ?? []);
  async function* sampleText(): AsyncGenerator<string> {
    let buf = '';
    const add = (r: SampleRecord): void => {
      if (typeof r.clock === 'string') clocks.add(r.clock);
      if (flagSamples && r.flag == null) r.flag = throttle;
      tally?.add(r);
      buf += `${JSON.stringify(r)}\n`;
    };
    if (chunks) {
      for await (const l of splitLines(chunks)) {
        for (const r of fp.line(l)) add(r);
        if (buf.length >= FLUSH_CHARS) {
          yield buf;
          buf = '';
        }
      }
    }
    const tail = fp.end();
    if (kind === 'iperf3') flagIperf3(tail, network, prov);
    for (const r of tail) add(r);
    if (buf) yield buf;
  }
  if (await writeIfAny(deps.store, sampleKey, sampleText(), 'application/x-ndjson')) prov.sampleKeys.push(sampleKey);
  if (clocks.size) prov.clocks = [...clocks].sort();
  if (damage !== undefined) {
    // What decompressed before the damage is kept; the file reads as truncated.
    fp.stats.truncated = true;
    fp.stats.truncation = fp.stats.truncation ? `${damage}; ${fp.stats.truncation}` : damage;
  }
  return fp.stats;
}

/**
 * The `throttled:…` flag for a trial whose sidecar's NIC counters grew (core/nic-allowance.ts),
 * recorded in the probe's provenance; undefined when none grew or none were read.
 */
function throttledTrial(meta: ParseMeta, prov: ProbeProvenance): string | undefined {
  const nic = nicTrialOf(meta.sidecar);
  if (!nic) return undefined;
  const grown = throttledAllowances(nic);
  if (!grown.length) return undefined;
  const growth = allowanceGrowth(nic);
  const grew = Object.fromEntries(grown.map((a) => [a, growth[a] as number]));
  prov.throttled = [
    ...(prov.throttled ?? []).filter((t) => t.trial !== meta.trial),
    { trial: meta.trial, source: nic.source, dev: nic.dev, grew },
  ];
  return throttledFlag(grown);
}

/** Credit cliffs, then (a trial with a cliff is not also a plateau) trials at the baseline. */
function flagIperf3(records: SampleRecord[], network: ClientNetwork | undefined, prov: ProbeProvenance): void {
  const cliffs = flagCreditCliffs(records);
  if (cliffs.length) prov.credit = [...(prov.credit ?? []), ...cliffs];
  const plateaus = flagAtBaseline(records, network);
  if (plateaus.length)
    prov.atBaseline = [
      ...(prov.atBaseline ?? []),
      ...plateaus.map(({ trial, median, baselineBps, intervals }) => ({ trial, median, baselineBps, intervals })),
    ];
}

/** One failed sample standing for a probe trial that produced nothing, so loss shows it. */
export function failedRecord(
  runId: string,
  pathId: string,
  probe: { name: string; kind: ProbeKind },
  trial: number,
  t: number,
  reason: string,
): SampleRecord {
  return {
    run_id: runId,
    path_id: pathId,
    probe: probe.name,
    kind: probe.kind,
    trial,
    seq: 0,
    t_start: t,
    t_end: t,
    ...PROBES[probe.kind].primary,
    value: null,
    ok: false,
    error: reason,
  };
}
