/**
 * The boot script every testbed host runs: install the probe tools, fetch the agent bundle from
 * its asset, and keep the target servers up as systemd services (the agent's own, with the
 * pingpong echo server built by gcc, iperf3, and sockperf where it is packaged). The hosts have no internet
 * gateway; AL2023 package repositories and the asset bucket are reached through the S3 gateway
 * endpoint.
 */
import { TESTBED_PORTS } from './plan-from-outputs.js';

export interface UserDataInput {
  /** Region of the asset bucket (the stack's region). */
  region: string;
  bucket: string;
  key: string;
}

function unit(description: string, execStart: string): string {
  return [
    '[Unit]',
    `Description=${description}`,
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    `ExecStart=${execStart}`,
    'Restart=always',
    'RestartSec=2',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
  ].join('\n');
}

/**
 * The bash script. `bucket` and `key` may be CDK tokens; the script avoids `${` so the
 * resolved Fn::Join is never mistaken for an Fn::Sub pattern.
 */
export function hostUserData(input: UserDataInput): string {
  const { tcp, http, iperf3, sockperf, pingpong } = TESTBED_PORTS;
  return [
    '#!/bin/bash',
    'set -euxo pipefail',
    // nodejs20 is the AL2023 package for Node 20; older images only have "nodejs" (18).
    'dnf install -y iperf3 nodejs20 || dnf install -y iperf3 nodejs',
    // gcc builds the agent's native helper: the pingpong echo server here, the probes' timers
    // on a client (it is in the AL2023 repositories, reached through the S3 endpoint).
    'dnf install -y gcc || echo "pathbench: gcc is not installable here; the pingpong echo server will not start"',
    // sockperf is not in the AL2023 repositories today; the hosts have no internet to build it.
    'dnf install -y sockperf || echo "pathbench: sockperf is not packaged here; sockperf probes will fail on this host"',
    'NODE_BIN=$(command -v node-20 || command -v node)',
    'mkdir -p /opt/pathbench',
    `aws s3 cp --region ${input.region} "s3://${input.bucket}/${input.key}" /opt/pathbench/agent.cjs`,
    "cat > /etc/systemd/system/pathbench-target.service <<'UNIT'",
    unit(
      'pathbench target servers',
      `NODE_BIN /opt/pathbench/agent.cjs serve --tcp ${tcp} --http ${http} --pingpong ${pingpong}`,
    ),
    'UNIT',
    // The unit is written with a placeholder because systemd needs an absolute path.
    'sed -i "s|^ExecStart=NODE_BIN|ExecStart=$NODE_BIN|" /etc/systemd/system/pathbench-target.service',
    "cat > /etc/systemd/system/iperf3-server.service <<'UNIT'",
    unit('iperf3 server', `/usr/bin/iperf3 -s -p ${iperf3}`),
    'UNIT',
    'systemctl daemon-reload',
    'systemctl enable --now pathbench-target.service iperf3-server.service',
    'if command -v sockperf >/dev/null; then',
    "  cat > /etc/systemd/system/sockperf-udp.service <<'UNIT'",
    unit('sockperf server (UDP)', `/usr/bin/sockperf server -p ${sockperf}`),
    'UNIT',
    "  cat > /etc/systemd/system/sockperf-tcp.service <<'UNIT'",
    unit('sockperf server (TCP)', `/usr/bin/sockperf server --tcp -p ${sockperf}`),
    'UNIT',
    '  systemctl daemon-reload',
    '  systemctl enable --now sockperf-udp.service sockperf-tcp.service',
    'fi',
    '',
  ].join('\n');
}
