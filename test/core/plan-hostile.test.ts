/**
 * The plan validator under hostile input: work and output stay proportional to the plan (no
 * step repeats over the whole document per problem), the problem list is capped, mesh rounds,
 * budgets and UDP rates are bounded, and targets that no measurement needs are refused.
 */
import { describe, expect, it } from 'vitest';
import { parsePlan, parsePlanText } from '../../core/plan.js';
import { MAX_PROBLEM_LINES, problemCount } from '../../core/zod-problems.js';
import { expectOk, expectProblems } from '../helpers/plans.js';

type Json = Record<string, unknown>;

function minimal(): Json {
  return {
    name: 'hostile',
    paths: [
      {
        id: 'A',
        client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
        target: { host: '10.1.0.10', port: 5201 },
        probes: [{ kind: 'tcp-connect' }],
      },
    ],
  };
}

const withTarget = (host: string): Json => {
  const p = minimal();
  (p.paths as Json[])[0].target = { host, port: 5201 };
  return p;
};

const withProbe = (probe: Json): Json => {
  const p = minimal();
  (p.paths as Json[])[0].probes = [probe];
  return p;
};

/** A proxy that counts how often a consumer enumerates the object's keys. */
function countingKeys<T extends object>(target: T): { proxy: T; count: () => number } {
  let n = 0;
  const proxy = new Proxy(target, {
    ownKeys(t) {
      n += 1;
      return Reflect.ownKeys(t);
    },
  });
  return { proxy, count: () => n };
}

describe('parsePlan: cost and output proportional to the plan', () => {
  it('20,000 unknown keys: the first problems listed, the rest counted, the text bounded', () => {
    // Prepare: a 20,000-key plan as `plan put` would read it (about 200 KB of JSON).
    const plan = minimal();
    for (let i = 0; i < 20_000; i++) plan[`unknownKey${i}`] = i;
    const text = JSON.stringify(plan);

    // Act
    const problems = expectProblems(parsePlanText(text));

    // Assess
    expect(text.length).toBeGreaterThan(200_000);
    expect(problems).toHaveLength(MAX_PROBLEM_LINES + 1);
    expect(problems[0]).toBe('unknownKey0: unknown field "unknownKey0"');
    expect(problems.at(-1)).toBe(
      `plan: and ${(20_000 - MAX_PROBLEM_LINES).toLocaleString('en-US')} more problems (the first ${MAX_PROBLEM_LINES} are listed)`,
    );
    expect(problemCount(problems)).toBe(20_000);
    expect(problems.join('\n').length).toBeLessThan(20_000);
  });

  it("places problems in document order reading each object's keys a fixed number of times, not once per problem", () => {
    // Prepare: the document order of a problem needs its key's position; looked up per problem
    // over the whole object, 2,000 unknown keys read the keys 2,000 times (quadratic).
    const plan = minimal();
    for (let i = 0; i < 2_000; i++) plan[`extra${i}`] = true;
    const { proxy, count } = countingKeys(plan);

    // Act
    const problems = expectProblems(parsePlan(proxy));

    // Assess
    expect(count()).toBeLessThanOrEqual(5);
    expect(problemCount(problems)).toBe(2_000);
  });

  it('2,000 bad comparisons in a plan of 200 paths: each message bounded, the list capped', () => {
    // Prepare: each unknown id's message used to list every path id of the plan.
    const plan = minimal();
    const path = (plan.paths as Json[])[0];
    plan.paths = Array.from({ length: 200 }, (_, i) => ({ ...path, id: `a-rather-long-path-identifier-${i}` }));
    plan.compare = Array.from({ length: 2_000 }, (_, i) => ({ path: `nope-${i}`, baseline: `none-${i}` }));

    // Act
    const problems = expectProblems(parsePlan(plan));

    // Assess
    expect(Math.max(...problems.map((p) => p.length))).toBeLessThan(600);
    expect(problems).toHaveLength(MAX_PROBLEM_LINES + 1);
    expect(problemCount(problems)).toBe(4_000);
    expect(problems[0]).toMatch(
      /^compare\[0\]\.path: "nope-0" is not a path of this plan \(paths: a-rather-long-path-identifier-0, .* and 190 more\)$/,
    );
    expect(problems.join('\n').length).toBeLessThan(60_000);
  });

  it('an unknown key of a megabyte is shown cut short', () => {
    // Prepare
    const plan = minimal();
    plan['k'.repeat(1_000_000)] = 1;

    // Act
    const problems = expectProblems(parsePlan(plan));

    // Assess
    expect(problems).toHaveLength(1);
    expect(problems[0].length).toBeLessThan(200);
  });

  it('below the cap every problem is listed and counted as it is', () => {
    const plan = minimal();
    for (let i = 0; i < 3; i++) plan[`x${i}`] = 1;
    const problems = expectProblems(parsePlan(plan));
    expect(problems).toEqual(['x0: unknown field "x0"', 'x1: unknown field "x1"', 'x2: unknown field "x2"']);
    expect(problemCount(problems)).toBe(3);
  });
});

