/**
 * The plan model: defaults, merging, and that every kind of bad input is reported with the
 * field's path and what is wrong — all problems at once.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPlanFile } from '../../cli/plan-file.js';
import { parseAgentSpec } from '../../core/agent-spec.js';
import { PlanInvalidError } from '../../core/errors.js';
import { isValidHost } from '../../core/fields.js';
import { formatProblems, parsePlan, requirePlan } from '../../core/plan.js';
import { probeNames } from '../../core/plan-checks.js';
import { cidrProblem } from '../../core/plan-input.js';
import { unpairedPaths } from '../../core/plan-resolve.js';
import { formatPath } from '../../core/zod-problems.js';
import { PROBE_KINDS } from '../../probes/index.js';
import { expectOk, expectProblems } from '../helpers/plans.js';
import { ROOT } from '../helpers/repo.js';

type Json = Record<string, unknown>;

/** The smallest valid plan; tests copy it and break one thing. */
function minimal(): Json {
  return {
    name: 'minimal',
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

function withPath(overrides: Json, base: Json = minimal()): Json {
  const paths = base.paths as Json[];
  return { ...base, paths: [{ ...paths[0], ...overrides }] };
}

describe('parsePlan: valid plans', () => {
  it('resolves a minimal plan with every default filled in', () => {
    // Prepare
    const input = minimal();

    // Act
    const plan = expectOk(parsePlan(input));

    // Assess
    expect(plan).toEqual({
      name: 'minimal',
      paths: [
        {
          id: 'A',
          label: 'A',
          client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
          target: { host: '10.1.0.10', port: 5201 },
          routes: [],
          probes: [{ kind: 'tcp-connect', name: 'tcp-connect', count: 300, intervalMs: 200, timeoutMs: 400 }],
          skipped: [],
          reboot: false,
          creditWaitSeconds: 0,
        },
      ],
    });
  });

  it('fills the defaults of every probe kind', () => {
    // Prepare
    const input = withPath({
      probes: [
        { kind: 'iperf3' },
        { kind: 'iperf3', mode: 'udp' },
        { kind: 'http' },
        { kind: 'sockperf' },
        { kind: 'mtu' },
      ],
    });

    // Act
    const probes = expectOk(parsePlan(input)).paths[0].probes;

    // Assess
    expect(probes).toEqual([
      {
        kind: 'iperf3',
        name: 'iperf3',
        mode: 'tcp',
        streams: 1,
        durationSeconds: 10,
        repeats: 1,
        intervalSeconds: 1,
      },
      {
        kind: 'iperf3',
        name: 'iperf3-2',
        mode: 'udp',
        streams: 1,
        durationSeconds: 10,
        repeats: 1,
        intervalSeconds: 1,
        bitrate: '1G',
      },
      {
        kind: 'http',
        name: 'http',
        count: 1000,
        concurrency: 1,
        keepAlive: true,
        payloadBytes: 1024,
        trials: 1,
        timeoutMs: 2000,
      },
      { kind: 'sockperf', name: 'sockperf', mode: 'udp', durationSeconds: 5, trials: 1 },
      { kind: 'mtu', name: 'mtu', min: 1200, max: 9001, timeoutMs: 1000 },
    ]);
  });

  it('merges defaults into paths; path values override, path probes replace the default list', () => {
    // Prepare
    const input = {
      name: 'merge test',
      defaults: {
        reboot: true,
        creditWaitSeconds: 600,
        client: { instanceId: 'i-default', region: 'ap-northeast-1' },
        probes: [{ kind: 'tcp-connect', count: 50 }, { kind: 'http' }],
      },
      paths: [
        { id: 'inherits', target: { host: 'a.example.com', port: 80 } },
        {
          id: 'overrides',
          label: 'Tokyo → Osaka (peering)',
          client: { instanceId: 'i-own', region: 'ap-northeast-3' },
          target: { host: '::1', port: 8080 },
          probes: [{ kind: 'mtu', max: 8500 }],
          reboot: false,
          creditWaitSeconds: 0,
          routes: [
            {
              region: 'ap-northeast-1',
              routeTableId: 'rtb-0abc',
              destination: '10.2.0.0/16',
              via: { vpcPeeringConnectionId: 'pcx-0123' },
            },
          ],
        },
      ],
    };

    // Act
    const [inherits, overrides] = expectOk(parsePlan(input)).paths;

    // Assess
    expect(inherits.reboot).toBe(true);
    expect(inherits.creditWaitSeconds).toBe(600);
    expect(inherits.client).toEqual({ instanceId: 'i-default', region: 'ap-northeast-1' });
    expect(inherits.probes.map((p) => [p.name, 'count' in p ? p.count : undefined])).toEqual([
      ['tcp-connect', 50],
      ['http', 1000],
    ]);
    expect(overrides.label).toBe('Tokyo → Osaka (peering)');
    expect(overrides.reboot).toBe(false);
    expect(overrides.creditWaitSeconds).toBe(0);
    expect(overrides.client).toEqual({ instanceId: 'i-own', region: 'ap-northeast-3' });
    expect(overrides.probes).toEqual([{ kind: 'mtu', name: 'mtu', min: 1200, max: 8500, timeoutMs: 1000 }]);
    expect(overrides.routes).toEqual([
      {
        region: 'ap-northeast-1',
        routeTableId: 'rtb-0abc',
        destination: '10.2.0.0/16',
        via: { vpcPeeringConnectionId: 'pcx-0123' },
      },
    ]);
  });

  it('names unnamed probes by kind, then kind-2, kind-3, and keeps explicit names', () => {
    // Prepare
    const input = withPath({
      probes: [
        { kind: 'iperf3', streams: 1 },
        { kind: 'tcp-connect' },
        { kind: 'iperf3', streams: 4 },
        { kind: 'iperf3', name: 'udp', mode: 'udp', bitrate: '500M' },
        { kind: 'iperf3', streams: 8 },
      ],
    });

    // Act
    const probes = expectOk(parsePlan(input)).paths[0].probes;

    // Assess
    expect(probes.map((p) => p.name)).toEqual(['iperf3', 'tcp-connect', 'iperf3-2', 'udp', 'iperf3-3']);
    expect(probes[3]).toMatchObject({ mode: 'udp', bitrate: '500M' });
  });

  it('does not hand out a default name that another probe took explicitly', () => {
    // Prepare
    const probes = [{ kind: 'http' }, { kind: 'http', name: 'http-2' }, { kind: 'http' }];

    // Act
    const names = probeNames(probes);

    // Assess
    expect(names).toEqual(['http', 'http-2', 'http-3']);
  });

  it('skips probes by name and by kind, keeping the reason', () => {
    // Prepare
    const input = withPath({
      probes: [{ kind: 'tcp-connect' }, { kind: 'iperf3' }, { kind: 'iperf3', mode: 'udp' }, { kind: 'mtu' }],
      skipProbes: [
        { probe: 'iperf3', reason: 'PrivateLink has no UDP listener' },
        { probe: 'mtu', reason: 'no ICMP through the NLB' },
        { probe: 'iperf3-2', reason: 'more specific reason wins' },
      ],
    });

    // Act
    const path = expectOk(parsePlan(input)).paths[0];

    // Assess
    expect(path.probes.map((p) => p.name)).toEqual(['tcp-connect']);
    expect(path.skipped).toEqual([
      { name: 'iperf3', kind: 'iperf3', reason: 'PrivateLink has no UDP listener' },
      { name: 'iperf3-2', kind: 'iperf3', reason: 'more specific reason wins' },
      { name: 'mtu', kind: 'mtu', reason: 'no ICMP through the NLB' },
    ]);
  });

  it('accepts every route target kind', () => {
    // Prepare
    const vias = [
      { vpcPeeringConnectionId: 'pcx-1' },
      { transitGatewayId: 'tgw-1' },
      { gatewayId: 'igw-1' },
      { natGatewayId: 'nat-1' },
      { networkInterfaceId: 'eni-1' },
      { vpcEndpointId: 'vpce-1' },
      { labNextHop: 'peering' },
    ];
    const input = withPath({
      routes: vias.map((via) => ({ region: 'ap-northeast-1', routeTableId: 'rtb-1', destination: '0.0.0.0/0', via })),
    });

    // Act
    const routes = expectOk(parsePlan(input)).paths[0].routes;

    // Assess
    expect(routes.map((r) => r.via)).toEqual(vias);
  });
});

describe('parsePlan: bad input', () => {
  it('reports an unknown probe kind with the allowed kinds', () => {
    // Prepare
    const input = withPath({ probes: [{ kind: 'tcp-connect' }, { kind: 'traceroute' }] });

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'paths[0].probes[1].kind: unknown probe kind "traceroute" (expected tcp-connect, iperf3, http, sockperf, mtu, pingpong, ping)',
    ]);
  });

  it('reports a probe without a kind', () => {
    const problems = expectProblems(parsePlan(withPath({ probes: [{ count: 3 }] })));
    expect(problems).toEqual([
      'paths[0].probes[0].kind: required (expected tcp-connect, iperf3, http, sockperf, mtu, pingpong, ping)',
    ]);
  });

  it('reports duplicate path ids naming both positions, also when other fields are bad', () => {
    // Prepare
    const base = minimal();
    const path = (base.paths as Json[])[0];
    const input = {
      ...base,
      paths: [path, { ...path, id: 'B' }, { ...path, id: 'C', target: { host: 'x', port: 0 } }, { ...path, id: 'A' }],
    };

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'paths[2].target.port: expected an integer ≥ 1, got 0',
      'paths[3].id: duplicate path id "A" (also paths[0])',
    ]);
  });

  it('reports path ids that differ only by case (they collide on case-insensitive disks)', () => {
    const base = minimal();
    const path = (base.paths as Json[])[0];
    const problems = expectProblems(parsePlan({ ...base, paths: [path, { ...path, id: 'a' }] }));
    expect(problems).toEqual(['paths[1].id: path id "a" differs from "A" (paths[0]) only by case']);
  });

  it.each([
    ['../x', '"../x"'],
    ['a b', '"a b"'],
    ["a'b", `"a'b"`],
    ['', 'an empty string'],
    ['-leading-dash', '"-leading-dash"'],
    ['x'.repeat(64), `"${'x'.repeat(57)}..."`],
  ])('reports the unsafe path id %j', (id, shown) => {
    // Act
    const problems = expectProblems(parsePlan(withPath({ id })));

    // Assess
    expect(problems).toEqual([
      `paths[0].id: expected a safe id (letters, digits, "-", "_", starting with a letter or digit, at most 63 characters), got ${shown}`,
    ]);
  });

  it.each([
    ['__proto__', '"__proto__"'],
    ['i.0123', '"i.0123"'],
    ['x'.repeat(64), `"${'x'.repeat(57)}..."`],
  ])('reports the client instance id %j, which would name objects, as unsafe', (instanceId, shown) => {
    // An EC2 instance id and a task client's service name stand for the client in object keys
    // (core/keys.ts): refused here, before ValidatePlan writes anything.
    const problems = expectProblems(parsePlan(withPath({ client: { instanceId, region: 'ap-northeast-1' } })));
    expect(problems).toEqual([
      `paths[0].client.instanceId: expected a safe id (letters, digits, "-", "_", starting with a letter or digit, at most 63 characters), got ${shown}`,
    ]);
    const task = { kind: 'ecs-task', cluster: 'c', service: instanceId, region: 'ap-northeast-1' };
    expect(expectProblems(parsePlan(withPath({ client: task })))).toEqual([
      `paths[0].client.service: expected a safe id (letters, digits, "-", "_", starting with a letter or digit, at most 63 characters), got ${shown}`,
    ]);
  });

  it('reports a path id of the wrong type', () => {
    const problems = expectProblems(parsePlan(withPath({ id: 7 })));
    expect(problems).toEqual(['paths[0].id: expected string, got number']);
  });

  it('reports a missing target and a missing client', () => {
    // Prepare
    const input = withPath({ target: undefined, client: undefined });

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'paths[0].client: required (set it on the path or in defaults.client)',
      'paths[0].target: required',
    ]);
  });

  it.each([
    ['a b', 'space'],
    ['host;rm -rf /', 'shell metacharacter'],
    ['$(id)', 'command substitution'],
    ['a/b', 'slash'],
    ['http://x', 'URL'],
    ['256.1.1.1', 'bad IPv4 octet'],
    ['-x.example', 'label starting with a dash'],
    ['fe80::1%eth0', 'IPv6 zone id'],
    ['', 'empty'],
  ])('rejects the target host %j (%s)', (host) => {
    const problems = expectProblems(parsePlan(withPath({ target: { host, port: 80 } })));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^paths\[0\]\.target\.host: expected a hostname or an IPv4\/IPv6 address, got /);
  });

  it.each([
    '127.0.0.1',
    '::1',
    '2001:db8::5',
    'localhost',
    'vpce-0abc-xyz.vpce-svc-1.ap-northeast-3.vpce.amazonaws.com',
  ])('accepts the target host %j', (host) => {
    expect(isValidHost(host)).toBe(true);
    expectOk(parsePlan(withPath({ target: { host, port: 80 } })));
  });

  it('reports negative and fractional waits, and an out-of-range port', () => {
    // Prepare
    const base = minimal();
    const path = (base.paths as Json[])[0];
    const input = {
      name: base.name,
      defaults: { creditWaitSeconds: 1.5 },
      paths: [
        { ...path, creditWaitSeconds: -5 },
        { ...path, id: 'B', creditWaitSeconds: 86_401 },
        { ...path, id: 'C', target: { host: 'x', port: 70000 } },
      ],
    };

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'defaults.creditWaitSeconds: expected an integer 0–86400, got 1.5',
      'paths[0].creditWaitSeconds: expected an integer ≥ 0, got -5',
      'paths[1].creditWaitSeconds: expected an integer 0–86400, got 86401',
      'paths[2].target.port: expected an integer 1–65535, got 70000',
    ]);
  });

  it('reports wrong types with what was expected and what was given', () => {
    // Prepare
    const input = withPath({
      reboot: 'yes',
      label: 5,
      routes: {},
      probes: [{ kind: 'http', keepAlive: 'true', count: '10', concurrency: null }, 'tcp-connect'],
    });

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'paths[0].probes[0].keepAlive: expected boolean, got string',
      'paths[0].probes[0].count: expected an integer 1–1000000, got string',
      'paths[0].probes[0].concurrency: expected an integer 1–1024, got null',
      'paths[0].probes[1]: expected object, got string',
      'paths[0].reboot: expected boolean, got string',
      'paths[0].label: expected string, got number',
      'paths[0].routes: expected array, got object',
    ]);
  });

  it('reports a plan that is not an object', () => {
    expect(expectProblems(parsePlan([]))).toEqual(['plan: expected object, got array']);
    expect(expectProblems(parsePlan(null))).toEqual(['plan: expected object, got null']);
  });

  it('reports empty and missing paths', () => {
    expect(expectProblems(parsePlan({ name: 'x', paths: [] }))).toEqual(['paths: at least one path is required']);
    expect(expectProblems(parsePlan({ name: 'x' }))).toEqual(['paths: required']);
  });

  it('reports a bad plan name', () => {
    const problems = expectProblems(parsePlan({ ...minimal(), name: 'bad/name' }));
    expect(problems).toEqual([
      'name: expected a plan name (1–100 letters, digits, spaces, "_", ".", "-", starting with a letter or digit), got "bad/name"',
    ]);
  });

  it('reports a route with no target and a route with two', () => {
    // Prepare
    const route = { region: 'ap-northeast-1', routeTableId: 'rtb-1', destination: '10.2.0.0/16' };
    const input = withPath({
      routes: [
        { ...route, via: {} },
        { ...route, via: { vpcPeeringConnectionId: 'pcx-1', transitGatewayId: 'tgw-1' } },
      ],
    });

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    const expected =
      'expected exactly one target (vpcPeeringConnectionId, transitGatewayId, gatewayId, natGatewayId, networkInterfaceId, vpcEndpointId, labNextHop)';
    expect(problems).toEqual([
      `paths[0].routes[0].via: ${expected}, got none`,
      `paths[0].routes[1].via: ${expected}, got 2 (vpcPeeringConnectionId, transitGatewayId)`,
    ]);
  });

  it('reports bad route fields: CIDR, unsafe ids, empty target id', () => {
    // Prepare
    const input = withPath({
      routes: [
        { region: 'ap northeast', routeTableId: 'rtb-1', destination: '10.2.0.0/33', via: { gatewayId: '' } },
        { region: 'r', routeTableId: 'rtb;x', destination: '10.2.0.1/16', via: { labNextHop: 'tgw' } },
      ],
    });

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'paths[0].routes[0].region: expected a non-empty id (letters, digits, ".", "_", "-", at most 128 characters), got "ap northeast"',
      'paths[0].routes[0].destination: expected an IPv4 CIDR such as "10.1.0.0/16", got "10.2.0.0/33"',
      'paths[0].routes[0].via.gatewayId: expected a non-empty id (letters, digits, ".", "_", "-", at most 128 characters), got an empty string',
      'paths[0].routes[1].routeTableId: expected a non-empty id (letters, digits, ".", "_", "-", at most 128 characters), got "rtb;x"',
      'paths[0].routes[1].destination: host bits are set in "10.2.0.1/16" (did you mean "10.2.0.0/16"?)',
    ]);
  });

  it.each([
    ['10.0.0.0/8', undefined],
    ['0.0.0.0/0', undefined],
    ['192.168.1.7/32', undefined],
    ['300.0.0.0/8', 'expected an IPv4 CIDR'],
    ['10.0.0.0', 'expected an IPv4 CIDR'],
    ['10.0.0.0/', 'expected an IPv4 CIDR'],
    ['010.0.0.0/8', 'expected an IPv4 CIDR'],
    ['fd00::/8', 'expected an IPv4 CIDR'],
    ['10.0.0.1/8', 'host bits are set'],
  ])('checks the CIDR %j', (cidr, problem) => {
    const result = cidrProblem(cidr);
    if (problem === undefined) expect(result).toBeUndefined();
    else expect(result).toContain(problem);
  });

  it('reports unknown fields at the top level, in defaults, in a path, in a probe and deeper', () => {
    // Prepare
    const base = minimal();
    const path = (base.paths as Json[])[0];
    const input = {
      name: base.name,
      nmae: 'typo',
      defaults: { reboot: false, rebot: true, client: { instanceId: 'i', region: 'r', az: 'x' } },
      paths: [
        {
          ...path,
          targte: { host: 'x', port: 1 },
          target: { host: 'x', port: 1, proto: 'tcp' },
          probes: [{ kind: 'tcp-connect', cuont: 5 }],
        },
      ],
    };

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'nmae: unknown field "nmae"',
      'defaults.rebot: unknown field "rebot"',
      'defaults.client.az: unknown field "az"',
      'paths[0].target.proto: unknown field "proto"',
      'paths[0].probes[0].cuont: unknown field "cuont"',
      'paths[0].targte: unknown field "targte"',
    ]);
  });

  it('checks options per probe kind: an option of another kind is unknown', () => {
    const problems = expectProblems(parsePlan(withPath({ probes: [{ kind: 'mtu', port: 80, count: 5 }] })));
    expect(problems).toEqual([
      'paths[0].probes[0].port: unknown field "port"',
      'paths[0].probes[0].count: unknown field "count"',
    ]);
  });

  it('reports probe option bounds, a bad mode, an mtu range and unbounded or malformed bitrates', () => {
    // Prepare
    const input = withPath({
      probes: [
        { kind: 'tcp-connect', count: 0, intervalMs: 60_001, timeoutMs: 0.5 },
        { kind: 'iperf3', mode: 'sctp', streams: 129, intervalSeconds: 0.05, bitrate: '0' },
        { kind: 'iperf3', bitrate: '1 Gbit' },
        { kind: 'http', payloadBytes: 104_857_601 },
        { kind: 'mtu', min: 9001, max: 1500 },
        { kind: 'mtu', min: 10 },
      ],
    });

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'paths[0].probes[0].count: expected an integer ≥ 1, got 0',
      'paths[0].probes[0].intervalMs: expected an integer 0–60000, got 60001',
      'paths[0].probes[0].timeoutMs: expected an integer 1–60000, got 0.5',
      'paths[0].probes[1].mode: expected "tcp" or "udp", got "sctp"',
      'paths[0].probes[1].streams: expected an integer 1–128, got 129',
      'paths[0].probes[1].intervalSeconds: expected a number 0.1–60, got 0.05',
      'paths[0].probes[1].bitrate: bitrate 0 means unbounded, which saturates the sender and measures the instance, not the path; give a rate such as "1G", or "unbounded" if that is what you want',
      'paths[0].probes[2].bitrate: expected an iperf3 bitrate such as "1G", "500M" or "100K" (or "unbounded"), got "1 Gbit"',
      'paths[0].probes[3].payloadBytes: expected an integer 0–104857600, got 104857601',
      'paths[0].probes[4].max: expected max > min (9001), got 1500',
      'paths[0].probes[5].min: expected an integer ≥ 68, got 10',
    ]);
  });

  it('reports duplicate and unsafe probe names, and a name that is another kind', () => {
    // Prepare
    const input = withPath({
      probes: [
        { kind: 'tcp-connect', name: 'quick' },
        { kind: 'http', name: 'quick' },
        { kind: 'http', name: 'bad name' },
        { kind: 'tcp-connect', name: 'http' },
      ],
    });

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'paths[0].probes[1].name: duplicate probe name "quick" (also paths[0].probes[0])',
      'paths[0].probes[2].name: expected a safe probe name (letters, digits, "-", "_", starting with a letter or digit, at most 63 characters), got "bad name"',
      'paths[0].probes[3].name: name "http" is a probe kind; use another name',
    ]);
  });

  it('reports a path left without probes', () => {
    // Prepare
    const base = minimal();
    const path = { ...(base.paths as Json[])[0], probes: undefined };
    const input = {
      ...base,
      paths: [path, { ...path, id: 'B', probes: [] }],
    };

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'paths[0].probes: required (set probes on the path or in defaults.probes)',
      'paths[1].probes: no probes (an empty list replaces defaults.probes)',
    ]);
  });

  it('reports a skip that matches nothing and a skip without a reason', () => {
    // Prepare
    const input = withPath({
      probes: [{ kind: 'tcp-connect' }, { kind: 'iperf3', name: 'tput' }],
      skipProbes: [
        { probe: 'http', reason: 'no listener' },
        { probe: 'tput', reason: '  ' },
        { probe: 'iperf3', reason: 'fine', why: 'extra' },
      ],
    });

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'paths[0].skipProbes[0].probe: "http" matches no probe name or kind in this path (probes: tcp-connect, tput)',
      'paths[0].skipProbes[1].reason: expected a non-empty reason (at most 500 characters)',
      'paths[0].skipProbes[2].why: unknown field "why"',
    ]);
  });

  it('reports several problems at once, grouped in the order they appear in the plan', () => {
    // Prepare
    const input = {
      name: 'several',
      defaults: { reboot: 'no', probes: [{ kind: 'traceroute' }] },
      paths: [
        {
          id: 'A',
          client: { instanceId: 'i', region: 'r' },
          target: { host: 'h', port: 70000 },
          creditWaitSeconds: -5,
        },
        { id: 'B', client: { instanceId: 'i', region: 'r' } },
        { id: 'A', client: { instanceId: 'i', region: 'r' }, target: { host: 'h', port: 1 }, reboot: 'yes' },
      ],
    };

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual([
      'defaults.reboot: expected boolean, got string',
      'defaults.probes[0].kind: unknown probe kind "traceroute" (expected tcp-connect, iperf3, http, sockperf, mtu, pingpong, ping)',
      'paths[0].target.port: expected an integer 1–65535, got 70000',
      'paths[0].creditWaitSeconds: expected an integer ≥ 0, got -5',
      'paths[1].target: required',
      'paths[2].id: duplicate path id "A" (also paths[0])',
      'paths[2].reboot: expected boolean, got string',
    ]);
  });

  it('reports a problem in shared defaults once, not once per path', () => {
    // Prepare
    const base = minimal();
    const path = { ...(base.paths as Json[])[0], probes: undefined };
    const input = {
      ...base,
      defaults: {
        probes: [
          { kind: 'http', name: 'x' },
          { kind: 'tcp-connect', name: 'x' },
        ],
      },
      paths: [path, { ...path, id: 'B' }],
    };

    // Act
    const problems = expectProblems(parsePlan(input));

    // Assess
    expect(problems).toEqual(['defaults.probes[1].name: duplicate probe name "x" (also defaults.probes[0])']);
  });
});

