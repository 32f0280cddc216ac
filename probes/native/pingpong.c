/*
 * The ping-pong probe's client and its echo server (tcping.c has the command line).
 *
 * Client: `tcping --pingpong HOST PORT tcp|udp|tcp-rr REQ_BYTES RESP_BYTES DURATION_S COUNT TIMEOUT_MS [busy|block]`
 * One exchange at a time, back to back (like `sockperf ping-pong` and netperf TCP_RR): send the
 * request, read the whole response, next. Timing:
 *   - CLOCK_MONOTONIC, read just before send() and right after the last byte of the response
 *     arrived; the difference is the round trip.
 *   - How the reply is awaited (the last argument, WAIT; absent = busy):
 *     busy   the socket is nonblocking and the reply is BUSY-POLLED: recv(MSG_DONTWAIT) in a
 *            loop, never poll/epoll/blocking reads. A blocking read would sleep and pay the
 *            scheduler's wake-up (5–50 µs, more on an idle core) inside every sample; spinning
 *            costs one core for the run and keeps the wake-up out of the figure. Each empty poll
 *            calls sched_yield(): the process never sleeps, but a runnable thread waiting for
 *            this core (on a loaded host, or on loopback the echo server itself) runs at once
 *            instead of after the spinner's time slice, which otherwise puts milliseconds into
 *            the tail. Clock name pingpong-monotonic-busypoll.
 *     block  the socket is blocking and the reply is awaited in a blocking recv() (SO_RCVTIMEO =
 *            the timeout), as `sockperf ping-pong` does with one socket ("using recvfrom() to
 *            block on socket(s)"): the client sleeps, frees its core, and every sample carries
 *            the wake-up. The rest of a partial TCP reply, and a UDP reply after a discarded
 *            late one, is awaited in ppoll() until the exchange's deadline, so a timeout is the
 *            same TIMEOUT_MS as in busy mode. Clock name pingpong-monotonic-block.
 *   - The series ends after COUNT exchanges or DURATION_S seconds, whichever first (0 = no limit
 *     for one of them, not both).
 * Modes:
 *   tcp     one connection, REQ_BYTES out, the same REQ_BYTES echoed back (sockperf --tcp).
 *   tcp-rr  one connection, REQ_BYTES request, RESP_BYTES response (netperf TCP_RR; 1/1 there).
 *   udp     one socket, REQ_BYTES datagrams echoed whole (sockperf's default mode). The first
 *           8 bytes carry the sequence number, so a late reply to a timed-out exchange is
 *           discarded instead of being taken for the next one; a timeout is a lost exchange.
 * A TCP connection opens with a 12-byte setup ("PPG1", request and response sizes, network
 * order) that the server acknowledges with "PPOK", outside the timed exchanges; a server that
 * does not answer it is reported as "bad-server". TCP_NODELAY is on at both ends.
 *
 * Output (stdout, buffered; written between exchanges, never inside the timed window):
 *   # pathbench pingpong v1 mode=udp req=16 resp=16 clock=pingpong-monotonic-busypoll realtime_minus_monotonic_ns=N ts=kernel-sw
 *   seq,tx_ns,rtt_ns,status,net_ns,fwd_ns,rev_ns,clock_err_us
 *   1,812345678901,23456,ok,17012,7020,6105,0
 *   2,812345702407,,timeout,,,,
 *   # clocks client_maxerror_us=unsync server_maxerror_us=unsync one_kernel=1
 *   # end exchanges=2 ok=1
 * tx_ns is CLOCK_MONOTONIC at send; adding realtime_minus_monotonic_ns gives epoch ns. status is
 * ok or a failure (timeout, reset, closed, refused …, common.c's vocabulary); a series that cannot
 * start (connect refused, no setup ack) prints one line with seq 0 and the reason. net_ns (when
 * the socket takes SO_TIMESTAMPING: ts=kernel-sw) is the reply's kernel receive stamp minus the
 * request's driver send stamp, the round trip without this host's own send and receive paths;
 * empty without both stamps (ts=user: a kernel that refused them). fwd_ns, rev_ns and
 * clock_err_us are the one-way delays and their clock bound ("One-way stamps" below), empty when
 * the server sent no readings or the bound is unknown.
 *
 * Server: `tcping --echo ADDRESS PORT` serves TCP (the setup above, then fixed-size exchanges) and
 * UDP (every datagram echoed) on the same port, a thread per TCP connection and one for UDP, all
 * with blocking reads (a server that spun would take a core per client; sockperf's server blocks
 * too). Prints {"port":N} once both listen. Idle TCP connections are dropped after 60 s. It
 * dies with its parent (PR_SET_PDEATHSIG), so a killed `agent serve` never leaves the port taken.
 */
