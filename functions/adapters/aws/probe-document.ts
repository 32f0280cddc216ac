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
  specKey: `^specs/run=${RUN}/path=${PATH}/client=i-[0-9a-f]{8,17}/spec\\.json$`,
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
  specKey: 'S3 key of the agent spec (specs/run=<runId>/path=<id>/client=<instanceId>/spec.json)',
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
  'DEST="s3://{{ bucket }}/{{ rawPrefix }}"',
  'AGENT=""',
  'SYNC=""',
  'trap \'rm -rf "$WORK"\' EXIT',
  // Raw output is uploaded as it is produced: each file once it has not changed for 2 s (the
  // agent writes a trial's file when the trial ends), again if it changes. $WORK/sent/<file>
  // holds the size and mtime last uploaded. `sync_out all` uploads every file, settled or not.
  'sync_out() {',
  '  local f sig now',
  '  now="$(date +%s)"',
  '  while IFS= read -r -d "" f; do',
  '    sig="$(stat -c "%s %Y" "$WORK/out/$f")" || continue',
  '    if [ "$#" -eq 0 ] && [ "$((now - $(stat -c %Y "$WORK/out/$f")))" -lt 2 ]; then continue; fi',
  '    if [ -f "$WORK/sent/$f" ] && [ "$(cat "$WORK/sent/$f")" = "$sig" ]; then continue; fi',
  '    if aws s3 cp --only-show-errors "$WORK/out/$f" "$DEST$f"; then',
  '      mkdir -p "$(dirname "$WORK/sent/$f")"',
  '      printf "%s" "$sig" > "$WORK/sent/$f"',
  '    fi',
  '  done < <(cd "$WORK/out" 2>/dev/null && find . -type f -printf "%P\\0")',
  '}',
  // Files not uploaded as they are now: the trial in progress when the agent was stopped.
  'unsent() {',
  '  local f',
  '  while IFS= read -r -d "" f; do',
  '    if [ ! -f "$WORK/sent/$f" ] || [ "$(cat "$WORK/sent/$f")" != "$(stat -c "%s %Y" "$WORK/out/$f")" ]; then printf "%s\\n" "$f"; fi',
  '  done < <(cd "$WORK/out" 2>/dev/null && find . -type f -printf "%P\\0")',
  '}',
  // Execution timeout or cancel: SSM sends TERM. Stop the agent, upload what exists (the trial
  // in progress included, marked incomplete in interrupted.json), then let the EXIT trap clean up.
  'on_stop() {',
  '  trap - TERM INT',
  '  if [ -n "$SYNC" ]; then kill "$SYNC" 2>/dev/null || true; wait "$SYNC" 2>/dev/null || true; fi',
  '  if [ -n "$AGENT" ]; then',
  '    kill -TERM "$AGENT" 2>/dev/null || true',
  '    for _ in 1 2 3 4 5; do kill -0 "$AGENT" 2>/dev/null || break; sleep 1; done',
  '    kill -KILL "$AGENT" 2>/dev/null || true',
  '  fi',
  '  local incomplete',
  '  incomplete="$(unsent | sed \'s/.*/"&"/\' | paste -sd, -)"',
  '  sync_out all',
  '  printf \'{"signal":"TERM","at":"%s","incomplete":[%s]}\\n\' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$incomplete" > "$WORK/interrupted.json"',
  '  aws s3 cp --only-show-errors "$WORK/interrupted.json" "$DEST"interrupted.json || true',
  '  if [ -n "$(unsent)" ]; then',
  `    mkdir -p "${PENDING_DIR}"`,
  `    rm -rf "${PENDING_DIR}/{{ runId }}-{{ pathId }}"`,
  `    mv "$WORK/out" "${PENDING_DIR}/{{ runId }}-{{ pathId }}"`,
  `    echo "pathbench run={{ runId }} path={{ pathId }}: stopped; raw output not uploaded kept in ${PENDING_DIR}/{{ runId }}-{{ pathId }}" >&2`,
  '  fi',
  '  if [ -z "$incomplete" ]; then incomplete=none; fi',
  '  echo "pathbench run={{ runId }} path={{ pathId }}: stopped by TERM; incomplete: $incomplete" >&2',
  '  exit 143',
  '}',
  'trap on_stop TERM INT',
  'aws s3 cp --only-show-errors "s3://{{ agentBucket }}/{{ agentKey }}" "$WORK/agent.cjs"',
  'aws s3 cp --only-show-errors "s3://{{ bucket }}/{{ specKey }}" "$WORK/spec.json"',
  'mkdir -p "$WORK/out" "$WORK/sent"',
  // Stopping the loop stops its sleep too: no stray process keeps the command's output open.
  "( trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM; while :; do sleep 2 & wait $!; sync_out; done ) &",
  'SYNC=$!',
  // In the background so that TERM reaches the trap at once (bash runs traps between commands).
  '"$NODE" "$WORK/agent.cjs" run --spec "$WORK/spec.json" --out "$WORK/out" &',
  'AGENT=$!',
  'set +e',
  'wait "$AGENT"',
  'rc=$?',
  'set -e',
  'AGENT=""',
  'kill "$SYNC" 2>/dev/null || true',
  'wait "$SYNC" 2>/dev/null || true',
  'SYNC=""',
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
