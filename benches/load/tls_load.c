/*
 * tls_load: a TLS load generator on OpenSSL 3 (libssl, libcrypto) for the TLS benchmark
 * (benches/node/tls.mjs). Single thread, epoll, non-blocking sockets and non-blocking SSL, like
 * echo_load.c; TLS 1.3 only, OpenSSL's default client offer (the server picks the cipher), the
 * server's certificate verified against --ca for --name (SNI and host name).
 *
 *   cc -O2 -Wall -o tls_load tls_load.c -lssl -lcrypto
 *   tls_load --mode MODE --port PORT --ca CA.pem [--host 127.0.0.1] [--name localhost]
 *            [--conns N] [--size BYTES] [--seconds S] [--warmup S] [--server-pid PID]
 *            [--depth D] [--pending N]
 *
 * The client's CPU per handshake is kept low so that it does not bound the server: the chain is
 * verified in full once per run (see verify_once). OpenSSL 3.0's client still costs more per full
 * handshake than a rustls server: read handshakes/s with the server's cores (CPU per handshake is
 * then the figure to compare).
 *
 * Modes:
 *   echo       N connections (default 50), each with one SIZE-byte message (default 64) in
 *              flight: write it, read SIZE bytes back, compare, write the next (echo_load's echo).
 *   bulk       N connections stream SIZE-byte messages keeping DEPTH (default 4) in flight, read
 *              concurrently; the stream of connection i is a fixed pseudo-random pattern and every
 *              byte read back is checked against it (echo_load's bulk). Writes are SSL_write calls
 *              of at most 16 KiB (one record each).
 *   handshake  N concurrent connectors (default 16), each in a loop: TCP connect, full TLS
 *              handshake, one SIZE-byte echo (checked), close_notify, wait for the server's end
 *              (so the server closes first and the client's ports leave no TIME_WAIT), close.
 *   resume     as handshake, each connector offering a session (TLS 1.3 ticket) its earlier
 *              connections received and it has not offered yet, newest first (SSL_set_session);
 *              with none left (its first connection, or a server that issues no ticket on a
 *              resumed handshake) it makes a full handshake. Reports the share of cycles really
 *              resumed (SSL_session_reused).
 *   idle       opens N connections, at most PENDING (default 128) in progress at once (TCP
 *              connect, handshake, one SIZE-byte echo checked), prints
 *              `{"phase":"connected",...}` once all are done, then holds them (anything from the
 *              server meanwhile is an error) until a line on stdin (or its end), closes them all
 *              and exits 0. Keep PENDING under half the server's listen backlog (see idle_load.c).
 *
 * echo/bulk/handshake/resume measure for SECONDS (default 3) after WARMUP seconds (default 1)
 * and print one JSON object: messages (echoes, or cycles in the handshake modes), msg_per_s,
 * p50_us/p99_us/max_us (round trip; in the handshake modes the whole cycle from connect to the
 * verified echo), client_cpu_s/client_user_s/client_cpu_share (getrusage over the window),
 * server_cpu_ticks (utime+stime of --server-pid from /proc/PID/stat at the edges of the window,
 * all its threads) with clock_ticks_per_s, machine_busy_ticks (/proc/stat over the window),
 * total_messages (warm-up included), protocol, cipher and group of the last handshake; bulk adds
 * depth, mb_per_s (10^6 echoed bytes per second, one direction), bytes_verified; the handshake
 * modes add handshakes_per_s, resumed (cycles of the window that resumed), resumed_share, and
 * over the whole run resets (connections reset by the server at their end) and
 * closed_without_close_notify (the server closed TCP after our close_notify without sending its
 * own, which RFC 8446 6.1 requires); every mode adds chains_verified (full chain verifications:
 * 1 when the server always presents the same certificate, see verify_once).
 * Exit status 2 on a mismatch, a closed connection, a failed handshake or a socket error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HIST_US 2000000 /* 1 µs buckets up to 2 s; beyond goes to the last bucket */