#define _GNU_SOURCE
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#define PP_MAX_BYTES 65000
#define PP_MAX_CONNS 256

/* ------------------------------------------------------------------ one-way stamps */

/*
 * One-way stamps. The client asks for the server's clock readings (TCP: the setup "PPG2" instead
 * of "PPG1", acknowledged "PPOK"; UDP: "PBS?" in bytes 8..11 of a datagram of at least 12 bytes)
 * and the server then appends a PP_TRAILER-byte trailer to every response, after the response's
 * own bytes (big-endian):
 *   0  "PBT1"
 *   4  u32 boot tag: the first 8 hex digits of /proc/sys/kernel/random/boot_id, as a number.
 *      Equal tags are one kernel, so one CLOCK_REALTIME (the lab's namespaces): no clock error.
 *   8  i64 the request's receive stamp, CLOCK_REALTIME ns (the kernel's software stamp of the
 *      segment that brought its last byte; the server's clock after the read when it has none)
 *   16 i64 the server's CLOCK_REALTIME just before it sends the response (user space)
 *   24 u32 the server clock's maximum error in µs (adjtimex maxerror, which chrony and ntpd keep
 *      up to date and the kernel grows by 500 ppm between updates); 0xffffffff when unsynchronised
 *   28 u32 the server's send path, ns: the least over its last PP_PATHS responses of a response's
 *      driver send stamp (SO_TIMESTAMPING, read back after it went) − the server's clock before
 *      its send; 0xffffffff when unknown. A response cannot carry its own driver stamp; the
 *      recent undisturbed path (the least, not the last: one preempted send must not push the
 *      next reverse figure below zero) stands in for it.
 * The client then has forward = server receive − its own send stamp and reverse = its own receive
 * stamp − (server send + that send path: the driver's moment, as forward's start is), and their
 * error bound: 0 with equal boot tags, else the sum of both ends'
 * maximum errors, unknown when either is unsynchronised (then neither figure is printed). An older
 * server refuses "PPG2" (the client reconnects with "PPG1") or echoes UDP without the trailer.
 */
#define PP_TRAILER 32
#define PP_UNSYNC 0xffffffffu

/* This kernel's boot tag (see above); 0 when unreadable. */
static uint32_t boot_tag(void) {
  static uint32_t tag = 0;
  static int read_once = 0;
  if (read_once) return tag;
  read_once = 1;
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (!f) return 0;
  char id[16] = {0};
  if (fread(id, 1, 8, f) == 8) tag = (uint32_t)strtoul(id, NULL, 16);
  fclose(f);
  return tag;
}

/* The system clock's maximum error in µs (adjtimex), PP_UNSYNC when unsynchronised. */
static uint32_t clock_maxerror_us(void) {
  struct timex tx;
  memset(&tx, 0, sizeof tx);
  int state = adjtimex(&tx);
  if (state < 0 || state == TIME_ERROR || (tx.status & STA_UNSYNC) || tx.maxerror < 0) return PP_UNSYNC;
  return tx.maxerror >= (long)PP_UNSYNC ? PP_UNSYNC : (uint32_t)tx.maxerror;
}

static void put_u32(char *p, uint32_t v) {
  v = htonl(v);
  memcpy(p, &v, 4);
}
static uint32_t get_u32(const char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return ntohl(v);
}
static void put_i64(char *p, long long v) {
  put_u32(p, (uint32_t)((unsigned long long)v >> 32));
  put_u32(p + 4, (uint32_t)((unsigned long long)v & 0xffffffffu));
}
static long long get_i64(const char *p) {
  return (long long)(((unsigned long long)get_u32(p) << 32) | get_u32(p + 4));
}

