/* tfq-cat's command line (see tfq_cat_args.h).  Usage errors unwind with longjmp to the entry
 * call, which frees what the parse had allocated. */
#include "tfq_cat_args.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat_args_a.h"

static void *xrealloc(void *p, size_t n);
#include "sbuf.h"

/* The state of one entry call: where to unwind to, and what to free then. */
typedef struct {
  jmp_buf jb;
  cat_args_status status;
  char *msg;
  field_spec *fs; /* parse_spec's array so far */
  size_t nfs;
  sbuf d; /* parse_spec's default being built */
} cat_ctx;

static cat_ctx *g_ctx;

/* At most this many -d fields (a repeat N*TYPE asks for N at once). */
#define SPEC_MAX_FIELDS (1 << 20)

static _Noreturn void fail(cat_args_status s) {
  g_ctx->status = s;
  longjmp(g_ctx->jb, 1);
}

#define usage_error args_usage_error
_Noreturn void args_usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *m = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (!m) fail(CAT_ARGS_NOMEM);
  va_start(ap, fmt);
  vsnprintf(m, (size_t)n + 1, fmt, ap);
  va_end(ap);
  g_ctx->msg = m;
  fail(CAT_ARGS_USAGE);
}

static void *xcalloc(size_t n, size_t m) {
  void *p = calloc(n ? n : 1, m ? m : 1);
  if (!p) fail(CAT_ARGS_NOMEM);
  return p;
}
static void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) fail(CAT_ARGS_NOMEM);
  return p;
}

/* Parses a non-negative decimal integer option value; usage error otherwise. */
#define parse_count args_count
int64_t args_count(const char *opt, const char *s, int64_t min) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < min)
    usage_error("invalid value '%s' for %s (expected an integer >= %" PRId64 ")", s, opt, min);
  return (int64_t)v;
}

const char *spec_type_name(tfq_dtype t) {
  switch (t) {
    case TFQ_FLOAT: return "float32";
    case TFQ_DOUBLE: return "float64";
    case TFQ_INT32: return "int32";
    case TFQ_INT64: return "int64";
    default: return "string";
  }
}

/* A name and the value it stands for; tables end with {NULL, 0}. */
typedef struct {
  const char *name;
  int value;
} named;

/* Looks s[0..n) up in t: 1 and *out set, or 0. */
static int find_name(const named *t, const char *s, size_t n, int *out) {
  for (; t->name; t++)
    if (strlen(t->name) == n && memcmp(t->name, s, n) == 0) {
      *out = t->value;
      return 1;
    }
  return 0;
}

/* The value of `arg`, the argument of `opt`, one of t's names; usage error otherwise
 * ("invalid --format 'x' (expected csv, text, tfrecord or fixed)"). */
static int choose(const char *opt, const char *arg, const named *t) {
  int v;
  if (find_name(t, arg, strlen(arg), &v)) return v;
  char list[128] = "";
  size_t k = 0;
  for (const named *e = t; e->name && k < sizeof list; e++) {
    const char *sep = e == t ? "" : e[1].name ? ", " : " or ";
    k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", sep, e->name);
  }
  usage_error("invalid %s '%s' (expected %s)", opt, arg, list);
}

static int parse_type(const char *s, size_t n, tfq_dtype *out) {
  static const named types[] = {{"float32", TFQ_FLOAT},
                                {"float", TFQ_FLOAT},
                                {"float64", TFQ_DOUBLE},
                                {"double", TFQ_DOUBLE},
                                {"int32", TFQ_INT32},
                                {"int", TFQ_INT32},
                                {"int64", TFQ_INT64},
                                {"long", TFQ_INT64},
                                {"string", TFQ_STRING},
                                {"str", TFQ_STRING},
                                {NULL, 0}};
  int v;
  if (!find_name(types, s, n, &v)) return 0;
  *out = (tfq_dtype)v;
  return 1;
}

/* Parses a numeric default; returns 0 when it is not a whole valid number of that type. */
int parse_default_number(field_spec *f) {
  const char *s = f->def;
  char *end;
  if (!*s) return 0;
  errno = 0;
  switch (f->dtype) {
    case TFQ_FLOAT: f->v.f = strtof(s, &end); break;
    case TFQ_DOUBLE: f->v.d = strtod(s, &end); break;
    case TFQ_INT32: {
      long long v = strtoll(s, &end, 10);
      if (v < INT32_MIN || v > INT32_MAX) errno = ERANGE;
      f->v.i32 = (int32_t)v;
      break;
    }
    case TFQ_INT64: f->v.i64 = strtoll(s, &end, 10); break;
    default: return 1;
  }
  if ((f->dtype == TFQ_INT32 || f->dtype == TFQ_INT64) && errno) return 0;
  return *end == 0;
}

