/**
 * What interleaving the paths within a run would buy (`npx pathbench bench --only schedules`):
 * the same three loopback servers as the regressions bench (200 µs, 1 ms, 3 ms, at real-time
 * priority as root), measured by one client in three schedules, again and again under 0–2 CPU
 * hogs drawn at random per trial:
 *
 * - blocks: A×300, a pause, B×300, a pause, C×300 (the pipeline's order today; the pause stands
 *   for a path's steps between two probes, `PAUSE_MS`);
 * - rounds: ten rounds of A×30, B×30, C×30, a short pause after each block;
 * - alternate: 300 × (A, B, C), one request to each in turn.
 *
 * All three schedules of a trial run back to back in a random order, so they share the host's
 * state. Each schedule's p50 per path per trial is judged against that schedule's median over
 * the trials, as-is and against the reference path A (the additive difference P − A, as a share
 * of P's median: what a reference path's correction leaves). Printed per schedule and path: the
 * robust sd (1.4826 · MAD), the 95th percentile of |deviation| and the largest, and how many
 * clean trials per 100 stray beyond ±5 % and ±10 %: a clean run beyond ±10 % cannot be told from
 * the +10 % shift to be detected. For the deviations against A, what a judge with a fixed band
 * (±5 %, ±7.5 %) would make of them: false alarms per 100 clean trials, alone and two in a row,
 * and the share of a +10 % shift caught, each trial's own noise standing for a shifted run's.
 *
 * The client is the http probe's own Node client on bare sockets (probes/http/http-wire.ts), one
 * keep-alive connection per server, opened for each schedule: the C helper takes one target per
 * process, so it cannot alternate. Figures only; nothing here is judged.
 */
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentileOf } from '../../core/stats.js';
import { mad, median } from '../../functions/pipeline/regressions.js';
import { getRequest, ResponseReader } from '../../probes/http/http-wire.js';
import {
  BASE_DELAY_US,
  type DelayServer,
  seededRandom,
  startHogs,
  startServer,
  stopHogs,
} from './regressions.bench.js';

const IDS = Object.keys(BASE_DELAY_US);
const REQUESTS = 300;
const ROUNDS = 10;
/** What the pipeline spends between two paths' probes is seconds; a second here. */
const PAUSE_MS = 1000;
const WARMUP = 20;
const REQUEST_TIMEOUT_MS = 5000;
const SCHEDULES = ['blocks', 'rounds', 'alternate'] as const;
type Schedule = (typeof SCHEDULES)[number];

/** One keep-alive connection and its request loop (one GET at a time). */
class Conn {
  private sock: net.Socket;
  private waiting: ((err?: Error) => void) | undefined;
  private reader = new ResponseReader();
  private readonly request = getRequest('/bytes/1024', 'bench', false);

  private constructor(sock: net.Socket) {
    this.sock = sock;
    sock.setNoDelay(true);
    sock.on('data', (b: Buffer) => {
      try {
        if (this.reader.feed(b)) this.settle();
      } catch (e) {
        this.settle(e as Error);
      }
    });
    sock.on('error', (e) => this.settle(e));
    sock.on('close', () => this.settle(new Error('connection closed')));
  }

  static open(port: number): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1');
      sock.once('connect', () => resolve(new Conn(sock)));
      sock.once('error', reject);
    });
  }

  private settle(err?: Error): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.(err);
  }

  /** One request's latency in ms: request written → whole answer read; a server silent for REQUEST_TIMEOUT_MS fails the bench part. */
  get(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.reader = new ResponseReader();
      const t0 = process.hrtime.bigint();
      const timer = setTimeout(
        () => this.settle(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)),
        REQUEST_TIMEOUT_MS,
      );
      this.waiting = (err) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(Number(process.hrtime.bigint() - t0) / 1e6);
      };
      this.sock.write(this.request);
    });
  }

  close(): void {
    this.sock.destroy();
  }
}

async function runSchedule(schedule: Schedule, servers: Record<string, DelayServer>): Promise<Record<string, number>> {
  const conns: Record<string, Conn> = {};
  const samples: Record<string, number[]> = Object.fromEntries(IDS.map((id) => [id, []]));
  try {
    for (const id of IDS) {
      conns[id] = await Conn.open(servers[id].port);
      for (let i = 0; i < WARMUP; i++) await conns[id].get();
    }
    const block = async (id: string, n: number) => {
      for (let i = 0; i < n; i++) samples[id].push(await conns[id].get());
    };
    if (schedule === 'blocks')
      for (const id of IDS) {
        await block(id, REQUESTS);
        await sleep(PAUSE_MS);
      }
    else if (schedule === 'rounds')
      for (let r = 0; r < ROUNDS; r++)
        for (const id of IDS) {
          await block(id, REQUESTS / ROUNDS);
          await sleep(PAUSE_MS / ROUNDS);
        }
    else for (let i = 0; i < REQUESTS; i++) for (const id of IDS) samples[id].push(await conns[id].get());
  } finally {
    for (const c of Object.values(conns)) c.close();
  }
  // The nearest-rank p50, as the pipeline's.
  return Object.fromEntries(IDS.map((id) => [id, percentileOf(samples[id], 500) ?? Number.NaN]));
}

