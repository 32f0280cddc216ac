// The precise tcp-connect helper: build/cache, argv validation, line format, failure
// classification (refused, timeout) and self-calibration — against real loopback sockets and
// a namespace with a real iptables DROP rule, never a fake.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibrate } from '../../../agent/calibrate.js';
import {
  httpingArgs,
  parseTcpingLines,
  runTcping,
  startQuietListener,
  TCPING_CLOCK,
  TcpingArgumentError,
  tcpingArgs,
} from '../../../probes/native/tcping.js';
import {
  ensureTcping,
  loadTcpingSources,
  OTHER_BUILD_KEEP_MS,
  TCPING_SOURCES,
  tcpingHash,
} from '../../../probes/native/tcping-build.js';
import { freePort } from '../../helpers/ports.js';

const execFileP = promisify(execFile);

let dir: string;
let bin: string;

beforeAll(async () => {
  // Prepare: a private cache dir so the test exercises a real compile.
  dir = await mkdtemp(path.join(os.tmpdir(), 'pb-native-test-'));
  const built = await ensureTcping({ cacheDir: path.join(dir, 'cache') });
  if (!built.ok) throw new Error(`helper did not build: ${built.reason}`);
  bin = built.path;
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ensureTcping', () => {
  it('compiles once into the cache and reuses the binary by source hash', async () => {
    const cacheDir = path.join(dir, 'cache');
    const before = await stat(bin);
    const again = await ensureTcping({ cacheDir });
    expect(again).toEqual({ ok: true, path: bin });
    // A fresh process-level memo would still find the cached file: same name, same file (a
    // rebuild renames a new file into place; the mtime moves on every use, see the clean-up case).
    const other = await ensureTcping({ cacheDir, compiler: process.env.CC ?? 'gcc' });
    expect(other.ok && other.path).toBe(bin);
    expect((await stat(bin)).ino).toBe(before.ino);
    expect(path.basename(bin)).toMatch(/^tcping-[0-9a-f]{16}$/);
    expect((await stat(cacheDir)).mode & 0o077).toBe(0);
  });

  it('keys the cache by every source file, not only the one with main()', async () => {
    const sources = await loadTcpingSources();
    expect(sources.map((s) => s.name)).toEqual([...TCPING_SOURCES]);
    expect(path.basename(bin)).toBe(`tcping-${tcpingHash(sources)}`);
    for (const name of TCPING_SOURCES) {
      const changed = sources.map((s) => (s.name === name ? { ...s, text: `${s.text}\n` } : s));
      expect(tcpingHash(changed), name).not.toBe(tcpingHash(sources));
    }
  });

  it('removes builds of other sources unused for a day when it compiles a new one, keeps recent ones', async () => {
    const cacheDir = path.join(dir, 'prune');
    await mkdir(cacheDir, { recursive: true, mode: 0o700 });
    await writeFile(path.join(cacheDir, 'tcping-0000000000000000'), 'stale');
    await writeFile(path.join(cacheDir, 'tcping-1111111111111111.c'), 'stale single-file source');
    await mkdir(path.join(cacheDir, 'tcping-2222222222222222.src'));
    await writeFile(path.join(cacheDir, 'tcping-2222222222222222.src', 'tcping.c'), 'stale');
    // Another checkout's build, used an hour ago: it may be mid-run, so it stays.
    await writeFile(path.join(cacheDir, 'tcping-3333333333333333'), 'in use elsewhere');
    await writeFile(path.join(cacheDir, 'unrelated.txt'), 'keep');
    const old = new Date(Date.now() - OTHER_BUILD_KEEP_MS - 3600_000);
    const recent = new Date(Date.now() - 3600_000);
    for (const f of ['tcping-0000000000000000', 'tcping-1111111111111111.c', 'tcping-2222222222222222.src'])
      await utimes(path.join(cacheDir, f), old, old);
    await utimes(path.join(cacheDir, 'tcping-3333333333333333'), recent, recent);
    const r = await ensureTcping({ cacheDir });
    expect(r.ok).toBe(true);
    const built = r.ok ? r.path : '';
    const files = (await readdir(cacheDir)).sort();
    expect(files).toEqual(
      [path.basename(built), `${path.basename(built)}.src`, 'tcping-3333333333333333', 'unrelated.txt'].sort(),
    );
    // The sources it compiled stay next to the binary, every file of the helper.
    expect((await readdir(`${built}.src`)).sort()).toEqual([...TCPING_SOURCES].sort());
    // A cache hit marks the build as used, so another checkout's clean-up leaves it alone.
    await utimes(built, old, old);
    expect((await ensureTcping({ cacheDir })).ok).toBe(true);
    expect(Date.now() - (await stat(built)).mtimeMs).toBeLessThan(OTHER_BUILD_KEEP_MS);
  });

  it('reports a missing compiler clearly instead of failing silently', async () => {
    const r = await ensureTcping({ cacheDir: path.join(dir, 'nocc'), compiler: 'pb-no-such-gcc' });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/pb-no-such-gcc not found on PATH/);
  });
});

