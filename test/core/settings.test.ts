/**
 * The run settings are parsed once, flags over the environment, and a bad value names the flag
 * or the variable it came from.
 */
import { describe, expect, it } from 'vitest';
import { costSettings, parseSettings, settingsEnv } from '../../core/settings.js';

describe('parseSettings', () => {
  it('reads the stack default from the environment', () => {
    expect(parseSettings({}, { PATHBENCH_BUDGET_USD: '25', PATHBENCH_CLIENT_INSTANCE_TYPE: 't3.micro' })).toEqual({
      budgetUsd: 25,
      instanceType: 't3.micro',
      allowOverBudget: false,
    });
    expect(parseSettings({}, { PATHBENCH_BUDGET_USD: '' })).toEqual({ allowOverBudget: false });
  });

  it('takes a flag over its variable, and the override only from the flags', () => {
    const s = parseSettings(
      { budgetUsd: '3', bandwidthGbps: '5', allowOverBudget: true },
      { PATHBENCH_BUDGET_USD: '25', PATHBENCH_BANDWIDTH_GBPS: 'not read' },
    );
    expect(s).toEqual({ budgetUsd: 3, bandwidthGbps: 5, allowOverBudget: true });
  });

  it('refuses a bad value in one line naming where it came from', () => {
    expect(() => parseSettings({}, { PATHBENCH_BUDGET_USD: 'ten' })).toThrow(
      'PATHBENCH_BUDGET_USD: expected a positive number, got "ten"',
    );
    expect(() => parseSettings({ budgetUsd: '-1' }, {})).toThrow('--budget-usd: expected a positive number, got "-1"');
    expect(() => parseSettings({ budgetUsd: ' ' }, {})).toThrow('--budget-usd: expected a positive number');
    expect(() => parseSettings({ bandwidthGbps: 'Infinity' }, {})).toThrow('--bandwidth-gbps');
    expect(() => parseSettings({ instanceType: 'C6I LARGE' }, {})).toThrow(
      '--instance-type: expected an instance type such as "t3.micro", got "C6I LARGE"',
    );
    expect(() => parseSettings({}, { PATHBENCH_CLIENT_INSTANCE_TYPE: 'big' })).toThrow(
      /^PATHBENCH_CLIENT_INSTANCE_TYPE: expected an instance type/,
    );
  });

  it('round-trips the cost part through the environment form the stack sets', () => {
    const s = parseSettings({ budgetUsd: '12.5', instanceType: 'c7gn.large', bandwidthGbps: '30' }, {});
    expect(parseSettings({}, settingsEnv(costSettings(s)))).toEqual({ ...s, allowOverBudget: false });
    expect(costSettings(s)).not.toHaveProperty('allowOverBudget');
  });
});