/*
 * The server's trailer for a request received at rx_ns, with its previous response's send path;
 * its send time is read last and returned.
 */
static long long put_trailer(char *t, long long rx_ns, uint32_t maxerr, uint32_t prev_path_ns) {
  memcpy(t, "PBT1", 4);
  put_u32(t + 4, boot_tag());
  put_i64(t + 8, rx_ns);
  put_u32(t + 24, maxerr);
  put_u32(t + 28, prev_path_ns);
  long long tx = now_ns(CLOCK_REALTIME);
  put_i64(t + 16, tx);
  return tx;
}

/* Send paths remembered for the trailer's estimate (the least of them). */
#define PP_PATHS 32
struct send_paths {
  uint32_t ns[PP_PATHS];
  unsigned n;
};

/* Remember one response's send path; the least of the last PP_PATHS (PP_UNSYNC: none yet). */
static uint32_t paths_add(struct send_paths *p, uint32_t ns) {
  if (ns != PP_UNSYNC) p->ns[p->n++ % PP_PATHS] = ns;
  uint32_t least = PP_UNSYNC;
  for (unsigned i = 0; i < (p->n < PP_PATHS ? p->n : PP_PATHS); i++) least = p->ns[i] < least ? p->ns[i] : least;
  return least;
}

/* The send path of a response sent at user time `tx` whose send counter id is `id` (PP_UNSYNC: no stamp). */
static uint32_t send_path_ns(int fd, uint32_t id, long long tx) {
  long long stamp = tx_stamp(fd, id);
  if (stamp <= 0 || stamp < tx || stamp - tx >= (long long)PP_UNSYNC) return PP_UNSYNC;
  return (uint32_t)(stamp - tx);
}

/* Server sockets: receive stamps, and send stamps read back for the send path (OPT_ID counts). */
static void server_stamps(int fd) {
  int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
              SOF_TIMESTAMPING_OPT_TSONLY | SOF_TIMESTAMPING_OPT_ID;
  setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags);
}

/* This end's maximum error, re-read at most once a second (a syscall kept out of most exchanges). */
static uint32_t cached_maxerror_us(long long *checked_ns, uint32_t *cached) {
  long long now = now_ns(CLOCK_MONOTONIC);
  if (*checked_ns == 0 || now - *checked_ns > 1000000000LL) {
    *cached = clock_maxerror_us();
    *checked_ns = now;
  }
  return *cached;
}

/* ------------------------------------------------------------------ client */

/*
 * One recv() toward a reply: n > 0 bytes, 0 when the peer closed, or -1 with errno (ETIMEDOUT at
 * `deadline`). busy: spin on recv(MSG_DONTWAIT) + sched_yield(). block: the first call of an
 * exchange (*calls == 0) is one blocking recv() on the blocking socket, bounded by SO_RCVTIMEO;
 * later calls (the rest of a partial reply) wait in ppoll() for what is left of the deadline.
 */
static ssize_t recv_some(int fd, char *buf, size_t len, long long deadline, int block, int *calls, long long *rx_ts) {
  for (;;) {
    ssize_t n;
    if (!block) {
      n = recv_ts(fd, buf, len, MSG_DONTWAIT, rx_ts);
    } else if ((*calls)++ == 0) {
      n = recv_ts(fd, buf, len, 0, rx_ts);
    } else {
      long long left = deadline - now_ns(CLOCK_MONOTONIC);
      if (left <= 0) {
        errno = ETIMEDOUT;
        return -1;
      }
      struct pollfd p = {.fd = fd, .events = POLLIN};
      struct timespec ts = {.tv_sec = (time_t)(left / 1000000000LL), .tv_nsec = (long)(left % 1000000000LL)};
      int r = ppoll(&p, 1, &ts, NULL);
      if (r < 0 && errno != EINTR) return -1;
      n = r > 0 ? recv_ts(fd, buf, len, MSG_DONTWAIT, rx_ts) : -1;
      if (r <= 0) errno = EAGAIN;
    }
    if (n >= 0) return n;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    if (now_ns(CLOCK_MONOTONIC) >= deadline) {
      errno = ETIMEDOUT;
      return -1;
    }
    if (!block) sched_yield();
  }
}

