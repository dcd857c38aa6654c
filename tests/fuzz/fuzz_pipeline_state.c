/* libFuzzer target: tfq_pipeline_restore() over arbitrary states (tfq/pipeline.h).
 *
 * Two fixed pipelines over in-memory files: CSV (int64, float32, string columns) and TFRecord
 * Examples (a FixedLen int64, a VarLen bytes and a FixedLenSequence float [?, 2] feature: dense,
 * sparse and ragged columns).  Input layout: byte 0 = mode, the rest = the state's body.
 *   mode & 1   the Example pipeline (else CSV)
 *   mode & 2   raw: the rest is passed as the whole state (magic, version, length, CRC checks)
 *   else       wrapped: a valid header and CRC32C around the rest, whose first 32 bytes (the
 *              fingerprints, the seed, the file count) are replaced by the pipeline's own, so the
 *              body's parser sees the fuzzer's bytes
 * Invariants: restore returns a proper code with a message; after an OK restore the pipeline
 * runs to an end (at most 2,000 batches) without crashing, its state saves again, and that
 * state restores into a new pipeline; nothing leaks (LeakSanitizer).  Seeds: states saved at
 * several points of both pipelines (corpus/pipeline_state, written by running the target with
 * TFQ_FUZZ_WRITE_SEEDS=DIR). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fuzz_file g_csv, g_ex;
static tfq_pipeline_options *g_opt[2];
static tfq_example_config *g_cfg;
static unsigned char g_fp[2][32]; /* the first 32 bytes of each pipeline's state body */

typedef struct {
  unsigned char *p;
  size_t n, cap;
} pb;
static void pb_put(pb *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
    FUZZ_CHECK(b->p);
  }
  memcpy(b->p + b->n, d, n);
  b->n += n;
}
static void pb_byte(pb *b, unsigned v) {
  unsigned char c = (unsigned char)v;
  pb_put(b, &c, 1);
}
/* A length-delimited field of at most 127 bytes. */
static void pb_len(pb *b, int field, const void *d, size_t n) {
  FUZZ_CHECK(n < 128);
  pb_byte(b, (unsigned)(field << 3 | 2));
  pb_byte(b, (unsigned)n);
  pb_put(b, d, n);
}
static void pb_feature(pb *fs, const char *key, int kind, const pb *list) {
  pb feat = {0}, entry = {0};
  pb_len(&feat, kind, list->p, list->n);
  pb_len(&entry, 1, key, strlen(key));
  pb_len(&entry, 2, feat.p, feat.n);
  pb_len(fs, 1, entry.p, entry.n);
  free(feat.p);
  free(entry.p);
}

static void write_examples(void) {
  char dir[] = "/tmp/tfq_fuzz_state_XXXXXX";
  FUZZ_CHECK(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof path, "%s/x.tfrecord", dir);
  tfq_tfrecord_writer *w;
  FUZZ_CHECK(tfq_tfrecord_writer_new(path, TFQ_COMPRESSION_NONE, &w, NULL) == TFQ_OK);
  for (int i = 0; i < 60; i++) {
    pb fs = {0}, ex = {0}, l = {0}, v = {0};
    pb_byte(&v, (unsigned)i); /* int64_list {value: [i]} */
    pb_len(&l, 1, v.p, v.n);
    pb_feature(&fs, "id", 3, &l);
    l.n = 0;
    for (int j = 0; j < i % 3; j++) pb_len(&l, 1, "tag", 3);
    pb_feature(&fs, "tags", 1, &l);
    l.n = v.n = 0;
    for (int k = 0; k < i % 4; k++) {
      float xy[2] = {(float)i, (float)k};
      pb_put(&v, xy, 8);
    }
    if (v.n) pb_len(&l, 1, v.p, v.n);
    pb_feature(&fs, "xy", 2, &l);
    pb_len(&ex, 1, fs.p, fs.n);
    FUZZ_CHECK(tfq_tfrecord_writer_write(w, (const char *)ex.p, ex.n, NULL) == TFQ_OK);
    free(fs.p);
    free(ex.p);
    free(l.p);
    free(v.p);
  }
  FUZZ_CHECK(tfq_tfrecord_writer_close(w, NULL) == TFQ_OK);
  tfq_tfrecord_writer_free(w);
  /* into the memfd (the pipeline's file), then the temporary file goes */
  FILE *f = fopen(path, "rb");
  FUZZ_CHECK(f);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  remove(path);
  remove(dir);
  fuzz_file_open(&g_ex, "pipeline_state_examples");
  fuzz_file_set(&g_ex, buf, n);
}