/* Parses SPEC: [N*]TYPE[:DEFAULT] entries separated by ',' (outside double quotes).  A DEFAULT
 * in double quotes may contain ',' and '""' for '"'.  N* repeats the entry N times (N >= 1; a
 * TYPE never starts with a digit); SPEC_MAX_FIELDS fields in all.  Returns the count; usage
 * error on bad input. */
static size_t parse_spec(const char *spec, field_spec **out) {
  size_t n = 0, cap = 8;
  field_spec *fs = g_ctx->fs = xcalloc(cap, sizeof *fs);
  sbuf *d = &g_ctx->d;
  const char *p = spec;
  if (!*spec) usage_error("empty --record-defaults");
  for (;;) {
    size_t repeat = 1;
    if (*p >= '0' && *p <= '9') { /* N*: digits, then '*' */
      const char *ns = p;
      repeat = 0;
      for (; *p >= '0' && *p <= '9'; p++)
        repeat = repeat > SPEC_MAX_FIELDS ? repeat : repeat * 10 + (size_t)(*p - '0');
      if (*p != '*' || repeat < 1)
        usage_error(
            "invalid repeat '%.*s' in --record-defaults (expected N*TYPE[:DEFAULT] with "
            "N >= 1)",
            (int)strcspn(ns, ",:"), ns);
      p++;
    }
    if (repeat > SPEC_MAX_FIELDS - n)
      usage_error("--record-defaults lists more than %d fields", SPEC_MAX_FIELDS);
    const char *start = p;
    while (*p && *p != ',' && *p != ':') p++;
    field_spec f;
    memset(&f, 0, sizeof f);
    if (!parse_type(start, (size_t)(p - start), &f.dtype))
      usage_error(
          "unknown type '%.*s' in --record-defaults (expected float32, float64, int32, int64 "
          "or string, or the aliases float, double, int, long, str)",
          (int)(p - start), start);
    if (*p == ':') {
      p++;
      memset(d, 0, sizeof *d);
      if (*p == '"') {
        p++;
        for (;;) {
          if (!*p) usage_error("unterminated quote in --record-defaults '%s'", spec);
          if (*p == '"') {
            if (p[1] == '"') {
              sb_putc(d, '"');
              p += 2;
              continue;
            }
            p++;
            break;
          }
          sb_putc(d, *p++);
        }
        if (*p && *p != ',')
          usage_error("a quoted default must end at ',' in --record-defaults '%s'", spec);
      } else {
        const char *ds = p;
        while (*p && *p != ',') p++;
        sb_add(d, ds, (size_t)(p - ds));
      }
      sb_add(d, "", 0); /* a buffer even for an empty default */
      f.def = d->p;
      f.deflen = d->n;
      if (f.dtype != TFQ_STRING && !parse_default_number(&f))
        usage_error("invalid default '%s' for %s in --record-defaults", f.def,
                    spec_type_name(f.dtype));
    } else {
      f.required = 1;
    }
    if (n + repeat > cap) {
      while (n + repeat > cap) cap *= 2;
      fs = g_ctx->fs = xrealloc(fs, cap * sizeof *fs);
    }
    fs[n++] = f;
    g_ctx->nfs = n;
    memset(d, 0, sizeof *d); /* now owned by fs[] */
    /* N*: the copies own their defaults too */
    for (size_t k = 1; k < repeat; k++) {
      field_spec g = f;
      if (f.def) {
        g.def = xrealloc(NULL, f.deflen + 1);
        memcpy(g.def, f.def, f.deflen + 1);
      }
      fs[n++] = g;
      g_ctx->nfs = n;
    }
    if (!*p) break;
    if (*p != ',') usage_error("invalid --record-defaults '%s'", spec);
    p++;
  }
  *out = fs;
  g_ctx->fs = NULL;
  g_ctx->nfs = 0;
  return n;
}

