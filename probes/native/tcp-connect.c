/*
 * The tcp-connect timer (`tcping HOST PORT COUNT INTERVAL_MS TIMEOUT_MS [kernel|app]`).
 *
 * Why it exists: a Node or Python connect loop adds 40–110 µs of its own (idle wake-up,
 * event-loop dispatch) to every sample, half of a same-AZ round trip. This helper measures
 * the handshake, not itself:
 *   - Slots are absolute CLOCK_MONOTONIC times. It sleeps (clock_nanosleep TIMER_ABSTIME) until
 *     ~200 µs before a slot, then warms the kernel's TCP path with one throwaway handshake to
 *     its own loopback listener, then spins until the slot. Measured here: after 2–10 ms of
 *     idle the first connect() runs on cold caches and the kernel's own handshake time grows
 *     from ~3 µs to 12–22 µs; spinning alone does not help (it warms user code only), the
 *     warm-up handshake does.
 *   - The socket is created and configured before the slot, outside the timed window.
 *   - connect() is nonblocking; completion is busy-polled (poll, zero timeout) and timed with
 *     CLOCK_MONOTONIC ("app" time). SO_ERROR classifies failures; a timeout is a failed sample.
 *   - TCP_INFO right after the handshake gives the kernel's SYN→SYN-ACK RTT (tcpi_rtt, µs;
 *     with a single sample the smoothed RTT is that sample). It holds no user-space cost and
 *     is immune to this process being descheduled while it waits, so it is the primary value
 *     by default (clock "kernel-tcpi_rtt"). When the kernel has no clean sample (SYN
 *     retransmitted, Karn's rule) the sample falls back to app time and says so in "clock".
 * Sockets are closed with SO_LINGER {1,0} (an RST) after the sample is taken: the client never
 * accumulates TIME_WAIT entries across hundreds of probes (seed 002 lost its ephemeral ports
 * that way) and the server keeps no half-closed state. Same choice as the Node probe.
 *
 * Output: one JSON line per attempt on stdout, flushed after each line:
 *   {"seq":1,"t_start":…,"t_end":…,"ok":true,"rtt_ms":…,"clock":"kernel-tcpi_rtt",
 *    "kernel_rtt_us":…,"app_rtt_ms":…,"connect_call_us":…}
 * connect_call_us is the time spent inside the nonblocking connect() call itself: what a tool
 * that starts its clock when connect() returns (nping does) leaves out of the round trip. On a
 * real NIC it is a few µs; in a veth lab the sender's kernel also forwards the SYN through the
 * emulated router inside that call, so there it is tens of µs.
 * t_start/t_end are epoch milliseconds: CLOCK_REALTIME read just before connect() plus the
 * monotonic duration.
 */
#define _GNU_SOURCE
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SPIN_BEFORE_SLOT_NS
#define SPIN_BEFORE_SLOT_NS 200000LL
#endif

static int open_socket(int family) {
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) return -1;
  struct linger lg = {.l_onoff = 1, .l_linger = 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

/* ---- warm-up: one loopback handshake to a listener of our own, never to the target ---- */
static int warm_fd = -1;
static struct sockaddr_in warm_addr;

static void warm_setup(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  memset(&warm_addr, 0, sizeof warm_addr);
  warm_addr.sin_family = AF_INET;
  warm_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof warm_addr;
  if (bind(fd, (struct sockaddr *)&warm_addr, sizeof warm_addr) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, (struct sockaddr *)&warm_addr, &len) != 0) {
    /* No loopback (a bare namespace): measuring still works, only less warm. */
    fprintf(stderr, "tcping: note: loopback warm-up unavailable (%s)\n", strerror(errno));
    close(fd);
    return;
  }
  warm_fd = fd;
}

