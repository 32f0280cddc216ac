/* The helper's shared parts (common.h). */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