const char cat_usage_text[] =
    "Usage: " PROG
    " [OPTION]... [FILE]...\n"
    "Preview the shuffled minibatches a TensorFlow 1.x input pipeline feeds a model: read\n"
    "FILEs with reader threads (read_up_to), decode CSV records (decode_csv), shuffle them in\n"
    "a RandomShuffleQueue and print batches.  TFRecord files of tf.train.Example are\n"
    "parsed (parse_example).  With no FILE, or when FILE is -, read standard input.\n"
    "\n"
    "Input:\n"
    "  -f, --format=FMT          csv, text, tfrecord, example or fixed; default from the\n"
    "                            extension (.csv/.tsv: csv, .tfrecord/.tfrecords: tfrecord\n"
    "                            (example if the records are), else text; after .gz/.zz);\n"
    "                            -d implies csv, --features example\n"
    "  -z, --compression=C       auto, none, gzip or zlib (default auto: magic bytes, then\n"
    "                            the extension)\n"
    "      --skip-header-lines=N skip N lines at the start of every file (default 0); the\n"
    "                            first one names the columns\n"
    "      --record-bytes=N      fixed: record size (required with --format=fixed)\n"
    "      --header-bytes=N      fixed: bytes skipped at the start of each file\n"
    "      --footer-bytes=N      fixed: bytes ignored at the end of each file\n"
    "      --hop-bytes=N         fixed: distance between record starts (default record size)\n"
    "\n"
    "CSV (decode_csv):\n"
    "  -d, --record-defaults=SPEC  one TYPE[:DEFAULT] per output field, comma separated;\n"
    "                            TYPE: float32, float64, int32, int64, string (aliases float,\n"
    "                            double, int, long, str); no ':' makes the field required;\n"
    "                            a string DEFAULT may be quoted: string:\"a,b\"; N*TYPE[:DEFAULT]\n"
    "                            is N such fields.  Without -d the types are inferred from\n"
    "                            the first 100 records (fewer for rows over 1310 fields)\n"
    "      --field-delim=C       one byte (default ','; '\\t' accepted; .tsv implies tab)\n"
    "      --no-quote-delim      '\"' is an ordinary byte (use_quote_delim=False)\n"
    "      --na-value=S          a field equal to S takes its default\n"
    "      --select-cols=I,J,... decode only these 0-based columns\n"
    "\n"
    "tf.train.Example (parse_example):\n"
    "      --features=SPEC       NAME:TYPE[SHAPE][=DEFAULT],...  TYPE: float32, int64,\n"
    "                            string (or float, long, bytes, str); SHAPE: none or\n"
    "                            [d1,...] FixedLen, [*] VarLen, [?,d2,...] FixedLenSequence;\n"
    "                            DEFAULT: FixedLen (none: required).  Default: inferred\n"
    "      --raw                 print TFRecord records as bytes, even Examples\n"
    "\n"
    "Batches:\n"
    "  -b, --batch-size=N        records per batch (default 8)\n"
    "  -n, --batches=N           batches to print (default 5; 0: until the input ends)\n"
    "      --shuffle             shuffle the records (the default)\n"
    "      --no-shuffle          keep file order (one reader thread)\n"
    "      --capacity=N          queue capacity (default: see tfq-cat(1))\n"
    "      --min-after-dequeue=N shuffle buffer floor (default 1000)\n"
    "      --seed=N              reproducible order (implies -j 1 unless -j is given); the\n"
    "                            seed drawn otherwise is printed on standard error\n"
    "      --num-epochs=N        read the files N times (default 1)\n"
    "  -j, --threads=N           reader threads (default 2)\n"
    "      --drop-remainder      drop a final smaller batch (kept by default)\n"
    "      --max-bad-records=N   skip up to N bad records (-1: any)\n"
    "\n"
    "Output:\n"
    "  -o, --output=FMT          table (default), jsonl, csv, or none (decode and discard)\n"
    "      --keys                also show each record's key (file:line)\n"
    "      --stats               throughput, records, batches, bytes read, queue fullness and\n"
    "                            the library's allocations per record, on standard error at\n"
    "                            the end\n"
    "  -q, --quiet               no notes on standard error (seed, inferred types)\n"
    "  -h, --help                display this help and exit\n"
    "  -V, --version             output version information and exit\n"
    "\n"
    "Exit status: 0 success, 1 data or I/O error, 2 usage error, 128+N on signal N.\n"
    "Example: " PROG " --skip-header-lines=1 examples/data/iris.csv\n";

