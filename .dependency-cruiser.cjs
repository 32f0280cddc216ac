/**
 * The layering rules (docs/architecture.md, "Layers"), checked by `npm run layers` in `npm test`.
 *   core/          the pure domain every part shares: imports only core/ (and, for the documents
 *                  that embed probe specs, the probes' pure modules), nothing that touches the world
 *   probes/        one folder per probe kind. Pure modules (schemas, parsers, metrics, the
 *                  registry) import only core/ and other pure probe modules; the agent-side modules
 *                  (runners, the native helper, run-kit/) run on the client and may touch the world
 *   report/        renders a summary (table, Markdown, CSV, HTML): core/ and the pure probes only
 *   statemachine/  the ASL files' TypeScript owner: core/ only
 *   queries/       the SQL and its loader: core/ only
 *   agent/         runs on the client instance: core/, probes/ and itself
 *   functions/     runs in Lambda: never the agent, a probe's runner, the lab, the local runner,
 *                  the CLI or infra
 *   lab/, local/   local stand-ins for AWS: may use functions/ and the agent, never the CLI;
 *                  local/ may use the lab's adapters, the lab never the local runner
 *   infra/         CDK: may use functions/ (wiring, adapters' constants), never lab/local/CLI
 *   test/          only tests import test helpers
 * No exemptions: a rule that needs one is a rule to change here, with its reason.
 */

/** The probes' agent-side modules: they run tools and sockets on the client. */
const PROBE_AGENT_SIDE =
  '^probes/(native/|run-kit/|runners\\.ts$|[^/]+/[^/]+\\.runner\\.ts$|http/(http-wire|tcp-state)\\.ts$)';
const WORLD = '^(node:)?(fs|fs/promises|child_process|http|https|http2|dgram|cluster|worker_threads|readline|tty)$';

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
      name: 'core-imports-only-core-and-pure-probes',
      severity: 'error',
      comment: "core/ is the domain every other part shares; besides itself it may read only the probes' pure modules.",
      from: { path: '^core/' },
      to: { path: '^(agent|report|statemachine|queries|functions|lab|local|cli|infra|scripts|test)/' },
    },
    {
      name: 'core-never-probe-agent-side',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: PROBE_AGENT_SIDE },
    },
    {
      name: 'pure-layers-have-no-side-effects',
      severity: 'error',
      comment:
        "core/, the probes' pure modules, report/ and statemachine/ touch nothing: no disk, processes, sockets or threads (that is an adapter's job).",
      from: { path: '^(core|report|statemachine)/|^probes/', pathNot: PROBE_AGENT_SIDE },
      to: { dependencyTypes: ['core'], path: WORLD },
    },
    {
      name: 'pure-probes-import-core-and-pure-probes',
      severity: 'error',
      comment: "A probe's schema, parser and metric are shared by the agent, the pipeline and the CLI.",
      from: { path: '^probes/', pathNot: PROBE_AGENT_SIDE },
      to: {
        path: `${PROBE_AGENT_SIDE}|^(agent|report|statemachine|queries|functions|lab|local|cli|infra|scripts|test)/`,
      },
    },
    {
      name: 'probe-agent-side-imports-core-and-probes',
      severity: 'error',
      comment: 'The runners are bundled into the agent: besides the probes, only core/.',
      from: { path: PROBE_AGENT_SIDE },
      to: { path: '^(agent|report|statemachine|queries|functions|lab|local|cli|infra|scripts|test)/' },
    },
    {
      name: 'report-renders-only',
      severity: 'error',
      comment: 'report/ renders a summary it is given; it reads nothing and runs nothing.',
      from: { path: '^report/' },
      to: { path: `${PROBE_AGENT_SIDE}|^(agent|statemachine|queries|functions|lab|local|cli|infra|scripts|test)/` },
    },
    {
      name: 'statemachine-and-queries-need-only-core',
      severity: 'error',
      from: { path: '^(statemachine|queries)/' },
      to: { path: '^(agent|probes|report|functions|lab|local|cli|infra|scripts|test)/' },
    },
    {
      name: 'agent-imports-core-and-probes',
      severity: 'error',
      comment: 'The agent is bundled alone onto the client instance: besides itself, core/ and probes/.',
      from: { path: '^agent/' },
      to: { path: '^(report|statemachine|queries|functions|lab|local|cli|infra|scripts|test)/' },
    },
    {
      name: 'functions-stay-in-lambda',
      severity: 'error',
      comment:
        "functions/ is what runs in Lambda: never the agent, a probe's runner, the lab, the local runner, the CLI or infra.",
      from: { path: '^functions/' },
      to: { path: `${PROBE_AGENT_SIDE}|^(agent|lab|local|cli|infra|scripts|test)/` },
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
      name: 'charts-loaded-lazily',
      severity: 'error',
      comment:
        'ECharts is thousands of ES modules: html-charts.ts (its only importer) is reached by a dynamic import from report-html.ts, so commands that draw no chart never load it (test/cli/startup.test.ts checks what the CLI loads).',
      from: { pathNot: '^test/' },
      to: { path: '^report/html-charts\\.ts$', dependencyTypesNot: ['dynamic-import'] },
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