describe('tcpingArgs', () => {
  it('builds argv from valid options, kernel clock by default', () => {
    expect(tcpingArgs({ host: '10.0.2.10', port: 7000, count: 300, intervalMs: 200, timeoutMs: 400 })).toEqual([
      '10.0.2.10',
      '7000',
      '300',
      '200',
      '400',
      'kernel',
    ]);
  });

  it('passes fractional milliseconds as plain decimals', () => {
    const argv = tcpingArgs({ host: 'h', port: 1, count: 1, intervalMs: 0.5, timeoutMs: 1e-3, primary: 'app' });
    expect(argv.slice(3)).toEqual(['0.5', '0.001', 'app']);
  });

  it.each([
    [{ host: 'a b' }, /host/],
    [{ host: '-oProxy' }, /host/],
    [{ host: 'x;rm -rf' }, /host/],
    [{ port: 0 }, /port/],
    [{ count: 0 }, /count/],
    [{ port: 80.5 }, /port/],
    [{ intervalMs: -1 }, /intervalMs/],
    [{ intervalMs: Number.NaN }, /intervalMs/],
    [{ timeoutMs: 0 }, /timeoutMs/],
  ])('rejects %o', (bad, msg) => {
    const o = { host: '127.0.0.1', port: 1, count: 1, intervalMs: 1, timeoutMs: 1, ...bad };
    expect(() => tcpingArgs(o)).toThrow(TcpingArgumentError);
    expect(() => tcpingArgs(o)).toThrow(msg);
  });

  it('the helper itself rejects bad argv with exit 2 (no shell, argv only)', async () => {
    const r = await execFileP(bin, ['127.0.0.1', '70000', '1', '1', '1']).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((r as { code: number }).code).toBe(2);
    expect((r as { stderr: string }).stderr).toMatch(/PORT 1-65535/);
  });
});

describe('httpingArgs with a pair', () => {
  const base = {
    address: '127.0.0.1',
    port: 8080,
    hostHeader: 'b.internal:8080',
    path: '/bytes/1024',
    count: 300,
    timeoutMs: 2000,
    keepAlive: true,
    warmup: 200,
    concurrency: 1,
  };
  it("appends the reference's address, port and Host header; refuses a bad one", () => {
    expect(httpingArgs({ ...base, pair: { address: '10.0.0.1', port: 80, hostHeader: 'a.internal:80' } })).toEqual([
      '--http',
      '127.0.0.1',
      '8080',
      'b.internal:8080',
      '/bytes/1024',
      '300',
      '2000',
      'keepalive',
      '200',
      '1',
      '10.0.0.1',
      '80',
      'a.internal:80',
    ]);
    expect(() => httpingArgs({ ...base, pair: { address: 'a.internal', port: 80, hostHeader: 'a' } })).toThrow(
      /pair address must be a numeric IP/,
    );
    expect(() => httpingArgs({ ...base, pair: { address: '10.0.0.1', port: 80, hostHeader: 'a b' } })).toThrow(
      /bad pair Host header/,
    );
    expect(() => httpingArgs({ ...base, pair: { address: '10.0.0.1', port: 0, hostHeader: 'a' } })).toThrow(
      /pair port/,
    );
  });

  it('the helper refuses a pair cut short (exit 2, the usage names the pair)', async () => {
    const argv = httpingArgs({ ...base, pair: { address: '10.0.0.1', port: 80, hostHeader: 'a' } }).slice(0, -1);
    const r = await execFileP(bin, argv).catch((e: { code: number; stderr: string }) => e);
    expect((r as { code: number }).code).toBe(2);
    expect((r as { stderr: string }).stderr).toMatch(/\[ADDRESS2 PORT2 HOST2\]/);
  });
});

