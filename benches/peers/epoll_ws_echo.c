/*
 * epoll_ws_echo: the floor of the WebSocket benchmark (benches/node/ws.mjs), a minimal
 * single-thread WebSocket echo server on level-triggered epoll. What no server can do with
 * less: one recv of everything a wake-up finds, the frames unmasked in place, and one send of
 * all the answers.
 *
 *   epoll_ws_echo [PORT] [HOST]      (PORT 0 or absent: the kernel picks; HOST 127.0.0.1)
 *
 * Prints `listening PORT` on stdout once it accepts. A connection first reads an HTTP upgrade
 * request (Sec-WebSocket-Key → Sec-WebSocket-Accept with SHA-1 and base64 below, RFC 6455
 * 4.2.2), answers 101, then echoes every data frame as an unmasked frame of the same opcode
 * and FIN bit, answers a ping with a pong, a close with a close, and drops the connection on
 * anything malformed (an unmasked client frame, a frame above 1 MiB). No UTF-8 check, no
 * extensions, no fragmentation rules: a floor, not a conforming server. Bytes a socket does not
 * take are kept per connection and the connection is not read until they are out.
 * TCP_NODELAY on every accepted connection; RLIMIT_NOFILE raised to the hard limit.
 * Exits on SIGTERM/SIGINT (default action); ignores SIGUSR2 (the idle workload's "collect your
 * garbage now" signal to the other servers).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF 65536
#define MAX_FRAME (1u << 20)

/* Per connection: what was read but not yet a whole frame (or request), and what waits to be
 * written. Both NULL on an idle open connection. */
struct conn {
  int open; /* 1 after the 101 */
  unsigned char *in;
  size_t in_len;
  unsigned char *out;
  size_t out_len, out_off;
};

static struct conn *conns; /* indexed by fd */
static size_t nconns;
static int ep;
static unsigned char rbuf[BUF];
static unsigned char *wbuf; /* answers of one wake-up */
static size_t wcap;

static void die(const char *what) {
  fprintf(stderr, "epoll_ws_echo: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void watch(int fd, unsigned events, int op) {
  struct epoll_event ev = {.events = events, .data.fd = fd};
  if (epoll_ctl(ep, op, fd, &ev) < 0) die("epoll_ctl");
}

static void drop(int fd) {
  struct conn *c = &conns[fd];
  free(c->in);
  free(c->out);
  memset(c, 0, sizeof *c);
  close(fd);
}

/* ---- SHA-1 (FIPS 180-4) and base64, for the one Sec-WebSocket-Accept of a handshake ---- */

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1(const unsigned char *msg, size_t len, unsigned char out[20]) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  size_t total = ((len + 8) / 64 + 1) * 64;
  unsigned char *m = calloc(total, 1);
  if (!m) die("calloc");
  memcpy(m, msg, len);
  m[len] = 0x80;
  uint64_t bits = (uint64_t)len * 8;
  for (int i = 0; i < 8; i++) m[total - 1 - i] = (unsigned char)(bits >> (8 * i));
  for (size_t blk = 0; blk < total; blk += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
      w[i] = (uint32_t)m[blk + 4 * i] << 24 | (uint32_t)m[blk + 4 * i + 1] << 16 |
             (uint32_t)m[blk + 4 * i + 2] << 8 | m[blk + 4 * i + 3];
    for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
      uint32_t f, k;
      if (i < 20) f = (b & c) | (~b & d), k = 0x5A827999;
      else if (i < 40) f = b ^ c ^ d, k = 0x6ED9EBA1;
      else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      else f = b ^ c ^ d, k = 0xCA62C1D6;
      uint32_t t = rol(a, 5) + f + e + k + w[i];
      e = d, d = c, c = rol(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  free(m);
  for (int i = 0; i < 20; i++) out[i] = (unsigned char)(h[i / 4] >> (24 - 8 * (i % 4)));
}

static void base64(const unsigned char *in, size_t len, char *out) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < len; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0) |
                 (i + 2 < len ? in[i + 2] : 0);
    out[o++] = abc[(v >> 18) & 63];
    out[o++] = abc[(v >> 12) & 63];
    out[o++] = i + 1 < len ? abc[(v >> 6) & 63] : '=';
    out[o++] = i + 2 < len ? abc[v & 63] : '=';
  }
  out[o] = 0;
}