describe('requirePlan', () => {
  it('returns the resolved plan or throws PlanInvalidError with every problem', () => {
    // Act
    const plan = requirePlan(minimal());
    let thrown: unknown;
    try {
      requirePlan({ name: 'x', paths: [] });
    } catch (e: unknown) {
      thrown = e;
    }

    // Assess
    expect(plan.paths[0].id).toBe('A');
    expect(thrown).toBeInstanceOf(PlanInvalidError);
    expect((thrown as PlanInvalidError).name).toBe('PlanInvalidError');
    expect((thrown as PlanInvalidError).problems).toEqual(['paths: at least one path is required']);
  });
});

describe('formatting', () => {
  it('renders paths with dots and indices', () => {
    expect(formatPath(['paths', 2, 'routes', 0, 'via'])).toBe('paths[2].routes[0].via');
    expect(formatPath([])).toBe('plan');
    expect(formatPath(['paths', 0, 'a b'])).toBe('paths[0]["a b"]');
  });

  it('prints one problem a line under a count', () => {
    expect(formatProblems(['a: x', 'b: y'])).toBe('plan has 2 problems:\n  a: x\n  b: y');
    expect(formatProblems(['a: x'])).toBe('plan has 1 problem:\n  a: x');
  });
});

describe('example plans', () => {
  it('has local example plans, and every plans/local-*.json validates', async () => {
    // Prepare
    const files = (await readdir(path.join(ROOT, 'plans'))).filter(
      (f) => f.startsWith('local-') && f.endsWith('.json'),
    );

    // Act
    const results = await Promise.all(
      files.map(async (f) => [f, await loadPlanFile(path.join(ROOT, 'plans', f))] as const),
    );

    // Assess
    expect(files).toEqual(expect.arrayContaining(['local-loopback.json', 'local-all-probes.json']));
    for (const [file, result] of results) {
      expect(result.ok ? [] : result.problems.map((p) => `${file}: ${p}`)).toEqual([]);
    }
  });

  it('local-loopback resolves to the three loopback paths with the agreed probes', async () => {
    // Act
    const plan = expectOk(await loadPlanFile(path.join(ROOT, 'plans', 'local-loopback.json')));

    // Assess
    expect(plan.name).toBe('local-loopback');
    expect(
      plan.paths.map((p) => [
        p.id,
        p.label,
        p.target.host,
        p.target.port,
        p.client.instanceId,
        p.reboot,
        p.creditWaitSeconds,
      ]),
    ).toEqual([
      ['plain', 'plain listener', '127.0.0.1', 29101, 'local', false, 0],
      ['slow-accept', 'slow-accept listener (full accept queue)', '127.0.0.1', 29102, 'local', false, 0],
      ['closed', 'closed port (loss)', '127.0.0.1', 29103, 'local', false, 0],
    ]);
    const tcp = (count: number, intervalMs: number, timeoutMs: number) => [
      { kind: 'tcp-connect', name: 'tcp-connect', count, intervalMs, timeoutMs },
    ];
    expect(plan.paths.map((p) => p.probes)).toEqual([tcp(200, 10, 400), tcp(20, 100, 3500), tcp(200, 10, 400)]);
  });

  it('local-all-probes resolves one path with one probe of every kind', async () => {
    // Act
    const plan = expectOk(await loadPlanFile(path.join(ROOT, 'plans', 'local-all-probes.json')));

    // Assess
    expect(plan.name).toBe('local-all-probes');
    expect(plan.paths).toHaveLength(1);
    const [all] = plan.paths;
    expect([all.id, all.target]).toEqual(['all', { host: '127.0.0.1', port: 29101 }]);
    expect(all.probes).toEqual([
      { kind: 'tcp-connect', name: 'tcp-connect', count: 100, intervalMs: 5, timeoutMs: 400 },
      {
        kind: 'http',
        name: 'http',
        port: 29180,
        count: 500,
        concurrency: 1,
        keepAlive: true,
        payloadBytes: 1024,
        trials: 1,
        timeoutMs: 2000,
      },
      {
        kind: 'iperf3',
        name: 'iperf3',
        port: 29201,
        mode: 'tcp',
        streams: 1,
        durationSeconds: 3,
        repeats: 1,
        intervalSeconds: 1,
      },
      { kind: 'sockperf', name: 'sockperf', port: 29301, mode: 'udp', durationSeconds: 2, trials: 1 },
      { kind: 'mtu', name: 'mtu', min: 1200, max: 9001, timeoutMs: 1000 },
      {
        kind: 'pingpong',
        name: 'pingpong',
        port: 29401,
        mode: 'tcp',
        messageBytes: 16,
        count: 0,
        durationSeconds: 1,
        timeoutMs: 1000,
        wait: 'busy',
        trials: 1,
      },
      { kind: 'ping', name: 'ping', count: 50, intervalMs: 5, sizeBytes: 56, timeoutMs: 1000 },
    ]);
    expect(new Set(all.probes.map((p) => p.kind))).toEqual(new Set(PROBE_KINDS));
  });
});