/** Bands (shares) at which the judge's outcome is worked out from the clean trials' deviations. */
const BANDS = [0.05, 0.075];
const SHIFT = 0.1;

/**
 * What a judge with a fixed band would make of these deviations (trials in order): clean trials
 * flagged slower (d > band) per 100, alone and two in a row (persistence 2), and the share of a
 * +10 % shift it would catch, alone (d + 10 % > band) and two in a row, taking each trial's own
 * noise as the shifted run's noise.
 */
function judged(ds: number[]): string {
  const pct = (k: number, of: number) => ((100 * k) / Math.max(1, of)).toFixed(1);
  return BANDS.map((b) => {
    const over = ds.map((d) => d > b);
    const caught = ds.map((d) => d + SHIFT > b);
    const pairs = ds.length - 1;
    const both = (xs: boolean[]) => xs.slice(1).filter((x, i) => x && xs[i]).length;
    return `±${(100 * b).toFixed(1)} %: false ${pct(over.filter(Boolean).length, ds.length)}, two in a row ${pct(both(over), pairs)}; +10 % caught ${pct(caught.filter(Boolean).length, ds.length)} %, two in a row ${pct(both(caught), pairs)} %`;
  }).join('; ');
}

/** Spread of deviations (shares): robust sd, 95th percentile of |d|, largest |d|, and how many per 100 lie beyond 5 % and 10 %. */
function spread(ds: number[]) {
  const abs = ds.map(Math.abs).sort((a, b) => a - b);
  const pct = (x: number) => (100 * x).toFixed(1).padStart(5);
  const per100 = (t: number) => ((100 * abs.filter((d) => d > t).length) / abs.length).toFixed(1).padStart(4);
  return `sd ${pct(1.4826 * mad(ds))} %, q95 ${pct(abs[Math.ceil(0.95 * abs.length) - 1])} %, largest ${pct(abs[abs.length - 1])} %, beyond ±5 %: ${per100(0.05)}, ±10 %: ${per100(0.1)}`;
}

export async function benchSchedules(opts: { trials?: number; seed?: number } = {}) {
  const trials = opts.trials ?? 60;
  const rand = seededRandom(opts.seed ?? 20261206);
  const servers: Record<string, DelayServer> = {};
  const results: Record<Schedule, Record<string, number>[]> = { blocks: [], rounds: [], alternate: [] };
  const hogsSeen = [0, 0, 0];
  const t0 = Date.now();
  try {
    for (const id of IDS) servers[id] = await startServer(BASE_DELAY_US[id]);
    for (let t = 0; t < trials; t++) {
      const hogs = Math.floor(rand() * 3);
      hogsSeen[hogs]++;
      const running = startHogs(hogs);
      try {
        await sleep(200);
        const order = [...SCHEDULES].sort(() => rand() - 0.5);
        for (const s of order) results[s].push(await runSchedule(s, servers));
      } finally {
        await stopHogs(running);
      }
      if (t % 10 === 9 || t === 0)
        process.stderr.write(
          `bench schedules: ${t + 1}/${trials} trials (${Math.round((Date.now() - t0) / 1000)} s)\n`,
        );
    }
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
  const lines = [
    `${trials} trials, each the three schedules back to back in a random order; hogs per trial: ${hogsSeen.map((n, h) => `${h}: ${n}`).join(', ')}`,
    `blocks: ${IDS.map((id) => `${id}×${REQUESTS}`).join(', ')} with ${PAUSE_MS} ms between; rounds: ${ROUNDS} × (${IDS.map((id) => `${id}×${REQUESTS / ROUNDS}`).join(', ')}); alternate: ${REQUESTS} × (${IDS.join(', ')})`,
    'deviation of each trial p50 from its schedule median over the trials; "against A" is the additive difference P − A',
  ];
  for (const s of SCHEDULES) {
    const rows = results[s];
    const base = Object.fromEntries(IDS.map((id) => [id, median(rows.map((r) => r[id]))]));
    lines.push(`${s}: p50 medians ${IDS.map((id) => `${id} ${base[id].toFixed(3)} ms`).join(', ')}`);
    const refBase = Object.fromEntries(IDS.map((id) => [id, median(rows.map((r) => r[id] - r.A))]));
    for (const id of IDS.slice(1)) {
      lines.push(`  ${id} as measured  ${spread(rows.map((r) => r[id] / base[id] - 1))}`);
      const against = rows.map((r) => (r[id] - r.A - refBase[id]) / base[id]);
      lines.push(`  ${id} against A    ${spread(against)}`);
      lines.push(`    judged at a band of ${judged(against)}`);
    }
  }
  lines.push(`wall time ${Math.round((Date.now() - t0) / 1000)} s`);
  return { lines };
}
