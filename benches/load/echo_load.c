/*
 * echo_load: a small ping-pong load generator for echo / line servers (loopback benchmarks).
 *
 *   echo_load HOST PORT CONNECTIONS SIZE SECONDS [WARMUP_SECONDS] [echo|lines|bulk|stream] [SERVER_PID] [DEPTH]
 *
 * Opens CONNECTIONS TCP connections (TCP_NODELAY) and keeps exactly one SIZE-byte message in
 * flight on each: send SIZE bytes, wait until SIZE bytes came back, check them against what was
 * sent, send the next. Single thread, epoll, non-blocking sockets. After WARMUP_SECONDS
 * (default 1) it measures for SECONDS and prints one JSON object:
 *   messages, msg_per_s, p50_us / p99_us / max_us (round trip, from a 1 µs histogram),
 *   client_cpu_s (getrusage user+sys over the measured window; client_user_s the user part: on
 *   loopback the sender's system time includes the kernel's delivery to the receiver) and client_cpu_share
 *   (client CPU / wall time: 1.0 would mean the client used a whole core).
 * Mode `lines`: every message is SIZE-1 printable bytes and a '\n' (a line-framed request; the
 * server must answer with the same line). Mode `echo` (default): arbitrary bytes.
 * Mode `bulk`: each connection streams SIZE-byte messages without waiting for each answer,
 * keeping up to DEPTH (default 4) messages in flight: a new message enters the window when the
 * last byte of an older one is back. The stream of connection i is a fixed pseudo-random pattern
 * (period 65521 bytes, starting at an offset that depends on i), and every byte read back is
 * compared with it. A message counts when its last byte is back; its round trip is from entering
 * the window to then. Extra fields in bulk mode: depth, mb_per_s (echoed bytes of the window,
 * 10^6 bytes per second, one direction) and bytes_verified (all bytes read back, warm-up too).
 * Mode `stream`: like `bulk` without a window: each connection writes SIZE-byte messages (one
 * send of at most SIZE bytes each) as fast as the socket takes them, and reads the echo
 * concurrently (same pattern, every byte checked). The server then always has a backlog to read
 * and a peer that is always ready to take more: what a proxy or a file transfer sees. No round
 * trip is measured (p50/p99/max are 0, depth is 0); mb_per_s counts the messages whose last byte
 * came back in the window.
 * With SERVER_PID, it also reads utime+stime of that process from /proc/PID/stat at the start
 * and the end of the measured window (server_cpu_ticks, and utime alone as server_user_ticks;
 * clock_ticks_per_s = sysconf(_SC_CLK_TCK)),
 * so the server's CPU is taken over exactly the window the messages are counted in.
 * machine_busy_ticks: busy ticks of all CPUs over the window (/proc/stat), to see other load.
 * total_messages counts the warm-up too (to divide server-side counters by).
 * ECHO_LOAD_RATE=R in the environment (modes echo and lines): a fixed rate of R messages per
 * second over all connections instead of as fast as the server answers: a connection whose
 * answer came back waits for the next slot of the schedule (at most one slot per connection is
 * owed after a stall, so no burst catches up; epoll's 1 ms timeout is the tick). The server's CPU
 * per message at a rate every server keeps is the cost of a message, not of a saturated loop.
 * Printed as rate_target (0: unlimited).
 * Exit status 2 on a mismatch, a closed connection or a socket error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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

#define HIST_US 200000 /* 1 µs buckets up to 200 ms; beyond goes to the last bucket */

struct conn {
  int fd;
  int connected;
  size_t sent, got;
  uint32_t seq;
  uint64_t start_ns;
  unsigned char *out, *in;
};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double cpu_s(double *user) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
  return *user + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void die(const char *what) {
  fprintf(stderr, "echo_load: %s: %s\n", what, strerror(errno));
  exit(2);
}

/* utime + stime (clock ticks) of a process, all its threads; -1 if unreadable. `user` (if not
   NULL) gets utime alone: the process's own code, apart from the kernel's work for it. */
static long long proc_ticks(int pid, long long *user) {
  if (pid <= 0) return -1;
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *p = strrchr(buf, ')'); /* comm may hold spaces */
  if (!p) return -1;
  unsigned long long ut = 0, st = 0;
  /* after ')': state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15) */
  if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return -1;
  if (user) *user = (long long)ut;
  return (long long)(ut + st);
}

/* Busy clock ticks of the whole machine (all CPUs, /proc/stat: all but idle and iowait). */
static long long machine_busy_ticks(void) {
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return -1;
  unsigned long long v[10] = {0};
  int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
  fclose(f);
  if (n < 8) return -1;
  return (long long)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]); /* user nice system irq softirq steal */
}

