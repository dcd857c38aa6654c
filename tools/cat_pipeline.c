/* The pipeline both tools run (tfq-cat previews it, tfq-feed feeds a TF cluster from it): the
 * input files, standard input, the columns, the record queue (RandomShuffleQueue or FIFO), the
 * filename producer under the Coordinator and the reader threads running the library's
 * read-decode op; signals; teardown.  See cat_app.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cat_app.h"
#include "cat_example.h"
#include "cat_infer.h"
#include "cat_stdin.h"

/* Records a reader op reads at a time (read_up_to): the room the queue keeps for its producers
 * (capacity - min_after_dequeue: by default at least one step's records per reader, see
 * widen_capacity) within [READ_CHUNK_MIN, read_chunk_max()],
 * so that an enqueue_many rarely waits for room half-way (each wait costs a sleep and a wake-up
 * on both sides) while the op's fixed costs per read (a handful of tensors) stay small per
 * record.  2,048 rather than 1,024: the consumer sleeps and is woken once a step, and on DM one
 * reader ran ~10% faster with half as many (docs/performance.md, seventh pass); 4,096 did not
 * help two readers.  Lines longer than the reader's buffer holds for a step make shorter steps
 * (the read-decode op's span path).  But about READ_VALUES values at most for tfq-cat's wide rows:
 * a read batch of rows that wide would take tens of MB at each step (the lines, the decoded
 * columns, the stacked component), each block fresh pages from the kernel, where a batch of a few
 * MB is reused from one read to the next.
 *
 * Narrow rows take longer steps: about STEP_BYTES of input, up to READ_CHUNK_NARROW records
 * (size_steps).  A step costs the consumer a sleep and a wake-up, and the reader a wait for room
 * when the consumer wakes late (~35 us each way on these VMs), whatever its size: a step of 2,048
 * records of 14 bytes (an int64 and a float32) lasts ~70 us, so on such a file steps of ~11,700
 * records ran 1.17x faster without shuffling, 1.18x shuffled (1,390 -> ~270 context switches;
 * docs/performance.md, thirteenth pass).  Long rows keep 2,048: 512 did not help 600-byte rows.
 * STEP_BYTES stays under the reader's buffer (TFQ_DEFAULT_READ_BUFFER_BYTES, 256 KiB), so that a
 * step's lines are one read. */
#define READ_CHUNK_MIN 256
#define READ_CHUNK_MAX 2048
#define READ_CHUNK_NARROW 16384
#define STEP_BYTES ((int64_t)160 << 10)
#define STEP_SAMPLE_BYTES ((size_t)64 << 10)
#define READ_VALUES (1 << 20)

static atomic_int g_signal;
static atomic_int g_phase; /* 0 setup, 1 pipeline running */
static _Atomic(tfq_coord *) g_coord;

/* ---- the pipeline: readers and the library's read-decode op ---------------------------------- */

struct worker {
  app *a;
  size_t index; /* in a->workers */
  tfq_reader *reader;
  tfq_read_decode_op *op; /* the library's read -> decode_csv -> enqueue_many, or */
  example_op *ex;         /* read -> parse_example -> enqueue_many (cat_example_op.c) */
  _Atomic int drained;    /* op's step returned TFQ_OUT_OF_RANGE: no file is left for its reader */
};

/* Compression from the first bytes of a file, then from its name (the library's rule, as
 * TFQ_COMPRESSION_AUTO applies it to each file the pipeline reads). */
tfq_compression detect_compression(const unsigned char *m, size_t n, const char *name,
                                   in_format fmt) {
  return tfq_compression_detect(m, n, name, fmt == FMT_TFRECORD);
}

/* Maps a reader key "<path>:<n>" to what the user named the file. */
void display_key(const app *a, const char *k, size_t n, sbuf *out) {
  if (a->stdin_path) {
    size_t pl = strlen(a->stdin_path);
    if (n > pl && memcmp(k, a->stdin_path, pl) == 0 && k[pl] == ':') {
      sb_putc(out, '-');
      sb_add(out, k + pl, n - pl);
      return;
    }
  }
  sb_add(out, k, n);
}

