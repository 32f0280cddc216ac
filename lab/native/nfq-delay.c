/*
 * nfq-delay: hold packets queued by iptables NFQUEUE for a fixed time, then accept them.
 *
 * The pathbench lab uses it where the kernel has no tc netem. One process serves several
 * queues inside one network namespace; each queue has its own constant delay, so a FIFO per
 * queue is already sorted by due time (no heap needed). A queue may mix two or three delays
 * (QUEUE:D1,D2@SHARE2[,D3@SHARE3]): each packet independently takes D2 with probability
 * SHARE2, D3 with probability SHARE3, else D1, and each delay has its own FIFO, so all stay
 * sorted (packets of different classes reorder, as on real routes of different length). Verdicts are issued from a single
 * loop that sleeps with ppoll() until shortly before the earliest due packet (timer slack set
 * to 1 us) and, while only a few packets are held, spins the last 50 us so a late timer
 * wake-up on a busy machine does not lengthen a sub-millisecond delay. No per-packet sleep.
 * Due packets of a single-delay queue are released with one batch verdict.
 *
 * The truth of what it did: with --log FILE every released packet appends one 32-byte record
 * (little-endian: u64 arrival ns since the epoch, u32 applied ns = release - arrival, u32 source
 * and u32 destination IPv4 address in network order, u16 queue, u8 TCP flags (0: not TCP), u8
 * delay class + 0x80 when arrival is the kernel's timestamp, u16 source and destination TCP port
 * in network order, 4 bytes reserved). Arrival is the kernel's receive timestamp of the packet when it has one (a
 * socket with SO_TIMESTAMPNS turns them on), so a late wake-up of the helper itself is counted
 * and also taken off the wait; release is the clock as the verdict is sent. Records are
 * flushed whenever nothing is held and at least every 100 ms; past 256 MB the file is rotated
 * to FILE.1 (one generation kept). lab/applied-delay.ts reads it.
 *
 * Loss-free by construction: large kernel queue (--maxlen), fail-open when it still fills,
 * huge netlink receive buffer, and rules are expected to use --queue-bypass so packets pass
 * undelayed while no helper is listening. Only packet metadata is copied to user space; GSO
 * packets are queued whole (NFQA_CFG_F_GSO) to keep throughput up.
 *
 * --cpu N pins the helper to one CPU. The lab runs its client on the same CPU: measured on a
 * 2-vCPU VM, a helper on the other vCPU than the client adds ~0.18 ms to every handshake (the
 * wake-up of an idle vCPU by IPI), which flips per helper start and is most of path A's RTT.
 *
 * usage: nfq-delay [--maxlen N] [--rcvbuf BYTES] [--no-rt] [--cpu N] [--log FILE] QUEUE:DELAY_US[,DELAY2_US@SHARE2[,DELAY3_US@SHARE3]] [...]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_QUEUES 16
/* Last stretch before a due time that is spun rather than slept (see the main loop): at least
 * SPIN_NS, more when timer wake-ups have come later than that (up to SPIN_MAX_NS). */
#define SPIN_NS 50000ull
#define SPIN_MAX_NS 400000ull
/* Spin only while this few packets are held: sparse latency probes, not a bulk transfer. */
#define SPIN_MAX_HELD 4
/* Delays one queue may mix (routes of different length). */
#define MAX_CLASSES 3

/* Bytes of each packet copied to user space: an IPv4 header with options and the TCP flags. */
#define COPY_RANGE 64
/* Applied-delay log: flush at least this often while packets are held, rotate past this size. */
#define LOG_FLUSH_NS 100000000ull
#define LOG_ROTATE_BYTES (256ull << 20)

struct held {
  uint32_t id;
  uint64_t due_ns;
  uint64_t arrival_ns;
  uint32_t saddr, daddr;
  uint16_t sport, dport;
  uint8_t tcp_flags;
  /* KERNEL_STAMP when arrival is the kernel's timestamp. */
  uint8_t stamp;
};

/* Record class bit: the arrival time is the kernel's receive timestamp (else the helper's clock). */
#define KERNEL_STAMP 0x80

/* One released packet in the --log file (32 bytes, host = little-endian byte order). */
struct __attribute__((packed)) record {
  uint64_t arrival_ns;
  uint32_t applied_ns;
  uint32_t saddr, daddr;
  uint16_t queue;
  uint8_t tcp_flags;
  uint8_t cls;
  uint16_t sport, dport;
  uint32_t reserved;
};
_Static_assert(sizeof(struct record) == 32, "lab/applied-delay.ts reads 32-byte records");

/* Packets held for one delay, in arrival order (= due order). */
struct fifo {
  struct held *ring;
  size_t cap, head, len;
};

