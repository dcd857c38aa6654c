/* Peak RSS of the whole input pipeline, built as a TF1 user builds it:
 *
 *   string_input_producer([file], num_epochs=1)      work queue of filenames
 *   → TextLineReader.read_up_to(512)  (plain or gzip)
 *   → decode_csv  (int64 id, int32 a, float x, double y, string s)
 *   → shuffle_batch(enqueue_many=True, num_threads=2, capacity=10000, min_after_dequeue=1000,
 *                   batch_size=128, allow_smaller_final_batch=True)   (QueueRunner + Coordinator)
 *   → the main thread takes batches until OUT_OF_RANGE.
 *
 * Every record is counted and checksummed (count, sum of ids = n(n-1)/2, sum of column a), so
 * nothing may be lost or duplicated.  Peak memory must not depend on the file size:
 *
 *   1. peak RSS (getrusage ru_maxrss and /proc/self/status VmHWM) <= 64 MiB + 10,000 x record
 *      size (record size = the longest CSV line, newline included: the queue holds 10,000);
 *   2. peak RSS at N MiB within 5% of the peak at a reference size R (default: 100 MiB when N >=
 *      1000, else N/10), or within RSS_SLACK_MIB, whichever is larger.  The absolute slack covers
 *      what does not scale with the file but varies run to run: glibc hands each of the 3-4
 *      threads its own malloc arena, and how many 64 KiB..1 MiB chunks an arena holds at its peak
 *      depends on how the runner threads interleave with the consumer.
 *
 * The generator must not count: each file is written by a forked child, and each measurement
 * runs in a fresh forked child of the small parent (ru_maxrss survives exec, not fork: a fork
 * starts the child's high-water mark at the parent's current RSS).  The children report through
 * a pipe.
 *
 *   rss_pipeline [--mib N] [--gzip] [--ref-mib R] [--seed S] [--base-mib B (64)]
 *
 * Size: --mib N, else the environment variable TFQ_RSS_MIB, else 100.  The suite's tests pass no
 * --mib, so the 1 GiB run of the suite is `TFQ_RSS_MIB=1024 meson test -C <build> --suite rss`
 * (or run `rss_pipeline --mib 1024 [--gzip]` directly).  Run it under `nice -n 19`: it writes a
 * 1 GiB file (plus the 100 MiB reference) to $TMPDIR (default /tmp) and takes minutes.
 *
 * The files are written with zlib by this test program; the library itself calls zlib only from
 * src/readers/zstream.c.  Exit: 0 pass, 1 a check failed, 2 setup error. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define RSS_QUEUE_CAP 10000
#define RSS_MIN_AFTER 1000
#define RSS_BATCH 128
#define RSS_READ_BATCH 512
#define RSS_THREADS 2
#define RSS_SLACK_MIB 4.0

static void die(const char *what, tfq_status *st) {
  fprintf(stderr, "rss_pipeline: %s: %s\n", what, st ? tfq_status_message(st) : strerror(errno));
  exit(2);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* /proc/self/status field in KiB (VmHWM, VmRSS); -1 when unavailable. */
static long proc_kib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, field, n) && line[n] == ':') {
      v = atol(line + n + 1);
      break;
    }
  fclose(f);
  return v;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static char *put_u64(char *p, uint64_t v) {
  char tmp[24];
  int n = 0;
  do tmp[n++] = (char)('0' + v % 10);
  while (v /= 10);
  while (n) *p++ = tmp[--n];
  return p;
}

static char *put_frac(char *p, uint64_t v, int digits) {
  for (int i = digits - 1; i >= 0; i--) {
    p[i] = (char)('0' + v % 10);
    v /= 10;
  }
  return p + digits;
}

typedef struct gen_result {
  uint64_t lines, bytes, max_line;
  int64_t a_sum;
} gen_result;

/* Writes `mib` MiB of CSV lines "id,a,x,y,s": id = line number, a a signed int32, x and y
 * decimals, s 6..21 letters. */