const input_file *find_file(const app *a, const char *path) {
  for (size_t i = 0; i < a->nfiles; i++)
    if (strcmp(a->files[i].path, path) == 0) return &a->files[i];
  return NULL;
}

tfq_code new_reader(const app *a, tfq_compression comp, int for_sample, int tf_compat,
                    tfq_reader **out, tfq_status *st) {
  tfq_reader_options *ro;
  tfq_code c = tfq_reader_options_new(&ro, st);
  if (c) return c;
  tfq_reader_kind kind = TFQ_READER_TEXT_LINE;
  if (a->fmt == FMT_TFRECORD) kind = TFQ_READER_TFRECORD;
  if (a->fmt == FMT_FIXED) kind = TFQ_READER_FIXED_LENGTH;
  if (for_sample) {
    kind = TFQ_READER_TEXT_LINE;
    tfq_reader_options_set_tf_compat_truncation(ro, tf_compat);
  } else {
    tfq_reader_options_set_skip_header_lines(ro, a->o.skip_header_lines);
  }
  if (kind == TFQ_READER_FIXED_LENGTH) {
    tfq_reader_options_set_record_bytes(ro, a->o.record_bytes);
    tfq_reader_options_set_header_bytes(ro, a->o.header_bytes);
    tfq_reader_options_set_footer_bytes(ro, a->o.footer_bytes);
    tfq_reader_options_set_hop_bytes(ro, a->o.hop_bytes);
  }
  tfq_reader_options_set_compression(ro, comp);
  c = tfq_reader_new(kind, ro, out, st);
  tfq_reader_options_free(ro);
  return c;
}

/* A one-element work queue holding `path`, closed. */
tfq_code unit_queue(const char *path, size_t len, tfq_queue **out, tfq_status *st) {
  tfq_spec *spec = NULL;
  tfq_tuple *t = NULL;
  tfq_tensor *s = NULL;
  tfq_queue *q = NULL;
  tfq_code c;
  if ((c = tfq_spec_new(&spec, st)) || (c = tfq_spec_add(spec, TFQ_STRING, NULL, 0, NULL, st)) ||
      (c = tfq_fifo_queue_new(spec, 1, "tfq_cat_unit", &q, st)) ||
      (c = tfq_tensor_new(TFQ_STRING, NULL, 0, &s, st)) ||
      (c = tfq_tensor_set_string(s, 0, path, len, st)) || (c = tfq_tuple_new(1, &t, st)))
    goto done;
  tfq_tuple_set_take(t, 0, s);
  s = NULL;
  if ((c = tfq_queue_enqueue(q, t, NULL, TFQ_NO_TIMEOUT, st)) ||
      (c = tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st)))
    goto done;
  *out = q;
  q = NULL;
done:
  tfq_tensor_free(s);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(spec);
  return c;
}

/* See cat_app.h.  The op's errors say where as data; the message names the file as the user
 * did ("-" for standard input) and, for lines, the line: "data.csv:7: <TF's message>". */
tfq_code name_error(const app *a, tfq_code c, tfq_status *st) {
  const input_file *f = find_file(a, tfq_status_file(st));
  if (!f) return c;
  sbuf m = {0};
  int64_t line = tfq_status_line(st);
  if (line >= 0 && (a->fmt == FMT_CSV || a->fmt == FMT_TEXT))
    sb_printf(&m, "%s:%" PRId64 ": %s", f->display, line, tfq_status_reason(st));
  else
    sb_printf(&m, "%s: %s", f->display, tfq_status_reason(st));
  tfq_status_set(st, c, "%s", m.p);
  free(m.p);
  return c;
}

/* One reader thread: the library's read -> decode_csv -> enqueue_many op over the shared
 * filename queue, or tfq-cat's read -> parse_example -> enqueue_many. */
static tfq_code op_step(worker *w, tfq_cancel *cancel, tfq_status *st) {
  tfq_code c = tfq_read_decode_step(w->op, cancel, st);
  if (c == TFQ_OUT_OF_RANGE) atomic_store(&w->drained, 1);
  if (c == TFQ_OK || c == TFQ_OUT_OF_RANGE || c == TFQ_CANCELLED) return c;
  return name_error(w->a, c, st);
}