/*
 * Until `len` bytes arrived (TCP) or until `deadline`: 0, or an errno-style code. With rx_ts, the
 * receive stamp of the segment that brought the last bytes.
 */
static int recv_exact(int fd, char *buf, size_t len, long long deadline, int block, long long *rx_ts) {
  size_t got = 0;
  int calls = 0;
  while (got < len) {
    ssize_t n = recv_some(fd, buf + got, len - got, deadline, block, &calls, rx_ts);
    if (n > 0) {
      got += (size_t)n;
      continue;
    }
    return n == 0 ? EPIPE : errno; /* EPIPE: the peer closed */
  }
  return 0;
}

/* Send it all; past `deadline` (0 = none) a send that cannot go on is ETIMEDOUT. */
static int send_all(int fd, const char *buf, size_t len, long long deadline) {
  size_t sent = 0;
  while (sent < len) {
    ssize_t n = send(fd, buf + sent, len - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += (size_t)n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (deadline > 0 && now_ns(CLOCK_MONOTONIC) >= deadline) return ETIMEDOUT;
      continue;
    }
    return n < 0 ? errno : EPIPE;
  }
  return 0;
}

static void print_status(int err) {
  if (err == EPIPE) {
    fputs("closed", stdout);
    return;
  }
  print_error(err);
}

/* Connect (blocking, bounded by the timeout) and exchange the setup; 0 or an errno-style code. */
static int tcp_open(const struct addrinfo *ai, long req, long resp, long long timeout_ns, int stamps, int *out_fd) {
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) return errno;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int err = 0;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      err = errno;
    } else {
      struct pollfd p = {.fd = fd, .events = POLLOUT};
      int ms = (int)(timeout_ns / 1000000LL) + 1;
      int n = poll(&p, 1, ms);
      if (n == 0)
        err = ETIMEDOUT;
      else if (n < 0)
        err = errno;
      else {
        socklen_t len = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      }
    }
  }
  if (err == 0) {
    char setup[12] = {'P', 'P', 'G', stamps ? '2' : '1'};
    uint32_t q = htonl((uint32_t)req), r = htonl((uint32_t)resp);
    memcpy(setup + 4, &q, 4);
    memcpy(setup + 8, &r, 4);
    long long deadline = now_ns(CLOCK_MONOTONIC) + timeout_ns;
    err = send_all(fd, setup, sizeof setup, deadline);
    char ack[4];
    if (err == 0) err = recv_exact(fd, ack, sizeof ack, deadline, 0, NULL);
    if (err == 0 && memcmp(ack, "PPOK", 4) != 0) err = EPROTO;
  }
  if (err != 0) {
    close(fd);
    return err;
  }
  *out_fd = fd;
  return 0;
}

/* block mode: a blocking socket whose reads and writes give up after the timeout (0 or errno). */
static int make_blocking(int fd, long long timeout_ns) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) return errno;
  long long us = timeout_ns / 1000 > 0 ? timeout_ns / 1000 : 1; /* 0 would mean "never" */
  struct timeval tv = {.tv_sec = (time_t)(us / 1000000), .tv_usec = (suseconds_t)(us % 1000000)};
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
    return errno;
  return 0;
}

