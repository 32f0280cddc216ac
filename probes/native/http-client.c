/*
 * The http probe's client (`tcping --http …`, up to HTTP_MAX_CONCURRENCY connections).
 * Why: a Node client costs ~10 µs per request at p50 more than wrk, and a fresh Node process
 * adds 0.5–7 ms stalls to ~1 % of its first few thousand requests (runtime warm-up), which
 * lands in every p99. This loop keeps CONCURRENCY connections (slots), each sending one GET at
 * a time (closed loop, like oha/wrk), and busy-polls them (poll with a zero timeout, yielding
 * the CPU each idle turn so a server on the same core still runs). Each request is timed with
 * CLOCK_MONOTONIC from just before it is written (or its connection opened) to the last body
 * byte — the Node probe's definition. Framing follows probes/http/http-wire.ts rule for
 * rule: Content-Length, chunked (extensions, trailers), read-until-close, 204/304 without a
 * body, interim 1xx answers skipped, Connection for 1.0 and 1.1; anything else is
 * "bad-response".
 * Sockets close normally (FIN), like other HTTP clients: with keep-alive off TIME_WAIT piles up
 * on the client exactly as it did for the seed's tools (EADDRNOTAVAIL → its own reason).
 * Output per request, in completion order: {"seq","t_start","t_end","ok","latency_ms",
 * "status"?,"error"?,"bytes","lport"?,"net_ms"?,"clock":"httping-monotonic"}; WARMUP unrecorded
 * requests come first, on their own connections, and stop at the first failure.
 * net_ms (an ok request whose stamps came): the network's part of latency_ms by the kernel's
 * software timestamps (SO_TIMESTAMPING): the response's last segment received − the request's
 * last byte sent, plus, for a request that opened its connection, the handshake's RTT
 * (tcpi_rtt just after it; SO_TIMESTAMPING cannot stamp a SYN). latency_ms − net_ms is this
 * host's own part: connect() and send paths, the receive path, the loop.
 * A pair (ADDRESS2 PORT2 HOST2, the plan's regression.paired): each worker alternates its
 * requests between the target and the reference target, one each in turn, the order swapped
 * from one pair to the next, on a connection per target; the reference's lines carry
 * "pair":"ref". Both series then see the same moments of this host. */
#define _GNU_SOURCE
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/net_tstamp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HTTP_MAX_HEAD 65536
#define HTTP_MAX_LINE 8192
#define HTTP_MAX_CONCURRENCY 64

enum hstate { H_HEAD, H_LEN, H_CSIZE, H_CDATA, H_CCRLF, H_TRAILER, H_CLOSE, H_DONE };

struct hresp {
  enum hstate st;
  char head[HTTP_MAX_HEAD + 1];
  size_t head_len;
  char line[HTTP_MAX_LINE + 1];
  size_t line_len;
  int status;
  int reusable;
  long long left;
  long long body;
  const char *why; /* set on a protocol error */
};

static void hresp_init(struct hresp *r) {
  r->st = H_HEAD;
  r->head_len = r->line_len = 0;
  r->status = 0;
  r->reusable = 1;
  r->left = 0;
  r->body = 0;
  r->why = NULL;
}

/* Does the comma-separated list `v` contain token `t` (case-insensitive)? */
static int has_token(const char *v, const char *t) {
  size_t n = strlen(t);
  for (const char *p = v; *p;) {
    while (*p == ' ' || *p == '\t' || *p == ',') p++;
    const char *e = p;
    while (*e && *e != ',') e++;
    const char *end = e;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t')) end--;
    if ((size_t)(end - p) == n && strncasecmp(p, t, n) == 0) return 1;
    p = e;
  }
  return 0;
}