static gen_result generate(const char *path, long mib, int gz, uint64_t seed) {
  gen_result g = {0, 0, 0, 0};
  FILE *f = gz ? NULL : fopen(path, "wb");
  gzFile z = gz ? gzopen(path, "wb1") : NULL;
  if (!f && !z) die("open for writing", NULL);
  uint64_t target = (uint64_t)mib << 20, s = seed;
  static char buf[1 << 17];
  size_t n = 0;
  while (g.bytes + n < target) {
    uint64_t r = splitmix(&s), r2 = splitmix(&s);
    char *p = buf + n, *start = p;
    p = put_u64(p, g.lines);
    *p++ = ',';
    int32_t a = (int32_t)(uint32_t)r;
    g.a_sum += a;
    if (a < 0) *p++ = '-';
    p = put_u64(p, a < 0 ? (uint64_t)(-(int64_t)a) : (uint64_t)a);
    *p++ = ',';
    p = put_u64(p, (r >> 32) % 1000);
    *p++ = '.';
    p = put_frac(p, r2 % 1000000, 6);
    *p++ = ',';
    if (r2 & (1ull << 40)) *p++ = '-';
    p = put_u64(p, (r2 >> 20) % 100000);
    *p++ = '.';
    p = put_frac(p, (r2 >> 44) % 1000, 3);
    *p++ = ',';
    int len = 6 + (int)((r2 >> 58) % 16);
    for (int i = 0; i < len; i++) *p++ = (char)('a' + (r >> (i * 2 % 60)) % 26);
    *p++ = '\n';
    uint64_t ll = (uint64_t)(p - start);
    if (ll > g.max_line) g.max_line = ll;
    n += ll;
    g.lines++;
    if (n > sizeof buf - 256) {
      if (f ? fwrite(buf, 1, n, f) != n : gzwrite(z, buf, (unsigned)n) != (int)n)
        die("write", NULL);
      g.bytes += n;
      n = 0;
    }
  }
  if (n && (f ? fwrite(buf, 1, n, f) != n : gzwrite(z, buf, (unsigned)n) != (int)n))
    die("write", NULL);
  g.bytes += n;
  if ((f && fclose(f)) || (z && gzclose(z) != Z_OK)) die("close", NULL);
  return g;
}

typedef struct run_result {
  uint64_t records, id_sum, batches, short_batches;
  int64_t a_sum;
  long start_kib, maxrss_kib, hwm_kib, sampled_kib;
  double seconds;
} run_result;

/* ---- the pipeline (runs in a forked child) ---- */

typedef struct source_ctx {
  tfq_reader *reader;
  tfq_queue *work;
  const tfq_csv_options *csv;
} source_ctx;

/* A batch source: one read_up_to of the shared reader, decoded into five [k] columns. */
static tfq_code csv_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  source_ctx *s = ctx;
  tfq_tensor *keys, *vals;
  tfq_code c = tfq_reader_read_up_to(s->reader, s->work, RSS_READ_BATCH, &keys, &vals, cancel, st);
  if (c) return c;
  c = tfq_decode_csv(s->csv, vals, out, st);
  tfq_tensor_free(keys);
  tfq_tensor_free(vals);
  return c;
}