struct dqueue {
  uint16_t num;
  /* delay_ns[c] applies to a share share[c] of the packets for c >= 1; class 0 takes the rest. */
  uint64_t delay_ns[MAX_CLASSES];
  double share[MAX_CLASSES];
  int nclasses;
  struct nfq_q_handle *qh;
  struct fifo fifo[MAX_CLASSES];
  uint64_t packets;
};

static struct dqueue queues[MAX_QUEUES];
static int nqueues;
static volatile sig_atomic_t stop_flag;

/* Wall clock: the kernel's packet timestamps and the runs' step times are on it. */
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

/* xorshift64*: which packets take the second delay; seeded per process, no cryptographic need. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double uniform01(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static FILE *log_file;
static const char *log_path;
static uint64_t log_bytes, log_flushed_ns;

static void log_open(void) {
  log_file = fopen(log_path, "ab");
  if (!log_file) {
    perror("nfq-delay: --log");
    exit(1);
  }
  setvbuf(log_file, NULL, _IOFBF, 1 << 20);
  fseek(log_file, 0, SEEK_END);
  log_bytes = (uint64_t)ftell(log_file);
}

static void log_release(const struct held *h, uint16_t queue, int cls, uint64_t released) {
  if (!log_file) return;
  uint64_t applied = released > h->arrival_ns ? released - h->arrival_ns : 0;
  struct record r = {h->arrival_ns, applied > UINT32_MAX ? UINT32_MAX : (uint32_t)applied, h->saddr, h->daddr, queue,
                     h->tcp_flags, (uint8_t)(cls | h->stamp), h->sport, h->dport, 0};
  fwrite(&r, sizeof r, 1, log_file);
  log_bytes += sizeof r;
}

static void log_flush(uint64_t now) {
  if (!log_file) return;
  fflush(log_file);
  log_flushed_ns = now;
  if (log_bytes < LOG_ROTATE_BYTES) return;
  char old[4096];
  snprintf(old, sizeof old, "%s.1", log_path);
  fclose(log_file);
  rename(log_path, old);
  log_open();
}

static int push(struct fifo *q, struct held h) {
  if (q->len == q->cap) {
    size_t ncap = q->cap ? q->cap * 2 : 4096;
    struct held *n = malloc(ncap * sizeof *n);
    if (!n) return -1;
    for (size_t i = 0; i < q->len; i++) n[i] = q->ring[(q->head + i) % q->cap];
    free(q->ring);
    q->ring = n;
    q->cap = ncap;
    q->head = 0;
  }
  q->ring[(q->head + q->len) % q->cap] = h;
  q->len++;
  return 0;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *data) {
  (void)msg;
  struct dqueue *q = data;
  struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
  if (!ph) return 0;
  uint32_t id = ntohl(ph->packet_id);
  q->packets++;
  uint64_t now = now_ns();
  /* Arrival: the kernel's receive timestamp when it is there and plausible, else now. */
  uint64_t arrival = now;
  struct timeval tv;
  if (nfq_get_timestamp(nfa, &tv) == 0 && tv.tv_sec > 0) {
    uint64_t k = (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
    if (k <= now && now - k < 1000000000ull) arrival = k;
  }
  struct held h = {.id = id, .arrival_ns = arrival, .stamp = arrival != now ? KERNEL_STAMP : 0};
  unsigned char *pkt;
  int len = nfq_get_payload(nfa, &pkt);
  if (len >= 20 && (pkt[0] >> 4) == 4) {
    memcpy(&h.saddr, pkt + 12, 4);
    memcpy(&h.daddr, pkt + 16, 4);
    int ihl = (pkt[0] & 0x0f) * 4;
    if (pkt[9] == IPPROTO_TCP && len >= ihl + 14) {
      h.tcp_flags = pkt[ihl + 13];
      memcpy(&h.sport, pkt + ihl, 2);
      memcpy(&h.dport, pkt + ihl + 2, 2);
    }
  }
  int cls = 0;
  if (q->nclasses > 1) {
    double u = uniform01(), acc = 0;
    for (int c = 1; c < q->nclasses; c++) {
      acc += q->share[c];
      if (u < acc) {
        cls = c;
        break;
      }
    }
  }
  h.due_ns = arrival + q->delay_ns[cls];
  if (q->delay_ns[cls] == 0 || push(&q->fifo[cls], h) != 0) {
    /* Nothing to wait for (or out of memory): never drop, pass it on now. */
    log_release(&h, q->num, cls, now_ns());
    nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL);
  }
  return 0;
}

static size_t held_total(void) {
  size_t n = 0;
  for (int i = 0; i < nqueues; i++)
    for (int c = 0; c < MAX_CLASSES; c++) n += queues[i].fifo[c].len;
  return n;
}