/* Parse a complete head (NUL-terminated, without the final CRLFCRLF). 0 ok, 1 interim, -1 bad. */
static int hresp_head(struct hresp *r) {
  char *save = NULL;
  char *line = strtok_r(r->head, "\r\n", &save);
  int minor, status;
  char tail;
  if (!line || sscanf(line, "HTTP/1.%1d %3d%c", &minor, &status, &tail) < 2 || (minor != 0 && minor != 1) ||
      status < 100 || status > 999 || (strlen(line) > 12 && line[12] != ' ') || strlen(line) < 12) {
    r->why = "not an HTTP/1.x status line";
    return -1;
  }
  if (status < 200) return 1;
  char conn[512] = "", te[512] = "", cl[512] = "";
  int cl_seen = 0;
  while ((line = strtok_r(NULL, "\r\n", &save)) != NULL) {
    char *colon = strchr(line, ':');
    if (!colon || colon == line) {
      r->why = "malformed header line";
      return -1;
    }
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    size_t vl = strlen(v);
    while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) v[--vl] = '\0';
    char *dst = NULL;
    if (strcasecmp(line, "connection") == 0)
      dst = conn;
    else if (strcasecmp(line, "transfer-encoding") == 0)
      dst = te;
    else if (strcasecmp(line, "content-length") == 0) {
      dst = cl;
      cl_seen = 1;
    }
    if (dst) {
      size_t dl = strlen(dst);
      snprintf(dst + dl, 512 - dl, "%s%s", dl ? "," : "", v);
    }
  }
  r->status = status;
  r->reusable = minor == 1 ? !has_token(conn, "close") : has_token(conn, "keep-alive");
  if (status == 204 || status == 304) {
    r->st = H_LEN;
    r->left = 0;
  } else if (te[0]) {
    /* chunked must be the last coding; we accept exactly "chunked" */
    const char *last = strrchr(te, ',');
    last = last ? last + 1 : te;
    while (*last == ' ') last++;
    if (strcasecmp(last, "chunked") != 0) {
      r->why = "unsupported transfer-encoding";
      return -1;
    }
    r->st = H_CSIZE;
  } else if (cl_seen) {
    /* one value, possibly repeated identically ("5, 5") */
    long long v = -1;
    for (char *p = cl; *p;) {
      while (*p == ' ' || *p == ',') p++;
      if (!*p) break;
      char *end = p;
      while (*end >= '0' && *end <= '9') end++;
      if (end == p || end - p > 15 || (*end && *end != ',' && *end != ' ')) {
        r->why = "bad content-length";
        return -1;
      }
      long long x = strtoll(p, NULL, 10);
      if (v >= 0 && x != v) {
        r->why = "bad content-length";
        return -1;
      }
      v = x;
      p = end;
    }
    if (v < 0) {
      r->why = "bad content-length";
      return -1;
    }
    r->st = H_LEN;
    r->left = v;
  } else {
    r->st = H_CLOSE;
    r->reusable = 0;
  }
  if (r->st == H_LEN && r->left == 0) r->st = H_DONE;
  return 0;
}

