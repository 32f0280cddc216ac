/** The Logger implementations: the exact lines Lambda and local runs write. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { jsonLogger, silentLogger, stderrLogger } from '../../functions/log.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('jsonLogger', () => {
  it('writes one JSON object a line: level, message, time, then the data', () => {
    const lines: string[] = [];
    const log = jsonLogger((l) => lines.push(l));
    log.info('started', { task: 'ValidatePlan' });
    log.warn('slow');
    log.error('failed', { name: 'QueryFailedError' });
    expect(lines.map((l) => Object.keys(JSON.parse(l)))).toEqual([
      ['level', 'message', 'time', 'task'],
      ['level', 'message', 'time'],
      ['level', 'message', 'time', 'name'],
    ]);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'info', message: 'started', task: 'ValidatePlan' });
    expect(Number.isNaN(Date.parse(JSON.parse(lines[1]).time))).toBe(false);
  });
});

describe('stderrLogger', () => {
  it('writes the same lines to stderr without a time; quiet drops info only', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    stderrLogger().info('hello', { n: 1 });
    stderrLogger(true).info('dropped');
    stderrLogger(true).warn('kept');
    expect(write.mock.calls.map((c) => c[0])).toEqual([
      '{"level":"info","message":"hello","n":1}\n',
      '{"level":"warn","message":"kept"}\n',
    ]);
  });
});

describe('silentLogger', () => {
  it('writes nothing', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    silentLogger.info('x');
    silentLogger.warn('x');
    silentLogger.error('x');
    expect(write).not.toHaveBeenCalled();
    expect(out).not.toHaveBeenCalled();
  });
});