/* A thread whose reader has no file left helps the others finish theirs: it runs another
 * thread's op (the op is safe to share: its reader hands each thread whole lines under its
 * lock, and decode and enqueue run in parallel) until every reader is drained.  Without it the
 * last file of each reader was read by one thread while the others sat idle: on 8 part files
 * and 2 threads, about a tenth of the run on one core.  It also lets -j 2 decode one large file
 * on two cores.  Example input keeps one thread to a reader (its op numbers records per file). */
static tfq_code worker_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  worker *w = ctx;
  if (w->ex) return example_step(w->ex, cancel, st); /* names its errors itself */
  if (!atomic_load(&w->drained)) {
    tfq_code c = op_step(w, cancel, st);
    if (c != TFQ_OUT_OF_RANGE) return c;
  }
  size_t n = (size_t)w->a->o.threads;
  for (size_t k = 1; k < n; k++) {
    worker *o = &w->a->workers[(w->index + k) % n];
    if (atomic_load(&o->drained)) continue;
    tfq_code c = op_step(o, cancel, st);
    if (c != TFQ_OUT_OF_RANGE) return c;
  }
  return TFQ_OUT_OF_RANGE; /* st: the last drained op's */
}

/* tfq-cat's record queue (a->stack_cols): each run of adjacent columns of one dtype is one
 * component, [k] per record for a run of k >= 2 columns (tf.stack of the columns), a scalar for
 * a lone column (and, but for CSV rows of up to TFQ_READ_DECODE_DIRECT_MAX fields, for each column
 * of a run of fewer than STACK_STRINGS_MIN strings).  A wide file's record is then a few tensors
 * instead of one per value: the queue's enqueue_many, its shuffle and the batch dequeues cost per
 * component, not per column.  Sets a->spec's field components, a->ncomp, a->col_comp, a->col_idx
 * and a->comp_width. */
#define STACK_STRINGS_MIN 16
/* The read-decode op decodes the stacked runs of CSV rows of up to TFQ_READ_DECODE_DIRECT_MAX
 * fields straight into their [B, k] components, strings too (tfq/ops.h): a run of two strings is
 * then one component with each row's bytes together, which the shuffled consumer draws with one
 * view and one owner a row instead of two (docs/performance.md, seventh pass). */
static void plan_components(app *a, tfq_status *st) {
  const size_t strings_min =
      a->fmt == FMT_CSV && a->nfields <= TFQ_READ_DECODE_DIRECT_MAX ? 2 : STACK_STRINGS_MIN;
  a->col_comp = xcalloc(a->nfields, sizeof *a->col_comp);
  a->col_idx = xcalloc(a->nfields, sizeof *a->col_idx);
  a->comp_width = xcalloc(a->nfields, sizeof *a->comp_width);
  a->ncomp = 0;
  for (size_t c = 0, end; c < a->nfields; c = end) {
    tfq_dtype dt = a->fields[c].dtype;
    for (end = c + 1; end < a->nfields && a->fields[end].dtype == dt; end++)
      ;
    /* A short run of strings stays one component a column where stacking would copy every
     * string: the decoded column then goes into the queue as it is (shared, not copied). */
    if (dt == TFQ_STRING && end - c < strings_min) end = c + 1;
    int64_t k = (int64_t)(end - c);
    for (size_t j = c; j < end; j++) {
      a->col_comp[j] = a->ncomp;
      a->col_idx[j] = (int64_t)(j - c);
    }
    a->comp_width[a->ncomp++] = k;
    if (tfq_spec_add(a->spec, dt, &k, k > 1 ? 1 : 0, NULL, st)) die_oom();
  }
}