/* Feed bytes. Returns 1 when the response is complete, 0 for more, -1 on a protocol error. */
static int hresp_feed(struct hresp *r, const char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    switch (r->st) {
      case H_HEAD: {
        size_t from = r->head_len > 3 ? r->head_len - 3 : 0;
        size_t take = n - i;
        if (r->head_len + take > HTTP_MAX_HEAD) take = HTTP_MAX_HEAD - r->head_len;
        memcpy(r->head + r->head_len, p + i, take);
        r->head_len += take;
        r->head[r->head_len] = '\0';
        char *end = NULL;
        for (size_t k = from; k + 3 < r->head_len; k++)
          if (memcmp(r->head + k, "\r\n\r\n", 4) == 0) {
            end = r->head + k;
            break;
          }
        if (!end) {
          if (r->head_len >= HTTP_MAX_HEAD) {
            r->why = "head too long";
            return -1;
          }
          i += take;
          break;
        }
        size_t used = (size_t)(end - r->head) + 4 - (r->head_len - take);
        *end = '\0';
        i += used;
        int h = hresp_head(r);
        if (h < 0) return -1;
        if (h == 1) r->head_len = 0; /* interim answer: the real one follows */
        break;
      }
      case H_LEN: {
        size_t take = (size_t)((long long)(n - i) < r->left ? (long long)(n - i) : r->left);
        r->left -= (long long)take;
        r->body += (long long)take;
        i += take;
        if (r->left == 0) r->st = H_DONE;
        break;
      }
      case H_CDATA: {
        size_t take = (size_t)((long long)(n - i) < r->left ? (long long)(n - i) : r->left);
        r->left -= (long long)take;
        r->body += (long long)take;
        i += take;
        if (r->left == 0) r->st = H_CCRLF;
        break;
      }
      case H_CLOSE:
        r->body += (long long)(n - i);
        i = n;
        break;
      case H_CSIZE:
      case H_CCRLF:
      case H_TRAILER: {
        char c = p[i++];
        if (c != '\n') {
          if (r->line_len >= HTTP_MAX_LINE) {
            r->why = "chunk line too long";
            return -1;
          }
          r->line[r->line_len++] = c;
          break;
        }
        if (r->line_len == 0 || r->line[r->line_len - 1] != '\r') {
          r->why = "bare LF in chunked framing";
          return -1;
        }
        r->line[--r->line_len] = '\0';
        if (r->st == H_CCRLF) {
          if (r->line_len != 0) {
            r->why = "missing CRLF after chunk data";
            return -1;
          }
          r->st = H_CSIZE;
        } else if (r->st == H_CSIZE) {
          char *end = r->line;
          while ((*end >= '0' && *end <= '9') || (*end >= 'a' && *end <= 'f') || (*end >= 'A' && *end <= 'F')) end++;
          char *rest = end;
          while (*rest == ' ' || *rest == '\t') rest++;
          if (end == r->line || end - r->line > 12 || (*rest && *rest != ';')) {
            r->why = "bad chunk size line";
            return -1;
          }
          long long size = strtoll(r->line, NULL, 16);
          if (size == 0)
            r->st = H_TRAILER;
          else {
            r->st = H_CDATA;
            r->left = size;
          }
        } else if (r->line_len == 0) {
          r->st = H_DONE;
        }
        r->line_len = 0;
        break;
      }
      case H_DONE:
        r->why = "bytes after the end of the response";
        return -1;
    }
    if (r->st == H_DONE && i < n) {
      r->why = "bytes after the end of the response";
      return -1;
    }
  }
  return r->st == H_DONE ? 1 : 0;
}

/* The connection ended (EOF): complete when the body runs until close, else an error. */
static int hresp_eof(struct hresp *r) {
  if (r->st == H_DONE) return 1;
  if (r->st == H_CLOSE) {
    r->st = H_DONE;
    r->reusable = 0;
    return 1;
  }
  return -1;
}

static void print_str(const char *s) {
  fputc('"', stdout);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      fputc(c, stdout);
  }
  fputc('"', stdout);
}

static int local_port(int fd) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0) return -1;
  return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
}

/* One client connection slot of the closed loop: a request in flight, or idle with a kept
 * connection (fd >= 0) or none. */
enum sstate { S_IDLE, S_CONNECTING, S_SENDING, S_READING };

struct slot {
  enum sstate st;
  int side; /* 0: the target; 1: the pair's reference target (its lines say "pair":"ref") */
  int fd;
  long seq; /* the request in flight (0 while warming up) */
  size_t sent;
  long long t0_rt, t0, deadline;
  int lport;
  struct hresp r;
  /* Kernel stamps (ts_enable once the connection is up): the send counter's bytes so far, the
   * request's last byte's id in it, the last receive stamp, and the handshake's RTT (tcpi_rtt
   * right after it, µs) when this request opened the connection, else 0. */
  int stamped;
  unsigned long long tx_bytes;
  uint32_t tx_id;
  long long rx_ts, hs_us;
};

struct hrun {
  /* [0] the target, [1] the pair's reference target (used only when paired) */
  const struct addrinfo *ai[2];
  const char *req[2];
  size_t req_len[2];
  int paired;
  long long timeout_ns;
  int keepalive;
  int record;       /* print a line per request (0: warm-up) */
  int stop_on_fail; /* warm-up: the first failure ends it */
  long total, issued, done;
  int failed;
  int pending; /* lines printed but not yet flushed */
  /* paired: per worker, the pair in hand and whether its first request is done */
  long pair_k[HTTP_MAX_CONCURRENCY];
  int step[HTTP_MAX_CONCURRENCY];
};

