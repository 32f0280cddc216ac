/**
 * The layering rules (docs/architecture.md, "Layers"), checked by `npm run layers` in `npm test`.
 *   functions/core   the pure domain: imports nothing of ours and nothing that touches the world
 *   agent/           runs on the client instance: imports only the core
 *   functions/       runs in Lambda: never the agent, the lab, the local runner, the CLI or infra
 *   lab/, local/     local stand-ins for AWS: may use functions/ and the agent, never the CLI;
 *                    local/ may use the lab's adapters, the lab never the local runner
 *   infra/           CDK: may use functions/ (wiring, adapters' constants), never lab/local/CLI
 *   test/            only tests import test helpers
 * No exemptions: a rule that needs one is a rule to change here, with its reason.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles anywhere.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-imports-nothing-of-ours',
      severity: 'error',
      comment: 'functions/core is the domain every other part shares; it depends on none of them.',
      from: { path: '^functions/core/' },
      to: { path: '^(agent|lab|local|cli|infra|scripts|test|functions/(?!core/))' },
    },
    {
      name: 'core-has-no-side-effects',
      severity: 'error',
      comment: "functions/core is pure: no disk, processes, sockets or threads (reading files is an adapter's job).",
      from: { path: '^functions/core/' },
      to: {
        dependencyTypes: ['core'],
        path: '^(node:)?(fs|fs/promises|child_process|http|https|http2|dgram|cluster|worker_threads|readline|tty)$',
      },
    },
    {
      name: 'agent-imports-only-core',
      severity: 'error',
      comment: 'The agent is bundled alone onto the client instance: besides itself, only the core.',
      from: { path: '^agent/' },
      to: { path: '^(lab|local|cli|infra|scripts|test|functions/(?!core/))' },
    },
    {
      name: 'functions-stay-in-lambda',
      severity: 'error',
      comment: 'functions/ is what runs in Lambda: never the agent, the lab, the local runner, the CLI or infra.',
      from: { path: '^functions/' },
      to: { path: '^(agent|lab|local|cli|infra|scripts|test)/' },
    },
    {
      name: 'lab-and-local-never-cli',
      severity: 'error',
      comment: 'The lab and the local runner are libraries the CLI drives, not the other way round.',
      from: { path: '^(lab|local)/' },
      to: { path: '^(cli|infra|scripts|test)/' },
    },
    {
      name: 'lab-never-local',
      severity: 'error',
      comment: "The local runner uses the lab's Fleet/Routes when a plan runs there; the lab never needs the runner.",
      from: { path: '^lab/' },
      to: { path: '^local/' },
    },
    {
      name: 'infra-never-local-code',
      severity: 'error',
      comment:
        'The CDK app deploys functions/ and the agent bundle; it has no use for the lab, the local runner or the CLI.',
      from: { path: '^infra/' },
      to: { path: '^(lab|local|cli|scripts|test)/' },
    },
    {
      name: 'test-code-only-in-tests',
      severity: 'error',
      from: { pathNot: '^test/' },
      to: { path: '^test/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|cdk\\.out|\\.pathbench)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mjs', '.js', '.cjs', '.json', '.d.ts'],
    },
  },
};
