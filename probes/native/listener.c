/*
 * The quiet listener (`tcping --listen ADDRESS PORT`) for calibration and benches: it accepts
 * in batches every LISTEN_DRAIN_MS instead of on every connection, so no process wake-up (an
 * IPI, a preemption) lands inside the loopback handshake being timed — a listener that wakes
 * per connection adds 20–40 µs here that is not the probe's cost. The kernel completes
 * handshakes without it. Prints {"port":N} once; exits when its parent goes away or on SIGTERM.
 */
#define _GNU_SOURCE
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LISTEN_DRAIN_MS 20

int run_listener(const char *host, const char *port_s) {
  long port;
  if (!valid_host(host) || parse_long(port_s, 0, 65535, &port)) {
    fprintf(stderr, "usage: tcping --listen ADDRESS PORT (PORT 0 = ephemeral)\n");
    return 2;
  }
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  int gai = getaddrinfo(host, port_s, &hints, &res);
  if (gai != 0 || res == NULL) {
    fprintf(stderr, "tcping: --listen needs a numeric address: %s\n", gai_strerror(gai));
    return 2;
  }
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 4096) != 0) {
    fprintf(stderr, "tcping: --listen %s %s: %s\n", host, port_s, strerror(errno));
    return 3;
  }
  freeaddrinfo(res);
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  getsockname(fd, (struct sockaddr *)&ss, &len);
  int bound =
      ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
  printf("{\"port\":%d}\n", bound);
  fflush(stdout);
  pid_t parent = getppid();
  struct timespec nap = {.tv_sec = 0, .tv_nsec = LISTEN_DRAIN_MS * 1000000L};
  for (;;) {
    nanosleep(&nap, NULL);
    int c;
    while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) close(c);
    if (getppid() != parent) return 0;
  }
}