#define PAT 65521u
#define RECORD 16384

enum mode { M_ECHO, M_BULK, M_HANDSHAKE, M_RESUME, M_IDLE };
enum state { S_FREE, S_CONNECTING, S_HANDSHAKE, S_READY, S_SHUTDOWN, S_DRAIN, S_IDLE };

struct conn {
  int fd;
  uint32_t gen; /* bumped at every new socket: stale epoll events of a closed one are ignored */
  unsigned events;
  enum state state;
  SSL *ssl;
  SSL_SESSION *sess[4]; /* resume: unused sessions received, oldest first */
  int nsess;
  uint64_t start_ns; /* echo: the message's; handshake modes: the cycle's */
  /* echo and the handshake modes' single echo */
  size_t sent, got;
  uint32_t seq;
  unsigned char *out, *in;
  /* bulk */
  uint64_t bsent, bgot, done;
  uint64_t *stamp;
  size_t retry_len; /* an SSL_write to repeat with the same length (SSL's rule) */
};

static enum mode mode;
static struct conn *cs;
static int nconn = -1, depth = 4, pending_max = 128, server_pid;
static size_t size = 0;
static double seconds = 3, warmup = 1;
static const char *host = "127.0.0.1", *name = "localhost", *ca;
static int port;
static int ep;
static SSL_CTX *ctx;
static struct sockaddr_in sa;
static unsigned char pat2[2 * PAT];
static unsigned char rbuf[1 << 16];
static uint64_t *hist;
static int measuring;
static uint64_t measure_to;
static uint64_t messages, total, max_us, bytes_verified, resumed, resets, no_close_notify;
static char last_cipher[64] = "?", last_group[32] = "?", last_proto[16] = "?";

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
  fprintf(stderr, "tls_load: %s: %s\n", what, strerror(errno));
  exit(2);
}

static void fail(const char *fmt, int idx, const char *what) {
  fprintf(stderr, "tls_load: connection %d: ", idx);
  fprintf(stderr, fmt, what);
  fputc('\n', stderr);
  exit(2);
}

/* An SSL call failed with `err` (SSL_get_error): the OpenSSL error queue, or errno. */
static void die_ssl(struct conn *c, const char *what, int err) {
  unsigned long e = ERR_get_error();
  char buf[256];
  if (e) ERR_error_string_n(e, buf, sizeof buf);
  else if (err == SSL_ERROR_SYSCALL) snprintf(buf, sizeof buf, "%s", errno ? strerror(errno) : "unexpected end of stream");
  else if (err == SSL_ERROR_ZERO_RETURN) snprintf(buf, sizeof buf, "the server closed the connection (close_notify or end of stream)");
  else snprintf(buf, sizeof buf, "SSL error %d", err);
  long v = c->ssl ? SSL_get_verify_result(c->ssl) : X509_V_OK;
  fprintf(stderr, "tls_load: connection %d: %s: %s%s%s\n", (int)(c - cs), what, buf, v != X509_V_OK ? "; verify: " : "",
          v != X509_V_OK ? X509_verify_cert_error_string(v) : "");
  exit(2);
}

