/*
 * What the helper's parts share: the clock, argument parsing, target validation and the
 * failure vocabulary of the output lines. tcping.c documents the command line and the output.
 * The helper is compiled from all its files in one gcc call (probes/native/tcping.ts); every .c
 * file defines _GNU_SOURCE before it includes this header.
 */
#ifndef TCPING_COMMON_H
#define TCPING_COMMON_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

/* The clock, inline: it is read inside the timed windows, where a call would be a cost. */
static inline long long now_ns(clockid_t clk) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A decimal integer in min..max: 0, or -1 when `s` is anything else. */
int parse_long(const char *s, long min, long max, long *out);

/* Milliseconds, decimals allowed (plans may ask for 0.5 ms gaps), to nanoseconds: 0 or -1. */
int parse_ms(const char *s, double min, double max, long long *out_ns);

/* A hostname or IP literal: letters, digits, . - : _ only, at most 253, not starting with -. */
int valid_host(const char *h);

/* Print the failure reason for errno `err` (unquoted) on stdout. */
void print_error(int err);

/*
 * Kernel software timestamps (SO_TIMESTAMPING; common.c says how they are taken and matched):
 * ts_enable turns them on for a socket (1 when it takes them; a TCP socket must be connected,
 * its send counter then counts bytes from here), ts_of reads the stamp in a message's control
 * data, recv_ts is recv() that also takes the receive stamp, tx_stamp finds a send's stamp on
 * the error queue by its counter (-1: none).
 */
int ts_enable(int fd);
long long ts_of(struct msghdr *m);
ssize_t recv_ts(int fd, char *buf, size_t len, int flags, long long *rx_ts);
long long tx_stamp(int fd, uint32_t id);

/* The modes (tcping.c dispatches on argv[1]). */
int run_tcp_connect(int argc, char **argv);
int run_listener(const char *host, const char *port_s);
int run_http(int argc, char **argv);
int run_pingpong(int argc, char **argv);
int run_echo(const char *address, const char *port_s);

#endif
