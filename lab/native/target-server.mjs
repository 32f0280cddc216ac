// Fallback lab target server, used only while the agent bundle (dist/agent.cjs) is not built:
// a TCP listener that accepts and closes, and an HTTP server answering 200 with a small body.
// Same flags as `agent serve`: --host H --tcp PORT --http PORT --ready-file F; prints "ready".
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const host = opt('--host', '0.0.0.0');
const tcpPort = Number(opt('--tcp', '7000'));
const httpPort = Number(opt('--http', '8080'));
const readyFile = opt('--ready-file', '');

const body = Buffer.alloc(1024, 'x');
const tcp = net.createServer((s) => {
  s.on('error', () => {});
  s.end();
});
const web = http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
  res.end(body);
});
let pending = 2;
const up = () => {
  pending -= 1;
  if (pending > 0) return;
  if (readyFile) writeFileSync(readyFile, `${process.pid}\n`);
  process.stdout.write('ready\n');
};
tcp.listen(tcpPort, host, up);
web.listen(httpPort, host, up);
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