/* utime + stime (clock ticks) of a process, all its threads; -1 if unreadable. */
static long long proc_ticks(int pid) {
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

static int idx_of(struct conn *c) { return (int)(c - cs); }

static void watch(struct conn *c, unsigned events) {
  if (events == c->events) return;
  struct epoll_event ev = {.events = events, .data.u64 = ((uint64_t)c->gen << 32) | (uint32_t)idx_of(c)};
  if (epoll_ctl(ep, c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl");
  c->events = events;
}

/* After an SSL call returned `r` <= 0: waits for what SSL wants; dies on anything else. */
static void want(struct conn *c, int r, const char *what) {
  int err = SSL_get_error(c->ssl, r);
  if (err == SSL_ERROR_WANT_READ) watch(c, EPOLLIN);
  else if (err == SSL_ERROR_WANT_WRITE) watch(c, EPOLLIN | EPOLLOUT);
  else die_ssl(c, what, err);
}

static void record(uint64_t start, uint64_t done) {
  total++;
  if (measuring && done <= measure_to) {
    uint64_t us = (done - start) / 1000u;
    if (us > max_us) max_us = us;
    hist[us > HIST_US ? HIST_US : us]++;
    messages++;
  }
}

/*
 * resume: keeps the sessions a connection received (TLS 1.3 tickets come after the handshake),
 * each offered once, newest first (RFC 8446 C.4: a client should not reuse a ticket; servers
 * may refuse a replayed one). Without one left, the connector makes a full handshake.
 */
static int conn_ex;
static int new_session(SSL *ssl, SSL_SESSION *s) {
  struct conn *c = SSL_get_ex_data(ssl, conn_ex);
  if (!c || mode != M_RESUME) return 0;
  if (c->nsess == 4) {
    SSL_SESSION_free(c->sess[0]);
    memmove(c->sess, c->sess + 1, 3 * sizeof *c->sess);
    c->nsess--;
  }
  /* A copy: OpenSSL marks the connection's own session object not resumable when that
   * connection ends without a clean bidirectional shutdown (ssl_clear_bad_session). */
  c->sess[c->nsess++] = SSL_SESSION_dup(s);
  return 0; /* OpenSSL keeps and frees its reference */
}

static void start_conn(struct conn *c) {
  c->gen++;
  c->events = 0;
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) die("socket");
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->start_ns = now_ns();
  if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) die("connect");
  c->ssl = SSL_new(ctx);
  if (!c->ssl) die_ssl(c, "SSL_new", SSL_ERROR_SSL);
  SSL_set_ex_data(c->ssl, conn_ex, c);
  SSL_set_fd(c->ssl, c->fd);
  SSL_set_connect_state(c->ssl);
  SSL_set_tlsext_host_name(c->ssl, name);
  SSL_set1_host(c->ssl, name);
  if (mode == M_RESUME && c->nsess) {
    SSL_SESSION *s = c->sess[--c->nsess];
    SSL_set_session(c->ssl, s);
    SSL_SESSION_free(s); /* the SSL holds its own reference */
  }
  c->state = S_CONNECTING;
  c->sent = c->got = 0;
  watch(c, EPOLLOUT);
}

/* Handshake modes: the cycle of c is over (checked). */
static void end_conn(struct conn *c) {
  /* Whatever the server's way of closing, its sessions stay resumable. */
  SSL_set_shutdown(c->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_free(c->ssl);
  c->ssl = NULL;
  close(c->fd); /* also leaves the epoll set */
  c->fd = -1;
  c->events = 0;
  c->state = S_FREE;
}

/*
 * Certificate verification, once per run: the first chain the server presents is verified in
 * full (X509_verify_cert: the test CA, the host name); later handshakes that present the same
 * leaf certificate (byte for byte) are accepted without building and checking the chain again,
 * so the client's CPU per handshake stays well under the server's. The handshake's own
 * signature (CertificateVerify) is checked every time by the protocol.
 */
static unsigned char *verified_leaf;
static int verified_len;
static uint64_t chains_verified;
static int verify_once(X509_STORE_CTX *xs, void *arg) {
  (void)arg;
  unsigned char *der = NULL;
  int n = i2d_X509(X509_STORE_CTX_get0_cert(xs), &der);
  if (n > 0 && verified_leaf && n == verified_len && memcmp(der, verified_leaf, (size_t)n) == 0) {
    OPENSSL_free(der);
    return 1;
  }
  int ok = X509_verify_cert(xs);
  chains_verified++;
  if (ok == 1 && n > 0 && !verified_leaf) {
    verified_leaf = der;
    verified_len = n;
  } else {
    OPENSSL_free(der);
  }
  return ok;
}

/* Fills the next message of a connection: depends on the connection and the sequence number. */
static void fill(struct conn *c) {
  c->seq++;
  for (size_t i = 0; i < size; i++) c->out[i] = (unsigned char)(i * 31u + c->seq * 7u + (unsigned)idx_of(c) * 13u);
  c->sent = c->got = 0;
}

/* Writes what is left of the current message; returns 1 once it is all out. */
static int msg_out(struct conn *c) {
  while (c->sent < size) {
    int r = SSL_write(c->ssl, c->out + c->sent, (int)(size - c->sent));
    if (r <= 0) {
      want(c, r, "SSL_write");
      return 0;
    }
    c->sent += (size_t)r;
  }
  watch(c, EPOLLIN);
  return 1;
}

/* Reads the answer to the current message; returns 1 once all of it is back and checked. */
static int msg_in(struct conn *c) {
  while (c->got < size) {
    if (c->got >= c->sent) {
      /* Nothing outstanding: bytes now would be a protocol error (checked at the next read). */
      return 0;
    }
    int r = SSL_read(c->ssl, c->in + c->got, (int)(c->sent - c->got));
    if (r <= 0) {
      int err = SSL_get_error(c->ssl, r);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
        if (err == SSL_ERROR_WANT_WRITE) watch(c, EPOLLIN | EPOLLOUT);
        return 0;
      }
      die_ssl(c, "SSL_read", err);
    }
    c->got += (size_t)r;
  }
  if (memcmp(c->in, c->out, size) != 0) fail("%s", idx_of(c), "echo mismatch");
  return 1;
}

static void note_session(struct conn *c) {
  snprintf(last_cipher, sizeof last_cipher, "%s", SSL_get_cipher_name(c->ssl));
  snprintf(last_proto, sizeof last_proto, "%s", SSL_get_version(c->ssl));
  int g = SSL_get_negotiated_group(c->ssl);
  const char *gn = g ? SSL_group_to_name(c->ssl, g) : NULL;
  snprintf(last_group, sizeof last_group, "%s", gn ? gn : "?");
}

/* Bulk: sends up to the window, one record per SSL_write; returns 0 if SSL must wait. */
static int bulk_out(struct conn *c) {
  int idx = idx_of(c);
  uint64_t limit = (c->done + (uint64_t)depth) * size;
  while (c->bsent < limit) {
    size_t len = c->retry_len;
    if (!len) {
      len = (size_t)(limit - c->bsent);
      if (len > RECORD) len = RECORD;
    }
    int r = SSL_write(c->ssl, pat2 + pat_at(idx, c->bsent), (int)len);
    if (r <= 0) {
      int err = SSL_get_error(c->ssl, r);
      if (err == SSL_ERROR_WANT_WRITE) {
        c->retry_len = len;
        watch(c, EPOLLIN | EPOLLOUT);
        return 0;
      }
      if (err == SSL_ERROR_WANT_READ) {
        c->retry_len = len;
        return 0;
      }
      die_ssl(c, "SSL_write", err);
    }
    c->retry_len = 0;
    c->bsent += (uint64_t)r;
  }
  watch(c, EPOLLIN);
  return 1;
}

static void bulk_in(struct conn *c) {
  int idx = idx_of(c);
  for (;;) {
    int r = SSL_read(c->ssl, rbuf, sizeof rbuf);
    if (r <= 0) {
      int err = SSL_get_error(c->ssl, r);
      if (err == SSL_ERROR_WANT_READ) break;
      if (err == SSL_ERROR_WANT_WRITE) {
        watch(c, EPOLLIN | EPOLLOUT);
        break;
      }
      die_ssl(c, "SSL_read", err);
    }
    if (c->bgot + (uint64_t)r > c->bsent) fail("%s", idx, "more bytes than were sent");
    for (size_t off = 0; off < (size_t)r;) {
      size_t len = (size_t)r - off;
      if (len > PAT) len = PAT;
      if (memcmp(rbuf + off, pat2 + pat_at(idx, c->bgot + off), len) != 0) fail("%s", idx, "mismatch in the echoed stream");
      off += len;
    }
    c->bgot += (uint64_t)r;
    bytes_verified += (uint64_t)r;
    uint64_t done_at = 0;
    while (c->bgot >= (c->done + 1) * size) {
      if (!done_at) done_at = now_ns();
      uint64_t *slot = &c->stamp[c->done % (uint64_t)depth];
      record(*slot, done_at);
      *slot = done_at; /* message done + depth enters the window in the same slot */
      c->done++;
    }
  }
  bulk_out(c);
}

/* Handshake modes: the cycle's echo came back; close_notify, then wait for the server's end. */
static void cycle_done(struct conn *c) {
  uint64_t t = now_ns();
  int reused = SSL_session_reused(c->ssl);
  if (measuring && t <= measure_to && reused) resumed++;
  record(c->start_ns, t);
  note_session(c);
  c->state = S_SHUTDOWN;
  int r = SSL_shutdown(c->ssl);
  if (r < 0) want(c, r, "SSL_shutdown");
  else watch(c, EPOLLIN);
}

static int idle_done;

/* The handshake finished on connection c. */
static void on_handshake(struct conn *c) {
  c->state = S_READY;
  if (mode == M_BULK) {
    uint64_t t = now_ns();
    for (int m = 0; m < depth; m++) c->stamp[m] = t;
    note_session(c);
    bulk_out(c);
    return;
  }
  if (mode == M_ECHO) {
    note_session(c);
    c->start_ns = now_ns();
  }
  fill(c);
  msg_out(c);
}

static void step(struct conn *c, unsigned events) {
  switch (c->state) {
  case S_CONNECTING: {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err || (events & (EPOLLERR | EPOLLHUP))) {
      errno = err ? err : ECONNRESET;
      fprintf(stderr, "tls_load: connection %d: ", idx_of(c));
      die("connect");
    }
    c->state = S_HANDSHAKE;
  }
  /* fallthrough */
  case S_HANDSHAKE: {
    int r = SSL_do_handshake(c->ssl);
    if (r != 1) {
      want(c, r, "handshake");
      return;
    }
    on_handshake(c);
    if (c->state != S_READY || !SSL_has_pending(c->ssl)) return;
    events = EPOLLIN;
  }
  /* fallthrough */
  case S_READY:
    if (mode == M_BULK) {
      if ((events & EPOLLOUT) && c->retry_len) bulk_out(c);
      bulk_in(c);
      return;
    }
    if ((events & EPOLLOUT) && c->sent < size && !msg_out(c)) return;
    if (c->sent < size) return;
    if (!msg_in(c)) return;
    if (mode == M_ECHO) {
      uint64_t t = now_ns();
      record(c->start_ns, t);
      fill(c);
      c->start_ns = t;
      msg_out(c);
    } else if (mode == M_IDLE) {
      note_session(c);
      c->state = S_IDLE;
      SSL_free(c->ssl); /* keep the connection only: no client-side TLS state is needed any more */
      c->ssl = NULL;
      watch(c, EPOLLIN | EPOLLRDHUP);
      idle_done++;
    } else {
      cycle_done(c);
    }
    return;
  case S_SHUTDOWN:
    if (events & EPOLLOUT) {
      /* close_notify did not fit in the socket at first */
      int r = SSL_shutdown(c->ssl);
      if (r < 0) {
        want(c, r, "SSL_shutdown");
        return;
      }
      watch(c, EPOLLIN);
    }
    for (;;) {
      int r = SSL_read(c->ssl, rbuf, sizeof rbuf);
      if (r > 0) fail("%s", idx_of(c), "bytes after the echo");
      int err = SSL_get_error(c->ssl, r);
      if (err == SSL_ERROR_WANT_READ) return;
      if (err == SSL_ERROR_WANT_WRITE) {
        watch(c, EPOLLIN | EPOLLOUT);
        return;
      }
      if (err == SSL_ERROR_ZERO_RETURN) {
        /* The server's close_notify, or (SSL_OP_IGNORE_UNEXPECTED_EOF) an end of stream without
         * one: OpenSSL 3.0 then sets the shutdown state to SSL_RECEIVED_SHUTDOWN alone, dropping
         * the SSL_SENT_SHUTDOWN our close_notify set. */
        if (!(SSL_get_shutdown(c->ssl) & SSL_SENT_SHUTDOWN)) no_close_notify++;
        break;
      }
      if (err == SSL_ERROR_SYSCALL && (r == 0 || errno == ECONNRESET || errno == EPIPE)) {
        if (r != 0) resets++;
        ERR_clear_error();
        end_conn(c);
        start_conn(c);
        return;
      }
      die_ssl(c, "SSL_read after close_notify", err);
    }
    c->state = S_DRAIN;
  /* fallthrough */
  case S_DRAIN:
    for (;;) {
      ssize_t r = recv(c->fd, rbuf, sizeof rbuf, 0);
      if (r > 0) continue; /* nothing should follow close_notify; ignore it */
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        watch(c, EPOLLIN | EPOLLRDHUP);
        return;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) resets++;
      break;
    }
    end_conn(c);
    start_conn(c);
    return;
  case S_IDLE:
    fail("the server %s while the connection was idle", idx_of(c), (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ? "closed it" : "sent bytes");
    return;
  case S_FREE:
    return;
  }
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

static void dispatch(struct epoll_event *e) {
  uint32_t idx = (uint32_t)e->data.u64;
  uint32_t gen = (uint32_t)(e->data.u64 >> 32);
  struct conn *c = &cs[idx];
  if (c->gen != gen || c->state == S_FREE) return; /* an event of a socket closed meanwhile */
  if ((e->events & (EPOLLERR | EPOLLHUP)) && c->state != S_SHUTDOWN && c->state != S_DRAIN && c->state != S_IDLE && c->state != S_CONNECTING) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
      errno = err;
      fprintf(stderr, "tls_load: connection %d: ", (int)idx);
      die("connection");
    }
  }
  step(c, e->events);
}

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s --mode echo|bulk|handshake|resume|idle --port PORT --ca CA.pem [--host 127.0.0.1] [--name localhost]\n"
          "          [--conns N] [--size BYTES] [--seconds S] [--warmup S] [--server-pid PID] [--depth D] [--pending N]\n",
          argv0);
  exit(1);
}