/* Maps the decoded columns to the record queue's components (plan_components) on a new op. */
static void map_components(const app *a, tfq_read_decode_op *op, tfq_status *st) {
  size_t *cols = xcalloc(a->nfields, sizeof *cols);
  for (size_t c = 0; c < a->nfields; c++) cols[c] = c;
  for (size_t c = 0; c < a->nfields; c += (size_t)a->comp_width[a->col_comp[c]]) {
    size_t k = (size_t)a->comp_width[a->col_comp[c]];
    if (tfq_read_decode_op_add_component(op, cols + c, k, k > 1, st)) die_oom();
  }
  free(cols);
}

/* Whether the queue's order is to repeat from run to run: a shuffle with --seed and one reader,
 * whose order depends on the capacity and the read step, so both keep what earlier versions had
 * (TF's capacity rule, READ_CHUNK_MAX). */
static int seeded_order(const options *o) { return o->shuffle && o->seed_set && o->threads == 1; }

/* Sets a->step_records: READ_CHUNK_MAX, or for lines (CSV, text) of a mean length under
 * STEP_BYTES / (2 * READ_CHUNK_MAX), 40 bytes, in the first STEP_SAMPLE_BYTES of the first file,
 * about STEP_BYTES of them, at most READ_CHUNK_NARROW.  (Longer lines gain nothing: a step of
 * 2,048 77-byte rows lasts ~350 us, well over the wake-ups it costs; 2,139 of them ran 0.98x.)  A
 * first file shorter than the sample, or one that is standard input, a pipe, compressed or
 * unreadable here (the reader reports it later) keeps READ_CHUNK_MAX, and so does a seeded shuffle
 * with one reader, whose order (widen_capacity) the step could change. */