/* Release every due packet; returns the earliest remaining due time (0 when none). */
static uint64_t release_due(void) {
  uint64_t now = now_ns();
  uint64_t next = 0;
  for (int i = 0; i < nqueues; i++) {
    struct dqueue *q = &queues[i];
    for (int c = 0; c < MAX_CLASSES; c++) {
      struct fifo *f = &q->fifo[c];
      size_t due = 0;
      while (due < f->len && f->ring[(f->head + due) % f->cap].due_ns <= now) due++;
      if (due < f->len) {
        uint64_t d = f->ring[(f->head + due) % f->cap].due_ns;
        if (next == 0 || d < next) next = d;
      }
      if (due == 0) continue;
      /* One queue, one delay: its packets are held in id order and every lower id is gone, so
       * one batch verdict releases them all. Mixed delays interleave ids: one verdict each. */
      /* Released = when the verdict goes out: what the kernel does inside the call (forwarding,
       * the next namespace's stack) is the topology's time, not the delay's. */
      uint64_t released = now_ns();
      if (q->nclasses == 1 && due > 1) {
        nfq_set_verdict_batch(q->qh, f->ring[(f->head + due - 1) % f->cap].id, NF_ACCEPT);
      } else {
        for (size_t k = 0; k < due; k++) nfq_set_verdict(q->qh, f->ring[(f->head + k) % f->cap].id, NF_ACCEPT, 0, NULL);
      }
      for (size_t k = 0; k < due; k++) log_release(&f->ring[(f->head + k) % f->cap], q->num, c, released);
      f->head = (f->head + due) % f->cap;
      f->len -= due;
    }
  }
  return next;
}

static void usage(void) {
  fprintf(stderr,
          "usage: nfq-delay [--maxlen N] [--rcvbuf BYTES] [--no-rt] [--cpu N] [--log FILE] "
          "QUEUE:DELAY_US[,DELAY2_US@SHARE2[,DELAY3_US@SHARE3]] [...]\n");
  exit(2);
}