static tfq_pipeline *make(int which) {
  tfq_pipeline *p = NULL;
  FUZZ_CHECK(tfq_pipeline_new(g_opt[which], &p, NULL) == TFQ_OK);
  return p;
}

static void setup(void) {
  fuzz_file_open(&g_csv, "pipeline_state_csv");
  static char text[8192];
  size_t n = 0;
  for (int i = 0; i < 200; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "%d,%d.5,s%d\n", i, i, i % 7);
  fuzz_file_set(&g_csv, text, n);
  write_examples();
  FUZZ_CHECK(tfq_example_config_new(&g_cfg, NULL) == TFQ_OK);
  FUZZ_CHECK(tfq_example_config_add_fixed_len(g_cfg, "id", TFQ_INT64, NULL, 0, NULL, NULL) ==
             TFQ_OK);
  FUZZ_CHECK(tfq_example_config_add_var_len(g_cfg, "tags", TFQ_STRING, NULL) == TFQ_OK);
  const int64_t two = 2;
  FUZZ_CHECK(tfq_example_config_add_fixed_len_sequence(g_cfg, "xy", TFQ_FLOAT, &two, 1, 1, NULL,
                                                       NULL) == TFQ_OK);
  for (int k = 0; k < 2; k++) {
    tfq_pipeline_options *o;
    FUZZ_CHECK(tfq_pipeline_options_new(&o, NULL) == TFQ_OK);
    FUZZ_CHECK(tfq_pipeline_options_add_file(o, k ? g_ex.path : g_csv.path, NULL) == TFQ_OK);
    if (k) {
      tfq_pipeline_options_set_format(o, TFQ_FORMAT_EXAMPLES);
      tfq_pipeline_options_set_features(o, g_cfg);
    } else {
      FUZZ_CHECK(tfq_pipeline_options_set_columns(o, "int64,float32:0,string:", NULL) == TFQ_OK);
    }
    tfq_pipeline_options_set_batch_size(o, 8);
    tfq_pipeline_options_set_capacity(o, 40);
    tfq_pipeline_options_set_min_after_dequeue(o, 10);
    tfq_pipeline_options_set_seed(o, 11);
    tfq_pipeline_options_set_num_epochs(o, 2);
    tfq_pipeline_options_set_num_threads(o, 0);
    tfq_pipeline_options_set_step(o, 16);
    tfq_pipeline_options_set_max_bad_records(o, 3);
    tfq_pipeline_options_set_deterministic(o, 1);
    g_opt[k] = o;
    /* the fingerprints: a fresh state's body starts with them */
    tfq_pipeline *p = make(k);
    char *s;
    size_t len;
    FUZZ_CHECK(tfq_pipeline_save(p, &s, &len, NULL) == TFQ_OK);
    FUZZ_CHECK(len >= 28 + 32);
    memcpy(g_fp[k], s + 28, 32);
    tfq_free(s);
    tfq_pipeline_free(p);
  }
}

/* TFQ_FUZZ_WRITE_SEEDS=DIR: writes the seed corpus (states of both pipelines after 0, 1, 3, 7,
 * 12 and 30 batches, wrapped and raw) into DIR and exits. */