static run_result run_pipeline(const char *path, int gz, uint64_t seed) {
  run_result res;
  memset(&res, 0, sizeof res);
  res.start_kib = proc_kib("VmRSS");
  tfq_status *st = tfq_status_new();
  if (!st) die("status", NULL);
  double t0 = now();

  /* filenames: string_input_producer([path], num_epochs=1, shuffle=False) */
  tfq_tensor *names;
  int64_t one = 1;
  tfq_producer_options *po;
  tfq_queue *work;
  tfq_producer_thread *producer;
  if (tfq_tensor_new(TFQ_STRING, &one, 1, &names, st) ||
      tfq_tensor_set_string(names, 0, path, strlen(path), st) || tfq_producer_options_new(&po, st))
    die("filenames", st);
  tfq_producer_options_set_num_epochs(po, 1);
  tfq_producer_options_set_shuffle(po, 0);
  if (tfq_string_input_producer(names, po, &work, &producer, st)) die("producer", st);

  /* reader and decode_csv */
  tfq_reader_options *ro;
  tfq_reader *reader;
  if (tfq_reader_options_new(&ro, st)) die("reader options", st);
  tfq_reader_options_set_compression(ro, gz ? TFQ_COMPRESSION_GZIP : TFQ_COMPRESSION_NONE);
  if (tfq_reader_new(TFQ_READER_TEXT_LINE, ro, &reader, st)) die("reader", st);
  tfq_csv_options *csv;
  if (tfq_csv_options_new(&csv, st) || tfq_csv_options_add_default_int64(csv, -1, st) ||
      tfq_csv_options_add_default_int32(csv, 0, st) ||
      tfq_csv_options_add_default_float(csv, 0.f, st) ||
      tfq_csv_options_add_default_double(csv, 0., st) ||
      tfq_csv_options_add_default_string(csv, "", 0, st))
    die("csv options", st);

  /* shuffle_batch over the source */
  tfq_spec *spec;
  if (tfq_spec_new(&spec, st) || tfq_spec_add(spec, TFQ_INT64, NULL, 0, "id", st) ||
      tfq_spec_add(spec, TFQ_INT32, NULL, 0, "a", st) ||
      tfq_spec_add(spec, TFQ_FLOAT, NULL, 0, "x", st) ||
      tfq_spec_add(spec, TFQ_DOUBLE, NULL, 0, "y", st) ||
      tfq_spec_add(spec, TFQ_STRING, NULL, 0, "s", st))
    die("spec", st);
  tfq_batch_options *bo;
  if (tfq_batch_options_new(&bo, st)) die("batch options", st);
  tfq_batch_options_set_num_threads(bo, RSS_THREADS);
  tfq_batch_options_set_capacity(bo, RSS_QUEUE_CAP);
  tfq_batch_options_set_min_after_dequeue(bo, RSS_MIN_AFTER);
  tfq_batch_options_set_seeds(bo, (int64_t)seed, 7);
  tfq_batch_options_set_enqueue_many(bo, 1);
  tfq_batch_options_set_allow_smaller_final_batch(bo, 1);
  tfq_coord *coord;
  if (tfq_coord_new(&coord, st)) die("coordinator", st);
  source_ctx sc = {reader, work, csv};
  tfq_source_fn fn = csv_source;
  void *ctx = &sc;
  tfq_batcher *b;
  if (tfq_batcher_new(TFQ_BATCHER_SHUFFLE_BATCH, spec, RSS_BATCH, &fn, &ctx, 1, bo, coord, &b, st))
    die("shuffle_batch", st);

  /* the training loop */
  tfq_tuple *batch;
  tfq_code c;
  while ((c = tfq_batcher_next(b, &batch, st)) == TFQ_OK) {
    int64_t k = tfq_tensor_dim(tfq_tuple_get(batch, 0), 0);
    const int64_t *ids = tfq_tensor_cdata(tfq_tuple_get(batch, 0));
    const int32_t *as = tfq_tensor_cdata(tfq_tuple_get(batch, 1));
    for (int64_t i = 0; i < k; i++) {
      res.id_sum += (uint64_t)ids[i];
      res.a_sum += as[i];
    }
    res.records += (uint64_t)k;
    res.short_batches += k != RSS_BATCH;
    tfq_tuple_free(batch);
    if (++res.batches % 512 == 0) {
      long v = proc_kib("VmRSS");
      if (v > res.sampled_kib) res.sampled_kib = v;
    }
  }
  if (c != TFQ_OUT_OF_RANGE) die("batcher_next", st);
  if (tfq_coord_request_stop(coord, TFQ_OK, NULL)) die("request_stop", st);
  if (tfq_coord_join(coord, 10 * 1000000, 0, st)) die("coordinator join", st);
  if (tfq_producer_thread_join(producer, st)) die("producer join", st);
  res.seconds = now() - t0;

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  res.maxrss_kib = ru.ru_maxrss;
  res.hwm_kib = proc_kib("VmHWM");
  long v = proc_kib("VmRSS");
  if (v > res.sampled_kib) res.sampled_kib = v;

  tfq_batcher_free(b);
  tfq_coord_free(coord);
  tfq_batch_options_free(bo);
  tfq_spec_free(spec);
  tfq_csv_options_free(csv);
  tfq_reader_free(reader);
  tfq_reader_options_free(ro);
  tfq_queue_free(work);
  tfq_producer_options_free(po);
  tfq_tensor_free(names);
  tfq_status_free(st);
  return res;
}

/* ---- fork helpers ---- */

static void write_all(int fd, const void *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(2);
    p = (const char *)p + w;
    n -= (size_t)w;
  }
}

/* Runs gen (what == 0) or the pipeline (what == 1) in a child and reads its result. */
static void in_child(int what, const char *path, long mib, int gz, uint64_t seed, void *out,
                     size_t size) {
  int fds[2];
  if (pipe(fds)) die("pipe", NULL);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) die("fork", NULL);
  if (pid == 0) {
    close(fds[0]);
    if (what == 0) {
      gen_result g = generate(path, mib, gz, seed);
      write_all(fds[1], &g, sizeof g);
    } else {
      run_result r = run_pipeline(path, gz, seed);
      write_all(fds[1], &r, sizeof r);
    }
    _exit(0);
  }
  close(fds[1]);
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(fds[0], (char *)out + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fds[0]);
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      got != size) {
    fprintf(stderr, "rss_pipeline: %s child failed (status 0x%x)\n",
            what ? "pipeline" : "generator", status);
    exit(2);
  }
}

typedef struct measured {
  long mib;
  gen_result g;
  run_result r;
  double gen_s;
} measured;

static double base_mib = 64; /* --base-mib: lower it to see the bound check fail */