static void size_steps(app *a) {
  a->step_records = READ_CHUNK_MAX;
  if (seeded_order(&a->o) || a->ex || (a->fmt != FMT_CSV && a->fmt != FMT_TEXT) || a->nfiles == 0)
    return;
  const input_file *f = &a->files[0];
  if (f->is_stdin || f->is_pipe || f->comp == TFQ_COMPRESSION_ZLIB ||
      f->comp == TFQ_COMPRESSION_GZIP)
    return;
  int fd = open(f->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  unsigned char *buf = xmalloc(STEP_SAMPLE_BYTES);
  ssize_t n = pread(fd, buf, STEP_SAMPLE_BYTES, 0);
  close(fd);
  if (n == (ssize_t)STEP_SAMPLE_BYTES &&
      (f->comp == TFQ_COMPRESSION_NONE ||
       detect_compression(buf, (size_t)n, f->path, a->fmt) == TFQ_COMPRESSION_NONE)) {
    int64_t lines = 0, last = -1;
    for (const unsigned char *p = buf, *e = buf + n; (p = memchr(p, '\n', (size_t)(e - p))); p++) {
      lines++;
      last = p - buf;
    }
    if (lines >= 16) { /* records = STEP_BYTES / mean line length */
      int64_t k = STEP_BYTES * lines / (last + 1);
      if (k >= 2 * READ_CHUNK_MAX) a->step_records = k > READ_CHUNK_NARROW ? READ_CHUNK_NARROW : k;
    }
  }
  free(buf);
}

/* The most records a read step takes: a->step_records, or about READ_VALUES values of wide rows. */
static int64_t read_chunk_max(const app *a) {
  if (a->stack_cols && !a->ex && (int64_t)a->nfields > READ_VALUES / READ_CHUNK_MAX) {
    int64_t k = READ_VALUES / (int64_t)a->nfields;
    return k < 1 ? 1 : k;
  }
  return a->step_records;
}

/* The default capacity: room for one whole read step (read_chunk_max(): READ_CHUNK_MAX records,
 * more for narrow rows, fewer for wide rows)
 * per reader above min_after_dequeue, where TF's rule (mad + (threads + 2) batches; 3 batches
 * without shuffling) leaves less.  Readers then enqueue in whole steps instead of waiting for
 * room half-way through them (on DM, two readers: 1.39x one reader with room for 512 records,
 * 1.54x with 1,024), and the consumer, which drains a step's batches faster than the reader
 * decodes the next, sleeps and is woken once a step rather than once every three batches (on DM,
 * batches of 128, one reader: 700 voluntary context switches a run instead of 1,840; each costs
 * both threads a few microseconds; docs/performance.md, sixth pass).  A shuffle with --seed and
 * one reader (a reproducible order) keeps TF's rule: its order depends on the capacity (each
 * batch is drawn from a full queue), and a seed repeats the order of earlier versions.  A given
 * --capacity is kept. */
static void widen_capacity(app *a) {
  const options *o = &a->o;
  if (o->capacity >= 0 || seeded_order(o)) return;
  /* unshuffled: two steps, so that a reader decodes its next step into the FIFO's ring (ops.h)
   * while the consumer drains the last */
  int64_t step = read_chunk_max(a), readers = o->shuffle ? o->threads : 2;
  int64_t room = readers > INT64_MAX / step ? INT64_MAX : readers * step;
  int64_t base = o->shuffle ? a->mad : 0;
  if (a->capacity - base < room) a->capacity = base > INT64_MAX - room ? INT64_MAX : base + room;
}

/* The reader threads: one reader and one op each, sharing the filename queue (a drained thread
 * then helps the others: worker_step). */
static void start_workers(app *a, tfq_status *st) {
  const options *o = &a->o;
  tfq_compression comp =
      o->compression == COMP_AUTO ? TFQ_COMPRESSION_AUTO : (tfq_compression)o->compression;
  /* read_up_to blocks until it has n records: a pipe is read a batch at a time */
  int64_t chunk = a->capacity - (o->shuffle ? a->mad : 0);
  if (chunk < READ_CHUNK_MIN) chunk = READ_CHUNK_MIN;
  if (chunk > read_chunk_max(a)) chunk = read_chunk_max(a); /* narrow or wide rows */
  for (size_t i = 0; i < a->nfiles; i++)
    if (a->files[i].is_pipe && o->batch_size < chunk) chunk = o->batch_size;
  if (tfq_runner_new(a->q, &a->runner, st)) die_oom();
  a->workers = xcalloc((size_t)o->threads, sizeof *a->workers);
  for (int64_t i = 0; i < o->threads; i++) {
    worker *w = &a->workers[i];
    w->a = a;
    w->index = (size_t)i;
    atomic_init(&w->drained, 0);
    if (new_reader(a, comp, 0, 0, &w->reader, st)) die_oom();
    if (a->ex) { /* tfq-cat only: tfq-feed never decodes Examples, nor does it shard them */
      w->ex = example_op_new(a, w->reader, chunk);
    } else {
      if (tfq_read_decode_op_new(w->reader, a->filenames, a->fmt == FMT_CSV ? a->csv : NULL, chunk,
                                 a->q, &w->op, st))
        die_oom();
      tfq_read_decode_op_set_keys(w->op, o->keys);
      if (a->col_comp) map_components(a, w->op, st);
      if (o->shard_n > 1 && !a->shard_files &&
          tfq_read_decode_op_set_shard(w->op, o->shard_i, o->shard_n, st))
        die_oom();
    }
    char name[32];
    snprintf(name, sizeof name, "reader%" PRId64, i);
    if (tfq_runner_add_op(a->runner, worker_step, w, name, st)) die_oom();
  }
}

/* Records enqueued by every reader thread. */
long long records_in(const app *a) {
  long long n = 0;
  for (int64_t i = 0; i < a->o.threads; i++) {
    const worker *w = &a->workers[i];
    n += w->ex ? example_op_records(w->ex) : tfq_read_decode_op_records(w->op);
  }
  return n;
}

/* ---- signals -------------------------------------------------------------------------------- */

static void *signal_main(void *arg) {
  sigset_t *set = arg;
  int sig;
  for (;;) {
    if (sigwait(set, &sig)) continue;
    atomic_store(&g_signal, sig);
    if (atomic_load(&g_phase) == 0 || !g_coord) _exit(128 + sig);
    if (tfq_coord_request_stop(g_coord, TFQ_OK, NULL) != TFQ_OK) _exit(128 + sig);
    /* A clean stop should take milliseconds; do not hang on a stuck input. */
    struct timespec ts = {5, 0};
    nanosleep(&ts, NULL);
    _exit(128 + sig);
  }
  return NULL;
}

void pipeline_signals(void) {
  /* One thread sigwaits; every other thread has them blocked. */
  static sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  pthread_t sig_th;
  if (pthread_create(&sig_th, NULL, signal_main, &sigs) == 0) pthread_detach(sig_th);
}

int pipeline_signal(void) { return atomic_load(&g_signal); }

long long read_rchar(void) {
  FILE *f = fopen("/proc/self/io", "r");
  if (!f) return -1;
  char line[128];
  long long v = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "rchar:", 6) == 0) v = strtoll(line + 6, NULL, 10);
  fclose(f);
  return v;
}