describe('parsePlan: bounded numbers', () => {
  it('refuses a mesh round number beyond the rounds a mesh can have, naming the field', () => {
    // Prepare
    const plan = minimal();
    (plan.paths as Json[])[0].mesh = { from: 'us-east-1', to: 'eu-west-1', distanceKm: 5_000, round: 1e12 };

    // Act
    const problems = expectProblems(parsePlan(plan));

    // Assess
    expect(problems).toEqual(['paths[0].mesh.round: expected an integer 0–9999, got 1000000000000']);
  });

  it('says a budget of 1e400 (JSON reads it as Infinity) must be a finite number', () => {
    // Act
    const problems = expectProblems(parsePlanText('{"name":"x","paths":[],"budgetUsd":1e400}'));

    // Assess
    expect(problems).toContain('budgetUsd: expected a finite positive amount in USD, got Infinity');
  });

  it('says any number field given 1e400 must be finite, naming the field', () => {
    const text = JSON.stringify(minimal()).replace(/}$/, ',"regression":{"minAbsoluteMs":1e400}}');
    expect(expectProblems(parsePlanText(text))).toEqual([
      'regression.minAbsoluteMs: expected a finite number, got Infinity',
    ]);
  });

  it.each([
    ['0.5', '0.5 bit/s'],
    ['0.0001K', '0.1 bit/s'],
    ['99999999999999999999G', '1e+29 bit/s'],
    ['500G', '500000000000 bit/s'],
  ])(
    'refuses a UDP bitrate %s that iperf3 would round to 0 (unbounded) or that is beyond any NIC',
    (bitrate, shownRate) => {
      // Act
      const problems = expectProblems(parsePlan(withProbe({ kind: 'iperf3', mode: 'udp', bitrate })));

      // Assess
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^paths\[0\]\.probes\[0\]\.bitrate: /);
      expect(problems[0]).toContain(shownRate);
      expect(problems[0]).toContain('1 bit/s–400G');
    },
  );

  it('keeps "unbounded" as the one explicit way to UDP without a limit, and accepts sane rates', () => {
    for (const bitrate of ['unbounded', '1', '100K', '1.5M', '1G', '400G']) {
      const plan = expectOk(parsePlan(withProbe({ kind: 'iperf3', mode: 'udp', bitrate })));
      expect(plan.paths[0].probes[0]).toMatchObject({ kind: 'iperf3', bitrate });
    }
  });
});

describe('parsePlan: targets no measurement needs', () => {
  it.each([
    ['0.0.0.0', 'the unspecified address'],
    ['0.1.2.3', '"this network"'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['169.254.169.254', 'link-local'],
    ['169.254.1.1', 'link-local'],
    ['::', 'the unspecified address'],
    ['ff02::1', 'multicast'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', "AWS's instance services"],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
  ])('refuses %s (%s), naming the field', (host, why) => {
    // Act
    const problems = expectProblems(parsePlan(withTarget(host)));

    // Assess
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^paths\[0\]\.target\.host: /);
    expect(problems[0]).toContain(why);
  });

  it('accepts loopback, private, public and IPv6 unicast addresses and hostnames', () => {
    for (const host of ['127.0.0.1', '10.1.0.10', '192.168.1.2', '8.8.8.8', '::1', '2001:db8::1', 'localhost', 'a.b'])
      expectOk(parsePlan(withTarget(host)));
  });
});