static void http_print(long seq, int ok, int status, long long bytes, int lport, const char *error, int err,
                       long long t0_rt, long long t0, long long t1, long long net_ns, int ref) {
  double t_start = (double)t0_rt / 1e6;
  double lat_ms = (double)(t1 - t0) / 1e6;
  printf("{\"seq\":%ld,\"t_start\":%.4f,\"t_end\":%.4f,\"ok\":%s,", seq, t_start, t_start + lat_ms,
         ok ? "true" : "false");
  if (ok)
    printf("\"latency_ms\":%.6f", lat_ms);
  else
    fputs("\"latency_ms\":null", stdout);
  if (status) printf(",\"status\":%d", status);
  if (!ok) {
    fputs(",\"error\":", stdout);
    if (error)
      print_str(error);
    else if (status)
      printf("\"http-%d\"", status);
    else {
      fputc('"', stdout);
      print_error(err);
      fputc('"', stdout);
    }
  }
  printf(",\"bytes\":%lld", bytes);
  if (lport >= 0) printf(",\"lport\":%d", lport);
  if (ok && net_ns >= 0) printf(",\"net_ms\":%.6f", (double)net_ns / 1e6);
  if (ref) fputs(",\"pair\":\"ref\"", stdout);
  fputs(",\"clock\":\"httping-monotonic\"}\n", stdout);
  /* Flushed by the loop (http_loop), not per line: at high request rates a write per line
   * costs the client more than the requests themselves. */
}

static void slot_close(struct slot *s) {
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
  s->lport = -1;
  s->stamped = 0;
}

/*
 * The connection is up: kernel stamps on (a TCP socket takes OPT_ID only once connected), and
 * when this request opened it, the handshake's round trip as the kernel measured it (its first
 * RTT sample, SYN → SYN-ACK), which the request's network time includes.
 */