/* ---- set-up and teardown --------------------------------------------------------------------- */

static void check_files(app *a, int argc, char **argv) {
  (void)argc;
  int nops = argc - optind;
  a->nfiles = nops > 0 ? (size_t)nops : 1;
  a->files = xcalloc(a->nfiles, sizeof *a->files);
  int nstdin = 0, bad = 0;
  for (size_t i = 0; i < a->nfiles; i++) {
    input_file *f = &a->files[i];
    f->display = nops > 0 ? argv[optind + (int)i] : "-";
    if (strcmp(f->display, "-") == 0) {
      f->is_stdin = 1;
      if (++nstdin > 1) usage_error("standard input ('-') may be named only once");
      continue;
    }
    int fd = open(f->display, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) {
      warnx_("%s: %s", f->display, strerror(errno));
      bad = 1;
      continue;
    }
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      warnx_("%s: %s", f->display, strerror(EISDIR));
      bad = 1;
      close(fd);
      continue;
    }
    f->path = xstrdup(f->display);
    unsigned char m[16];
    ssize_t r = read(fd, m, sizeof m);
    close(fd);
    f->comp = a->o.compression == COMP_AUTO
                  ? detect_compression(m, r > 0 ? (size_t)r : 0, f->display, a->fmt)
                  : (tfq_compression)a->o.compression;
  }
  if (bad) exit(EXIT_DATA);
  /* --shard I/N over at least N files: the files k with k % N == I (else start_workers shards
   * the records). */
  if (a->o.shard_n > 1 && a->nfiles >= (size_t)a->o.shard_n) {
    size_t m = 0;
    for (size_t k = 0; k < a->nfiles; k++) {
      if ((int64_t)(k % (size_t)a->o.shard_n) == a->o.shard_i)
        a->files[m++] = a->files[k];
      else
        free(a->files[k].path);
    }
    a->nfiles = m;
    a->shard_files = 1;
  }
}