static void write_seeds(const char *dir) {
  static const int at[] = {0, 1, 3, 7, 12, 30};
  for (int k = 0; k < 2; k++)
    for (size_t a = 0; a < sizeof at / sizeof at[0]; a++) {
      tfq_pipeline *p = make(k);
      tfq_tuple *b;
      for (int i = 0; i < at[a] && tfq_pipeline_next(p, &b, NULL) == TFQ_OK; i++) tfq_tuple_free(b);
      char *s;
      size_t len;
      FUZZ_CHECK(tfq_pipeline_save(p, &s, &len, NULL) == TFQ_OK);
      for (int raw = 0; raw < 2; raw++) {
        char path[512];
        snprintf(path, sizeof path, "%s/seed-%s-%s-%d", dir, k ? "examples" : "csv",
                 raw ? "raw" : "body", at[a]);
        FILE *f = fopen(path, "wb");
        FUZZ_CHECK(f);
        unsigned char mode = (unsigned char)(k | (raw ? 2 : 0));
        fwrite(&mode, 1, 1, f);
        fwrite(raw ? s : s + 28, 1, raw ? len : len - 28, f);
        FUZZ_CHECK(fclose(f) == 0);
      }
      tfq_free(s);
      tfq_pipeline_free(p);
    }
  exit(0);
}

static void put_le(unsigned char *d, uint64_t v, int n) {
  for (int i = 0; i < n; i++) d[i] = (unsigned char)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready;
  if (!ready) {
    setup();
    ready = 1;
    if (getenv("TFQ_FUZZ_WRITE_SEEDS")) write_seeds(getenv("TFQ_FUZZ_WRITE_SEEDS"));
  }
  if (size < 1) return 0;
  int which = data[0] & 1, raw = data[0] & 2;
  const uint8_t *body = data + 1;
  size_t blen = size - 1, len = raw ? blen : 28 + blen;
  unsigned char *state = malloc(len ? len : 1);
  FUZZ_CHECK(state);
  if (raw) {
    if (blen) memcpy(state, body, blen);
  } else {
    memcpy(state, "TFQPIPE", 8);
    put_le(state + 8, 1, 4);
    put_le(state + 12, 0, 4);
    put_le(state + 16, blen, 8);
    if (blen) memcpy(state + 28, body, blen);
    memcpy(state + 28, g_fp[which], blen < 32 ? blen : 32);
    put_le(state + 24, tfq_crc32c_mask(tfq_crc32c_extend(0, state + 28, blen)), 4);
  }
  tfq_pipeline *p = make(which);
  tfq_status *st = tfq_status_new();
  FUZZ_CHECK(st);
  tfq_code c = tfq_pipeline_restore(p, state, len, st);
  if (c != TFQ_OK) {
    FUZZ_CHECK(c == TFQ_DATA_LOSS || c == TFQ_INVALID_ARGUMENT || c == TFQ_RESOURCE_EXHAUSTED);
    FUZZ_CHECK(tfq_status_message(st)[0] != '\0');
  } else {
    /* a restored pipeline saves again, and that state restores */
    char *again;
    size_t alen;
    FUZZ_CHECK(tfq_pipeline_save(p, &again, &alen, st) == TFQ_OK);
    tfq_pipeline *q = make(which);
    FUZZ_CHECK(tfq_pipeline_restore(q, again, alen, st) == TFQ_OK);
    tfq_pipeline_free(q);
    tfq_free(again);
    tfq_tuple *b;
    for (int k = 0; k < 2000; k++) {
      c = tfq_pipeline_next(p, &b, st);
      if (c != TFQ_OK) break;
      FUZZ_CHECK(tfq_tuple_size(b) == tfq_pipeline_num_slots(p));
      tfq_tuple_free(b);
    }
    FUZZ_CHECK(c != TFQ_OK && tfq_status_message(st)[0] != '\0');
  }
  tfq_status_free(st);
  tfq_pipeline_free(p);
  free(state);
  return 0;
}
