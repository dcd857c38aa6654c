/* conformance_tfq: the tfq half of the differential conformance harness (tests/conformance).
 *
 * Reads a scenario file (one command per line, tokens separated by single spaces, every byte
 * string hex-encoded with an "x" prefix so that tokens are never empty) and prints results in the
 * canonical format that run_conformance.py also produces from TensorFlow.  Public headers only.
 *
 * Tensor and error tokens: conformance_io.h.
 *
 * Commands (see run_conformance.py for the generator; the Coordinator,
 * QueueRunner, producers and batchers are conformance_coord.c's):
 *   csvopt <delim> <quote> <na> <sel|-> <col>...   col: f=<bits> d=<bits> i=<n> l=<n> s=x<hex>,
 *                                                  F D I L S (required) or t=<tensor>
 *   csvgrp <id> <n>   then n lines "x<hex>": decode the group, and each record alone
 *   csvcase <id> <tensor of records>              decode a records tensor of any shape
 *   qnew <id> <kind> <cap> <min_after> <seed> <seed2> <shared> <comp>...  comp: dtype/dims
 *                                                  (dims "*" = unknown rank, "?" unknown dim)
 *   qop <id> <step> <timeout_us> enq|enqm <tensor>... | deq | deqm <n> | dequt <n> |
 *       close <0|1> | size
 *   tfwrite <path> <comp> <n>  then n lines "x<hex>"
 *   read <id> <kind> <comp> <batch> <skip> <rec> <hdr> <ftr> <hop> <compat> <nfiles> <path>...
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/csv.h>
#include <tfq/queue.h>
#include <tfq/reader.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

#include "conformance_io.h"

/* Element `row` of every column of `t` (columns of shape [n]) as text, into a memstream. */
static char *row_text(const tfq_tuple *t, int64_t row) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) die("open_memstream");
  for (size_t c = 0; c < tfq_tuple_size(t); c++) {
    const tfq_tensor *col = tfq_tuple_get(t, c);
    tfq_dtype dt = tfq_tensor_dtype(col);
    const void *d = tfq_tensor_cdata(col);
    fprintf(f, " %s:", tfq_dtype_name(dt));
    switch (dt) {
      case TFQ_FLOAT: {
        uint32_t b;
        memcpy(&b, (const char *)d + 4 * row, 4);
        fprintf(f, "%08" PRIx32, b);
        break;
      }
      case TFQ_DOUBLE: {
        uint64_t b;
        memcpy(&b, (const char *)d + 8 * row, 8);
        fprintf(f, "%016" PRIx64, b);
        break;
      }
      case TFQ_INT32: fprintf(f, "%" PRId32, ((const int32_t *)d)[row]); break;
      case TFQ_INT64: fprintf(f, "%" PRId64, ((const int64_t *)d)[row]); break;
      case TFQ_STRING: {
        size_t l;
        const char *s = tfq_tensor_string(col, row, &l);
        puthex(f, s, l);
        break;
      }
      default: fputc('?', f);
    }
  }
  fclose(f);
  return buf;
}

/* ---- decode_csv --------------------------------------------------------------------------- */

static tfq_csv_options *g_csv = NULL;
static char g_csv_err[2048]; /* non-empty: building the options failed (printed per use) */

