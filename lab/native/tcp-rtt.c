/*
 * tcp-rtt: time TCP handshakes (connect() until writable) with CLOCK_MONOTONIC and print them
 * as a JSON array of milliseconds (null = failed or timed out).
 *
 * The lab calibrates and checks its delays with this rather than with Node: a Node connect
 * after an idle interval costs ~0.25 ms of JavaScript cold path on top of the network, which is
 * larger than the whole same-AZ round trip the lab must reproduce (0.21 ms).
 *
 * usage: tcp-rtt HOST PORT COUNT INTERVAL_MS TIMEOUT_MS
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: tcp-rtt HOST PORT COUNT INTERVAL_MS TIMEOUT_MS\n");
    return 2;
  }
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
  if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
    fprintf(stderr, "tcp-rtt: not an IPv4 address: %s\n", argv[1]);
    return 2;
  }
  /* Real-time priority so a busy machine's run queue does not end up in the round trip. */
  struct sched_param sp = {.sched_priority = 40};
  sched_setscheduler(0, SCHED_FIFO, &sp);
  int count = atoi(argv[3]);
  int interval = atoi(argv[4]);
  int timeout = atoi(argv[5]);
  printf("[");
  for (int i = 0; i < count; i++) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    double t0 = now_ms();
    int r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    int ok = r == 0;
    if (r < 0 && errno == EINPROGRESS) {
      struct pollfd p = {.fd = fd, .events = POLLOUT};
      if (poll(&p, 1, timeout) == 1) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        ok = err == 0;
      }
    }
    double dt = now_ms() - t0;
    /* Linger 0: reset instead of FIN so thousands of probes leave no TIME_WAIT behind. */
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
    if (i) printf(",");
    if (ok) printf("%.4f", dt);
    else printf("null");
    if (interval > 0 && i + 1 < count) {
      struct timespec ts = {interval / 1000, (long)(interval % 1000) * 1000000L};
      nanosleep(&ts, NULL);
    }
  }
  printf("]\n");
  return 0;
}