int main(int argc, char **argv) {
  static const struct option opts[] = {
      {"mode", 1, 0, 'm'}, {"host", 1, 0, 'h'}, {"port", 1, 0, 'p'},    {"ca", 1, 0, 'a'},         {"name", 1, 0, 'n'}, {"conns", 1, 0, 'c'},
      {"size", 1, 0, 's'}, {"seconds", 1, 0, 't'}, {"warmup", 1, 0, 'w'}, {"server-pid", 1, 0, 'P'}, {"depth", 1, 0, 'd'}, {"pending", 1, 0, 'q'},
      {0, 0, 0, 0}};
  const char *mode_name = NULL;
  for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    switch (o) {
    case 'm': mode_name = optarg; break;
    case 'h': host = optarg; break;
    case 'p': port = atoi(optarg); break;
    case 'a': ca = optarg; break;
    case 'n': name = optarg; break;
    case 'c': nconn = atoi(optarg); break;
    case 's': size = (size_t)atol(optarg); break;
    case 't': seconds = atof(optarg); break;
    case 'w': warmup = atof(optarg); break;
    case 'P': server_pid = atoi(optarg); break;
    case 'd': depth = atoi(optarg); break;
    case 'q': pending_max = atoi(optarg); break;
    default: usage(argv[0]);
    }
  }
  if (!mode_name || !port || !ca) usage(argv[0]);
  if (!strcmp(mode_name, "echo")) mode = M_ECHO;
  else if (!strcmp(mode_name, "bulk")) mode = M_BULK;
  else if (!strcmp(mode_name, "handshake")) mode = M_HANDSHAKE;
  else if (!strcmp(mode_name, "resume")) mode = M_RESUME;
  else if (!strcmp(mode_name, "idle")) mode = M_IDLE;
  else usage(argv[0]);
  if (nconn < 0) nconn = mode == M_HANDSHAKE || mode == M_RESUME ? 16 : mode == M_BULK ? 4 : 50;
  if (!size) size = mode == M_BULK ? 16384 : 64;
  if (nconn < 1 || seconds <= 0 || warmup < 0 || depth < 1 || depth > 1024 || pending_max < 1 || (mode != M_BULK && size > sizeof rbuf)) {
    fprintf(stderr, "tls_load: bad arguments\n");
    return 1;
  }
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
    fprintf(stderr, "tls_load: bad IPv4 address %s\n", host);
    return 1;
  }
  if (mode == M_IDLE) {
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
      getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)nconn + 16) {
      fprintf(stderr, "tls_load: cannot open %d connections: the fd limit is %llu; raise it\n", nconn, (unsigned long long)rl.rlim_cur);
      return 3;
    }
  }

  ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) {
    fprintf(stderr, "tls_load: SSL_CTX_new: %s\n", ERR_error_string(ERR_get_error(), NULL));
    return 1;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
    fprintf(stderr, "tls_load: cannot load the CA %s: %s\n", ca, ERR_error_string(ERR_get_error(), NULL));
    return 1;
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  SSL_CTX_set_cert_verify_callback(ctx, verify_once, NULL);
  /* An end of stream without close_notify reads as SSL_ERROR_ZERO_RETURN (OpenSSL 1.1's way). */
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (mode == M_ECHO || mode == M_BULK) {
    /* The client must not be the bottleneck: read ahead (one recv takes several records, not a
     * header then a body) and keep the buffers (no free/malloc per record). */
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, 1 << 16);
  } else {
    /* Many connections, little traffic each: buffers only while in use. */
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  }
  conn_ex = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
  if (mode == M_RESUME) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, new_session);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }

  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  cs = calloc((size_t)nconn, sizeof *cs);
  hist = calloc(HIST_US + 1, sizeof *hist);
  if (mode == M_BULK) fill_pattern();
  for (int i = 0; i < nconn; i++) {
    struct conn *c = &cs[i];
    c->fd = -1;
    if (mode == M_BULK) {
      c->stamp = calloc((size_t)depth, sizeof *c->stamp);
    } else {
      c->out = malloc(size);
      c->in = malloc(size);
    }
  }
  struct epoll_event evs[512];

  if (mode == M_IDLE) {
    double t0 = (double)now_ns() / 1e9;
    int next = 0;
    while (idle_done < nconn) {
      while (next < nconn && next - idle_done < pending_max) start_conn(&cs[next++]);
      int k = epoll_wait(ep, evs, 512, 60000);
      if (k < 0) {
        if (errno == EINTR) continue;
        die("epoll_wait");
      }
      if (k == 0) {
        fprintf(stderr, "tls_load: no connection progressed for 60 s (%d of %d done)\n", idle_done, nconn);
        return 2;
      }
      for (int i = 0; i < k; i++) dispatch(&evs[i]);
    }
    printf("{\"phase\":\"connected\",\"connections\":%d,\"connect_s\":%.4f,\"max_pending\":%d,\"protocol\":\"%s\",\"cipher\":\"%s\",\"group\":\"%s\"}\n",
           nconn, (double)now_ns() / 1e9 - t0, pending_max, last_proto, last_cipher, last_group);
    fflush(stdout);
    struct epoll_event sev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, 0, &sev) < 0) die("epoll_ctl stdin");
    for (;;) {
      int k = epoll_wait(ep, evs, 512, -1);
      if (k < 0) {
        if (errno == EINTR) continue;
        die("epoll_wait");
      }
      for (int i = 0; i < k; i++) {
        if (evs[i].data.u64 == UINT64_MAX) {
          read_line();
          for (int j = 0; j < nconn; j++) close(cs[j].fd);
          return 0;
        }
        dispatch(&evs[i]);
      }
    }
  }

  for (int i = 0; i < nconn; i++) start_conn(&cs[i]);
  uint64_t t0 = now_ns();
  uint64_t measure_from = t0 + (uint64_t)(warmup * 1e9);
  measure_to = measure_from + (uint64_t)(seconds * 1e9);
  double cpu0 = 0, user0 = 0, user1 = 0;
  long long srv0 = -1, srv1 = -1, busy0 = -1, busy1 = -1;
  for (;;) {
    uint64_t t = now_ns();
    if (!measuring && t >= measure_from) {
      measuring = 1;
      cpu0 = cpu_s(&user0);
      srv0 = proc_ticks(server_pid);
      busy0 = machine_busy_ticks();
      t = now_ns();
      measure_from = t;
      measure_to = t + (uint64_t)(seconds * 1e9);
    }
    if (measuring && t >= measure_to) {
      srv1 = proc_ticks(server_pid);
      busy1 = machine_busy_ticks();
      break;
    }
    int timeout_ms = (int)(((measuring ? measure_to : measure_from) - t) / 1000000ull) + 1;
    int n = epoll_wait(ep, evs, 512, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int k = 0; k < n; k++) dispatch(&evs[k]);
  }
  double wall = (double)(now_ns() - measure_from) / 1e9;
  double cpu = cpu_s(&user1) - cpu0;
  double user = user1 - user0;
  uint64_t p50 = 0, p99 = 0, acc = 0;
  int have50 = 0;
  for (uint64_t i = 0; i <= HIST_US && messages; i++) {
    acc += hist[i];
    if (!have50 && acc * 2 >= messages) {
      p50 = i;
      have50 = 1;
    }
    if (acc * 100 >= messages * 99) {
      p99 = i;
      break;
    }
  }
  static const char *names[] = {"echo", "bulk", "handshake", "resume", "idle"};
  printf("{\"connections\":%d,\"size\":%zu,\"mode\":\"%s\",\"seconds\":%.3f,\"messages\":%llu,"
         "\"msg_per_s\":%.1f,\"p50_us\":%llu,\"p99_us\":%llu,\"max_us\":%llu,"
         "\"client_cpu_s\":%.4f,\"client_user_s\":%.4f,\"client_cpu_share\":%.4f,\"total_messages\":%llu,"
         "\"server_cpu_ticks\":%lld,\"clock_ticks_per_s\":%ld,\"machine_busy_ticks\":%lld,"
         "\"protocol\":\"%s\",\"cipher\":\"%s\",\"group\":\"%s\"",
         nconn, size, names[mode], wall, (unsigned long long)messages, messages / wall, (unsigned long long)p50, (unsigned long long)p99,
         (unsigned long long)max_us, cpu, user, cpu / wall, (unsigned long long)total, (srv0 >= 0 && srv1 >= 0) ? srv1 - srv0 : -1LL,
         sysconf(_SC_CLK_TCK), (busy0 >= 0 && busy1 >= 0) ? busy1 - busy0 : -1LL, last_proto, last_cipher, last_group);
  if (mode == M_BULK)
    printf(",\"depth\":%d,\"mb_per_s\":%.1f,\"bytes_verified\":%llu", depth, (double)messages * (double)size / wall / 1e6,
           (unsigned long long)bytes_verified);
  if (mode == M_HANDSHAKE || mode == M_RESUME)
    printf(",\"handshakes_per_s\":%.1f,\"resumed\":%llu,\"resumed_share\":%.4f,\"resets\":%llu,\"closed_without_close_notify\":%llu",
           messages / wall, (unsigned long long)resumed, messages ? (double)resumed / (double)messages : 0.0, (unsigned long long)resets,
           (unsigned long long)no_close_notify);
  printf(",\"chains_verified\":%llu", (unsigned long long)chains_verified);
  printf("}\n");
  return 0;
}