static void csvopt(char **tok, int n) {
  tfq_csv_options_free(g_csv);
  g_csv = NULL;
  g_csv_err[0] = 0;
  tfq_status *st = tfq_status_new();
  if (tfq_csv_options_new(&g_csv, st) != TFQ_OK) die("csv_options_new");
  size_t dl, nl;
  char *delim = unhex(tok[1], &dl), *na = unhex(tok[3], &nl);
  tfq_code c = tfq_csv_options_set_field_delim(g_csv, delim, dl, st);
  if (c == TFQ_OK) tfq_csv_options_set_use_quote_delim(g_csv, atoi(tok[2]));
  if (c == TFQ_OK) c = tfq_csv_options_set_na_value(g_csv, na, nl, st);
  for (int i = 5; i < n && c == TFQ_OK; i++) {
    const char *s = tok[i];
    switch (s[0]) {
      case 'f': {
        uint32_t b = (uint32_t)strtoul(s + 2, NULL, 16);
        float v;
        memcpy(&v, &b, 4);
        c = tfq_csv_options_add_default_float(g_csv, v, st);
        break;
      }
      case 'd': {
        uint64_t b = strtoull(s + 2, NULL, 16);
        double v;
        memcpy(&v, &b, 8);
        c = tfq_csv_options_add_default_double(g_csv, v, st);
        break;
      }
      case 'i':
        c = tfq_csv_options_add_default_int32(g_csv, (int32_t)strtol(s + 2, NULL, 10), st);
        break;
      case 'l': c = tfq_csv_options_add_default_int64(g_csv, strtoll(s + 2, NULL, 10), st); break;
      case 's': {
        size_t l;
        char *b = unhex(s + 2, &l);
        c = tfq_csv_options_add_default_string(g_csv, b, l, st);
        free(b);
        break;
      }
      case 'F': c = tfq_csv_options_add_required(g_csv, TFQ_FLOAT, st); break;
      case 'D': c = tfq_csv_options_add_required(g_csv, TFQ_DOUBLE, st); break;
      case 'I': c = tfq_csv_options_add_required(g_csv, TFQ_INT32, st); break;
      case 'L': c = tfq_csv_options_add_required(g_csv, TFQ_INT64, st); break;
      case 'S': c = tfq_csv_options_add_required(g_csv, TFQ_STRING, st); break;
      case 't': {
        tfq_tensor *t = parse_tensor(s + 2);
        c = tfq_csv_options_add_default_tensor(g_csv, t, st);
        tfq_tensor_free(t);
        break;
      }
      default: die("bad csv column");
    }
  }
  /* select_cols last: TF's Python checks it after the defaults were converted. */
  if (c == TFQ_OK && strcmp(tok[4], "-") != 0) {
    int64_t cols[256];
    size_t nc = 0;
    char *save = NULL;
    for (char *p = strtok_r(tok[4], ",", &save); p && nc < 256; p = strtok_r(NULL, ",", &save))
      cols[nc++] = strtoll(p, NULL, 10);
    c = tfq_csv_options_set_select_cols(g_csv, cols, nc, st);
  }
  if (c != TFQ_OK) {
    const char *m = tfq_status_message(st);
    char *p = g_csv_err;
    p += sprintf(p, "ERR %d x", (int)c);
    for (size_t i = 0; m[i] && p < g_csv_err + sizeof g_csv_err - 3; i++)
      p += sprintf(p, "%02x", (unsigned char)m[i]);
  }
  free(delim);
  free(na);
  tfq_status_free(st);
}

static void csvgrp(FILE *in, char **tok) {
  char id[256]; /* tok[] points into the line buffer, which the record lines overwrite */
  snprintf(id, sizeof id, "%s", tok[1]);
  long n = atol(tok[2]);
  char **lines = xmalloc(sizeof(char *) * (size_t)(n ? n : 1));
  size_t *lens = xmalloc(sizeof(size_t) * (size_t)(n ? n : 1));
  for (long i = 0; i < n; i++) {
    char *l = read_line(in);
    if (!l) die("short csv group");
    lines[i] = unhex(l, &lens[i]);
  }
  if (g_csv_err[0]) {
    printf("G %s %s\n", id, g_csv_err);
    for (long i = 0; i < n; i++) printf("R %s %ld %s\n", id, i, g_csv_err);
  } else {
    tfq_status *st = tfq_status_new();
    tfq_tuple *grp = NULL;
    tfq_code gc =
        tfq_decode_csv_lines(g_csv, (const char *const *)lines, lens, (size_t)n, &grp, st);
    char gerr[2048];
    gerr[0] = 0;
    if (gc != TFQ_OK) {
      FILE *f = fmemopen(gerr, sizeof gerr, "w");
      print_err(f, st);
      fclose(f);
    }
    int consistent = 1;
    long bad_row = -1;
    for (long i = 0; i < n; i++) {
      tfq_tuple *one = NULL;
      const char *lp = lines[i];
      tfq_code c = tfq_decode_csv_lines(g_csv, &lp, &lens[i], 1, &one, st);
      printf("R %s %ld ", id, i);
      if (c != TFQ_OK) {
        print_err(stdout, st);
        if (gc == TFQ_OK && consistent) consistent = 0, bad_row = i;
      } else {
        char *txt = row_text(one, 0);
        printf("OK%s", txt);
        if (gc == TFQ_OK) {
          char *gt = row_text(grp, i);
          if (strcmp(gt, txt) != 0 && consistent) consistent = 0, bad_row = i;
          free(gt);
        }
        free(txt);
        tfq_tuple_free(one);
      }
      putchar('\n');
    }
    if (gc != TFQ_OK)
      printf("G %s %s\n", id, gerr);
    else if (consistent)
      printf("G %s OK\n", id);
    else
      printf("G %s INCONSISTENT %ld\n", id, bad_row);
    tfq_tuple_free(grp);
    tfq_status_free(st);
  }
  for (long i = 0; i < n; i++) free(lines[i]);
  free(lines);
  free(lens);
}