enum {
  OPT_SKIP = 256,
  OPT_RECORD_BYTES,
  OPT_HEADER_BYTES,
  OPT_FOOTER_BYTES,
  OPT_HOP_BYTES,
  OPT_FIELD_DELIM,
  OPT_NO_QUOTE,
  OPT_NA,
  OPT_SELECT,
  OPT_SHUFFLE,
  OPT_NO_SHUFFLE,
  OPT_CAPACITY,
  OPT_MAD,
  OPT_SEED,
  OPT_EPOCHS,
  OPT_DROP,
  OPT_KEYS,
  OPT_STATS
};

static const struct option long_opts[] = {
    {"format", required_argument, NULL, 'f'},
    {"compression", required_argument, NULL, 'z'},
    {"skip-header-lines", required_argument, NULL, OPT_SKIP},
    {"record-bytes", required_argument, NULL, OPT_RECORD_BYTES},
    {"header-bytes", required_argument, NULL, OPT_HEADER_BYTES},
    {"footer-bytes", required_argument, NULL, OPT_FOOTER_BYTES},
    {"hop-bytes", required_argument, NULL, OPT_HOP_BYTES},
    {"record-defaults", required_argument, NULL, 'd'},
    {"field-delim", required_argument, NULL, OPT_FIELD_DELIM},
    {"no-quote-delim", no_argument, NULL, OPT_NO_QUOTE},
    {"na-value", required_argument, NULL, OPT_NA},
    {"select-cols", required_argument, NULL, OPT_SELECT},
    {"batch-size", required_argument, NULL, 'b'},
    {"batches", required_argument, NULL, 'n'},
    {"shuffle", no_argument, NULL, OPT_SHUFFLE},
    {"no-shuffle", no_argument, NULL, OPT_NO_SHUFFLE},
    {"capacity", required_argument, NULL, OPT_CAPACITY},
    {"min-after-dequeue", required_argument, NULL, OPT_MAD},
    {"seed", required_argument, NULL, OPT_SEED},
    {"num-epochs", required_argument, NULL, OPT_EPOCHS},
    {"threads", required_argument, NULL, 'j'},
    {"drop-remainder", no_argument, NULL, OPT_DROP},
    {"output", required_argument, NULL, 'o'},
    {"keys", no_argument, NULL, OPT_KEYS},
    {"stats", no_argument, NULL, OPT_STATS},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

static void parse_select_cols(options *o, const char *s) {
  size_t cap = 8;
  free(o->select_cols); /* the last --select-cols wins */
  o->select_cols = NULL;
  o->select_cols = xcalloc(cap, sizeof *o->select_cols);
  o->nselect = 0;
  const char *p = s;
  for (;;) {
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (errno || end == p || (*end && *end != ','))
      usage_error("invalid --select-cols '%s' (expected 0-based column numbers I,J,...)", s);
    if (v < 0) usage_error("--select-cols: select_cols contains negative values.");
    if (o->nselect && v <= o->select_cols[o->nselect - 1])
      usage_error("--select-cols: select_cols is not strictly increasing.");
    if (o->nselect == cap) {
      cap *= 2;
      o->select_cols = xrealloc(o->select_cols, cap * sizeof *o->select_cols);
    }
    o->select_cols[o->nselect++] = v;
    if (!*end) break;
    p = end + 1;
  }
}

static char parse_delim(const char *s) {
  if (strcmp(s, "\\t") == 0 || strcmp(s, "tab") == 0) return '\t';
  if (strlen(s) != 1)
    usage_error("invalid --field-delim '%s': field_delim should be only 1 char", s);
  return s[0];
}

/* The values of -f, -z and -o, in the order --help and the messages list them. */
static const named formats[] = {{"csv", FMT_CSV},
                                {"text", FMT_TEXT},
                                {"tfrecord", FMT_TFRECORD},
                                {"fixed", FMT_FIXED},
                                {NULL, 0}};
static const named cat_formats[] = {{"csv", FMT_CSV},           {"text", FMT_TEXT},
                                    {"tfrecord", FMT_TFRECORD}, {"example", FMT_EXAMPLE},
                                    {"fixed", FMT_FIXED},       {NULL, 0}};
static const named compressions[] = {{"auto", COMP_AUTO},
                                     {"none", TFQ_COMPRESSION_NONE},
                                     {"gzip", TFQ_COMPRESSION_GZIP},
                                     {"zlib", TFQ_COMPRESSION_ZLIB},
                                     {NULL, 0}};
static const named outputs[] = {
    {"table", OUT_TABLE}, {"jsonl", OUT_JSONL}, {"csv", OUT_CSV}, {"none", OUT_NONE}, {NULL, 0}};

/* tfq-cat's own options (tfq-feed does not take them). */
enum { OPT_FEATURES = OPT_EXTRA, OPT_RAW, OPT_CAT_MAX_BAD };
static const struct option cat_more[] = {
    {"features", required_argument, NULL, OPT_FEATURES},
    {"raw", no_argument, NULL, OPT_RAW},
    {"max-bad-records", required_argument, NULL, OPT_CAT_MAX_BAD},
    CAT_ARGS_A_OPTIONS{NULL, 0, NULL, 0}};
static void cat_defaults(options *o) {
  o->examples_ok = 1;
  cat_args_a_defaults(o);
}
static int cat_extra(int c, const char *arg, options *o) {
  switch (c) {
    case OPT_FEATURES: o->features = arg; return 1;
    case OPT_RAW: o->raw = 1; return 1;
    case OPT_CAT_MAX_BAD:
      o->max_bad_records = strcmp(arg, "-1") == 0 ? -1 : args_count("--max-bad-records", arg, 0);
      return 1;
    default: return cat_args_a(c, arg, o);
  }
}
static const args_mode cat_mode = {":f:z:d:b:n:j:o:qhV", NULL, cat_more, cat_defaults, cat_extra};

/* tfq-cat's table without the mode's dropped options, then the mode's own. */
static const struct option *mode_table(const args_mode *m) {
  static struct option t[64];
  size_t n = 0;
  for (const struct option *lo = long_opts; lo->name; lo++) {
    int dropped = 0;
    for (const char *const *d = m->drop; d && *d; d++) dropped |= strcmp(*d, lo->name) == 0;
    if (!dropped) t[n++] = *lo;
  }
  for (const struct option *lo = m->more; lo && lo->name && n < 63; lo++) t[n++] = *lo;
  t[n] = (struct option){NULL, 0, NULL, 0};
  return t;
}

static void parse_options(int argc, char **argv, const args_mode *m, options *o) {
  o->format = FMT_AUTO;
  o->compression = COMP_AUTO;
  o->field_delim = ',';
  o->batch_size = 8;
  o->batches = 5;
  o->shuffle = 1;
  o->capacity = -1;
  o->min_after_dequeue = -1;
  o->num_epochs = 1;
  o->threads = 2;
  o->output = OUT_TABLE;
  if (m->defaults) m->defaults(o);
  int c;
  opterr = 0; /* our own messages, without argv[0] */
  optind = 0; /* glibc: start afresh (the fuzz target parses many argvs) */
  const struct option *table = mode_table(m);
  while ((c = getopt_long(argc, argv, m->short_opts, table, NULL)) != -1) {
    if (c >= OPT_EXTRA && m->extra && m->extra(c, optarg, o)) continue;
    switch (c) {
      case 'f':
        o->format = (in_format)choose("--format", optarg, o->examples_ok ? cat_formats : formats);
        break;
      case 'z': o->compression = choose("--compression", optarg, compressions); break;
      case OPT_SKIP: o->skip_header_lines = parse_count("--skip-header-lines", optarg, 0); break;
      case OPT_RECORD_BYTES: o->record_bytes = parse_count("--record-bytes", optarg, 1); break;
      case OPT_HEADER_BYTES: o->header_bytes = parse_count("--header-bytes", optarg, 0); break;
      case OPT_FOOTER_BYTES: o->footer_bytes = parse_count("--footer-bytes", optarg, 0); break;
      case OPT_HOP_BYTES: o->hop_bytes = parse_count("--hop-bytes", optarg, 0); break;
      case 'd': o->record_defaults = optarg; break;
      case OPT_FIELD_DELIM:
        o->field_delim = parse_delim(optarg);
        o->field_delim_set = 1;
        break;
      case OPT_NO_QUOTE: o->no_quote_delim = 1; break;
      case OPT_NA: o->na_value = optarg; break;
      case OPT_SELECT: parse_select_cols(o, optarg); break;
      case 'b': o->batch_size = parse_count("--batch-size", optarg, 1); break;
      case 'n': o->batches = parse_count("--batches", optarg, 0); break;
      case OPT_SHUFFLE: o->shuffle = 1; break;
      case OPT_NO_SHUFFLE: o->shuffle = 0; break;
      case OPT_CAPACITY: o->capacity = parse_count("--capacity", optarg, 1); break;
      case OPT_MAD: o->min_after_dequeue = parse_count("--min-after-dequeue", optarg, 0); break;
      case OPT_SEED: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(optarg, &end, 10);
        if (errno || end == optarg || *end || optarg[0] == '-')
          usage_error("invalid --seed '%s' (expected an integer >= 0)", optarg);
        o->seed = v;
        o->seed_set = 1;
        break;
      }
      case OPT_EPOCHS: o->num_epochs = parse_count("--num-epochs", optarg, 1); break;
      case 'j':
        o->threads = parse_count("--threads", optarg, 1);
        if (o->threads > 256) usage_error("--threads: at most 256 reader threads");
        o->threads_set = 1;
        break;
      case OPT_DROP: o->drop_remainder = 1; break;
      case 'o': o->output = (out_format)choose("--output", optarg, outputs); break;
      case OPT_KEYS: o->keys = 1; break;
      case OPT_STATS: o->stats = 1; break;
      case 'q': o->quiet = 1; break;
      case 'h': fail(CAT_ARGS_HELP);
      case 'V': fail(CAT_ARGS_VERSION);
      case ':':
        if (strncmp(argv[optind - 1], "--", 2) == 0)
          usage_error("option '%s' requires an argument", argv[optind - 1]);
        usage_error("option requires an argument -- '%c'", optopt);
      default: {
        const char *arg = argv[optind - 1];
        if (strncmp(arg, "--", 2) == 0) {
          size_t len = strcspn(arg + 2, "=");
          for (const struct option *lo = table; lo->name; lo++)
            if (strlen(lo->name) == len && strncmp(lo->name, arg + 2, len) == 0)
              usage_error("option '--%s' doesn't allow an argument", lo->name);
          usage_error("unrecognized option '%s'", arg);
        }
        usage_error("invalid option -- '%c'", optopt);
      }
    }
  }
}

