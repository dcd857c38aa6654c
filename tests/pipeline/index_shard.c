/* Indexed shards (tfq_pipeline_options_set_index_suffix, issue #42 item 9), TAP.  TFRecord files
 * of M records "r<k>:" + k % 50 filler bytes (plain and gzip, written with the library's writer)
 * and their indexes written here from arithmetic (record k at offset sum of 16 + len over the
 * records before it, the same in the decompressed stream of the gzip file): for N in 1, 2, 3, 7
 * shard I reads exactly records [I*M/N, (I+1)*M/N) in order, so the union is every record once;
 * the same with a save after 2 batches and a restore into a new pipeline; a missing, a stale
 * and a malformed index fail tfq_pipeline_new with their messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/pipeline.h>
#include <tfq/reader.h>

#include "pipeline_util.h"

#define M 200

static char g_dir[] = "/tmp/tfq_index_shard_XXXXXX";

static size_t payload(int k, char *buf) {
  int n = snprintf(buf, 64, "r%d:", k);
  for (int i = 0; i < k % 50; i++) buf[n++] = (char)('a' + i % 26);
  return (size_t)n;
}

static void write_file(const char *path, tfq_compression c, const char *idx_path) {
  tfq_status *st = tfq_status_new();
  tfq_tfrecord_writer *w;
  die_on(tfq_tfrecord_writer_new(path, c, &w, st), st, "writer");
  FILE *x = fopen(idx_path, "w");
  unsigned long long off = 0;
  for (int k = 0; k < M; k++) {
    char buf[64];
    size_t n = payload(k, buf);
    die_on(tfq_tfrecord_writer_write(w, buf, n, st), st, "write");
    fprintf(x, "%llu %llu\n", off, (unsigned long long)n + 16);
    off += n + 16;
  }
  die_on(tfq_tfrecord_writer_close(w, st), st, "close");
  tfq_tfrecord_writer_free(w);
  fclose(x);
  tfq_status_free(st);
}

static tfq_code make(const char *path, int64_t i, int64_t n, tfq_pipeline **p, tfq_status *st) {
  tfq_pipeline_options *o;
  die_on(tfq_pipeline_options_new(&o, st), st, "options");
  die_on(tfq_pipeline_options_add_file(o, path, st), st, "add_file");
  tfq_pipeline_options_set_format(o, TFQ_FORMAT_TFRECORD);
  tfq_pipeline_options_set_shuffle(o, 0);
  tfq_pipeline_options_set_batch_size(o, 7);
  tfq_pipeline_options_set_step(o, 5);
  tfq_pipeline_options_set_shard(o, i, n);
  die_on(tfq_pipeline_options_set_index_suffix(o, ".idx", st), st, "index_suffix");
  tfq_code c = tfq_pipeline_new(o, p, st);
  tfq_pipeline_options_free(o);
  return c;
}

/* Appends the record numbers of up to `max` batches (-1: all) to ks[*nk]. */
static void drain(tfq_pipeline *p, int max, int *ks, int *nk, tfq_status *st) {
  tfq_tuple *t;
  for (int b = 0; max < 0 || b < max; b++) {
    tfq_code c = tfq_pipeline_next(p, &t, st);
    if (c == TFQ_OUT_OF_RANGE) return;
    die_on(c, st, "next");
    const tfq_tensor *v = tfq_tuple_get(t, 0);
    for (int64_t r = 0; r < tfq_tensor_dim(v, 0); r++) {
      size_t len;
      const char *s = tfq_tensor_string(v, r, &len);
      char want[64];
      int k = atoi(s + 1);
      if (*nk < 2 * M && len == payload(k, want) && memcmp(s, want, len) == 0)
        ks[(*nk)++] = k;
      else if (*nk < 2 * M)
        ks[(*nk)++] = -1;
    }
    tfq_tuple_free(t);
  }
}

