import { describe, expect, it } from 'vitest';
import { causeMessage } from '../../../functions/pipeline/path-failure.js';

describe('causeMessage', () => {
  it('keeps the message of a Lambda cause, and a plain cause as it is', () => {
    expect(causeMessage(JSON.stringify({ errorMessage: 'boom', errorType: 'Error', trace: ['at x'] }))).toBe('boom');
    expect(causeMessage('States.Timeout after 60 s')).toBe('States.Timeout after 60 s');
    expect(causeMessage('{"other": 1}')).toBe('{"other": 1}');
    expect(causeMessage(undefined)).toBe('');
  });
});