static size_t size;
static int lines;
static int ep;

/* Bulk mode: the pattern (twice over, so any run of up to PAT bytes is contiguous) and state. */
#define PAT 65521u
static unsigned char pat2[2 * PAT];
static unsigned char rbuf[1 << 18];
static int depth = 4;
static int stream; /* mode `stream`: no window, one send per message (at most SIZE bytes) */

struct bulk {
  uint64_t sent, got, done; /* bytes sent, bytes read back, messages complete */
  uint64_t *stamp;          /* stamp[m % depth]: when message m entered the window */
};

static void fill_pattern(void) {
  uint32_t x = 2463534242u;
  for (unsigned i = 0; i < PAT; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    pat2[i] = pat2[i + PAT] = (unsigned char)(x >> 24);
  }
}

/* Offset in the pattern of byte `off` of connection idx's stream. */
static size_t pat_at(int idx, uint64_t off) { return (size_t)((off + (uint64_t)idx * 7919u) % PAT); }

/* Sends bulk bytes up to the window; returns 0 when the socket is full (EPOLLOUT wanted). */
static int bulk_out(struct conn *c, struct bulk *b, int idx) {
  uint64_t limit = stream ? UINT64_MAX : (b->done + (uint64_t)depth) * size;
  while (b->sent < limit) {
    size_t len = stream ? size - (size_t)(b->sent % size) : (size_t)(limit - b->sent);
    if (len > PAT) len = PAT;
    ssize_t n = send(c->fd, pat2 + pat_at(idx, b->sent), len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      if (errno == EINTR) continue;
      die("send");
    }
    b->sent += (uint64_t)n;
  }
  return 1;
}

/* Fills the next message: content depends on the connection and the sequence number. */
static void fill(struct conn *c, int idx) {
  c->seq++;
  for (size_t i = 0; i < size; i++) {
    unsigned v = (unsigned)(i * 31u + c->seq * 7u + (unsigned)idx * 13u);
    c->out[i] = lines ? (unsigned char)('a' + v % 26u) : (unsigned char)v;
  }
  if (lines) c->out[size - 1] = '\n';
}

static void set_out(struct conn *c, int want) {
  struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0), .data.ptr = c};
  if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) < 0) die("epoll_ctl");
}

