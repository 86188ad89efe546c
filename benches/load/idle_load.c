/*
 * idle_load: many idle connections to an echo server, for the memory benchmark
 * (benches/node/memory.mjs).
 *
 *   idle_load HOST PORT CONNECTIONS [SIZE] [MAX_PENDING] [SERVER_PID]
 *
 * 1. Raises RLIMIT_NOFILE to the hard limit; exits with status 3 and a message on stderr if
 *    CONNECTIONS cannot be opened (fd limit or local port range too small).
 * 2. Opens CONNECTIONS TCP connections (non-blocking connect, epoll) with at most MAX_PENDING
 *    (default 256) of them pending at once, and prints
 *    `{"phase":"connected","connections":N,"connect_s":S}` once every one is established (and,
 *    with SERVER_PID, accepted). Pending: in the handshake or, with SERVER_PID, established but
 *    not yet accepted by the server, counted from the entries of /proc/SERVER_PID/fd. Why: a
 *    handshake completes in the kernel before the server accepts; if the accept queue (the listen
 *    backlog, 511 for node:net) is full, the kernel drops the client's last ACK and, with
 *    syncookies, keeps no state for that connection: the client holds an established
 *    connection the server never sees until the client sends on it. Keeping the pending ones
 *    under the smallest backlog makes the server accept every connection while it is idle.
 * 3. Waits for a line on stdin (the connections stay idle, never used; any byte or hang-up from
 *    the server meanwhile is an error), then sends one SIZE-byte message (default 64) on every
 *    connection, reads every echo back and compares it with what was sent, and prints
 *    `{"phase":"echoed","connections":N,"echo_s":S}`.
 * 4. Waits for another line on stdin (or its end), closes everything and exits 0.
 * End of stdin at any point: exits (status 0 after step 3, else 4). Errors: status 2.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn {
  int fd;
  int state; /* 0 not started, 1 connecting, 2 connected, 3 sending/awaiting echo, 4 echoed */
  size_t sent, got;
};

static size_t size = 64;
static int ep;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
  fprintf(stderr, "idle_load: %s: %s\n", what, strerror(errno));
  exit(2);
}

static unsigned char byte_of(int idx, size_t i) { return (unsigned char)(i * 131u + (unsigned)idx * 17u + 5u); }

static void watch(struct conn *c, unsigned events, int op) {
  struct epoll_event ev = {.events = events, .data.ptr = c};
  if (epoll_ctl(ep, op, c->fd, &ev) < 0) die("epoll_ctl");
}

/* Entries of /proc/PID/fd (the process's open fds); -1 if unreadable. */
static int fd_count(int pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd", pid);
  DIR *d = opendir(path);
  if (!d) return -1;
  int k = 0;
  struct dirent *e;
  while ((e = readdir(d))) k += e->d_name[0] != '.';
  closedir(d);
  return k;
}

/*
 * The accept queue of the listener at `sa` (sock_diag, an exact lookup of one socket): queued =
 * established connections not yet accepted, backlog = its limit. Returns -1 if unavailable.
 */
static int listen_queue(const struct sockaddr_in *sa, unsigned *queued, unsigned *backlog) {
  static int nl = -2;
  if (nl == -2) nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl < 0) return -1;
  struct {
    struct nlmsghdr nlh;
    struct inet_diag_req_v2 r;
  } req;
  memset(&req, 0, sizeof req);
  req.nlh.nlmsg_len = sizeof req;
  req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  req.nlh.nlmsg_flags = NLM_F_REQUEST;
  req.r.sdiag_family = AF_INET;
  req.r.sdiag_protocol = IPPROTO_TCP;
  req.r.idiag_states = 1u << 10; /* TCP_LISTEN */
  req.r.id.idiag_sport = sa->sin_port;
  req.r.id.idiag_src[0] = sa->sin_addr.s_addr;
  req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  if (send(nl, &req, sizeof req, 0) < 0) return -1;
  union {
    struct nlmsghdr h;
    char b[8192];
  } resp;
  ssize_t got = recv(nl, &resp, sizeof resp, 0);
  if (got < (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) || resp.h.nlmsg_type != SOCK_DIAG_BY_FAMILY) return -1;
  struct inet_diag_msg *m = NLMSG_DATA(&resp.h);
  if (m->idiag_state != 10) return -1;
  *queued = m->idiag_rqueue;
  *backlog = m->idiag_wqueue;
  return 0;
}

