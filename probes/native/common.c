/* The helper's shared parts (common.h). */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int parse_long(const char *s, long min, long max, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > max) return -1;
  *out = v;
  return 0;
}

/* Milliseconds, decimals allowed (plans may ask for 0.5 ms gaps), to nanoseconds. */
int parse_ms(const char *s, double min, double max, long long *out_ns) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v >= min && v <= max)) return -1;
  *out_ns = (long long)(v * 1e6 + 0.5);
  return 0;
}

int valid_host(const char *h) {
  size_t n = strlen(h);
  if (n == 0 || n > 253 || h[0] == '-') return 0;
  for (size_t i = 0; i < n; i++) {
    char c = h[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
             c == ':' || c == '_';
    if (!ok) return 0;
  }
  return 1;
}

/* Same failure vocabulary as the Node probe (probes/tcp-connect/tcp-connect.runner.ts). */
void print_error(int err) {
  switch (err) {
    case ECONNREFUSED:
      fputs("refused", stdout);
      return;
    case ETIMEDOUT:
      fputs("timeout", stdout);
      return;
    case EHOSTUNREACH:
      fputs("host-unreachable", stdout);
      return;
    case ENETUNREACH:
      fputs("net-unreachable", stdout);
      return;
    case ECONNRESET:
      fputs("reset", stdout);
      return;
    case EADDRNOTAVAIL:
      fputs("ephemeral-ports-exhausted", stdout);
      return;
    default:
      break;
  }
  const char *code = NULL;
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 32)
  code = strerrorname_np(err);
#endif
  if (code == NULL) {
    printf("errno-%d", err);
    return;
  }
  for (const char *c = code; *c; c++) putchar(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
}

/*
 * Kernel software timestamps (pingpong.c, http-client.c): SO_TIMESTAMPING stamps each request as
 * the driver sends it (read back from the socket's error queue, matched by its send counter,
 * OPT_ID: datagrams for udp, bytes for tcp, from when the option was set; a TCP socket takes it
 * only once connected) and each reply as the stack receives it (a control message on the recvmsg
 * that reads it; for tcp the one that read the reply's last bytes). Their difference is the round
 * trip the network and the far end took, without this host's send and receive paths; the
 * probe's own figure minus it is this host's part. 1 when the socket takes them.
 */
int ts_enable(int fd) {
  int flags = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
              SOF_TIMESTAMPING_OPT_TSONLY | SOF_TIMESTAMPING_OPT_ID;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) == 0;
}

/* The software timestamp (CLOCK_REALTIME ns) in a message's control data, or -1. */
long long ts_of(struct msghdr *m) {
  for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPING) continue;
    struct scm_timestamping t;
    memcpy(&t, CMSG_DATA(c), sizeof t);
    if (t.ts[0].tv_sec != 0 || t.ts[0].tv_nsec != 0) return (long long)t.ts[0].tv_sec * 1000000000LL + t.ts[0].tv_nsec;
  }
  return -1;
}

/* recv() that also takes the reply's receive timestamp into *rx_ts when rx_ts is not NULL. */
ssize_t recv_ts(int fd, char *buf, size_t len, int flags, long long *rx_ts) {
  if (rx_ts == NULL) return recv(fd, buf, len, flags);
  char control[256];
  struct iovec iov = {.iov_base = buf, .iov_len = len};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
  ssize_t n = recvmsg(fd, &m, flags);
  if (n >= 0) *rx_ts = ts_of(&m);
  return n;
}

/*
 * The send timestamp of request number `id` (0-based, the socket's send counter) from the error
 * queue, or -1; read after the exchange, outside its timed window. Stamps of earlier sends (a
 * timed-out exchange's) are read and dropped on the way.
 */
long long tx_stamp(int fd, uint32_t id) {
  long long found = -1;
  for (;;) {
    char control[512];
    char data[64];
    struct iovec iov = {.iov_base = data, .iov_len = sizeof data};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return found;
    long long ts = ts_of(&m);
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
      if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
            (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)))
        continue;
      struct sock_extended_err e;
      memcpy(&e, CMSG_DATA(c), sizeof e);
      if (e.ee_origin == SO_EE_ORIGIN_TIMESTAMPING && e.ee_data == id) found = ts;
    }
  }
}
