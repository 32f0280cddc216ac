import { describe, expect, it } from 'vitest';
import { resolveClient } from '../../lab/client.js';

describe('lab client state transitions', () => {
  it('completes stopping → stopped and pending → running once due', () => {
    const t0 = new Date('2030-01-01T00:00:00Z');
    const stopping = {
      state: 'stopping' as const,
      since: t0.toISOString(),
      until: '2030-01-01T00:00:01.500Z',
      starts: 1,
    };
    expect(resolveClient(stopping, new Date('2030-01-01T00:00:01Z')).state).toBe('stopping');
    expect(resolveClient(stopping, new Date('2030-01-01T00:00:02Z')).state).toBe('stopped');
    const pending = { ...stopping, state: 'pending' as const };
    expect(resolveClient(pending, new Date('2030-01-01T00:00:02Z')).state).toBe('running');
  });
});