describe('parseAgentSpec: the agent checks its spec with the probe schemas a plan resolves into', () => {
  function spec(overrides: Json = {}): Json {
    return {
      runId: 'run-1',
      pathId: 'A',
      target: { host: '10.1.0.10', port: 7000 },
      probes: [{ kind: 'tcp-connect', name: 'tcp-connect', count: 3, intervalMs: 10, timeoutMs: 100 }],
      skipped: [],
      ...overrides,
    };
  }
  function problems(input: unknown): string[] {
    const r = parseAgentSpec(input);
    if (r.ok) throw new Error('expected problems, the spec was accepted');
    return r.problems;
  }

  it('accepts every spec a plan resolves into, unchanged (all probe kinds, skipped probes)', () => {
    // Prepare: a plan with every kind and both skips, resolved as the pipeline does (specFor).
    const resolved = expectOk(
      parsePlan(
        withPath({
          probes: [
            { kind: 'tcp-connect' },
            { kind: 'iperf3', mode: 'udp' },
            { kind: 'http', port: 8080 },
            { kind: 'sockperf' },
            { kind: 'mtu' },
            { kind: 'tcp-connect', name: 'second' },
          ],
          skipProbes: [{ probe: 'mtu', reason: 'no ICMP' }],
        }),
      ),
    );
    const p = resolved.paths[0];
    const written = JSON.parse(
      JSON.stringify({ runId: 'run-1', pathId: p.id, target: p.target, probes: p.probes, skipped: p.skipped }),
    );
    // Act
    const r = parseAgentSpec(written);
    // Assess
    expect(r).toEqual({ ok: true, spec: written });
    expect(r.ok && r.spec.probes.map((x) => x.kind)).toEqual([
      'tcp-connect',
      'iperf3',
      'http',
      'sockperf',
      'tcp-connect',
    ]);
  });

  it('treats a missing skipped list as empty', () => {
    const { skipped: _, ...rest } = spec();
    expect(parseAgentSpec(rest)).toMatchObject({ ok: true, spec: { skipped: [] } });
  });

  it.each([
    [
      'an unsafe path id',
      spec({ pathId: '../etc' }),
      [
        'pathId: expected a safe id (letters, digits, "-", "_", starting with a letter or digit, at most 63 characters), got "../etc"',
      ],
    ],
    ['not an object', [], ['expected a JSON object, got array']],
    [
      'a bad target',
      spec({ target: { host: 'a b', port: 0 } }),
      [
        'target.host: expected a hostname or an IPv4/IPv6 address, got "a b"',
        'target.port: expected an integer ≥ 1, got 0',
      ],
    ],
    [
      'an unknown kind',
      spec({ probes: [{ kind: 'traceroute', name: 'traceroute' }] }),
      [
        'probes[0].kind: unknown probe kind "traceroute" (expected tcp-connect, iperf3, http, sockperf, mtu, pingpong, ping)',
      ],
    ],
    [
      'a missing or out-of-range option',
      spec({ probes: [{ kind: 'tcp-connect', name: 'a', count: -1, intervalMs: 10 }] }),
      ['probes[0].count: expected an integer ≥ 1, got -1', 'probes[0].timeoutMs: required'],
    ],
    [
      'a name used twice',
      spec({ probes: [spec().probes, spec().probes].flat() }),
      ['probes[1].name: duplicate probe name "tcp-connect" (also probes[0])'],
    ],
    ['an unknown field', spec({ extra: 1 }), ['extra: unknown field "extra"']],
    ['a bad skipped entry', spec({ skipped: [{ name: 'mtu' }] }), ['skipped[0].reason: required']],
  ])('rejects %s, naming the field', (_what, input, expected) => {
    expect(problems(input)).toEqual(expected);
  });
});