static void csvcase(char **tok) {
  printf("C %s", tok[1]);
  if (g_csv_err[0]) {
    printf(" %s\n", g_csv_err);
    return;
  }
  tfq_tensor *recs = parse_tensor(tok[2]);
  tfq_status *st = tfq_status_new();
  tfq_tuple *out = NULL;
  if (tfq_decode_csv(g_csv, recs, &out, st) != TFQ_OK) {
    putchar(' ');
    print_err(stdout, st);
  } else {
    printf(" OK");
    print_tuple(stdout, out);
    tfq_tuple_free(out);
  }
  putchar('\n');
  tfq_status_free(st);
  tfq_tensor_free(recs);
}

/* ---- queues ------------------------------------------------------------------------------- */

#define MAX_QUEUES 16384
static tfq_queue *g_queues[MAX_QUEUES];

static void qnew(char **tok, int n) {
  int id = atoi(tok[1]);
  if (id < 0 || id >= MAX_QUEUES) die("queue id");
  tfq_status *st = tfq_status_new();
  tfq_spec *spec;
  if (tfq_spec_new(&spec, st) != TFQ_OK) die("spec_new");
  for (int i = 8; i < n; i++) {
    const char *sl = strchr(tok[i], '/');
    int64_t dims[TFQ_MAX_RANK];
    int rank = parse_dims(sl + 1, strlen(sl + 1), dims);
    if (tfq_spec_add(spec, parse_dtype(tok[i], (size_t)(sl - tok[i])), dims, rank, NULL, st) !=
        TFQ_OK)
      die("spec_add");
  }
  tfq_queue_options *o;
  if (tfq_queue_options_new(&o, st) != TFQ_OK) die("queue_options_new");
  tfq_queue_options_set_capacity(o, strtoll(tok[3], NULL, 10));
  tfq_queue_options_set_min_after_dequeue(o, strtoll(tok[4], NULL, 10));
  tfq_queue_options_set_seeds(o, strtoll(tok[5], NULL, 10), strtoll(tok[6], NULL, 10));
  tfq_queue_options_set_tf_exact_order(o, 1);
  if (tfq_queue_options_set_shared_name(o, tok[7], st) != TFQ_OK) die("shared_name");
  tfq_queue *q = NULL;
  printf("Q %d new ", id);
  if (tfq_queue_new((tfq_queue_kind)atoi(tok[2]), spec, o, &q, st) != TFQ_OK)
    print_err(stdout, st);
  else
    printf("OK");
  putchar('\n');
  g_queues[id] = q;
  tfq_queue_options_free(o);
  tfq_spec_free(spec);
  tfq_status_free(st);
}