static void slot_established(struct slot *s, int opened) {
  s->stamped = ts_enable(s->fd);
  s->tx_bytes = 0;
  s->hs_us = 0;
  if (opened) {
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    s->hs_us = getsockopt(s->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 ? (long long)ti.tcpi_rtt : -1;
  }
}

/*
 * The network's part of a completed request, read after the clock stopped: the response's last
 * receive stamp − the request's last byte's send stamp, plus the handshake's RTT when the
 * request opened its connection. -1 without both stamps.
 */
static long long slot_net_ns(struct slot *s) {
  if (!s->stamped || s->fd < 0) return -1;
  long long tx = tx_stamp(s->fd, s->tx_id);
  if (tx <= 0 || s->rx_ts <= 0 || s->rx_ts < tx || s->hs_us < 0) return -1;
  return s->rx_ts - tx + s->hs_us * 1000;
}

/* The connection's local port, read once per connection and after the clock stopped. */
static void slot_lport(struct slot *s) {
  if (s->lport < 0 && s->fd >= 0) s->lport = local_port(s->fd);
}

/* The request in flight failed: record it (no status, no bytes, as the Node probe) and free the slot. */
static void slot_fail(struct hrun *h, struct slot *s, const char *error, int err) {
  long long t1 = now_ns(CLOCK_MONOTONIC);
  /* a port only for a connection that was made (as the Node probe) */
  if (s->st == S_SENDING || s->st == S_READING) slot_lport(s);
  if (h->record) {
    http_print(s->seq, 0, 0, 0, s->lport, error, err, s->t0_rt, s->t0, t1, -1, s->side);
    h->pending++;
  }
  h->done++;
  h->failed = 1;
  slot_close(s);
  s->st = S_IDLE;
}

/* The answer is complete: record it, keep the connection when both sides allow it. */
static void slot_done(struct hrun *h, struct slot *s) {
  long long t1 = now_ns(CLOCK_MONOTONIC);
  slot_lport(s);
  int ok = s->r.status >= 200 && s->r.status < 300;
  long long net = slot_net_ns(s);
  if (h->record) {
    http_print(s->seq, ok, s->r.status, s->r.body, s->lport, NULL, 0, s->t0_rt, s->t0, t1, net, s->side);
    h->pending++;
  }
  h->done++;
  if (!ok) h->failed = 1;
  if (!(h->keepalive && s->r.reusable)) slot_close(s);
  s->st = S_IDLE;
}

static void slot_send(struct hrun *h, struct slot *s) {
  const char *req = h->req[s->side];
  size_t req_len = h->req_len[s->side];
  while (s->sent < req_len) {
    ssize_t k = send(s->fd, req + s->sent, req_len - s->sent, MSG_NOSIGNAL);
    if (k > 0)
      s->sent += (size_t)k;
    else if (k < 0 && (errno == EAGAIN || errno == EINTR))
      return;
    else {
      slot_fail(h, s, NULL, k < 0 ? (errno == EPIPE ? ECONNRESET : errno) : ECONNRESET);
      return;
    }
  }
  /* the kernel stamps a send's last byte: this request's is at tx_bytes + len − 1 */
  s->tx_id = (uint32_t)(s->tx_bytes + req_len - 1);
  s->tx_bytes += req_len;
  s->rx_ts = -1;
  s->st = S_READING;
}

/* Start request `seq` on an idle slot (opening a connection when it has none). */
static void slot_start(struct hrun *h, struct slot *s, long seq) {
  const struct addrinfo *ai = h->ai[s->side];
  s->seq = seq;
  s->sent = 0;
  hresp_init(&s->r);
  if (s->fd >= 0) {
    /* A kept connection the server closed meanwhile (or wrote to unasked) is not reused. */
    char c;
    ssize_t k = recv(s->fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    if (k >= 0 || (errno != EAGAIN && errno != EINTR)) slot_close(s);
  }
  s->t0_rt = now_ns(CLOCK_REALTIME);
  s->t0 = now_ns(CLOCK_MONOTONIC);
  s->deadline = s->t0 + h->timeout_ns;
  if (s->fd >= 0) {
    s->hs_us = 0; /* a kept connection: no handshake in this request */
    s->st = S_SENDING;
    slot_send(h, s);
    return;
  }
  s->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  if (s->fd < 0) {
    slot_fail(h, s, NULL, errno);
    return;
  }
  int one = 1;
  setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(s->fd, ai->ai_addr, ai->ai_addrlen) == 0) {
    slot_established(s, 1);
    s->st = S_SENDING;
    slot_send(h, s);
  } else if (errno == EINPROGRESS) {
    s->st = S_CONNECTING;
  } else {
    slot_fail(h, s, NULL, errno);
  }
}

/* The socket is ready: move the slot's request on as far as it goes without waiting. */
static void slot_ready(struct hrun *h, struct slot *s) {
  static char buf[65536];
  if (s->st == S_CONNECTING) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err) {
      slot_fail(h, s, NULL, err);
      return;
    }
    slot_established(s, 1);
    s->st = S_SENDING;
  }
  if (s->st == S_SENDING) slot_send(h, s);
  while (s->st == S_READING) {
    long long rx = -1;
    ssize_t k = recv_ts(s->fd, buf, sizeof buf, MSG_DONTWAIT, s->stamped ? &rx : NULL);
    if (k > 0 && rx > 0) s->rx_ts = rx;
    if (k > 0) {
      int r = hresp_feed(&s->r, buf, (size_t)k);
      if (r < 0)
        slot_fail(h, s, "bad-response", 0);
      else if (r == 1)
        slot_done(h, s);
    } else if (k == 0) {
      if (hresp_eof(&s->r) == 1)
        slot_done(h, s);
      else
        slot_fail(h, s, NULL, ECONNRESET);
    } else {
      if (errno != EAGAIN && errno != EINTR) slot_fail(h, s, NULL, errno);
      return;
    }
  }
}

/*
 * Run h->total requests over n slots, closed loop: each slot starts its next request as soon as
 * its answer is complete. Busy-polls (poll with a zero timeout, yielding the CPU when nothing
 * is ready) so no wake-up latency lands in a sample. Kept connections stay in the slots.
 */
