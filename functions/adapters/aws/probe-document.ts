/**
 * The SSM Command document that runs the probe agent on a client instance, and the patterns of
 * its parameters. CDK deploys this content; SsmCommandRunner checks every parameter against the
 * same patterns before sending, so what SSM would reject is caught with a clear message first.
 * Only these pattern-checked parameters reach the shell: no plan field is ever interpolated.
 */

const RUN = '[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}';
const PATH = '[A-Za-z0-9][A-Za-z0-9_-]{0,62}';
const BUCKET = '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$';
const SEGMENT = '[A-Za-z0-9_-]{1,128}(\\.[A-Za-z0-9_-]{1,128}){0,8}';

/** Where raw output that could not be uploaded is kept on the client, per run and path. */
export const PENDING_DIR = '/var/lib/pathbench/pending';

/** Parameter name → allowedPattern (anchored). Keep free of shell metacharacters. */
export const PROBE_DOCUMENT_PATTERNS = {
  bucket: BUCKET,
  specKey: `^specs/run=${RUN}/path=${PATH}/spec\\.json$`,
  rawPrefix: `^raw/path=${PATH}/run=${RUN}/client=i-[0-9a-f]{8,17}/$`,
  runId: `^${RUN}$`,
  pathId: `^${PATH}$`,
  agentBucket: BUCKET,
  // CDK asset keys are "<sha256>.cjs". Segments are words joined by single dots, so no
  // segment can be "." or ".." and no key can start with "/" or contain "//".
  agentKey: `^${SEGMENT}(/${SEGMENT})*\\.cjs$`,
  executionTimeout: '^[1-9][0-9]{1,4}$',
} as const;

export type ProbeDocumentParameter = keyof typeof PROBE_DOCUMENT_PATTERNS;

const DESCRIPTIONS: Record<ProbeDocumentParameter, string> = {
  bucket: 'pathbench data bucket',
  specKey: 'S3 key of the agent spec (specs/run=<runId>/path=<id>/spec.json)',
  rawPrefix: 'S3 prefix the raw outputs are uploaded to (raw/path=<id>/run=<runId>/client=<instanceId>/)',
  runId: 'run id',
  pathId: 'path id',
  agentBucket: 'bucket of the agent bundle asset',
  agentKey: 'S3 key of the agent bundle asset',
  executionTimeout: 'hard limit for the whole command, seconds',
};

/** Shell lines; `{{ name }}` is replaced by SSM with a value that matched its pattern. */
const SCRIPT = [
  'set -euo pipefail',
  // AL2023 ships Node 20 as nodejs20 (binary node-20); older images may have a plain node.
  'NODE="$(command -v node-22 || command -v node-20 || command -v node || true)"',
  'if [ -z "$NODE" ]; then dnf install -y -q nodejs20 >/dev/null; NODE="$(command -v node-20 || command -v node)"; fi',
  'command -v iperf3 >/dev/null 2>&1 || dnf install -y -q iperf3 >/dev/null',
  // gcc builds the precise tcp-connect helper; without it the agent falls back to the Node
  // probe and records why, so a failed install must not stop the run.
  'command -v gcc >/dev/null 2>&1 || dnf install -y -q gcc >/dev/null 2>&1 || echo "gcc unavailable: tcp-connect uses the Node probe"',
  'WORK="$(mktemp -d /tmp/pathbench.XXXXXX)"',
  'trap \'rm -rf "$WORK"\' EXIT',
  'aws s3 cp --only-show-errors "s3://{{ agentBucket }}/{{ agentKey }}" "$WORK/agent.cjs"',
  'aws s3 cp --only-show-errors "s3://{{ bucket }}/{{ specKey }}" "$WORK/spec.json"',
  'mkdir -p "$WORK/out"',
  'set +e',
  '"$NODE" "$WORK/agent.cjs" run --spec "$WORK/spec.json" --out "$WORK/out"',
  'rc=$?',
  'set -e',
  // Upload whatever exists even when the agent failed: nothing measured is lost. A failed
  // upload is retried; if it keeps failing the output is moved out of $WORK (which the EXIT
  // trap deletes) to a pending directory, so it can still be uploaded by hand.
  'uploaded=0',
  'for attempt in 1 2 3; do',
  '  if aws s3 cp --only-show-errors --recursive "$WORK/out/" "s3://{{ bucket }}/{{ rawPrefix }}"; then uploaded=1; break; fi',
  '  if [ "$attempt" -lt 3 ]; then sleep "$((attempt * 5))"; fi',
  'done',
  'if [ "$uploaded" != 1 ]; then',
  `  PENDING="${PENDING_DIR}/{{ runId }}-{{ pathId }}"`,
  `  mkdir -p "${PENDING_DIR}"`,
  '  rm -rf "$PENDING"',
  '  mv "$WORK/out" "$PENDING"',
  '  echo "pathbench run={{ runId }} path={{ pathId }}: upload to s3://{{ bucket }}/{{ rawPrefix }} failed 3 times; raw output kept in $PENDING (agent exit $rc)" >&2',
  '  exit 75',
  'fi',
  'echo "pathbench run={{ runId }} path={{ pathId }} agent exit $rc"',
  'exit $rc',
];

/** The document content (schemaVersion 2.2) as CloudFormation's CfnDocument expects it. */
export function probeDocumentContent(): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  for (const [name, pattern] of Object.entries(PROBE_DOCUMENT_PATTERNS)) {
    parameters[name] = {
      type: 'String',
      description: DESCRIPTIONS[name as ProbeDocumentParameter],
      allowedPattern: pattern,
      ...(name === 'executionTimeout' ? { default: '3600' } : {}),
    };
  }
  return {
    schemaVersion: '2.2',
    description: 'pathbench: run the probe agent for one path and upload its raw output',
    parameters,
    mainSteps: [
      {
        action: 'aws:runShellScript',
        name: 'runProbeAgent',
        precondition: { StringEquals: ['platformType', 'Linux'] },
        inputs: { timeoutSeconds: '{{ executionTimeout }}', runCommand: SCRIPT },
      },
    ],
  };
}

/** Throws with the parameter's name when a value does not match its pattern. */
export function checkProbeParameters(values: Record<ProbeDocumentParameter, string>): void {
  for (const [name, pattern] of Object.entries(PROBE_DOCUMENT_PATTERNS)) {
    const v = values[name as ProbeDocumentParameter];
    if (!new RegExp(pattern).test(v)) {
      throw new Error(`probe command parameter ${name} does not match ${pattern}: ${JSON.stringify(v)}`);
    }
  }
}