/* Writes what is left of the current message; returns 1 if all of it is out. */
static int pump_out(struct conn *c) {
  while (c->sent < size) {
    ssize_t n = send(c->fd, c->out + c->sent, size - c->sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        set_out(c, 1);
        return 0;
      }
      die("send");
    }
    c->sent += (size_t)n;
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s HOST PORT CONNECTIONS SIZE SECONDS [WARMUP_SECONDS] [echo|lines|bulk|stream] [SERVER_PID] [DEPTH]\n", argv[0]);
    return 1;
  }
  const char *host = argv[1];
  int port = atoi(argv[2]);
  int nconn = atoi(argv[3]);
  size = (size_t)atol(argv[4]);
  double seconds = atof(argv[5]);
  double warmup = argc > 6 ? atof(argv[6]) : 1.0;
  lines = argc > 7 && strcmp(argv[7], "lines") == 0;
  stream = argc > 7 && strcmp(argv[7], "stream") == 0;
  int bulk = stream || (argc > 7 && strcmp(argv[7], "bulk") == 0);
  int server_pid = argc > 8 ? atoi(argv[8]) : 0;
  if (argc > 9) depth = atoi(argv[9]);
  if (stream) depth = 1; /* one stamp slot; no round trip is recorded */
  double rate = getenv("ECHO_LOAD_RATE") ? atof(getenv("ECHO_LOAD_RATE")) : 0;
  if (bulk) rate = 0;
  if (nconn < 1 || size < 1 || seconds <= 0 || warmup < 0 || (lines && size < 2) || depth < 1 || depth > 1024) {
    fprintf(stderr, "echo_load: bad arguments\n");
    return 1;
  }

  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
    fprintf(stderr, "echo_load: bad IPv4 address %s\n", host);
    return 1;
  }
  ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  struct conn *cs = calloc((size_t)nconn, sizeof *cs);
  uint64_t *hist = calloc(HIST_US + 1, sizeof *hist);
  struct bulk *bs = bulk ? calloc((size_t)nconn, sizeof *bs) : NULL;
  uint64_t bytes_verified = 0;
  if (bulk) fill_pattern();
  for (int i = 0; i < nconn; i++) {
    struct conn *c = &cs[i];
    if (bulk) {
      bs[i].stamp = calloc((size_t)depth, sizeof *bs[i].stamp);
    } else {
      c->out = malloc(size);
      c->in = malloc(size);
    }
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) die("socket");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) die("connect");
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl");
  }

  /* ECHO_LOAD_RATE: the connections waiting for a slot (a ring), and the slots owed. */
  int *idle_q = calloc((size_t)nconn, sizeof *idle_q);
  size_t q_head = 0, q_len = 0;
  double credit = 0;
  uint64_t last_ns = 0;

  uint64_t t0 = now_ns();
  uint64_t measure_from = t0 + (uint64_t)(warmup * 1e9);
  uint64_t measure_to = measure_from + (uint64_t)(seconds * 1e9);
  int measuring = 0;
  double cpu0 = 0, user0 = 0, user1 = 0;
  long long srv0 = -1, srv1 = -1, srvu0 = 0, srvu1 = 0, busy0 = -1, busy1 = -1;
  uint64_t messages = 0, total = 0, max_us = 0;
  struct epoll_event evs[256];

  for (;;) {
    uint64_t t = now_ns();
    if (!measuring && t >= measure_from) {
      measuring = 1;
      cpu0 = cpu_s(&user0);
      srv0 = proc_ticks(server_pid, &srvu0);
      busy0 = machine_busy_ticks();
      t = now_ns();
      measure_from = t;
      measure_to = t + (uint64_t)(seconds * 1e9);
    }
    if (measuring && t >= measure_to) {
      srv1 = proc_ticks(server_pid, &srvu1);
      busy1 = machine_busy_ticks();
      break;
    }
    int timeout_ms = (int)(((measuring ? measure_to : measure_from) - t) / 1000000ull) + 1;
    if (rate > 0 && timeout_ms > 1) timeout_ms = 1;
    int n = epoll_wait(ep, evs, 256, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int k = 0; k < n; k++) {
      struct conn *c = evs[k].data.ptr;
      int idx = (int)(c - cs);
      if (evs[k].events & (EPOLLERR | EPOLLHUP)) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        errno = err ? err : ECONNRESET;
        die(c->connected ? "connection" : "connect");
      }
      if (bulk) {
        struct bulk *b = &bs[idx];
        if (!c->connected) {
          if (!(evs[k].events & EPOLLOUT)) continue;
          c->connected = 1;
          uint64_t t = now_ns();
          for (int m = 0; m < depth; m++) b->stamp[m] = t;
          set_out(c, !bulk_out(c, b, idx));
          continue;
        }
        if ((evs[k].events & EPOLLOUT) && bulk_out(c, b, idx)) set_out(c, 0);
        if (!(evs[k].events & EPOLLIN)) continue;
        int full = 0;
        for (;;) {
          ssize_t r = recv(c->fd, rbuf, sizeof rbuf, 0);
          if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            die("recv");
          }
          if (r == 0) {
            fprintf(stderr, "echo_load: connection %d closed by the server\n", idx);
            return 2;
          }
          if (b->got + (uint64_t)r > b->sent) {
            fprintf(stderr, "echo_load: unexpected bytes on connection %d\n", idx);
            return 2;
          }
          for (size_t off = 0; off < (size_t)r;) {
            size_t len = (size_t)r - off;
            if (len > PAT) len = PAT;
            if (memcmp(rbuf + off, pat2 + pat_at(idx, b->got + off), len) != 0) {
              fprintf(stderr, "echo_load: mismatch on connection %d at byte %llu\n", idx, (unsigned long long)(b->got + off));
              return 2;
            }
            off += len;
          }
          b->got += (uint64_t)r;
          bytes_verified += (uint64_t)r;
          uint64_t done_at = 0;
          while (b->got >= (b->done + 1) * size) {
            if (!done_at) done_at = now_ns();
            uint64_t *slot = &b->stamp[b->done % (uint64_t)depth];
            total++;
            if (measuring && done_at <= measure_to) {
              uint64_t us = stream ? 0 : (done_at - *slot) / 1000u;
              if (us > max_us) max_us = us;
              if (!stream) hist[us > HIST_US ? HIST_US : us]++;
              messages++;
            }
            *slot = done_at; /* message done + depth enters the window in the same slot */
            b->done++;
          }
          if (done_at && !stream && !full && !bulk_out(c, b, idx)) {
            set_out(c, 1);
            full = 1;
          }
          if ((size_t)r < sizeof rbuf) break;
        }
        continue;
      }
      if (!c->connected && (evs[k].events & EPOLLOUT) && rate > 0) {
        c->connected = 1;
        c->sent = c->got = size; /* nothing outstanding: wait for a slot */
        set_out(c, 0);
        idle_q[(q_head + q_len++) % (size_t)nconn] = idx;
        continue;
      }
      if (!c->connected && (evs[k].events & EPOLLOUT)) {
        c->connected = 1;
        fill(c, idx);
        c->sent = c->got = 0;
        c->start_ns = now_ns();
        if (pump_out(c)) set_out(c, 0);
        continue;
      }
      if ((evs[k].events & EPOLLOUT) && c->sent < size) {
        if (pump_out(c)) set_out(c, 0);
      }
      if (evs[k].events & EPOLLIN) {
        for (;;) {
          if (c->got >= c->sent) {
            /* Nothing outstanding (a partial send): data now would be a protocol error. */
            unsigned char b;
            ssize_t r = recv(c->fd, &b, 1, MSG_PEEK);
            if (r > 0) {
              fprintf(stderr, "echo_load: unexpected bytes on connection %d\n", idx);
              return 2;
            }
            if (r == 0) {
              fprintf(stderr, "echo_load: connection %d closed by the server\n", idx);
              return 2;
            }
            break;
          }
          ssize_t r = recv(c->fd, c->in + c->got, c->sent - c->got, 0);
          if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            die("recv");
          }
          if (r == 0) {
            fprintf(stderr, "echo_load: connection %d closed by the server\n", idx);
            return 2;
          }
          c->got += (size_t)r;
          if (c->got == size) {
            if (memcmp(c->in, c->out, size) != 0) {
              fprintf(stderr, "echo_load: mismatch on connection %d\n", idx);
              return 2;
            }
            uint64_t done = now_ns();
            total++;
            if (measuring && done <= measure_to) {
              uint64_t us = (done - c->start_ns) / 1000u;
              if (us > max_us) max_us = us;
              hist[us > HIST_US ? HIST_US : us]++;
              messages++;
            }
            if (rate > 0) {
              idle_q[(q_head + q_len++) % (size_t)nconn] = idx;
              break;
            }
            fill(c, idx);
            c->sent = c->got = 0;
            c->start_ns = done;
            /* The answer cannot be there yet: wait for the next readiness, not an EAGAIN. */
            pump_out(c);
            break;
          }
        }
      }
    }
    if (rate > 0) {
      uint64_t t2 = now_ns();
      if (last_ns) credit += rate * (double)(t2 - last_ns) / 1e9;
      last_ns = t2;
      if (credit > (double)nconn) credit = (double)nconn;
      while (credit >= 1.0 && q_len > 0) {
        int i = idle_q[q_head];
        q_head = (q_head + 1) % (size_t)nconn;
        q_len--;
        credit -= 1.0;
        struct conn *c = &cs[i];
        fill(c, i);
        c->sent = c->got = 0;
        c->start_ns = t2;
        pump_out(c);
      }
    }
  }
  double wall = (double)(now_ns() - measure_from) / 1e9;
  double cpu = cpu_s(&user1) - cpu0;
  double user = user1 - user0;
  uint64_t p50 = 0, p99 = 0, acc = 0;
  int have50 = 0;
  for (uint64_t i = 0; i <= HIST_US; i++) {
    acc += hist[i];
    if (!have50 && acc * 2 >= messages) { p50 = i; have50 = 1; }
    if (acc * 100 >= messages * 99) { p99 = i; break; }
  }
  printf("{\"connections\":%d,\"size\":%zu,\"mode\":\"%s\",\"seconds\":%.3f,\"messages\":%llu,"
         "\"msg_per_s\":%.1f,\"p50_us\":%llu,\"p99_us\":%llu,\"max_us\":%llu,"
         "\"client_cpu_s\":%.4f,\"client_user_s\":%.4f,\"client_cpu_share\":%.4f,\"total_messages\":%llu,"
         "\"server_cpu_ticks\":%lld,\"server_user_ticks\":%lld,\"clock_ticks_per_s\":%ld,\"machine_busy_ticks\":%lld,\"rate_target\":%.1f",
         nconn, size, stream ? "stream" : bulk ? "bulk" : lines ? "lines" : "echo", wall, (unsigned long long)messages, messages / wall,
         (unsigned long long)p50, (unsigned long long)p99, (unsigned long long)max_us, cpu, user, cpu / wall,
         (unsigned long long)total, (srv0 >= 0 && srv1 >= 0) ? srv1 - srv0 : -1LL,
         (srv0 >= 0 && srv1 >= 0) ? srvu1 - srvu0 : -1LL, sysconf(_SC_CLK_TCK),
         (busy0 >= 0 && busy1 >= 0) ? busy1 - busy0 : -1LL, rate);
  if (bulk)
    printf(",\"depth\":%d,\"mb_per_s\":%.1f,\"bytes_verified\":%llu", stream ? 0 : depth, (double)messages * (double)size / wall / 1e6,
           (unsigned long long)bytes_verified);
  printf("}\n");
  for (int i = 0; i < nconn; i++) close(cs[i].fd);
  return 0;
}
