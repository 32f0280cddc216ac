/** The fault-injection layer of the fault suite (test/faults/inject.ts). */
import { describe, expect, it } from 'vitest';
import { awsError, Faults } from './inject.js';

class Thing {
  log: string[] = [];
  async put(key: string, body: string): Promise<string> {
    this.log.push(`${key}=${body}`);
    return key;
  }
}

describe('Faults', () => {
  it('fails the Nth call only, with an AWS-shaped error', async () => {
    const t = new Thing();
    const f = new Faults([
      {
        site: 'thing.put',
        nth: 2,
        action: { throw: () => awsError('SlowDown', 'Please reduce your request rate.', 503) },
      },
    ]);
    const w = f.wrap('thing', t);
    await w.put('a', '1');
    await expect(w.put('b', '2')).rejects.toMatchObject({
      name: 'SlowDown',
      $fault: 'server',
      $metadata: { httpStatusCode: 503 },
    });
    await w.put('c', '3');
    expect(t.log).toEqual(['a=1', 'c=3']);
    expect(f.count('thing.put')).toBe(3);
  });

  it('crashes after the side effect: the call happened, the caller sees an error', async () => {
    const t = new Thing();
    const w = new Faults([{ site: 'thing.put', action: { crashAfter: () => awsError('Lambda.Unknown') } }]).wrap(
      'thing',
      t,
    );
    await expect(w.put('a', '1')).rejects.toThrow('Lambda.Unknown');
    expect(t.log).toEqual(['a=1']);
  });

  it('truncates a body, maps a result, and matches on the arguments', async () => {
    const t = new Thing();
    const f = new Faults([
      { site: 'thing.put', match: (a) => a[0] === 'raw', action: { truncate: (b) => b.slice(0, 3) } },
      { site: 'thing.put', match: (a) => a[0] === 'raw', action: { map: (_a, r) => `${r}!` } },
    ]);
    const w = f.wrap('thing', t);
    expect(await w.put('raw', 'abcdef')).toBe('raw!');
    expect(await w.put('other', 'abcdef')).toBe('other');
    expect(t.log).toEqual(['raw=abc', 'other=abcdef']);
  });

  it('a bounded rule stops firing', async () => {
    const w = new Faults([{ site: 'thing.put', times: 1, action: { throw: () => new Error('once') } }]).wrap(
      'thing',
      new Thing(),
    );
    await expect(w.put('a', '1')).rejects.toThrow('once');
    await expect(w.put('b', '2')).resolves.toBe('b');
  });
});