int run_pingpong(int argc, char **argv) {
  if (argc != 10 && argc != 11) {
    fprintf(stderr, "usage: tcping --pingpong HOST PORT tcp|udp|tcp-rr REQ_BYTES RESP_BYTES DURATION_S COUNT "
                    "TIMEOUT_MS [busy|block]\n");
    return 2;
  }
  int block = 0;
  if (argc == 11) {
    if (strcmp(argv[10], "block") == 0)
      block = 1;
    else if (strcmp(argv[10], "busy") != 0) {
      fprintf(stderr, "tcping: pingpong wait must be busy or block, got \"%s\"\n", argv[10]);
      return 2;
    }
  }
  const char *host = argv[2];
  const char *mode = argv[4];
  long port, req, resp, count;
  long long duration_ns, timeout_ns;
  if (!valid_host(host)) {
    fprintf(stderr, "tcping: invalid host \"%s\" (letters, digits, . - : _ only)\n", host);
    return 2;
  }
  int udp = strcmp(mode, "udp") == 0;
  if (!udp && strcmp(mode, "tcp") != 0 && strcmp(mode, "tcp-rr") != 0) {
    fprintf(stderr, "tcping: pingpong mode must be tcp, udp or tcp-rr, got \"%s\"\n", mode);
    return 2;
  }
  if (parse_long(argv[3], 1, 65535, &port) || parse_long(argv[5], udp ? 8 : 1, PP_MAX_BYTES, &req) ||
      parse_long(argv[6], udp ? 8 : 1, PP_MAX_BYTES, &resp) || parse_ms(argv[7], 0, 86400, &duration_ns) ||
      parse_long(argv[8], 0, 100000000, &count) || parse_ms(argv[9], 0.001, 600000, &timeout_ns)) {
    fprintf(stderr,
            "tcping: PORT 1-65535, REQ/RESP_BYTES %d-%d, DURATION_S 0-86400, COUNT 0-100000000, TIMEOUT_MS "
            "0.001-600000\n",
            udp ? 8 : 1, PP_MAX_BYTES);
    return 2;
  }
  duration_ns *= 1000; /* parse_ms gave seconds × 1e6 */
  if (count == 0 && duration_ns == 0) {
    fprintf(stderr, "tcping: pingpong needs a COUNT or a DURATION_S (both 0)\n");
    return 2;
  }
  if (udp && req != resp) {
    fprintf(stderr, "tcping: udp echoes the datagram: REQ_BYTES must equal RESP_BYTES\n");
    return 2;
  }
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = udp ? SOCK_DGRAM : SOCK_STREAM;
  int gai = getaddrinfo(host, argv[3], &hints, &res);
  if (gai != 0 || res == NULL) {
    fprintf(stderr, "tcping: cannot resolve %s: %s\n", host, gai_strerror(gai));
    return 3;
  }
  char *out = calloc(1, (size_t)req), *in = calloc(1, (size_t)resp + PP_TRAILER);
  if (!out || !in) return 3;

  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  long long offset = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC);
  int fd = -1, err = 0, stamped = 0;
  size_t trailer = 0; /* tcp: the trailer's bytes after each response (PPG2 accepted) */
  if (udp) {
    fd = socket(res->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) err = errno;
    if (err == 0) stamped = ts_enable(fd);
    /* the server's stamps are asked for in every datagram that has room for the marker */
    if (req >= 12) memcpy(out + 8, "PBS?", 4);
  } else {
    err = tcp_open(res, req, resp, timeout_ns, 1, &fd);
    /* a server from before one-way stamps closes on "PPG2": once more the old way */
    if (err == EPROTO || err == EPIPE)
      err = tcp_open(res, req, resp, timeout_ns, 0, &fd);
    else if (err == 0)
      trailer = PP_TRAILER;
    /* after the setup: the send counter (bytes, for tcp) starts at the first exchange */
    if (err == 0) stamped = ts_enable(fd);
  }
  if (err == 0 && block) err = make_blocking(fd, timeout_ns);
  freeaddrinfo(res);
  /* ts: where net_ns comes from (kernel-sw: SO_TIMESTAMPING; user: none, the column is empty). */
  printf("# pathbench pingpong v1 mode=%s req=%ld resp=%ld clock=pingpong-monotonic-%s "
         "realtime_minus_monotonic_ns=%lld ts=%s\nseq,tx_ns,rtt_ns,status,net_ns,fwd_ns,rev_ns,clock_err_us\n",
         mode, req, resp, block ? "block" : "busypoll", offset, stamped ? "kernel-sw" : "user");
  if (err != 0) {
    printf("0,%lld,,", now_ns(CLOCK_MONOTONIC));
    if (err == EPROTO || err == EPIPE)
      fputs("bad-server", stdout);
    else
      print_status(err);
    fputs(",,,,\n# end exchanges=0 ok=0\n", stdout);
    fflush(stdout);
    return 0;
  }

  long long start = now_ns(CLOCK_MONOTONIC);
  long long end = duration_ns > 0 ? start + duration_ns : 0;
  long ok = 0, seq = 0;
  long long maxerr_checked = 0;
  uint32_t maxerr_cached = PP_UNSYNC;
  /* Each end's clock bound over the series (the largest seen; -1: none seen, PP_UNSYNC: unsynchronised at some point). */
  long long mine_max = -1, theirs_max = -1;
  int one_kernel = 0;
  for (;;) {
    if (count > 0 && seq >= count) break;
    if (end > 0 && seq > 0 && now_ns(CLOCK_MONOTONIC) >= end) break;
    seq++;
    uint64_t s = (uint64_t)seq;
    if (udp) memcpy(out, &s, 8);
    long long t0 = now_ns(CLOCK_MONOTONIC);
    long long deadline = t0 + timeout_ns;
    long long t1 = 0, rx_ts = -1;
    const char *stamp = NULL; /* the server's trailer, when the response carried one */
    if (udp) {
      err = send(fd, out, (size_t)req, 0) == (ssize_t)req ? 0 : errno;
      int calls = 0;
      while (err == 0) {
        ssize_t n = recv_some(fd, in, (size_t)resp + PP_TRAILER, deadline, block, &calls, stamped ? &rx_ts : NULL);
        if (n < 0) {
          err = errno;
          break;
        }
        if (n >= 8) {
          uint64_t got;
          memcpy(&got, in, 8);
          if (got == s) {
            t1 = now_ns(CLOCK_MONOTONIC);
            if (n == resp + PP_TRAILER && memcmp(in + resp, "PBT1", 4) == 0) stamp = in + resp;
            break;
          }
        }
        /* a late reply to an earlier, timed-out exchange (or a runt datagram): wait on */
        if (now_ns(CLOCK_MONOTONIC) >= deadline) err = ETIMEDOUT;
      }
    } else {
      err = send_all(fd, out, (size_t)req, deadline);
      if (err == 0) err = recv_exact(fd, in, (size_t)resp + trailer, deadline, block, stamped ? &rx_ts : NULL);
      if (err == 0) t1 = now_ns(CLOCK_MONOTONIC);
      if (err == 0 && trailer > 0 && memcmp(in + resp, "PBT1", 4) == 0) stamp = in + resp;
    }
    /* the request's send stamp, after the timed window: udp counts datagrams (seq - 1), tcp bytes
       (the request's last byte; the kernel stamps a send's last segment) */
    long long tx_ts = !stamped ? -1 : tx_stamp(fd, (uint32_t)(udp ? seq - 1 : seq * req - 1));
    if (err == 0) {
      ok++;
      printf("%ld,%lld,%lld,ok,", seq, t0, t1 - t0);
      if (tx_ts > 0 && rx_ts > 0 && rx_ts >= tx_ts) printf("%lld", rx_ts - tx_ts);
      /* one way: the stamps on each end's own clock, and the bound on their difference */
      long long bound = -1;
      if (stamp != NULL) {
        uint32_t mine = cached_maxerror_us(&maxerr_checked, &maxerr_cached), theirs = get_u32(stamp + 24);
        if (mine_max != PP_UNSYNC) mine_max = mine > mine_max ? mine : mine_max;
        if (theirs_max != PP_UNSYNC) theirs_max = theirs > theirs_max ? theirs : theirs_max;
        if (get_u32(stamp + 4) == boot_tag() && boot_tag() != 0) {
          bound = 0;
          one_kernel = 1;
        } else if (mine != PP_UNSYNC && theirs != PP_UNSYNC) {
          bound = (long long)mine + theirs;
        }
      }
      if (bound >= 0) {
        long long sent = tx_ts > 0 ? tx_ts : t0 + offset, got = rx_ts > 0 ? rx_ts : t1 + offset;
        uint32_t path = get_u32(stamp + 28);
        long long srv_sent = get_i64(stamp + 16) + (path == PP_UNSYNC ? 0 : (long long)path);
        printf(",%lld,%lld,%lld\n", get_i64(stamp + 8) - sent, got - srv_sent, bound);
      } else {
        fputs(",,,\n", stdout);
      }
      continue;
    }
    printf("%ld,%lld,,", seq, t0);
    print_status(err);
    fputs(",,,,\n", stdout);
    /* A TCP stream out of step (timeout, reset) cannot go on; UDP just lost one exchange. */
    if (!udp) break;
    if (err != ETIMEDOUT) break;
  }
  /* each end's clock bound over the series, when the server sent its readings (µs; unsync: not disciplined) */
  if (mine_max >= 0) {
    fputs("# clocks client_maxerror_us=", stdout);
    if (mine_max == PP_UNSYNC) fputs("unsync", stdout); else printf("%lld", mine_max);
    fputs(" server_maxerror_us=", stdout);
    if (theirs_max == PP_UNSYNC) fputs("unsync", stdout); else printf("%lld", theirs_max);
    printf(" one_kernel=%d\n", one_kernel);
  }
  printf("# end exchanges=%ld ok=%ld\n", seq, ok);
  fflush(stdout);
  close(fd);
  free(out);
  free(in);
  return 0;
}