int pipeline_prepare(app *a, int argc, char **argv, tfq_status *st) {
  options *o = &a->o;
  if (tfq_coord_new(&a->coord, st)) die_oom();
  g_coord = a->coord;

  check_files(a, argc, argv);
  int need_sample = a->fmt == FMT_CSV && (!o->record_defaults || o->skip_header_lines > 0);
  if (a->examples != EX_NONE && !a->ex) need_sample = 1; /* Example detection or inference */
  for (size_t i = 0; i < a->nfiles; i++)
    if (a->files[i].is_stdin) {
      setup_stdin(&a->files[i], o, a->fmt, need_sample && i == 0);
      a->stdin_path = a->files[i].path;
    }

  /* Seeds. */
  if (!o->seed_set) {
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s)
      s = (uint64_t)time(NULL) ^ (uint64_t)getpid();
    o->seed = s & (((uint64_t)1 << 63) - 1);
    if (o->shuffle && !o->quiet)
      warnx_("seed %" PRIu64 " (--seed=%" PRIu64 " repeats the order with -j 1)", o->seed, o->seed);
  }

  /* Columns. */
  int cols = setup_columns(a, need_sample, st);
  if (cols != EXIT_OK) return cols;

  /* The record queue. */
  if (tfq_spec_new(&a->spec, st)) die_oom();
  a->ncomp = a->nfields;
  if (a->ex) {
    example_spec(a, a->spec);
  } else if (a->stack_cols) {
    plan_components(a, st);
  } else {
    for (size_t i = 0; i < a->nfields; i++)
      if (tfq_spec_add(a->spec, a->fields[i].dtype, NULL, 0, NULL, st)) die_oom();
  }
  if (o->keys && tfq_spec_add(a->spec, TFQ_STRING, NULL, 0, NULL, st)) die_oom();
  size_steps(a);
  widen_capacity(a);
  tfq_queue_options *qo;
  if (tfq_queue_options_new(&qo, st)) die_oom();
  tfq_queue_options_set_capacity(qo, a->capacity);
  if (o->shuffle) {
    tfq_queue_options_set_min_after_dequeue(qo, a->mad);
    /* (seed, seed2) = (0, 0) would mean "from the OS": keep seed2 nonzero. */
    tfq_queue_options_set_seeds(qo, (int64_t)o->seed, 87654321);
  }
  if (tfq_queue_options_set_name(qo, o->shuffle ? "shuffle_batch" : "batch", st) ||
      tfq_queue_new(o->shuffle ? TFQ_QUEUE_RANDOM_SHUFFLE : TFQ_QUEUE_FIFO, a->spec, qo, &a->q,
                    st)) {
    warnx_("%s", tfq_status_message(st));
    return EXIT_USAGE;
  }
  tfq_queue_options_free(qo);

  /* The filename producer. */
  {
    int64_t dims[1] = {(int64_t)a->nfiles};
    tfq_tensor *names;
    tfq_producer_options *po;
    if (tfq_tensor_new(TFQ_STRING, dims, 1, &names, st) || tfq_producer_options_new(&po, st))
      die_oom();
    for (size_t i = 0; i < a->nfiles; i++)
      if (tfq_tensor_set_string(names, (int64_t)i, a->files[i].path, strlen(a->files[i].path), st))
        die_oom();
    tfq_producer_options_set_num_epochs(po, o->num_epochs);
    tfq_producer_options_set_shuffle(po, o->shuffle);
    tfq_producer_options_set_seed(po, o->seed);
    if (tfq_string_input_producer_start(names, po, a->coord, &a->filenames, &a->producer, st)) {
      warnx_("%s", tfq_status_message(st));
      return EXIT_DATA;
    }
    tfq_tensor_free(names);
    tfq_producer_options_free(po);
  }

  /* Reader threads under a QueueRunner and the Coordinator. */
  start_workers(a, st);
  return EXIT_OK;
}

tfq_code pipeline_start(app *a, tfq_status *st) {
  atomic_store(&g_phase, 1);
  return tfq_runner_start(a->runner, a->coord, 0, st);
}

tfq_code pipeline_stop(app *a, tfq_status *st) {
  tfq_code rc = tfq_coord_request_stop(a->coord, TFQ_OK, NULL);
  pump_detach_reader();
  tfq_code jc = tfq_coord_join(a->coord, 10 * 1000000LL, 0, st);
  return jc != TFQ_OK ? jc : rc;
}

void pipeline_free(app *a) {
  options *o = &a->o;
  tfq_runner_free(a->runner);
  tfq_producer_runner_free(a->producer);
  for (int64_t i = 0; a->workers && i < o->threads; i++) {
    worker *w = &a->workers[i];
    tfq_read_decode_op_free(w->op);
    example_op_free(w->ex);
    tfq_reader_free(w->reader);
  }
  free(a->workers);
  tfq_queue_free(a->filenames);
  tfq_queue_free(a->q);
  tfq_spec_free(a->spec);
  tfq_csv_options_free(a->csv);
  example_free(a->ex);
  g_coord = NULL;
  atomic_store(&g_phase, 0);
  tfq_coord_free(a->coord);
  for (size_t i = 0; i < a->nfields; i++) {
    free(a->fields[i].def);
    if (a->names) free(a->names[i]);
  }
  free(a->fields);
  free(a->names);
  free(a->col_comp);
  free(a->col_idx);
  free(a->comp_width);
  for (size_t i = 0; i < a->nfiles; i++) {
    free(a->files[i].path);
    free(a->files[i].sample_path);
  }
  free(a->files);
  free(o->select_cols);
  free(a->out.p);
}
