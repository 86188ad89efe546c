/*
 * epoll_echo: the floor of the peer benchmarks (benches/node/peers.mjs, benches/node/memory.mjs),
 * a minimal single-thread echo server on level-triggered epoll.
 *
 *   epoll_echo [PORT] [HOST]      (PORT 0 or absent: the kernel picks; HOST default 127.0.0.1)
 *
 * Prints `listening PORT` on stdout once it accepts. Each readable connection is read into one
 * shared 64 KiB buffer and written straight back; what the socket does not take is kept in a
 * per-connection buffer, the connection then waits for EPOLLOUT and is not read until that is
 * out (backpressure). An idle connection costs the kernel's socket and one pointer here.
 * TCP_NODELAY on every accepted connection; RLIMIT_NOFILE raised to the hard limit.
 * Exits on SIGTERM/SIGINT (default action).
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
#include <unistd.h>

#define BUF 65536

struct pending {
  size_t len, off;
  unsigned char data[];
};

static struct pending **pend; /* indexed by fd; NULL when nothing waits to be written */
static size_t npend;
static int ep;

static void die(const char *what) {
  fprintf(stderr, "epoll_echo: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void drop(int fd) {
  if ((size_t)fd < npend && pend[fd]) {
    free(pend[fd]);
    pend[fd] = NULL;
  }
  close(fd); /* also leaves the epoll set */
}

static void watch(int fd, unsigned events, int op) {
  struct epoll_event ev = {.events = events, .data.fd = fd};
  if (epoll_ctl(ep, op, fd, &ev) < 0) die("epoll_ctl");
}

/* Writes what is pending on fd; returns 1 when nothing is left, 0 on EAGAIN, -1 on error. */
static int flush_pending(int fd) {
  struct pending *p = pend[fd];
  while (p->off < p->len) {
    ssize_t n = send(fd, p->data + p->off, p->len - p->off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      if (errno == EINTR) continue;
      return -1;
    }
    p->off += (size_t)n;
  }
  free(p);
  pend[fd] = NULL;
  return 1;
}

/* Echoes what is readable on fd. Returns -1 when the connection is to be dropped. */
static int echo(int fd, unsigned char *buf) {
  for (;;) {
    ssize_t n = recv(fd, buf, BUF, 0);
    if (n == 0) return -1;
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      if (errno == EINTR) continue;
      return -1;
    }
    size_t off = 0;
    while (off < (size_t)n) {
      ssize_t w = send(fd, buf + off, (size_t)n - off, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        struct pending *p = malloc(sizeof *p + ((size_t)n - off));
        if (!p) die("malloc");
        p->len = (size_t)n - off;
        p->off = 0;
        memcpy(p->data, buf + off, p->len);
        pend[fd] = p;
        watch(fd, EPOLLOUT, EPOLL_CTL_MOD); /* stop reading until it is out */
        return 0;
      }
      off += (size_t)w;
    }
    if ((size_t)n < BUF) return 0; /* a short read: the socket is drained */
  }
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 0;
  const char *host = argc > 2 ? argv[2] : "127.0.0.1";

  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  getrlimit(RLIMIT_NOFILE, &rl);
  npend = rl.rlim_cur == RLIM_INFINITY ? 1u << 20 : (size_t)rl.rlim_cur;
  pend = calloc(npend, sizeof *pend);
  if (!pend) die("calloc");

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
    fprintf(stderr, "epoll_echo: bad IPv4 address %s\n", host);
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
            if (errno != EAGAIN && errno != EWOULDBLOCK) fprintf(stderr, "epoll_echo: accept: %s\n", strerror(errno));
            break;
          }
          if ((size_t)c >= npend) {
            close(c);
            continue;
          }
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          watch(c, EPOLLIN, EPOLL_CTL_ADD);
        }
        continue;
      }
      unsigned e = evs[k].events;
      if (pend[fd]) {
        int r = (e & (EPOLLERR | EPOLLHUP)) ? -1 : flush_pending(fd);
        if (r < 0) drop(fd);
        else if (r > 0) watch(fd, EPOLLIN, EPOLL_CTL_MOD);
        continue;
      }
      if (e & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        if (echo(fd, buf) < 0) drop(fd);
      }
    }
  }
}