describe('parsePlan: compare', () => {
  const twoPaths = (compare?: unknown): Json => {
    const base = minimal();
    const a = (base.paths as Json[])[0];
    const plan: Json = {
      ...base,
      paths: [a, { ...a, id: 'B' }, { ...a, id: 'C' }],
    };
    if (compare !== undefined) plan.compare = compare;
    return plan;
  };

  it('defaults to every other path against the first, in plan order', () => {
    expect(expectOk(parsePlan(twoPaths())).compare).toEqual([
      { path: 'B', baseline: 'A' },
      { path: 'C', baseline: 'A' },
    ]);
  });

  it('has no comparisons for a one-path plan, and none when the plan lists none', () => {
    expect(expectOk(parsePlan(minimal())).compare).toBeUndefined();
    expect(expectOk(parsePlan(twoPaths([]))).compare).toBeUndefined();
  });

  it('keeps the comparisons a plan declares', () => {
    const compare = [
      { path: 'C', baseline: 'B' },
      { path: 'B', baseline: 'C' },
    ];
    expect(expectOk(parsePlan(twoPaths(compare))).compare).toEqual(compare);
  });

  it('refuses a path compared with itself', () => {
    expect(expectProblems(parsePlan(twoPaths([{ path: 'B', baseline: 'B' }])))).toEqual([
      'compare[0]: compares "B" with itself (its difference is 0 by construction); name another path as the baseline',
    ]);
  });

  it('reports unknown path ids, duplicates, unknown fields and bad types in compare', () => {
    const problems = expectProblems(
      parsePlan(
        twoPaths([
          { path: 'B', baseline: 'Z' },
          { path: 'X', baseline: 'A' },
          { path: 'B', baseline: 'Z' },
          { path: 'B', baseline: 'A', extra: 1 },
          { path: 7, baseline: 'A' },
        ]),
      ),
    );
    expect(problems).toEqual([
      'compare[0].baseline: "Z" is not a path of this plan (paths: A, B, C)',
      'compare[1].path: "X" is not a path of this plan (paths: A, B, C)',
      'compare[2]: duplicate comparison (also compare[0])',
      'compare[2].baseline: "Z" is not a path of this plan (paths: A, B, C)',
      'compare[3].extra: unknown field "extra"',
      'compare[4].path: expected string, got number',
    ]);
    expect(expectProblems(parsePlan(twoPaths({ path: 'B' })))).toEqual(['compare: expected array, got object']);
  });
});