static void shards(const char *path, const char *what, int resume, tfq_status *st) {
  static const int ns[] = {1, 2, 3, 7};
  for (size_t q = 0; q < sizeof ns / sizeof *ns; q++) {
    int n = ns[q], seen[M] = {0}, ok = 1;
    for (int i = 0; i < n; i++) {
      tfq_pipeline *p;
      die_on(make(path, i, n, &p, st), st, "pipeline_new");
      int ks[2 * M], nk = 0;
      drain(p, resume ? 2 : -1, ks, &nk, st);
      if (resume) {
        char *state;
        size_t len;
        die_on(tfq_pipeline_save(p, &state, &len, st), st, "save");
        tfq_pipeline_free(p);
        die_on(make(path, i, n, &p, st), st, "pipeline_new");
        die_on(tfq_pipeline_restore(p, state, len, st), st, "restore");
        tfq_free(state);
        drain(p, -1, ks, &nk, st);
      }
      tfq_pipeline_free(p);
      int lo = i * M / n, hi = (i + 1) * M / n;
      ok &= nk == hi - lo;
      for (int j = 0; j < nk && ok; j++) {
        ok &= ks[j] == lo + j;
        if (ks[j] >= 0 && ks[j] < M) seen[ks[j]]++;
      }
    }
    for (int k = 0; k < M; k++) ok &= seen[k] == 1;
    tap(ok, "%s, %d shards%s: shard i = records [i*M/n, (i+1)*M/n), every record once", what, n,
        resume ? ", saved and restored after 2 batches" : "");
  }
}

int main(void) {
  if (!mkdtemp(g_dir)) {
    printf("Bail out! mkdtemp\n");
    return 1;
  }
  char plain[256], gz[256], idx[300];
  snprintf(plain, sizeof plain, "%s/a.tfrecord", g_dir);
  snprintf(gz, sizeof gz, "%s/b.tfrecord.gz", g_dir);
  snprintf(idx, sizeof idx, "%s.idx", plain);
  write_file(plain, TFQ_COMPRESSION_NONE, idx);
  snprintf(idx, sizeof idx, "%s.idx", gz);
  write_file(gz, TFQ_COMPRESSION_GZIP, idx);
  tfq_status *st = tfq_status_new();
  shards(plain, "plain", 0, st);
  shards(gz, "gzip", 0, st);
  shards(plain, "plain", 1, st);
  shards(gz, "gzip", 1, st);

  /* a stale index (the file has 10 more bytes), a malformed one, none */
  char cmd[1024];
  tfq_pipeline *p;
  snprintf(cmd, sizeof cmd,
           "cp %s %s/c.tfrecord && head -c 10 %s >> %s/c.tfrecord && cp %s.idx %s/c.tfrecord.idx",
           plain, g_dir, plain, g_dir, plain, g_dir);
  tap(system(cmd) == 0, "stale copy made");
  snprintf(idx, sizeof idx, "%s/c.tfrecord", g_dir);
  tfq_code c = make(idx, 0, 2, &p, st);
  tap(c == TFQ_DATA_LOSS && strstr(tfq_status_message(st), "stale"), "stale index: %s",
      tfq_status_message(st));
  snprintf(cmd, sizeof cmd, "printf '0 20\\n21 30\\n' > %s/c.tfrecord.idx", g_dir);
  tap(system(cmd) == 0, "gap index made");
  c = make(idx, 0, 2, &p, st);
  tap(c == TFQ_DATA_LOSS && strstr(tfq_status_message(st),
                                   ":2: offset 21 where the records "
                                   "before end at 20"),
      "an index with a gap: %s", tfq_status_message(st));
  snprintf(cmd, sizeof cmd, "rm %s/c.tfrecord.idx", g_dir);
  tap(system(cmd) == 0, "index removed");
  c = make(idx, 0, 2, &p, st);
  tap(c == TFQ_NOT_FOUND, "no index: %s", tfq_status_message(st));
  tfq_status_free(st);
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0) tap(0, "cleanup");
  printf("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