/* ------------------------------------------------------------------ server */

/*
 * Read exactly len bytes (0, or -1 when the peer closed or the read failed). With rx_ns, the
 * receive stamp of the segment that brought the last bytes (the kernel's, when the socket takes
 * SO_TIMESTAMPING; else the clock after the read).
 */
static int read_exact(int fd, char *buf, size_t len, long long *rx_ns) {
  size_t got = 0;
  while (got < len) {
    long long stamp = -1;
    ssize_t n = recv_ts(fd, buf + got, len - got, 0, rx_ns != NULL ? &stamp : NULL);
    if (n > 0 && rx_ns != NULL) *rx_ns = stamp > 0 ? stamp : now_ns(CLOCK_REALTIME);
    if (n > 0)
      got += (size_t)n;
    else if (n < 0 && errno == EINTR)
      continue;
    else
      return -1;
  }
  return 0;
}

static volatile int conns = 0;

static void *serve_tcp_conn(void *arg) {
  int fd = (int)(intptr_t)arg;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct timeval idle = {.tv_sec = 60, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof idle);
  char setup[12];
  char *in = NULL, *out = NULL;
  if (read_exact(fd, setup, sizeof setup, NULL) == 0 &&
      (memcmp(setup, "PPG1", 4) == 0 || memcmp(setup, "PPG2", 4) == 0)) {
    /* PPG2: every response carries the trailer with this end's clock readings */
    int stamps = setup[3] == '2';
    /* before "PPOK": the send counter then counts its 4 bytes first */
    if (stamps) server_stamps(fd);
    long long maxerr_checked = 0, rx_ns = 0;
    uint32_t maxerr = PP_UNSYNC, path = PP_UNSYNC;
    struct send_paths paths = {.n = 0};
    unsigned long long sent = 4;
    uint32_t q, r;
    memcpy(&q, setup + 4, 4);
    memcpy(&r, setup + 8, 4);
    size_t req = ntohl(q), resp = ntohl(r);
    if (req >= 1 && req <= PP_MAX_BYTES && resp >= 1 && resp <= PP_MAX_BYTES) {
      in = calloc(1, req);
      out = calloc(1, resp + PP_TRAILER);
      if (in && out && send_all(fd, "PPOK", 4, 0) == 0) {
        while (read_exact(fd, in, req, stamps ? &rx_ns : NULL) == 0) {
          /* An echo returns what came; a transaction of another size returns zeros after it. */
          memcpy(out, in, req < resp ? req : resp);
          long long tx = 0;
          if (stamps) tx = put_trailer(out + resp, rx_ns, cached_maxerror_us(&maxerr_checked, &maxerr), path);
          size_t len = resp + (stamps ? PP_TRAILER : 0);
          if (send_all(fd, out, len, 0) != 0) break;
          /* the kernel stamps a send's last byte; read after the response went, for the next one */
          sent += len;
          if (stamps) path = paths_add(&paths, send_path_ns(fd, (uint32_t)(sent - 1), tx));
        }
      }
    }
  }
  free(in);
  free(out);
  close(fd);
  __atomic_sub_fetch(&conns, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static void *serve_udp(void *arg) {
  int fd = (int)(intptr_t)arg;
  static char buf[PP_MAX_BYTES + PP_TRAILER];
  server_stamps(fd);
  long long maxerr_checked = 0;
  uint32_t maxerr = PP_UNSYNC, path = PP_UNSYNC, sent = 0;
  static struct send_paths paths;
  for (;;) {
    struct sockaddr_storage from;
    char control[256];
    struct iovec iov = {.iov_base = buf, .iov_len = PP_MAX_BYTES};
    struct msghdr m = {.msg_name = &from,
                       .msg_namelen = sizeof from,
                       .msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = control,
                       .msg_controllen = sizeof control};
    ssize_t n = recvmsg(fd, &m, 0);
    if (n < 0) continue;
    size_t len = (size_t)n;
    long long tx = 0;
    /* "PBS?" after the sequence number: the client asks for this end's clock readings */
    if (n >= 12 && memcmp(buf + 8, "PBS?", 4) == 0) {
      long long rx = ts_of(&m);
      tx = put_trailer(buf + n, rx > 0 ? rx : now_ns(CLOCK_REALTIME), cached_maxerror_us(&maxerr_checked, &maxerr),
                       path);
      len += PP_TRAILER;
    }
    if (sendto(fd, buf, len, 0, (struct sockaddr *)&from, m.msg_namelen) < 0) continue;
    /* every send's stamp is read back (a full error queue would take the receive buffer): the
       counter counts datagrams; a stamped response's path serves the next one */
    uint32_t got = send_path_ns(fd, sent++, tx);
    if (tx != 0) path = paths_add(&paths, got);
  }
  return NULL;
}

static int bind_on(int type, const char *address, long port, struct sockaddr_storage *ss, socklen_t *sl) {
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = type;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  char p[8];
  snprintf(p, sizeof p, "%ld", port);
  if (getaddrinfo(address, p, &hints, &res) != 0 || !res) return -1;
  int fd = socket(res->ai_family, type | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    freeaddrinfo(res);
    errno = e;
    return -1;
  }
  freeaddrinfo(res);
  *sl = sizeof *ss;
  getsockname(fd, (struct sockaddr *)ss, sl);
  return fd;
}

int run_echo(const char *address, const char *port_s) {
  long port;
  if (!valid_host(address) || parse_long(port_s, 0, 65535, &port)) {
    fprintf(stderr, "usage: tcping --echo ADDRESS PORT (numeric address, port 0-65535; 0 = any)\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  /* Started by `agent serve`: never outlive it (a killed parent must not leave the port taken). */
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  struct sockaddr_storage ss;
  socklen_t sl;
  int lfd = bind_on(SOCK_STREAM, address, port, &ss, &sl);
  if (lfd < 0 || listen(lfd, 128) != 0) {
    fprintf(stderr, "tcping: echo: cannot listen on %s:%ld (%s)\n", address, port, strerror(errno));
    return 3;
  }
  long bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
  int ufd = bind_on(SOCK_DGRAM, address, bound, &ss, &sl);
  if (ufd < 0) {
    fprintf(stderr, "tcping: echo: cannot bind UDP %s:%ld (%s)\n", address, bound, strerror(errno));
    return 3;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t t;
  if (pthread_create(&t, &attr, serve_udp, (void *)(intptr_t)ufd) != 0) {
    fprintf(stderr, "tcping: echo: cannot start the UDP thread\n");
    return 3;
  }
  printf("{\"port\":%ld}\n", bound);
  fflush(stdout);
  for (;;) {
    int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) continue;
    if (__atomic_add_fetch(&conns, 1, __ATOMIC_SEQ_CST) > PP_MAX_CONNS ||
        pthread_create(&t, &attr, serve_tcp_conn, (void *)(intptr_t)c) != 0) {
      __atomic_sub_fetch(&conns, 1, __ATOMIC_SEQ_CST);
      close(c);
    }
  }
  return 0;
}