static int has_suffix(const char *s, size_t n, const char *suf) {
  size_t k = strlen(suf);
  return n >= k && strncmp(s + n - k, suf, k) == 0;
}

/* Strips a compression extension; returns the compression it names (or -1). */
int strip_comp_ext(const char *name, size_t *n) {
  static const named exts[] = {{".gz", TFQ_COMPRESSION_GZIP},
                               {".zz", TFQ_COMPRESSION_ZLIB},
                               {".zlib", TFQ_COMPRESSION_ZLIB},
                               {NULL, 0}};
  for (const named *e = exts; e->name; e++)
    if (has_suffix(name, *n, e->name)) {
      *n -= strlen(e->name);
      return e->value;
    }
  return -1;
}

in_format format_from_name(const char *name, int *tsv) {
  size_t n = strlen(name);
  (void)strip_comp_ext(name, &n);
  *tsv = 0;
  if (has_suffix(name, n, ".csv")) return FMT_CSV;
  if (has_suffix(name, n, ".tsv")) {
    *tsv = 1;
    return FMT_CSV;
  }
  if (has_suffix(name, n, ".tfrecord") || has_suffix(name, n, ".tfrecords")) return FMT_TFRECORD;
  return FMT_TEXT;
}

/* ---- entry points ---------------------------------------------------------------------------- */