static void http_loop(struct hrun *h, struct slot *slots, int n) {
  struct pollfd pf[2 * HTTP_MAX_CONCURRENCY];
  int idx[2 * HTTP_MAX_CONCURRENCY];
  for (;;) {
    /* Lines go out while no request is in flight (between requests at concurrency 1, so the
     * write never lands inside a timed window) or every 64 lines, so a killed run keeps them. */
    int busy = 0;
    for (int i = 0; i < n; i++) busy += slots[i].st != S_IDLE;
    if (h->pending && (busy == 0 || h->pending >= 64)) {
      fflush(stdout);
      h->pending = 0;
    }
    if (!h->paired) {
      for (int i = 0; i < n; i++) {
        while (slots[i].st == S_IDLE && h->issued < h->total && !(h->stop_on_fail && h->failed))
          slot_start(h, &slots[i], ++h->issued);
      }
    } else {
      /* Paired: worker w owns slots 2w (the target) and 2w + 1 (the reference), one request in
       * flight between them. Its pair k goes target then reference for even k, reference then
       * target for odd k, so neither side always goes first; the reference's seq is total + k. */
      for (int w = 0; w < n / 2; w++) {
        struct slot *a = &slots[2 * w], *b = &slots[2 * w + 1];
        while (a->st == S_IDLE && b->st == S_IDLE && !(h->stop_on_fail && h->failed)) {
          long k;
          int side;
          if (h->step[w] == 0) {
            if (h->issued >= h->total) break;
            k = h->pair_k[w] = h->issued++;
            side = (int)(k % 2);
          } else {
            k = h->pair_k[w];
            side = (int)(1 - k % 2);
          }
          h->step[w] = !h->step[w];
          slot_start(h, side ? b : a, side ? h->total + k + 1 : k + 1);
        }
      }
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
      if (slots[i].st == S_IDLE) continue;
      pf[k].fd = slots[i].fd;
      pf[k].events = slots[i].st == S_READING ? POLLIN : POLLOUT;
      pf[k].revents = 0;
      idx[k++] = i;
    }
    if (k == 0) {
      fflush(stdout);
      h->pending = 0;
      return;
    }
    int ready = poll(pf, (nfds_t)k, 0);
    for (int j = 0; ready > 0 && j < k; j++)
      if (pf[j].revents) slot_ready(h, &slots[idx[j]]);
    long long now = now_ns(CLOCK_MONOTONIC);
    for (int j = 0; j < k; j++) {
      struct slot *s = &slots[idx[j]];
      if (s->st != S_IDLE && now >= s->deadline) slot_fail(h, s, "timeout", ETIMEDOUT);
    }
    if (ready <= 0) sched_yield();
  }
}

static int valid_http_token(const char *s, int path) {
  size_t n = strlen(s);
  if (n == 0 || n > 2048 || (path && s[0] != '/')) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c <= 0x20 || c >= 0x7f) return 0;
    if (!path && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                   c == '-' || c == ':' || c == '_' || c == '[' || c == ']'))
      return 0;
  }
  return 1;
}

/* A numeric address and port as the loop connects to it (freed by the caller), or NULL after a message. */
static struct addrinfo *numeric_target(const char *address, const char *port) {
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  hints.ai_flags = AI_NUMERICHOST;
  int gai = getaddrinfo(address, port, &hints, &res);
  if (gai != 0 || res == NULL) {
    fprintf(stderr, "tcping: --http needs a numeric address: %s\n", gai_strerror(gai));
    return NULL;
  }
  return res;
}

/* The request for one target, into buf; its length, or -1 when it does not fit. */
static int http_request(char *buf, size_t size, const char *path, const char *host, int keepalive) {
  int rl = snprintf(buf, size,
                    "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: pathbench\r\nAccept: */*\r\nConnection: %s\r\n\r\n",
                    path, host, keepalive ? "keep-alive" : "close");
  return rl <= 0 || (size_t)rl >= size ? -1 : rl;
}

/*
 * Run the warm-up, then the series; argv is tcping's own (argv[1] is "--http"). With a pair
 * (ADDRESS2 PORT2 HOST2 after CONCURRENCY), each connection's worker sends each request to both
 * targets in turn on a connection per target, COUNT of each; the reference's lines say
 * "pair":"ref" and have seq COUNT + k.
 */