/* ---- output ---- */

static void wreserve(size_t need) {
  if (need <= wcap) return;
  while (wcap < need) wcap = wcap ? wcap * 2 : BUF;
  wbuf = realloc(wbuf, wcap);
  if (!wbuf) die("realloc");
}

/* Sends wbuf[0..len] on fd; keeps what the socket does not take. -1: drop the connection. */
static int send_all(int fd, size_t len) {
  size_t off = 0;
  while (off < len) {
    ssize_t n = send(fd, wbuf + off, len - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      struct conn *c = &conns[fd];
      c->out = malloc(len - off);
      if (!c->out) die("malloc");
      memcpy(c->out, wbuf + off, len - off);
      c->out_len = len - off;
      c->out_off = 0;
      watch(fd, EPOLLOUT, EPOLL_CTL_MOD); /* stop reading until it is out */
      return 0;
    }
    off += (size_t)n;
  }
  return 0;
}

static int flush_pending(int fd) {
  struct conn *c = &conns[fd];
  while (c->out_off < c->out_len) {
    ssize_t n = send(fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      if (errno == EINTR) continue;
      return -1;
    }
    c->out_off += (size_t)n;
  }
  free(c->out);
  c->out = NULL;
  c->out_len = c->out_off = 0;
  watch(fd, EPOLLIN, EPOLL_CTL_MOD);
  return 1;
}

/* ---- input ---- */

/* The handshake at the start of data[0..len]: returns the bytes it used (0: incomplete), or
 * -1 when it is no WebSocket upgrade; appends the 101 to wbuf at *w. */