int main(int argc, char **argv) {
  uint32_t maxlen = 65536;
  unsigned int rcvbuf = 64u * 1024u * 1024u;
  int rt = 1;
  int cpu = -1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--maxlen") == 0 && i + 1 < argc) {
      maxlen = (uint32_t)strtoul(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc) {
      cpu = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc) {
      log_path = argv[++i];
    } else if (strcmp(argv[i], "--no-rt") == 0) {
      rt = 0;
    } else if (strcmp(argv[i], "--rcvbuf") == 0 && i + 1 < argc) {
      rcvbuf = (unsigned int)strtoul(argv[++i], NULL, 10);
    } else {
      unsigned int num;
      double us, us2 = 0, share2 = 0, us3 = 0, share3 = 0;
      int end = 0;
      int got = sscanf(argv[i], "%u:%lf%n,%lf@%lf%n,%lf@%lf%n", &num, &us, &end, &us2, &share2, &end, &us3, &share3, &end);
      if ((got != 2 && got != 4 && got != 6) || argv[i][end] != '\0' || num > 65535 || us < 0 || us2 < 0 ||
          us3 < 0 || share2 < 0 || share3 < 0 || share2 + share3 > 1 || nqueues >= MAX_QUEUES)
        usage();
      struct dqueue *q = &queues[nqueues];
      q->num = (uint16_t)num;
      q->nclasses = got / 2;
      q->delay_ns[0] = (uint64_t)(us * 1000.0);
      q->delay_ns[1] = (uint64_t)(us2 * 1000.0);
      q->delay_ns[2] = (uint64_t)(us3 * 1000.0);
      q->share[1] = share2;
      q->share[2] = share3;
      nqueues++;
    }
  }
  if (nqueues == 0) usage();
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) perror("warning: sched_setaffinity");
  }

  /* Sleep precisely: the default 50 us timer slack would be a visible error on 0.1 ms delays. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  /* Real-time priority: on a busy machine a normal task can wait milliseconds for a CPU, which
   * would turn a constant delay into jitter. The loop blocks in ppoll, so it cannot starve anyone. */
  const char *prio = "normal";
  if (rt) {
    struct sched_param sp = {.sched_priority = 50};
    /* Not permitted (no CAP_SYS_NICE, RT budget 0 in a container): run at normal priority. */
    if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0) prio = "fifo";
    mlockall(MCL_CURRENT | MCL_FUTURE);
  }
  if (log_path) log_open();
  /* Any socket asking for receive timestamps makes the kernel stamp every packet on arrival. */
  int tsock = socket(AF_INET, SOCK_DGRAM, 0);
  int on = 1;
  if (tsock < 0 || setsockopt(tsock, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0)
    fprintf(stderr, "nfq-delay: no kernel receive timestamps; arrival is the helper's clock\n");
  rng_state ^= now_ns() ^ ((uint64_t)getpid() << 32);
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);

  struct nfq_handle *h = nfq_open();
  if (!h) {
    perror("nfq_open");
    return 1;
  }
  nfq_unbind_pf(h, AF_INET);
  if (nfq_bind_pf(h, AF_INET) < 0) {
    perror("nfq_bind_pf");
    return 1;
  }
  for (int i = 0; i < nqueues; i++) {
    struct dqueue *q = &queues[i];
    q->qh = nfq_create_queue(h, q->num, &on_packet, q);
    if (!q->qh) {
      fprintf(stderr, "nfq_create_queue %u: %s\n", q->num, strerror(errno));
      return 1;
    }
    if (nfq_set_mode(q->qh, NFQNL_COPY_PACKET, COPY_RANGE) < 0) {
      perror("nfq_set_mode");
      return 1;
    }
    nfq_set_queue_maxlen(q->qh, maxlen);
    uint32_t flags = NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO;
    if (nfq_set_queue_flags(q->qh, flags, flags) < 0) fprintf(stderr, "warning: queue flags not supported\n");
  }
  nfnl_rcvbufsiz(nfq_nfnlh(h), rcvbuf);
  int fd = nfq_fd(h);
  int one = 1;
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);

  fprintf(stderr, "nfq-delay: ready");
  for (int i = 0; i < nqueues; i++) {
    fprintf(stderr, " %u:%.1fus", queues[i].num, queues[i].delay_ns[0] / 1000.0);
    for (int c = 1; c < queues[i].nclasses; c++)
      fprintf(stderr, ",%.1fus@%.3f", queues[i].delay_ns[c] / 1000.0, queues[i].share[c]);
  }
  fprintf(stderr, " (priority %s)\n", prio);

  static char buf[1 << 17] __attribute__((aligned));
  struct pollfd pfd = {.fd = fd, .events = POLLIN};
  /* How late timer wake-ups have come lately (a slowly decaying maximum), ns. */
  uint64_t late_ns = 0;
  while (!stop_flag) {
    uint64_t next = release_due();
    uint64_t now = now_ns();
    if (next == 0 || now - log_flushed_ns > LOG_FLUSH_NS) log_flush(now);
    struct timespec ts, *tsp = NULL;
    uint64_t wake_at = 0;
    if (next) {
      uint64_t wait = next > now ? next - now : 0;
      /* A timer wake-up costs 5-100 us here (more from an idle vCPU, more under load), which is
       * a quarter of path A's whole added delay and varies with the machine's load. For the last
       * stretch before a due time (SPIN_NS, or more when wake-ups have been later than that),
       * poll without sleeping instead: the release then lands on time. Only with a handful of
       * held packets (latency probes): under a bulk transfer there is always a packet due soon
       * and spinning would take a whole core from it. */
      if (held_total() <= SPIN_MAX_HELD) {
        uint64_t spin = late_ns + late_ns / 2 + 10000ull;
        spin = spin < SPIN_NS ? SPIN_NS : spin > SPIN_MAX_NS ? SPIN_MAX_NS : spin;
        wait = wait > spin ? wait - spin : 0;
      }
      if (wait > 0) wake_at = now + wait;
      ts.tv_sec = (time_t)(wait / 1000000000ull);
      ts.tv_nsec = (long)(wait % 1000000000ull);
      tsp = &ts;
    }
    int r = ppoll(&pfd, 1, tsp, NULL);
    if (r < 0) {
      if (errno == EINTR) continue;
      perror("ppoll");
      break;
    }
    if (r == 0) {
      if (wake_at) {
        uint64_t woke = now_ns();
        uint64_t late = woke > wake_at ? woke - wake_at : 0;
        late_ns = late > late_ns ? late : late_ns - late_ns / 16;
      }
      continue;
    }
    /* Drain everything readable before sleeping again. */
    for (;;) {
      ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
        if (errno == ENOBUFS) continue;
        perror("recv");
        stop_flag = 1;
        break;
      }
      nfq_handle_packet(h, buf, (int)n);
    }
  }

  /* Let everything still held go through rather than dropping it on exit. */
  for (int i = 0; i < nqueues; i++) {
    struct dqueue *q = &queues[i];
    for (int c = 0; c < MAX_CLASSES; c++) {
      struct fifo *f = &q->fifo[c];
      while (f->len > 0) {
        log_release(&f->ring[f->head], q->num, c, now_ns());
        nfq_set_verdict(q->qh, f->ring[f->head].id, NF_ACCEPT, 0, NULL);
        f->head = (f->head + 1) % f->cap;
        f->len--;
      }
    }
    nfq_destroy_queue(q->qh);
  }
  nfq_close(h);
  if (log_file) fclose(log_file);
  return 0;
}