describe('runTcping on loopback', () => {
  it('writes one well-formed line per attempt, kernel RTT primary, app time kept', async () => {
    const listener = await startQuietListener(bin);
    // An earlier test's client may still sit in TIME_WAIT towards a port the kernel has just
    // handed to this listener: only entries that appear during this run count.
    const timeWait = async (): Promise<string[]> => {
      const { stdout } = await execFileP('ss', ['-Htan', 'state', 'time-wait', `( dport = :${listener.port} )`]);
      return stdout.split('\n').filter((l) => l.trim());
    };
    const before = new Set(await timeWait());
    try {
      const out = path.join(dir, 'ok.jsonl');
      const t0 = Date.now();
      const r = await runTcping({
        host: '127.0.0.1',
        port: listener.port,
        count: 40,
        intervalMs: 2,
        timeoutMs: 400,
        out,
        binary: bin,
      });
      const t1 = Date.now();
      expect(r).toEqual({ ok: true });
      const lines = parseTcpingLines(await readFile(out, 'utf8'));
      expect(lines.map((l) => l.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      for (const l of lines) {
        expect(l.ok).toBe(true);
        expect(l.error).toBeUndefined();
        expect(Object.values(TCPING_CLOCK)).toContain(l.clock);
        expect(l.t_start).toBeGreaterThanOrEqual(t0 - 5);
        expect(l.t_end).toBeLessThanOrEqual(t1 + 5);
        expect(l.t_end).toBeGreaterThanOrEqual(l.t_start);
        expect(l.app_rtt_ms).toBeGreaterThan(0);
        expect(l.app_rtt_ms).toBeLessThan(400);
        // The time inside connect() is part of the app-observed time, never more.
        expect(l.connect_call_us).toBeGreaterThan(0);
        expect(l.connect_call_us as number).toBeLessThanOrEqual(l.app_rtt_ms * 1000 + 0.001);
        if (l.clock === TCPING_CLOCK.kernel) {
          expect(Number.isInteger(l.kernel_rtt_us)).toBe(true);
          expect(l.rtt_ms).toBeCloseTo((l.kernel_rtt_us as number) / 1000, 9);
        } else expect(l.rtt_ms).toBe(l.app_rtt_ms);
      }
      // Open slots 2 ms apart, on a fixed schedule: each attempt's start less its slot (i × 2 ms)
      // is the same offset for all but the few a busy machine delayed, so the median offset sits
      // near the least, and the last ten's median near the first ten's (a drifting schedule
      // spreads them). Medians, not the first or last attempt alone: one loaded run started the
      // last attempt 25 ms late, another the first one ~2 ms late.
      const offset = lines.map((l, i) => l.t_start - 2 * i);
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
      const spread = JSON.stringify(offset.map((o) => +(o - Math.min(...offset)).toFixed(2)));
      expect(median(offset) - Math.min(...offset), spread).toBeLessThan(10);
      expect(median(offset.slice(-10)) - median(offset.slice(0, 10)), spread).toBeLessThan(10);
      expect(lines.filter((l) => l.clock === TCPING_CLOCK.kernel).length).toBeGreaterThan(30);
      // Abortive close: no TIME_WAIT entry is left behind for this listener's port.
      expect((await timeWait()).filter((l) => !before.has(l))).toEqual([]);
    } finally {
      await listener.close();
    }
  });

  it('app primary puts the busy-polled time in rtt_ms', async () => {
    const listener = await startQuietListener(bin);
    try {
      const out = path.join(dir, 'app.jsonl');
      const port = listener.port;
      await runTcping({
        host: '127.0.0.1',
        port,
        count: 5,
        intervalMs: 1,
        timeoutMs: 400,
        out,
        binary: bin,
        primary: 'app',
      });
      const lines = parseTcpingLines(await readFile(out, 'utf8'));
      expect(lines).toHaveLength(5);
      for (const l of lines) {
        expect(l.clock).toBe(TCPING_CLOCK.app);
        expect(l.rtt_ms).toBe(l.app_rtt_ms);
      }
    } finally {
      await listener.close();
    }
  });

  it('classifies a closed port as refused, a failed sample (rtt_ms null)', async () => {
    const port = await freePort();
    const out = path.join(dir, 'refused.jsonl');
    const r = await runTcping({ host: '127.0.0.1', port, count: 3, intervalMs: 1, timeoutMs: 400, out, binary: bin });
    expect(r.ok).toBe(true);
    const lines = parseTcpingLines(await readFile(out, 'utf8'));
    expect(lines).toHaveLength(3);
    for (const l of lines) {
      expect(l).toMatchObject({ ok: false, rtt_ms: null, error: 'refused', clock: TCPING_CLOCK.app });
      expect(l.kernel_rtt_us).toBeUndefined();
    }
  });

  it('says why when the target cannot be resolved', async () => {
    const out = path.join(dir, 'dns.jsonl');
    const r = await runTcping({
      host: 'no-such-host.invalid',
      port: 80,
      count: 1,
      intervalMs: 1,
      timeoutMs: 100,
      out,
      binary: bin,
    });
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/exited with 3: cannot resolve no-such-host.invalid/);
  });

  it('the quiet listener goes away when closed', async () => {
    const listener = await startQuietListener(bin);
    expect(listener.port).toBeGreaterThan(0);
    await listener.close();
    expect(() => process.kill(listener.pid, 0)).toThrow();
  });
});

describe.runIf(process.getuid?.() === 0)('runTcping against a blackholed target (root, own namespace)', () => {
  const ns = `pb-tpr-${process.pid}`;

  beforeAll(async () => {
    await execFileP('ip', ['netns', 'add', ns]);
    await execFileP('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    // SYNs to port 9 vanish: no RST, no ICMP — the connect can only time out.
    await execFileP('ip', ['netns', 'exec', ns, 'iptables', '-A', 'INPUT', '-p', 'tcp', '--dport', '9', '-j', 'DROP']);
  });

  afterAll(async () => {
    await execFileP('ip', ['netns', 'del', ns]).catch(() => undefined);
  });

  it('classifies a dropped SYN as timeout after timeoutMs, a failed sample, not a slow one', async () => {
    const out = path.join(dir, 'timeout.jsonl');
    const r = await runTcping({
      host: '127.0.0.1',
      port: 9,
      count: 2,
      intervalMs: 10,
      timeoutMs: 80,
      out,
      binary: bin,
      prefix: ['ip', 'netns', 'exec', ns],
    });
    expect(r).toEqual({ ok: true });
    const lines = parseTcpingLines(await readFile(out, 'utf8'));
    expect(lines).toHaveLength(2);
    for (const l of lines) {
      expect(l).toMatchObject({ ok: false, rtt_ms: null, error: 'timeout' });
      expect(l.app_rtt_ms).toBeGreaterThanOrEqual(80);
      expect(l.app_rtt_ms).toBeLessThan(120);
    }
    // The second attempt waited for the first to time out (one handshake at a time).
    expect(lines[1].t_start - lines[0].t_start).toBeGreaterThanOrEqual(80);
  });
});

describe('calibrate', () => {
  it('measures the helper on loopback and says how', async () => {
    const c = await calibrate('tcp-connect', { count: 60, intervalMs: 2 });
    expect(c.n).toBe(60);
    expect(c.method).toMatch(/tcping \(C helper\) kernel-tcpi_rtt.*quiet loopback listener, 60 × 2 ms/);
    expect(c.p50_us).toBeGreaterThan(0);
    expect(c.p50_us).toBeLessThanOrEqual(c.p99_us);
    // Loopback handshakes are microseconds; a millisecond means the method is broken.
    expect(c.p50_us).toBeLessThan(1000);
    expect(c.app_p50_us).toBeGreaterThanOrEqual(c.p50_us);
  });

  it('falls back to the Node probe when asked, and labels it', async () => {
    const c = await calibrate('tcp-connect', { count: 30, intervalMs: 2, implementation: 'node' });
    expect(c.n).toBe(30);
    expect(c.method).toMatch(/^node net\.Socket app-hrtime \(requested\)/);
    expect(c.p50_us).toBeLessThanOrEqual(c.p99_us);
  });
});