int run_http(int argc, char **argv) {
  long port, count, warmup, conc, port2 = 0;
  long long timeout_ns;
  int paired = argc == 14;
  if ((argc != 11 && argc != 14) || !valid_host(argv[2]) || parse_long(argv[3], 1, 65535, &port) ||
      !valid_http_token(argv[4], 0) || !valid_http_token(argv[5], 1) || parse_long(argv[6], 1, 10000000, &count) ||
      parse_ms(argv[7], 0.001, 600000, &timeout_ns) ||
      (strcmp(argv[8], "keepalive") != 0 && strcmp(argv[8], "close") != 0) ||
      parse_long(argv[9], 0, 10000000, &warmup) || parse_long(argv[10], 1, HTTP_MAX_CONCURRENCY, &conc) ||
      (paired &&
       (!valid_host(argv[11]) || parse_long(argv[12], 1, 65535, &port2) || !valid_http_token(argv[13], 0)))) {
    fprintf(stderr,
            "usage: tcping --http ADDRESS PORT HOST PATH COUNT TIMEOUT_MS keepalive|close WARMUP CONCURRENCY "
            "[ADDRESS2 PORT2 HOST2]\n"
            "  ADDRESS numeric, HOST letters/digits/.-:_[] only, PATH from / without spaces, CONCURRENCY 1-%d\n",
            HTTP_MAX_CONCURRENCY);
    return 2;
  }
  int keepalive = strcmp(argv[8], "keepalive") == 0;
  struct addrinfo *res = numeric_target(argv[2], argv[3]);
  if (!res) return 3;
  struct addrinfo *res2 = paired ? numeric_target(argv[11], argv[12]) : NULL;
  if (paired && !res2) {
    freeaddrinfo(res);
    return 3;
  }
  char req[4096], req2[4096];
  int rl = http_request(req, sizeof req, argv[5], argv[4], keepalive);
  int rl2 = paired ? http_request(req2, sizeof req2, argv[5], argv[13], keepalive) : 0;
  long nslots = paired ? 2 * conc : conc;
  struct slot *slots = rl < 0 || rl2 < 0 ? NULL : calloc((size_t)nslots, sizeof *slots);
  if (!slots) {
    fprintf(stderr, rl < 0 || rl2 < 0 ? "tcping: request too long\n" : "tcping: out of memory\n");
    freeaddrinfo(res);
    if (res2) freeaddrinfo(res2);
    return rl < 0 || rl2 < 0 ? 2 : 3;
  }
  for (long i = 0; i < nslots; i++) {
    slots[i].fd = -1;
    slots[i].lport = -1;
    slots[i].side = paired ? (int)(i % 2) : 0;
  }
  /* The kernel stamps received packets only while some socket asks for it, and switches that
   * on and off lazily as such sockets come and go: with a connection per request, replies raced
   * the switch and half came unstamped (measured: 1,080 of 2,000). One socket that asks for the
   * whole run keeps it on. */
  int keep_stamps = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (keep_stamps >= 0) {
    int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
    setsockopt(keep_stamps, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags);
  }
  struct hrun h;
  memset(&h, 0, sizeof h);
  h.ai[0] = res;
  h.ai[1] = res2 ? res2 : res;
  h.req[0] = req;
  h.req[1] = paired ? req2 : req;
  h.req_len[0] = (size_t)rl;
  h.req_len[1] = (size_t)(paired ? rl2 : rl);
  h.timeout_ns = timeout_ns;
  h.keepalive = keepalive;
  h.paired = paired;
  if (warmup > 0) {
    h.record = 0;
    h.stop_on_fail = 1;
    h.total = warmup;
    http_loop(&h, slots, (int)nslots);
    /* Each series starts with no connection, like a fresh client pool. */
    for (long i = 0; i < nslots; i++) slot_close(&slots[i]);
  }
  h.record = 1;
  h.stop_on_fail = 0;
  h.total = count;
  h.issued = h.done = 0;
  h.failed = 0;
  memset(h.step, 0, sizeof h.step);
  http_loop(&h, slots, (int)nslots);
  for (long i = 0; i < nslots; i++) slot_close(&slots[i]);
  free(slots);
  freeaddrinfo(res);
  if (res2) freeaddrinfo(res2);
  if (keep_stamps >= 0) close(keep_stamps);
  return 0;
}