static long handshake(const unsigned char *data, size_t len, size_t *w) {
  const unsigned char *end = memmem(data, len, "\r\n\r\n", 4);
  if (!end) return len > 8192 ? -1 : 0;
  const char *hdr = "sec-websocket-key:";
  const unsigned char *p = data;
  char key[128] = {0};
  while (p < end) {
    const unsigned char *eol = memmem(p, (size_t)(end + 2 - p), "\r\n", 2);
    if (!eol) break;
    size_t n = (size_t)(eol - p);
    if (n > strlen(hdr) && strncasecmp((const char *)p, hdr, strlen(hdr)) == 0) {
      const unsigned char *v = p + strlen(hdr);
      while (v < eol && *v == ' ') v++;
      size_t kl = (size_t)(eol - v);
      while (kl && v[kl - 1] == ' ') kl--;
      if (kl == 0 || kl > 64) return -1;
      memcpy(key, v, kl);
    }
    p = eol + 2;
  }
  if (!key[0]) return -1;
  char cat[128];
  snprintf(cat, sizeof cat, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
  unsigned char digest[20];
  sha1((const unsigned char *)cat, strlen(cat), digest);
  char accept[32];
  base64(digest, 20, accept);
  char resp[256];
  int rl = snprintf(resp, sizeof resp,
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                    "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
                    accept);
  wreserve(*w + (size_t)rl);
  memcpy(wbuf + *w, resp, (size_t)rl);
  *w += (size_t)rl;
  return (long)(end + 4 - data);
}

/* The frames at the start of data[0..len]: answers appended to wbuf at *w; returns the bytes
 * used (whole frames only), or -1 to drop the connection. */
static long frames(unsigned char *data, size_t len, size_t *w) {
  size_t at = 0;
  for (;;) {
    unsigned char *b = data + at;
    size_t left = len - at;
    if (left < 2) return (long)at;
    if (!(b[1] & 0x80)) return -1; /* client frames are masked */
    uint64_t plen = b[1] & 0x7f;
    size_t hdr = 2;
    if (plen == 126) {
      if (left < 4) return (long)at;
      plen = (uint64_t)b[2] << 8 | b[3];
      hdr = 4;
    } else if (plen == 127) {
      if (left < 10) return (long)at;
      plen = 0;
      for (int i = 0; i < 8; i++) plen = plen << 8 | b[2 + i];
      hdr = 10;
    }
    if (plen > MAX_FRAME) return -1;
    if (left < hdr + 4 + plen) return (long)at;
    unsigned char *mask = b + hdr, *payload = b + hdr + 4;
    for (size_t i = 0; i < plen; i++) payload[i] ^= mask[i & 3];
    unsigned op = b[0] & 0x0f;
    if (op == 0x9) op = 0xA;          /* ping → pong */
    else if (op == 0xA) goto next;   /* pongs need no answer */
    wreserve(*w + 10 + plen);
    unsigned char *o = wbuf + *w;
    o[0] = (unsigned char)((b[0] & 0x80) | op);
    size_t oh = 2;
    if (plen < 126) {
      o[1] = (unsigned char)plen;
    } else if (plen < 65536) {
      o[1] = 126, o[2] = (unsigned char)(plen >> 8), o[3] = (unsigned char)plen, oh = 4;
    } else {
      o[1] = 127, oh = 10;
      for (int i = 0; i < 8; i++) o[2 + i] = (unsigned char)(plen >> (56 - 8 * i));
    }
    memcpy(o + oh, payload, plen);
    *w += oh + plen;
    if (op == 0x8) return -2; /* close answered: send it, then drop */
  next:
    at += hdr + 4 + plen;
  }
}

/* Everything readable on fd: answered with one send. -1: drop the connection. */
static int serve(int fd) {
  struct conn *c = &conns[fd];
  size_t w = 0;
  for (;;) {
    ssize_t n = recv(fd, rbuf, BUF, 0);
    if (n == 0) return -1;
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      return -1;
    }
    unsigned char *data = rbuf;
    size_t len = (size_t)n;
    if (c->in_len) { /* a partial frame from before: append */
      c->in = realloc(c->in, c->in_len + len);
      if (!c->in) die("realloc");
      memcpy(c->in + c->in_len, rbuf, len);
      data = c->in;
      len = c->in_len + len;
    }
    long used = 0;
    int closing = 0;
    if (!c->open) {
      used = handshake(data, len, &w);
      if (used < 0) return -1;
      if (used > 0) c->open = 1;
    }
    if (c->open) {
      long f = frames(data + used, len - (size_t)used, &w);
      if (f == -1) return -1;
      if (f == -2) closing = 1;
      else used += f;
    }
    if (closing) {
      send_all(fd, w);
      return -1;
    }
    size_t rest = len - (size_t)used;
    if (rest == 0) {
      free(c->in);
      c->in = NULL;
      c->in_len = 0;
    } else if (data == c->in) {
      memmove(c->in, c->in + used, rest);
      c->in_len = rest;
    } else {
      c->in = malloc(rest);
      if (!c->in) die("malloc");
      memcpy(c->in, data + used, rest);
      c->in_len = rest;
    }
    if ((size_t)n < BUF) break; /* a short read: the socket is drained */
  }
  return w ? send_all(fd, w) : 0;
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 0;
  const char *host = argc > 2 ? argv[2] : "127.0.0.1";
  signal(SIGUSR2, SIG_IGN);

  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  getrlimit(RLIMIT_NOFILE, &rl);
  nconns = rl.rlim_cur == RLIM_INFINITY ? 1u << 20 : (size_t)rl.rlim_cur;
  conns = calloc(nconns, sizeof *conns);
  if (!conns) die("calloc");

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) die("inet_pton");
  if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
  if (listen(lfd, 4096) < 0) die("listen");
  socklen_t alen = sizeof addr;
  getsockname(lfd, (struct sockaddr *)&addr, &alen);
  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  watch(lfd, EPOLLIN, EPOLL_CTL_ADD);
  printf("listening %d\n", ntohs(addr.sin_port));
  fflush(stdout);

  struct epoll_event evs[512];
  for (;;) {
    int n = epoll_wait(ep, evs, 512, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
      int fd = evs[i].data.fd;
      if (fd == lfd) {
        for (;;) {
          int cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (cfd < 0) break;
          if ((size_t)cfd >= nconns) {
            close(cfd);
            continue;
          }
          setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          watch(cfd, EPOLLIN, EPOLL_CTL_ADD);
        }
        continue;
      }
      if (evs[i].events & EPOLLOUT) {
        if (flush_pending(fd) < 0) drop(fd);
        continue;
      }
      if (serve(fd) < 0) drop(fd);
    }
  }
}