static long peak_kib(const run_result *r) {
  long p = r->maxrss_kib > r->hwm_kib ? r->maxrss_kib : r->hwm_kib;
  return r->sampled_kib > p ? r->sampled_kib : p;
}

static int measure(const char *dir, long mib, int gz, uint64_t seed, measured *m) {
  char path[512];
  snprintf(path, sizeof path, "%s/pipe_%ld.%s", dir, mib, gz ? "csv.gz" : "csv");
  m->mib = mib;
  double t0 = now();
  in_child(0, path, mib, gz, seed, &m->g, sizeof m->g);
  m->gen_s = now() - t0;
  in_child(1, path, mib, gz, seed, &m->r, sizeof m->r);
  unlink(path);
  const run_result *r = &m->r;
  uint64_t n = m->g.lines;
  printf(
      "%4ld MiB %s: %llu records (max line %llu B) generated in %.1f s; pipeline %.1f s "
      "(%.0f MB/s), %llu batches (%llu short)\n",
      mib, gz ? "gzip " : "plain", (unsigned long long)n, (unsigned long long)m->g.max_line,
      m->gen_s, r->seconds, (double)m->g.bytes / 1e6 / r->seconds, (unsigned long long)r->batches,
      (unsigned long long)r->short_batches);
  printf(
      "         RSS at start %.1f MiB; peak: ru_maxrss %.1f MiB, VmHWM %.1f MiB, sampled VmRSS "
      "%.1f MiB\n",
      r->start_kib / 1024.0, r->maxrss_kib / 1024.0, r->hwm_kib / 1024.0, r->sampled_kib / 1024.0);
  int ok = 1;
  if (r->records != n || r->id_sum != n * (n - 1) / 2 || r->a_sum != m->g.a_sum) {
    printf(
        "FAIL: %llu records (id sum %llu, a sum %lld), generated %llu (id sum %llu, a sum "
        "%lld)\n",
        (unsigned long long)r->records, (unsigned long long)r->id_sum, (long long)r->a_sum,
        (unsigned long long)n, (unsigned long long)(n * (n - 1) / 2), (long long)m->g.a_sum);
    ok = 0;
  }
  double limit = base_mib + RSS_QUEUE_CAP * (double)m->g.max_line / (1 << 20);
  if (peak_kib(r) / 1024.0 > limit) {
    printf("FAIL: peak RSS %.1f MiB above %.0f MiB + %d x %llu B = %.1f MiB\n",
           peak_kib(r) / 1024.0, base_mib, RSS_QUEUE_CAP, (unsigned long long)m->g.max_line, limit);
    ok = 0;
  }
  return ok;
}

int main(int argc, char **argv) {
  long mib = 100, ref = -1;
  int gz = 0;
  uint64_t seed = 20240601;
  const char *env = getenv("TFQ_RSS_MIB");
  if (env && *env) mib = atol(env);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mib") && i + 1 < argc)
      mib = atol(argv[++i]);
    else if (!strcmp(argv[i], "--ref-mib") && i + 1 < argc)
      ref = atol(argv[++i]);
    else if (!strcmp(argv[i], "--base-mib") && i + 1 < argc)
      base_mib = atof(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--gzip"))
      gz = 1;
    else {
      fprintf(stderr, "usage: %s [--mib N] [--gzip] [--ref-mib R] [--seed S] [--base-mib B]\n",
              argv[0]);
      return 2;
    }
  }
  if (mib < 1) {
    fprintf(stderr, "rss_pipeline: --mib must be >= 1\n");
    return 2;
  }
  if (ref < 0) ref = mib >= 1000 ? 100 : mib / 10;
  if (ref < 1) ref = 1;
  const char *tmp = getenv("TMPDIR");
  char dir[512];
  snprintf(dir, sizeof dir, "%s/tfq_rsspipe_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) die("mkdtemp", NULL);

  measured big, small;
  int ok = measure(dir, ref, gz, seed + 1, &small);
  ok &= measure(dir, mib, gz, seed, &big);
  rmdir(dir);
  double pb = peak_kib(&big.r) / 1024.0, ps = peak_kib(&small.r) / 1024.0;
  double allowed = ps * 0.05 > RSS_SLACK_MIB ? ps * 0.05 : RSS_SLACK_MIB;
  printf(
      "peak RSS %.1f MiB at %ld MiB vs %.1f MiB at %ld MiB: %+.1f MiB (%+.1f%%, allowed "
      "+-%.1f MiB)\n",
      pb, mib, ps, ref, pb - ps, 100.0 * (pb - ps) / ps, allowed);
  if (pb - ps > allowed || ps - pb > allowed) {
    printf("FAIL: peak RSS depends on the file size\n");
    ok = 0;
  }
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
