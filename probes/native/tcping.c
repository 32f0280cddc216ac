/*
 * tcping — pathbench's precise probe helper, compiled on the client by the agent
 * (probes/native/tcping.ts) from this directory's C files, all in one gcc call:
 *   common.h, common.c   the clock, argument parsing, the failure vocabulary
 *   tcp-connect.c        the tcp-connect timer (why it exists, how it times a handshake)
 *   listener.c           the quiet loopback listener for calibration
 *   http-client.c        the http probe's client
 *   pingpong.c           the pingpong probe's client and its TCP/UDP echo server
 *   tcping.c             this file: the command line
 *
 * Input is argv only (never a shell):
 *   tcping HOST PORT COUNT INTERVAL_MS TIMEOUT_MS [kernel|app]   run a series (default kernel)
 *   tcping --listen ADDRESS PORT                                  quiet listener (calibration)
 *   tcping --http ADDRESS PORT HOST PATH COUNT TIMEOUT_MS keepalive|close WARMUP CONCURRENCY
 *                                                                 the http probe (concurrency ≤ 64)
 *   tcping --pingpong HOST PORT tcp|udp|tcp-rr REQ_BYTES RESP_BYTES DURATION_S COUNT TIMEOUT_MS [busy|block]
 *                                                                 the pingpong probe (pingpong.c)
 *   tcping --echo ADDRESS PORT                                    the pingpong target (TCP + UDP)
 * Output: one JSON line per attempt (tcp-connect.c) or request (http-client.c) on stdout; the
 * pingpong probe writes one CSV line per exchange (pingpong.c).
 * Exit status: 0 after all attempts (failed attempts are data), 2 for bad arguments, 3 when
 * the target cannot be resolved or a socket cannot be created.
 */
#define _GNU_SOURCE
#include "common.h"

#include <string.h>

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--listen") == 0) return run_listener(argv[2], argv[3]);
  if (argc >= 2 && strcmp(argv[1], "--http") == 0) return run_http(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "--pingpong") == 0) return run_pingpong(argc, argv);
  if (argc == 4 && strcmp(argv[1], "--echo") == 0) return run_echo(argv[2], argv[3]);
  return run_tcp_connect(argc, argv);
}