/* Frees what an unwound call left behind and returns its status (the message goes to *msg). */
static cat_args_status unwind(cat_ctx *ctx, char **msg) {
  for (size_t i = 0; i < ctx->nfs; i++) free(ctx->fs[i].def);
  free(ctx->fs);
  free(ctx->d.p);
  if (msg)
    *msg = ctx->msg;
  else
    free(ctx->msg);
  g_ctx = NULL;
  return ctx->status;
}

void cat_options_free(options *o) {
  free(o->select_cols);
  o->select_cols = NULL;
  o->nselect = 0;
}

void cat_fields_free(field_spec *fs, size_t n) {
  if (!fs) return;
  for (size_t i = 0; i < n; i++) free(fs[i].def);
  free(fs);
}

cat_args_status cat_parse_options(int argc, char **argv, options *o, int *first_operand,
                                  char **msg) {
  return args_parse(argc, argv, &cat_mode, o, first_operand, msg);
}

cat_args_status args_parse(int argc, char **argv, const args_mode *m, options *o,
                           int *first_operand, char **msg) {
  static cat_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  memset(o, 0, sizeof *o);
  if (msg) *msg = NULL;
  g_ctx = &ctx;
  if (setjmp(ctx.jb)) {
    cat_options_free(o);
    return unwind(&ctx, msg);
  }
  parse_options(argc, argv, m, o);
  *first_operand = optind;
  g_ctx = NULL;
  return CAT_ARGS_OK;
}

