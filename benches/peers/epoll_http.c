/*
 * epoll_http: the floor of the HTTP benchmark (benches/node/channels-vs-net.mjs, `http`): the
 * least a server can do to answer wrk's hello requests, so the table shows what the kernel
 * alone costs per request on the machine. Single thread, level-triggered epoll.
 *
 *   epoll_http [PORT] [HOST]      (PORT 0 or absent: the kernel picks; HOST default 127.0.0.1)
 *
 * Prints `listening PORT` on stdout once it accepts. Each readable connection is read into one
 * shared 64 KiB buffer; every `\r\n\r\n` in it (a request head; bodies are not supported) is
 * answered with one prebuilt keep-alive response (`Hello, World!`, the same fields as the
 * other servers, the `Date` header refreshed once a second), all answers of one read in one
 * send. A `\r\n\r\n` split across reads is counted when its last byte arrives.
 * What the socket does not take is kept and the connection waits for EPOLLOUT (not read until
 * it is out). TCP_NODELAY on every accepted connection. Exits on SIGTERM/SIGINT.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF 65536
#define MAX_CONN 65536

struct conn {
  unsigned char matched; /* bytes of a `\r\n\r\n` at the end of the previous read */
  size_t plen, poff; /* what waits to be written */
  unsigned char *pending;
};

static struct conn *conns[MAX_CONN];
static int ep;
static char resp[256];
static size_t resp_len;
static time_t resp_time;
static unsigned char out[BUF * 8];

static void die(const char *what) {
  fprintf(stderr, "epoll_http: %s: %s\n", what, strerror(errno));
  exit(1);
}

/* The response, rebuilt when the second changes (the Date header). */
static void refresh(void) {
  time_t now = time(NULL);
  if (now == resp_time) return;
  resp_time = now;
  struct tm tm;
  gmtime_r(&now, &tm);
  char date[64];
  strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  resp_len = (size_t)snprintf(resp, sizeof resp,
                              "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nDate: %s\r\n"
                              "Content-Length: 13\r\n\r\nHello, World!",
                              date);
}

static void watch(int fd, unsigned events, int op) {
  struct epoll_event ev = {.events = events, .data.fd = fd};
  if (epoll_ctl(ep, op, fd, &ev) < 0) die("epoll_ctl");
}

static void drop(int fd) {
  if (conns[fd]) {
    free(conns[fd]->pending);
    free(conns[fd]);
    conns[fd] = NULL;
  }
  close(fd);
}

/* Sends what waits on c; 1 when nothing is left, 0 on EAGAIN, -1 on error. */
static int flush_pending(int fd, struct conn *c) {
  while (c->poff < c->plen) {
    ssize_t n = send(fd, c->pending + c->poff, c->plen - c->poff, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      if (errno == EINTR) continue;
      return -1;
    }
    c->poff += (size_t)n;
  }
  free(c->pending);
  c->pending = NULL;
  c->plen = c->poff = 0;
  return 1;
}

/* Counts the request heads ending in buf[0..n); c->matched carries a `\r\n\r\n` begun at
 * the end of the previous read (how many of its bytes were there). */
static size_t count_heads(struct conn *c, const unsigned char *buf, size_t n) {
  static const char END[] = "\r\n\r\n";
  size_t heads = 0;
  const unsigned char *p = buf, *end = buf + n;
  if (c->matched > 0) {
    size_t want = 4 - c->matched;
    size_t have = n < want ? n : want;
    if (memcmp(buf, END + c->matched, have) != 0) {
      c->matched = 0;
    } else if (have < want) {
      c->matched += (unsigned char)have;
      return 0;
    } else {
      heads++;
      p = buf + want;
    }
  }
  c->matched = 0;
  while (end - p >= 4) {
    const unsigned char *r = memchr(p, '\r', (size_t)(end - p) - 3);
    if (!r) break;
    if (r[1] == '\n' && r[2] == '\r' && r[3] == '\n') {
      heads++;
      p = r + 4;
    } else {
      p = r + 1;
    }
  }
  /* The longest end of the read that starts a `\r\n\r\n`. */
  for (size_t k = 3; k > 0; k--) {
    if ((size_t)(end - p) >= k && memcmp(end - k, END, k) == 0) {
      c->matched = (unsigned char)k;
      break;
    }
  }
  return heads;
}

/* Answers what is readable on fd. Returns -1 when the connection is to be dropped. */
static int serve(int fd, struct conn *c, unsigned char *buf) {
  for (;;) {
    ssize_t n = recv(fd, buf, BUF, 0);
    if (n == 0) return -1;
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      if (errno == EINTR) continue;
      return -1;
    }
    size_t heads = count_heads(c, buf, (size_t)n);
    if (heads > 0) {
      refresh();
      if (heads > sizeof out / resp_len) heads = sizeof out / resp_len;
      size_t len = 0;
      for (size_t i = 0; i < heads; i++, len += resp_len) memcpy(out + len, resp, resp_len);
      size_t off = 0;
      while (off < len) {
        ssize_t w = send(fd, out + off, len - off, MSG_NOSIGNAL);
        if (w < 0) {
          if (errno == EINTR) continue;
          if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
          c->pending = malloc(len - off);
          if (!c->pending) die("malloc");
          memcpy(c->pending, out + off, len - off);
          c->plen = len - off;
          c->poff = 0;
          watch(fd, EPOLLOUT, EPOLL_CTL_MOD); /* stop reading until it is out */
          return 0;
        }
        off += (size_t)w;
      }
    }
    if ((size_t)n < BUF) return 0; /* a short read: the socket is drained */
  }
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 0;
  const char *host = argc > 2 ? argv[2] : "127.0.0.1";
  refresh();

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
    fprintf(stderr, "epoll_http: bad IPv4 address %s\n", host);
    return 1;
  }
  if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0) die("bind");
  if (listen(lfd, 4096) < 0) die("listen");
  socklen_t sl = sizeof sa;
  getsockname(lfd, (struct sockaddr *)&sa, &sl);

  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  watch(lfd, EPOLLIN, EPOLL_CTL_ADD);
  printf("listening %d\n", ntohs(sa.sin_port));
  fflush(stdout);

  static unsigned char buf[BUF];
  struct epoll_event evs[256];
  for (;;) {
    int n = epoll_wait(ep, evs, 256, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int k = 0; k < n; k++) {
      int fd = evs[k].data.fd;
      if (fd == lfd) {
        for (;;) {
          int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) fprintf(stderr, "epoll_http: accept: %s\n", strerror(errno));
            break;
          }
          if (c >= MAX_CONN || !(conns[c] = calloc(1, sizeof(struct conn)))) {
            close(c);
            continue;
          }
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          watch(c, EPOLLIN, EPOLL_CTL_ADD);
        }
        continue;
      }
      struct conn *c = conns[fd];
      if (!c) continue;
      unsigned e = evs[k].events;
      if (c->pending) {
        int r = (e & (EPOLLERR | EPOLLHUP)) ? -1 : flush_pending(fd, c);
        if (r < 0) drop(fd);
        else if (r > 0) watch(fd, EPOLLIN, EPOLL_CTL_MOD);
        continue;
      }
      if (e & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        if (serve(fd, c, buf) < 0) drop(fd);
      }
    }
  }
}