static void qop(char **tok, int n) {
  int id = atoi(tok[1]);
  tfq_queue *q = g_queues[id];
  int64_t to = strtoll(tok[3], NULL, 10);
  const char *op = tok[4];
  printf("Q %d %s ", id, tok[2]);
  if (!q) {
    printf("NOQUEUE\n");
    return;
  }
  tfq_status *st = tfq_status_new();
  tfq_tuple *out = NULL;
  tfq_code c = TFQ_OK;
  if (strcmp(op, "enq") == 0 || strcmp(op, "enqm") == 0) {
    tfq_tuple *t;
    if (tfq_tuple_new((size_t)(n - 5), &t, st) != TFQ_OK) die("tuple_new");
    for (int i = 5; i < n; i++) tfq_tuple_set_take(t, (size_t)(i - 5), parse_tensor(tok[i]));
    c = op[3] ? tfq_queue_enqueue_many(q, t, NULL, to, st) : tfq_queue_enqueue(q, t, NULL, to, st);
    tfq_tuple_free(t);
  } else if (strcmp(op, "deq") == 0) {
    c = tfq_queue_dequeue(q, &out, NULL, to, st);
  } else if (strcmp(op, "deqm") == 0) {
    c = tfq_queue_dequeue_many(q, strtoll(tok[5], NULL, 10), &out, NULL, to, st);
  } else if (strcmp(op, "dequt") == 0) {
    c = tfq_queue_dequeue_up_to(q, strtoll(tok[5], NULL, 10), &out, NULL, to, st);
  } else if (strcmp(op, "close") == 0) {
    c = tfq_queue_close(q, atoi(tok[5]), NULL, to, st);
  } else if (strcmp(op, "size") == 0) {
    printf("SIZE %" PRId64 "\n", tfq_queue_size(q));
    tfq_status_free(st);
    return;
  } else {
    die("bad queue op");
  }
  if (c != TFQ_OK) {
    print_err(stdout, st);
  } else {
    printf("OK");
    if (out) print_tuple(stdout, out);
  }
  putchar('\n');
  tfq_tuple_free(out);
  tfq_status_free(st);
}

/* ---- readers ------------------------------------------------------------------------------ */

static void tfwrite(FILE *in, char **tok) {
  long n = atol(tok[3]);
  tfq_status *st = tfq_status_new();
  tfq_tfrecord_writer *w;
  if (tfq_tfrecord_writer_new(tok[1], (tfq_compression)atoi(tok[2]), &w, st) != TFQ_OK) {
    fprintf(stderr, "tfwrite %s: %s\n", tok[1], tfq_status_message(st));
    die("tfrecord_writer_new");
  }
  for (long i = 0; i < n; i++) {
    size_t l;
    char *b = unhex(read_line(in), &l);
    if (tfq_tfrecord_writer_write(w, b, l, st) != TFQ_OK) die("tfrecord write");
    free(b);
  }
  if (tfq_tfrecord_writer_close(w, st) != TFQ_OK) die("tfrecord close");
  tfq_tfrecord_writer_free(w);
  tfq_status_free(st);
}