static void warm_stack(void) {
  if (warm_fd < 0) return;
  int w = open_socket(AF_INET);
  if (w < 0) return;
  if (connect(w, (struct sockaddr *)&warm_addr, sizeof warm_addr) != 0 && errno == EINPROGRESS) {
    struct pollfd p = {.fd = w, .events = POLLOUT};
    poll(&p, 1, 0);
  }
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  getsockopt(w, IPPROTO_TCP, TCP_INFO, &ti, &len);
  close(w);
  int c;
  while ((c = accept4(warm_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) close(c);
}

/* Sleep (absolute, so the schedule never drifts) until the spin window before target_ns. */
static void sleep_until_window(long long target_ns) {
  long long wake = target_ns - SPIN_BEFORE_SLOT_NS;
  if (wake > now_ns(CLOCK_MONOTONIC)) {
    struct timespec ts = {.tv_sec = wake / 1000000000LL, .tv_nsec = wake % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
  }
}

static void spin_until(long long target_ns) {
  while (now_ns(CLOCK_MONOTONIC) < target_ns) {
  }
}

/* Run a series; argv is tcping's own (argv[1] is HOST). Exit status as tcping.c says. */
int run_tcp_connect(int argc, char **argv) {
  if (argc < 6 || argc > 7) {
    fprintf(stderr, "usage: tcping HOST PORT COUNT INTERVAL_MS TIMEOUT_MS [kernel|app]\n");
    return 2;
  }
  long port, count;
  long long interval_ns, timeout_ns;
  if (!valid_host(argv[1])) {
    fprintf(stderr, "tcping: invalid host \"%s\" (letters, digits, . - : _ only)\n", argv[1]);
    return 2;
  }
  if (parse_long(argv[2], 1, 65535, &port) || parse_long(argv[3], 1, 10000000, &count) ||
      parse_ms(argv[4], 0, 3600000, &interval_ns) || parse_ms(argv[5], 0.001, 600000, &timeout_ns)) {
    fprintf(stderr, "tcping: PORT 1-65535 and COUNT 1-10000000 (integers), INTERVAL_MS 0-3600000, TIMEOUT_MS 0.001-600000\n");
    return 2;
  }
  int primary_kernel = 1;
  if (argc == 7) {
    if (strcmp(argv[6], "app") == 0)
      primary_kernel = 0;
    else if (strcmp(argv[6], "kernel") != 0) {
      fprintf(stderr, "tcping: PRIMARY must be kernel or app\n");
      return 2;
    }
  }

  /* Resolve once, before any timing: DNS is not part of a handshake. */
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  int gai = getaddrinfo(argv[1], argv[2], &hints, &res);
  if (gai != 0 || res == NULL) {
    fprintf(stderr, "tcping: cannot resolve %s: %s\n", argv[1], gai_strerror(gai));
    return 3;
  }

  warm_setup();
  /* First slot slightly in the future so the first sample is prepared like the others. */
  long long base = now_ns(CLOCK_MONOTONIC) + 1000000LL;
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);

  for (long seq = 1; seq <= count; seq++) {
    long long slot = base + (seq - 1) * interval_ns;
    /* One handshake at a time keeps the core dedicated to it; an attempt that outlasted its
       slot (a timeout longer than the interval) shifts the schedule instead of firing a burst. */
    long long late = now_ns(CLOCK_MONOTONIC) - slot;
    if (late > 0) {
      base += late;
      slot += late;
    }
    sleep_until_window(slot);
    int fd = open_socket(res->ai_family);
    if (fd < 0) {
      fprintf(stderr, "tcping: socket: %s\n", strerror(errno));
      freeaddrinfo(res);
      return 3;
    }
    warm_stack();
    spin_until(slot);

    long long rt0 = now_ns(CLOCK_REALTIME);
    long long m0 = now_ns(CLOCK_MONOTONIC);
    int rc = connect(fd, res->ai_addr, res->ai_addrlen);
    long long mc = now_ns(CLOCK_MONOTONIC);
    int err = 0;
    long long m1;
    if (rc == 0) {
      m1 = now_ns(CLOCK_MONOTONIC);
    } else if (errno != EINPROGRESS) {
      err = errno;
      m1 = now_ns(CLOCK_MONOTONIC);
    } else {
      struct pollfd p = {.fd = fd, .events = POLLOUT};
      for (;;) {
        int n = poll(&p, 1, 0);
        m1 = now_ns(CLOCK_MONOTONIC);
        if (n > 0) {
          socklen_t len = sizeof err;
          if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
          break;
        }
        if (n < 0 && errno != EINTR) {
          err = errno;
          break;
        }
        if (m1 - m0 >= timeout_ns) {
          err = ETIMEDOUT;
          break;
        }
      }
    }

    long long kernel_rtt_us = -1;
    if (err == 0) {
      struct tcp_info ti;
      socklen_t len = sizeof ti;
      memset(&ti, 0, sizeof ti);
      /* Only a clean first sample is the handshake: no SYN retransmission (Karn), non-zero. */
      if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 && ti.tcpi_rtt > 0 && ti.tcpi_total_retrans == 0)
        kernel_rtt_us = ti.tcpi_rtt;
    }
    close(fd);

    double app_ms = (double)(m1 - m0) / 1e6;
    double t_start = (double)rt0 / 1e6;
    double t_end = t_start + app_ms;
    int use_kernel = primary_kernel && kernel_rtt_us >= 0;
    const char *clk = use_kernel ? "kernel-tcpi_rtt" : "tcping-monotonic";
    printf("{\"seq\":%ld,\"t_start\":%.4f,\"t_end\":%.4f,", seq, t_start, t_end);
    if (err == 0) {
      printf("\"ok\":true,\"rtt_ms\":%.6f,\"clock\":\"%s\"", use_kernel ? (double)kernel_rtt_us / 1e3 : app_ms, clk);
      if (kernel_rtt_us >= 0) printf(",\"kernel_rtt_us\":%lld", kernel_rtt_us);
    } else {
      fputs("\"ok\":false,\"rtt_ms\":null,\"error\":\"", stdout);
      print_error(err);
      printf("\",\"clock\":\"%s\"", clk);
    }
    printf(",\"app_rtt_ms\":%.6f,\"connect_call_us\":%.3f}\n", app_ms, (double)(mc - m0) / 1e3);
    /* Flushed between slots, outside the timed window, so a killed run keeps what it measured. */
    fflush(stdout);
  }
  freeaddrinfo(res);
  return 0;
}