describe('parsePlan: regression settings', () => {
  it("keeps a plan's regression floor, and has none when the plan sets none", () => {
    const plan = { ...minimal(), regression: { minAbsoluteMs: 0.1, minRelative: 0.1 } };
    expect(expectOk(parsePlan(plan)).regression).toEqual({ minAbsoluteMs: 0.1, minRelative: 0.1 });
    expect(expectOk(parsePlan(minimal())).regression).toBeUndefined();
    expect(expectOk(parsePlan({ ...minimal(), regression: {} })).regression).toBeUndefined();
  });

  it('reports a share outside 0–1, a negative floor and an unknown field', () => {
    const problems = expectProblems(
      parsePlan({ ...minimal(), regression: { minRelative: 5, minAbsoluteMs: -1, k: 2 } }),
    );
    expect(problems).toEqual([
      'regression.minRelative: expected a share between 0 and 1',
      'regression.minAbsoluteMs: expected milliseconds ≥ 0',
      'regression.k: unknown field "k"',
    ]);
  });
});

describe('parsePlan: regression.paired', () => {
  const client = { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' };
  const three = (over: Json = {}): Json => ({
    name: 'paired',
    defaults: { client, probes: [{ kind: 'http' }, { kind: 'tcp-connect' }] },
    paths: [
      { id: 'A', target: { host: '10.1.0.10', port: 8080 } },
      { id: 'B', target: { host: 'b.example.internal', port: 80 } },
      { id: 'C', target: { host: '10.3.0.10', port: 80 }, client: { ...client, instanceId: 'i-0fedcba9876543210' } },
    ],
    regression: { reference: 'A', paired: true },
    ...over,
  });

  it("gives every http probe of a path on the reference's client the reference's target; others stay unpaired", () => {
    const plan = expectOk(parsePlan(three()));
    expect(plan.regression).toEqual({ reference: 'A', paired: true });
    const pairs = plan.paths.map((p) => p.probes.map((x) => (x.kind === 'http' ? (x.pair ?? null) : 'n/a')));
    expect(pairs).toEqual([
      // the reference itself, and tcp-connect (one target per connect): not paired
      [null, 'n/a'],
      [{ path: 'A', host: '10.1.0.10', port: 8080 }, 'n/a'],
      // another client: the reference's target from another host is not the path's moments
      [null, 'n/a'],
    ]);
  });

  it('names the paths judged without the pair and why, for the run summary to say', () => {
    const plan = three();
    (plan.paths as Json[]).push({
      id: 'D',
      target: { host: '10.4.0.10', port: 80 },
      probes: [{ kind: 'tcp-connect' }],
    });
    expect(unpairedPaths(expectOk(parsePlan(plan)))).toEqual([
      { id: 'C', why: 'another client than "A"\'s' },
      { id: 'D', why: 'no http probe (only http probes pair)' },
    ]);
    // not paired at all, or no plan: nothing to say
    expect(unpairedPaths(expectOk(parsePlan(three({ regression: { reference: 'A' } }))))).toEqual([]);
    expect(unpairedPaths(undefined)).toEqual([]);
  });

  it("takes the port of the reference's same-named http probe when it sets one", () => {
    const plan = three();
    (plan.paths as Json[])[0].probes = [{ kind: 'http', port: 9090 }];
    expect(expectOk(parsePlan(plan)).paths[1].probes[0]).toMatchObject({ pair: { path: 'A', port: 9090 } });
  });

  it('refuses paired without a reference, and a pair written into a probe by hand', () => {
    expect(expectProblems(parsePlan(three({ regression: { paired: true } })))).toEqual([
      'regression.paired: needs regression.reference: the path whose target every other path measures beside its own',
    ]);
    const byHand = three({ regression: undefined });
    (byHand.defaults as Json).probes = [{ kind: 'http', pair: { path: 'A', host: 'x', port: 1 } }];
    expect(expectProblems(parsePlan(byHand))).toEqual([
      "defaults.probes[0].pair: set from the plan's regression.paired and reference, not written in a probe",
    ]);
  });
});

describe('parsePlan: the pingpong probe', () => {
  it('defaults wait to "busy" and passes "block" through to the agent spec unchanged', () => {
    // Prepare
    const input = withPath({ probes: [{ kind: 'pingpong' }, { kind: 'pingpong', mode: 'udp', wait: 'block' }] });

    // Act
    const p = expectOk(parsePlan(input)).paths[0];
    const written = JSON.parse(
      JSON.stringify({ runId: 'run-1', pathId: p.id, target: p.target, probes: p.probes, skipped: p.skipped }),
    );

    // Assess
    expect(p.probes).toEqual([
      {
        kind: 'pingpong',
        name: 'pingpong',
        mode: 'tcp',
        messageBytes: 16,
        durationSeconds: 5,
        count: 0,
        timeoutMs: 1000,
        wait: 'busy',
        trials: 1,
      },
      {
        kind: 'pingpong',
        name: 'pingpong-2',
        mode: 'udp',
        messageBytes: 16,
        durationSeconds: 5,
        count: 0,
        timeoutMs: 1000,
        wait: 'block',
        trials: 1,
      },
    ]);
    expect(parseAgentSpec(written)).toEqual({ ok: true, spec: written });
  });

  it('an agent spec without wait (written before the option) is still accepted', () => {
    const spec = {
      runId: 'run-1',
      pathId: 'A',
      target: { host: '10.1.0.10', port: 7000 },
      probes: [
        { kind: 'pingpong', name: 'pp', mode: 'tcp', messageBytes: 16, durationSeconds: 1, count: 0, timeoutMs: 100 },
      ],
      skipped: [],
    };
    expect(parseAgentSpec(spec)).toEqual({ ok: true, spec });
  });

  it('reports a bad wait naming the field, in a plan and in an agent spec', () => {
    const problems = expectProblems(parsePlan(withPath({ probes: [{ kind: 'pingpong', wait: 'spin' }] })));
    expect(problems).toEqual(['paths[0].probes[0].wait: expected "busy" or "block", got "spin"']);
    const r = parseAgentSpec({
      runId: 'run-1',
      pathId: 'A',
      target: { host: '10.1.0.10', port: 7000 },
      probes: [
        {
          kind: 'pingpong',
          name: 'pp',
          mode: 'tcp',
          messageBytes: 16,
          durationSeconds: 1,
          count: 0,
          timeoutMs: 100,
          wait: 1,
        },
      ],
      skipped: [],
    });
    expect(r).toMatchObject({ ok: false, problems: ['probes[0].wait: expected "busy" or "block", got 1'] });
  });
});

describe('parsePlan: within-path ratios', () => {
  const matrixPlan = (ratios: unknown, more: Json = {}): Json => ({
    name: 'ratios',
    defaults: {
      client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
      probes: [{ kind: 'http', name: 'http', matrix: { keepAlive: [true, false], concurrency: [1, 16] } }],
    },
    paths: [
      { id: 'A', target: { host: '10.0.0.1', port: 8080 } },
      { id: 'B', target: { host: '10.0.0.2', port: 8080 } },
      { id: 'L', target: { host: '10.0.0.3', port: 7000 }, probes: [{ kind: 'tcp-connect' }] },
    ],
    ratios,
    ...more,
  });

  it('resolves a ratio without a path to every path that has both cells, and one with a path to that path', () => {
    const plan = expectOk(
      parsePlan(
        matrixPlan([
          { probe: 'http-noka-c1-1k', baseline: 'http-ka-c1-1k' },
          { path: 'B', probe: 'http-ka-c16-1k', baseline: 'http-ka-c1-1k' },
        ]),
      ),
    );
    expect(plan.ratios).toEqual([
      { path: 'A', probe: 'http-noka-c1-1k', baseline: 'http-ka-c1-1k' },
      { path: 'B', probe: 'http-noka-c1-1k', baseline: 'http-ka-c1-1k' },
      { path: 'B', probe: 'http-ka-c16-1k', baseline: 'http-ka-c1-1k' },
    ]);
    expect(expectOk(parsePlan(matrixPlan(undefined))).ratios).toBeUndefined();
  });

  it('names unknown probes (with the probes there are), unknown paths, self-ratios and duplicates', () => {
    expect(
      expectProblems(
        parsePlan(
          matrixPlan([
            { probe: 'http-noka-c1-1m', baseline: 'http-ka-c1-1k' },
            { path: 'Z', probe: 'http-ka-c16-1k', baseline: 'http-ka-c1-1k' },
            { probe: 'http-ka-c1-1k', baseline: 'http-ka-c1-1k' },
            { path: 'L', probe: 'tcp-connect', baseline: 'http-ka-c1-1k' },
            { probe: 'tcp-connect', baseline: 'http-ka-c1-1k' },
            { probe: 'http-noka-c16-1k', baseline: 'http-ka-c16-1k' },
            { probe: 'http-noka-c16-1k', baseline: 'http-ka-c16-1k' },
          ]),
        ),
      ),
    ).toEqual([
      'ratios[0].probe: "http-noka-c1-1m" is not a probe of any path (probes: http-ka-c1-1k, http-ka-c16-1k, http-noka-c1-1k, http-noka-c16-1k, tcp-connect)',
      'ratios[1].path: "Z" is not a path of this plan (paths: A, B, L)',
      'ratios[2]: divides "http-ka-c1-1k" by itself (1 by construction); name another probe as the baseline',
      'ratios[3].baseline: "http-ka-c1-1k" is not a probe of path "L" (probes: tcp-connect)',
      'ratios[4]: no path has both "tcp-connect" and "http-ka-c1-1k"',
      'ratios[6]: duplicate ratio (also ratios[5])',
    ]);
  });

  it('takes a method per path and names the methods it knows', () => {
    const plan = expectOk(parsePlan(withPath({ method: 'transit-gateway' })));
    expect(plan.paths[0].method).toBe('transit-gateway');
    expect(expectProblems(parsePlan(withPath({ method: 'carrier-pigeon' })))[0]).toMatch(
      /^paths\[0\]\.method: expected one of same-vpc, vpc-peering, transit-gateway/,
    );
  });
});