static void read_cmd(char **tok, int n) {
  const char *id = tok[1];
  tfq_status *st = tfq_status_new();
  tfq_reader_options *o;
  if (tfq_reader_options_new(&o, st) != TFQ_OK) die("reader_options_new");
  tfq_reader_options_set_compression(o, (tfq_compression)atoi(tok[3]));
  int64_t batch = strtoll(tok[4], NULL, 10);
  tfq_reader_options_set_skip_header_lines(o, strtoll(tok[5], NULL, 10));
  tfq_reader_options_set_record_bytes(o, strtoll(tok[6], NULL, 10));
  tfq_reader_options_set_header_bytes(o, strtoll(tok[7], NULL, 10));
  tfq_reader_options_set_footer_bytes(o, strtoll(tok[8], NULL, 10));
  tfq_reader_options_set_hop_bytes(o, strtoll(tok[9], NULL, 10));
  tfq_reader_options_set_tf_compat_truncation(o, atoi(tok[10]));
  int nf = atoi(tok[11]);
  /* the filename queue */
  tfq_spec *spec;
  if (tfq_spec_new(&spec, st) != TFQ_OK ||
      tfq_spec_add(spec, TFQ_STRING, NULL, 0, NULL, st) != TFQ_OK)
    die("spec");
  tfq_queue_options *qo;
  if (tfq_queue_options_new(&qo, st) != TFQ_OK) die("queue options");
  char qname[128];
  snprintf(qname, sizeof qname, "fq%s", id);
  if (tfq_queue_options_set_shared_name(qo, qname, st) != TFQ_OK) die("shared name");
  tfq_queue *q;
  if (tfq_queue_new(TFQ_QUEUE_FIFO, spec, qo, &q, st) != TFQ_OK) die("filename queue");
  for (int i = 0; i < nf; i++) {
    tfq_tensor *t;
    if (tfq_tensor_new(TFQ_STRING, NULL, 0, &t, st) != TFQ_OK ||
        tfq_tensor_set_string(t, 0, tok[12 + i], strlen(tok[12 + i]), st) != TFQ_OK)
      die("filename tensor");
    tfq_tuple *e;
    if (tfq_tuple_new(1, &e, st) != TFQ_OK) die("tuple");
    tfq_tuple_set_take(e, 0, t);
    if (tfq_queue_enqueue(q, e, NULL, TFQ_NO_TIMEOUT, st) != TFQ_OK) die("enqueue filename");
    tfq_tuple_free(e);
  }
  if (tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st) != TFQ_OK) die("close filename queue");
  tfq_reader *r;
  if (tfq_reader_new((tfq_reader_kind)atoi(tok[2]), o, &r, st) != TFQ_OK) {
    printf("K %s END ", id);
    print_err(stdout, st);
    putchar('\n');
  } else {
    for (int guard = 0; guard < 1000000; guard++) {
      tfq_tensor *k = NULL, *v = NULL;
      tfq_code c = batch > 0 ? tfq_reader_read_up_to(r, q, batch, &k, &v, NULL, st)
                             : tfq_reader_read(r, q, &k, &v, NULL, st);
      if (c == TFQ_OUT_OF_RANGE && strstr(tfq_status_message(st), "reached end of file")) {
        printf("K %s ", id); /* a FixedLength file shorter than its header: TF moves on */
        print_err(stdout, st);
        putchar('\n');
        continue;
      }
      if (c != TFQ_OK) {
        printf("K %s END ", id);
        print_err(stdout, st);
        putchar('\n');
        break;
      }
      int64_t m = tfq_tensor_num_elements(k);
      for (int64_t j = 0; j < m; j++) {
        size_t kl, vl;
        const char *ks = tfq_tensor_string(k, j, &kl), *vs = tfq_tensor_string(v, j, &vl);
        printf("K %s ", id);
        puthex(stdout, ks, kl);
        putchar(' ');
        puthex(stdout, vs, vl);
        putchar('\n');
      }
      tfq_tensor_free(k);
      tfq_tensor_free(v);
    }
    tfq_reader_free(r);
  }
  tfq_queue_free(q);
  tfq_queue_options_free(qo);
  tfq_spec_free(spec);
  tfq_reader_options_free(o);
  tfq_status_free(st);
}

/* ---- main --------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  FILE *in = stdin;
  if (argc > 1 && !(in = fopen(argv[1], "r"))) die("cannot open the scenario file");
  static char *tok[MAX_TOK];
  char *line;
  while ((line = read_line(in)) != NULL) {
    int n = split(line, tok, MAX_TOK);
    if (n == 0 || tok[0][0] == '#') continue;
    const char *cmd = tok[0];
    if (strcmp(cmd, "csvopt") == 0)
      csvopt(tok, n);
    else if (strcmp(cmd, "csvgrp") == 0)
      csvgrp(in, tok);
    else if (strcmp(cmd, "csvcase") == 0)
      csvcase(tok);
    else if (strcmp(cmd, "qnew") == 0)
      qnew(tok, n);
    else if (strcmp(cmd, "qop") == 0)
      qop(tok, n);
    else if (strcmp(cmd, "qfree") == 0) {
      int id = atoi(tok[1]);
      tfq_queue_free(g_queues[id]);
      g_queues[id] = NULL;
    } else if (strcmp(cmd, "tfwrite") == 0)
      tfwrite(in, tok);
    else if (strcmp(cmd, "read") == 0)
      read_cmd(tok, n);
    else
      die("unknown command");
    fflush(stdout);
  }
  tfq_csv_options_free(g_csv);
  for (int i = 0; i < MAX_QUEUES; i++) tfq_queue_free(g_queues[i]);
  if (in != stdin) fclose(in);
  return 0;
}