/* Reads a line (or the end) from stdin: returns 0 at the end of stdin. */
static int read_line(void) {
  char b;
  for (;;) {
    ssize_t n = read(0, &b, 1);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR) continue;
      die("read stdin");
    }
    if (b == '\n') return 1;
  }
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s HOST PORT CONNECTIONS [SIZE] [MAX_CONNECTING]\n", argv[0]);
    return 1;
  }
  const char *host = argv[1];
  int port = atoi(argv[2]);
  int n = atoi(argv[3]);
  if (argc > 4) size = (size_t)atol(argv[4]);
  int max_pending = argc > 5 ? atoi(argv[5]) : 256;
  int server_pid = argc > 6 ? atoi(argv[6]) : 0;
  if (n < 1 || size < 1 || size > 65536 || max_pending < 1) {
    fprintf(stderr, "idle_load: bad arguments\n");
    return 1;
  }

  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)n + 16) {
    fprintf(stderr, "idle_load: cannot open %d connections: the fd limit is %llu (hard %llu); raise it (ulimit -Hn, /etc/security/limits.conf)\n", n,
            (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
    return 3;
  }
  FILE *pr = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
  int lo = 0, hi = 0;
  if (pr && fscanf(pr, "%d %d", &lo, &hi) == 2 && hi - lo + 1 < n) {
    fprintf(stderr, "idle_load: cannot open %d connections to one address: the local port range is %d-%d (%d ports); widen net.ipv4.ip_local_port_range\n", n, lo, hi,
            hi - lo + 1);
    return 3;
  }
  if (pr) fclose(pr);

  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
    fprintf(stderr, "idle_load: bad IPv4 address %s\n", host);
    return 1;
  }
  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  struct conn *cs = calloc((size_t)n, sizeof *cs);
  unsigned char *buf = malloc(size);
  struct epoll_event evs[512];

  /* Phase 1: connect, at most `limit` connections pending at once (see the top). */
  unsigned queued = 0, backlog = 0;
  int use_diag = listen_queue(&sa, &queued, &backlog) == 0;
  int fd0 = !use_diag && server_pid > 0 ? fd_count(server_pid) : -1;
  if (!use_diag && server_pid > 0 && fd0 < 0) die("/proc/SERVER_PID/fd");
  int limit = max_pending;
  if (use_diag && (int)backlog / 2 < limit) limit = backlog > 1 ? (int)backlog / 2 : 1;
  double t0 = now_s();
  int next = 0, connecting = 0, connected = 0, accepted = 0;
  for (;;) {
    /* Established but not yet accepted: the listener's accept queue (or, without sock_diag,
     * what the server holds beyond its fds at the start). */
    int waiting = 0;
    if (use_diag) {
      if (listen_queue(&sa, &queued, &backlog) < 0) {
        fprintf(stderr, "idle_load: the listener on port %d is gone\n", port);
        return 2;
      }
      waiting = (int)queued;
      accepted = connected - waiting;
    } else if (fd0 >= 0 && (connected == n || next - accepted >= limit)) {
      int k = fd_count(server_pid);
      if (k < 0) {
        fprintf(stderr, "idle_load: the server (pid %d) is gone\n", server_pid);
        return 2;
      }
      accepted = k - fd0;
      waiting = connected - accepted;
    } else if (fd0 >= 0) {
      waiting = connected - accepted;
    } else {
      accepted = connected;
    }
    if (connected == n && accepted >= n) break;
    while (next < n && connecting + waiting < limit) {
      struct conn *c = &cs[next++];
      c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (c->fd < 0) die("socket");
      int one = 1;
      setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) die("connect");
      c->state = 1;
      connecting++;
      watch(c, EPOLLOUT, EPOLL_CTL_ADD);
    }
    /* Nothing in the handshake: only the server's accepting can make progress. */
    int idle_wait = connecting == 0;
    if (idle_wait && now_s() - t0 > 120) {
      fprintf(stderr, "idle_load: the server accepted %d of %d connections in 120 s\n", accepted, n);
      return 2;
    }
    int k = epoll_wait(ep, evs, 512, idle_wait ? 0 : 60000);
    if (k < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    if (k == 0) {
      if (!idle_wait) {
        fprintf(stderr, "idle_load: no connection progressed for 60 s (%d of %d connected)\n", connected, n);
        return 2;
      }
      usleep(use_diag ? 100 : 1000);
      continue;
    }
    for (int i = 0; i < k; i++) {
      struct conn *c = evs[i].data.ptr;
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err || (evs[i].events & (EPOLLERR | EPOLLHUP))) {
        errno = err ? err : ECONNRESET;
        fprintf(stderr, "idle_load: connection %d of %d: ", (int)(c - cs), n);
        die("connect");
      }
      c->state = 2;
      connecting--;
      connected++;
      watch(c, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_MOD); /* idle: anything from the server is an error */
    }
  }
  printf("{\"phase\":\"connected\",\"connections\":%d,\"connect_s\":%.4f,\"paced_by\":\"%s\",\"max_pending\":%d,\"backlog\":%u}\n", n,
         now_s() - t0, use_diag ? "sock_diag" : fd0 >= 0 ? "proc_fd" : "none", limit, backlog);
  fflush(stdout);

  /* Phase 2: idle until a line on stdin; a server that closes or writes is an error. */
  struct epoll_event sev = {.events = EPOLLIN, .data.ptr = NULL};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, 0, &sev) < 0) die("epoll_ctl stdin");
  for (int go = 0; !go;) {
    int k = epoll_wait(ep, evs, 512, -1);
    if (k < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < k; i++) {
      struct conn *c = evs[i].data.ptr;
      if (!c) {
        if (!read_line()) return 4;
        go = 1;
        continue;
      }
      fprintf(stderr, "idle_load: idle connection %d: the server %s\n", (int)(c - cs),
              (evs[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ? "closed it" : "sent bytes");
      return 2;
    }
  }
  epoll_ctl(ep, EPOLL_CTL_DEL, 0, NULL);

  /* Phase 3: one message on every connection, every echo read back and checked. */
  t0 = now_s();
  int echoed = 0;
  for (int i = 0; i < n; i++) {
    struct conn *c = &cs[i];
    for (size_t j = 0; j < size; j++) buf[j] = byte_of(i, j);
    ssize_t w = send(c->fd, buf, size, MSG_NOSIGNAL);
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) die("send");
    c->sent = w < 0 ? 0 : (size_t)w;
    c->state = 3;
    watch(c, EPOLLIN | EPOLLRDHUP | (c->sent < size ? EPOLLOUT : 0), EPOLL_CTL_MOD);
  }
  while (echoed < n) {
    int k = epoll_wait(ep, evs, 512, 60000);
    if (k < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    if (k == 0) {
      fprintf(stderr, "idle_load: no echo for 60 s (%d of %d echoed)\n", echoed, n);
      return 2;
    }
    for (int e = 0; e < k; e++) {
      struct conn *c = evs[e].data.ptr;
      int idx = (int)(c - cs);
      if ((evs[e].events & EPOLLOUT) && c->sent < size) {
        for (size_t j = 0; j < size; j++) buf[j] = byte_of(idx, j);
        ssize_t w = send(c->fd, buf + c->sent, size - c->sent, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) die("send");
        if (w > 0) c->sent += (size_t)w;
        if (c->sent == size) watch(c, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_MOD);
      }
      if (evs[e].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        for (;;) {
          ssize_t r = recv(c->fd, buf, size, 0);
          if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            die("recv");
          }
          if (r == 0 || c->got + (size_t)r > c->sent) {
            fprintf(stderr, "idle_load: connection %d: %s\n", idx, r == 0 ? "closed by the server" : "more bytes than were sent");
            return 2;
          }
          for (ssize_t j = 0; j < r; j++) {
            if (buf[j] != byte_of(idx, c->got + (size_t)j)) {
              fprintf(stderr, "idle_load: mismatch on connection %d\n", idx);
              return 2;
            }
          }
          c->got += (size_t)r;
          if (c->got == size) {
            c->state = 4;
            echoed++;
            watch(c, EPOLLRDHUP, EPOLL_CTL_MOD);
            break;
          }
        }
      }
    }
  }
  printf("{\"phase\":\"echoed\",\"connections\":%d,\"echo_s\":%.4f}\n", n, now_s() - t0);
  fflush(stdout);

  /* Phase 4: hold the connections until told (or stdin ends), then close them. */
  read_line();
  for (int i = 0; i < n; i++) close(cs[i].fd);
  return 0;
}