cat_args_status cat_resolve(options *o, const char *first, cat_plan *p, char **msg) {
  static cat_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  memset(p, 0, sizeof *p);
  if (msg) *msg = NULL;
  g_ctx = &ctx;
  if (setjmp(ctx.jb)) {
    cat_fields_free(p->fields, p->nfields);
    p->fields = NULL;
    p->nfields = 0;
    return unwind(&ctx, msg);
  }
  /* The format: -f, else the first named file's extension; -d implies csv, --features
   * example. */
  int tsv = 0;
  p->fmt = o->format;
  if (p->fmt == FMT_AUTO) {
    p->fmt = strcmp(first, "-") ? format_from_name(first, &tsv) : FMT_TEXT;
    if (p->fmt != FMT_CSV && (o->record_defaults || o->nselect || o->field_delim_set))
      p->fmt = FMT_CSV;
    else if (o->features)
      p->fmt = FMT_EXAMPLE;
  } else if (p->fmt == FMT_CSV && strcmp(first, "-")) {
    (void)format_from_name(first, &tsv);
  }
  /* tf.train.Example: a TFRecord container whose records are parsed. */
  if (o->raw && (o->features || p->fmt == FMT_EXAMPLE))
    usage_error("--raw prints the records' bytes: it excludes --features and --format=example");
  if (o->features && p->fmt != FMT_EXAMPLE && p->fmt != FMT_TFRECORD)
    usage_error("--features applies to tf.train.Example input (--format=example or tfrecord)");
  if (o->raw && p->fmt != FMT_TFRECORD) usage_error("--raw applies to --format=tfrecord");
  if (p->fmt == FMT_EXAMPLE || (p->fmt == FMT_TFRECORD && o->features))
    p->examples = EX_FORCE;
  else if (p->fmt == FMT_TFRECORD && o->examples_ok && !o->raw)
    p->examples = EX_DETECT;
  if (p->fmt == FMT_EXAMPLE) p->fmt = FMT_TFRECORD;
  if (tsv && !o->field_delim_set) o->field_delim = '\t';
  if (p->fmt != FMT_CSV &&
      (o->record_defaults || o->nselect || o->na_value || o->field_delim_set || o->no_quote_delim))
    usage_error(
        "-d, --field-delim, --no-quote-delim, --na-value and --select-cols apply to "
        "--format=csv");
  if (p->fmt == FMT_FIXED && o->record_bytes <= 0)
    usage_error("--format=fixed needs --record-bytes=N");
  if (p->fmt != FMT_FIXED &&
      (o->record_bytes || o->header_bytes || o->footer_bytes || o->hop_bytes))
    usage_error(
        "--record-bytes, --header-bytes, --footer-bytes and --hop-bytes apply to "
        "--format=fixed");
  if (o->record_defaults) p->nfields = parse_spec(o->record_defaults, &p->fields);
  if (o->record_defaults && o->nselect && p->nfields != o->nselect)
    usage_error(
        "--select-cols names %zu columns but -d lists %zu fields: Length of select_cols "
        "and record_defaults do not match.",
        o->nselect, p->nfields);
  if (!o->shuffle || (o->seed_set && !o->threads_set)) o->threads = 1;
  p->mad = o->min_after_dequeue >= 0 ? o->min_after_dequeue : 1000;
  if (o->capacity >= 0) {
    p->capacity = o->capacity;
  } else { /* TF's rule, mad + (threads + 2) * batch_size (3 batches with one reader or without
            * shuffling), saturated: huge values are not UB.  cat_pipeline.c may widen it for
            * several readers (start_workers' read steps). */
    int64_t room = INT64_MAX - (o->shuffle ? p->mad : 0), k = o->shuffle ? o->threads + 2 : 3;
    p->capacity =
        o->batch_size > room / k ? INT64_MAX : (o->shuffle ? p->mad : 0) + k * o->batch_size;
  }
  if (o->shuffle && p->capacity <= p->mad)
    usage_error("--capacity=%" PRId64 " must be bigger than --min-after-dequeue=%" PRId64,
                p->capacity, p->mad);
  g_ctx = NULL;
  return CAT_ARGS_OK;
}
