/* conformance_example: the tfq half of the Example / decode_raw conformance family
 * (tests/conformance/example_conformance.py; docs/conformance.md).  Public headers only.
 *
 * Reads a scenario file (one command a line, tokens separated by single spaces, byte strings
 * hex-encoded with an "x" prefix so that tokens are never empty) and prints one result line per
 * scenario.  The tensor-token format is run_conformance.py's (see conformance_tfq.c):
 * <dtype>/<dims>/<vals>, dims "_" (scalar) or "2x3", vals comma-separated ("-" when empty), ints
 * in decimal, floats as the hex of their bits, strings "x<hex>".
 *
 * Commands:
 *   cfg <cid> <n>           then n feature lines (added in this order; stops at the first error):
 *     fl  x<key> <dtype> <dims> <default|->               FixedLenFeature (dims "*": no shape)
 *     vl  x<key> <dtype>                                   VarLenFeature
 *     fls x<key> <dtype> <dims> <allow_missing> <pad|->    FixedLenSequenceFeature
 *     sp  x<key> <dtype> <n_index> x<ik>... <x<vk>|-> <size dims> <already_sorted>
 *                                                          SparseFeature (vk "-": NULL)
 *     dtype: float | int64 | string | int32 | double | none (0)
 *   batch <sid> <cid> <n> <m>   then n lines x<record>, then m lines x<name> (m 0: no names).
 *                               tfq_parse_example over a [n] string tensor (names NULL when
 *                               m == 0); cross-checked against tfq_parse_example_strings and
 *                               (m == 0) against an empty [0] names tensor.
 *   nd <sid> <cid> <sdims> <n> <ndims|-> <m>   then n lines x<record> and m lines x<name>:
 *                               tfq_parse_example over serialized of shape sdims and names of
 *                               shape ndims ("-": NULL)
 *   single <sid> <cid> x<record>   tfq_parse_single_example
 *   scalar <sid> <cid> x<record>   tfq_parse_example over a rank-0 string tensor
 *   raw <sid> <out_type> <little_endian> <dims> <n>   then n lines x<bytes>: tfq_decode_raw over
 *                               a string tensor of shape dims (n its element count)
 *
 * Output, one line per scenario:
 *   <sid> OK <out>...      one <out> per result output, in the result's order:
 *                          x<key>=<tensor> (dense) or x<key>=<indices>;<values>;<dense_shape>
 *                          decode_raw: one token <dtype>/<dims>/x<hex of the raw element bytes>
 *   <sid> ERR <code> x<message> <record>   (record: tfq_status_record(), -1 when unknown)
 *   <sid> MISMATCH <text>  two tfq entry points that must agree did not
 * A config whose building failed answers every scenario that uses it with its ERR line
 * (record -1). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/example.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

#define MAX_TOK 4096
#define MAX_CFG 4096

static void die(const char *what) {
  fprintf(stderr, "conformance_example: %s\n", what);
  exit(2);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) die("out of memory");
  return p;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes "x<hex>" (of `n` characters, or up to the NUL when n is (size_t)-1) into a new
 * NUL-terminated buffer; *len receives its length. */
static char *unhexn(const char *tok, size_t n, size_t *len) {
  if (n == (size_t)-1) n = strlen(tok);
  if (n < 1 || tok[0] != 'x' || (n - 1) % 2) die("bad hex token");
  size_t m = (n - 1) / 2;
  char *out = xmalloc(m + 1);
  for (size_t i = 0; i < m; i++) {
    int hi = hexval(tok[1 + 2 * i]), lo = hexval(tok[2 + 2 * i]);
    if (hi < 0 || lo < 0) die("bad hex");
    out[i] = (char)(hi * 16 + lo);
  }
  out[m] = 0;
  *len = m;
  return out;
}

static char *unhex(const char *tok, size_t *len) { return unhexn(tok, (size_t)-1, len); }

static void puthex(FILE *f, const void *b, size_t n) {
  fputc('x', f);
  for (size_t i = 0; i < n; i++) fprintf(f, "%02x", ((const unsigned char *)b)[i]);
}

static int split(char *line, char **tok, int max) {
  int n = 0;
  char *save = NULL;
  for (char *p = strtok_r(line, " \n", &save); p && n < max; p = strtok_r(NULL, " \n", &save))
    tok[n++] = p;
  return n;
}

static char *read_line(FILE *in) {
  static char *buf = NULL;
  static size_t cap = 0;
  ssize_t n = getline(&buf, &cap, in);
  if (n < 0) return NULL;
  if (n > 0 && buf[n - 1] == '\n') buf[n - 1] = 0;
  return buf;
}

/* Reads the next line and decodes it as x<hex>. */
static char *read_hex_line(FILE *in, size_t *len) {
  char *l = read_line(in);
  if (!l) die("missing data line");
  return unhex(l, len);
}

static const struct {
  const char *name;
  tfq_dtype dt;
} kDtypes[] = {{"float", TFQ_FLOAT},         {"double", TFQ_DOUBLE},
               {"int32", TFQ_INT32},         {"int64", TFQ_INT64},
               {"string", TFQ_STRING},       {"uint8", TFQ_UINT8},
               {"int16", TFQ_INT16},         {"int8", TFQ_INT8},
               {"bool", TFQ_BOOL},           {"uint16", TFQ_UINT16},
               {"half", TFQ_HALF},           {"bfloat16", TFQ_BFLOAT16},
               {"complex64", TFQ_COMPLEX64}, {"complex128", TFQ_COMPLEX128}};

static tfq_dtype parse_dtype(const char *s, size_t n) {
  if (n == 4 && memcmp(s, "none", 4) == 0) return (tfq_dtype)0;
  for (size_t i = 0; i < sizeof kDtypes / sizeof kDtypes[0]; i++)
    if (strlen(kDtypes[i].name) == n && memcmp(kDtypes[i].name, s, n) == 0) return kDtypes[i].dt;
  die("unknown dtype");
  return TFQ_FLOAT;
}

/* dims: "_" scalar, "*" unknown rank, else "AxBx?"; returns the rank. */
static int parse_dims(const char *s, size_t n, int64_t *dims) {
  if (n == 1 && s[0] == '_') return 0;
  if (n == 1 && s[0] == '*') return TFQ_UNKNOWN_RANK;
  int rank = 0;
  size_t i = 0;
  while (i < n) {
    if (rank >= TFQ_MAX_RANK) die("too many dims");
    if (s[i] == '?') {
      dims[rank++] = TFQ_UNKNOWN_DIM;
      i++;
    } else {
      int64_t v = 0;
      while (i < n && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
      dims[rank++] = v;
    }
    if (i < n && s[i] == 'x') i++;
  }
  return rank;
}

/* Parses a tensor token "<dtype>/<dims>/<vals>" (float, int64 and string values). */
static tfq_tensor *parse_tensor(const char *tok) {
  const char *s1 = strchr(tok, '/');
  const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
  if (!s2) die("bad tensor token");
  tfq_dtype dt = parse_dtype(tok, (size_t)(s1 - tok));
  int64_t dims[TFQ_MAX_RANK];
  int rank = parse_dims(s1 + 1, (size_t)(s2 - s1 - 1), dims);
  tfq_tensor *t;
  if (tfq_tensor_new(dt, dims, rank, &t, NULL) != TFQ_OK) die("tensor_new");
  int64_t n = tfq_tensor_num_elements(t);
  const char *p = s2 + 1;
  for (int64_t i = 0; i < n; i++) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    void *d = tfq_tensor_data(t);
    switch (dt) {
      case TFQ_FLOAT: {
        uint32_t b = (uint32_t)strtoul(p, NULL, 16);
        memcpy((char *)d + 4 * i, &b, 4);
        break;
      }
      case TFQ_INT64: ((int64_t *)d)[i] = strtoll(p, NULL, 10); break;
      case TFQ_STRING: {
        size_t bl;
        char *b = unhexn(p, len, &bl);
        if (tfq_tensor_set_string(t, i, b, bl, NULL) != TFQ_OK) die("set_string");
        free(b);
        break;
      }
      default: die("dtype not supported in tensor tokens");
    }
    if (!e) break;
    p = e + 1;
  }
  return t;
}

/* Prints a tensor token: float as the hex of its bits, int64 in decimal, strings x<hex>. */
static void print_tensor(FILE *f, const tfq_tensor *t) {
  tfq_dtype dt = tfq_tensor_dtype(t);
  int rank = tfq_tensor_rank(t);
  fprintf(f, "%s/", tfq_dtype_name(dt));
  if (rank == 0) fputc('_', f);
  for (int i = 0; i < rank; i++) fprintf(f, i ? "x%" PRId64 : "%" PRId64, tfq_tensor_dim(t, i));
  fputc('/', f);
  int64_t n = tfq_tensor_num_elements(t);
  if (n == 0) fputc('-', f);
  const void *d = tfq_tensor_cdata(t);
  for (int64_t i = 0; i < n; i++) {
    if (i) fputc(',', f);
    switch (dt) {
      case TFQ_FLOAT: {
        uint32_t b;
        memcpy(&b, (const char *)d + 4 * i, 4);
        fprintf(f, "%08" PRIx32, b);
        break;
      }
      case TFQ_INT64: fprintf(f, "%" PRId64, ((const int64_t *)d)[i]); break;
      case TFQ_STRING: {
        size_t len;
        const char *s = tfq_tensor_string(t, i, &len);
        puthex(f, s, len);
        break;
      }
      default: fputc('?', f);
    }
  }
}

/* decode_raw outputs: <dtype>/<dims>/x<hex of the element bytes, in memory order>. */
static void print_raw_tensor(FILE *f, const tfq_tensor *t) {
  tfq_dtype dt = tfq_tensor_dtype(t);
  int rank = tfq_tensor_rank(t);
  fprintf(f, "%s/", tfq_dtype_name(dt));
  if (rank == 0) fputc('_', f);
  for (int i = 0; i < rank; i++) fprintf(f, i ? "x%" PRId64 : "%" PRId64, tfq_tensor_dim(t, i));
  fputc('/', f);
  puthex(f, tfq_tensor_cdata(t), (size_t)tfq_tensor_num_elements(t) * tfq_dtype_size(dt));
}

static void print_err(FILE *f, tfq_status *st) {
  const char *m = tfq_status_message(st);
  fprintf(f, "ERR %d ", (int)tfq_status_code(st));
  puthex(f, m, strlen(m));
  fprintf(f, " %" PRId64, tfq_status_record(st));
}

/* The canonical text of a parse call's outcome (a malloc'ed string, no sid, no newline). */
static char *outcome_text(tfq_code c, const tfq_example_result *r, tfq_status *st) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) die("open_memstream");
  if (c != TFQ_OK) {
    print_err(f, st);
  } else {
    fputs("OK", f);
    for (size_t i = 0; i < tfq_example_result_size(r); i++) {
      const char *k = tfq_example_result_key(r, i);
      fputc(' ', f);
      puthex(f, k, strlen(k));
      fputc('=', f);
      if (tfq_example_result_is_sparse(r, i)) {
        const tfq_sparse_tensor *s = tfq_example_result_sparse(r, i);
        if (!s) die("sparse output is NULL");
        print_tensor(f, s->indices);
        fputc(';', f);
        print_tensor(f, s->values);
        fputc(';', f);
        print_tensor(f, s->dense_shape);
      } else {
        const tfq_tensor *t = tfq_example_result_dense(r, i);
        if (!t) die("dense output is NULL");
        print_tensor(f, t);
      }
    }
  }
  fclose(f);
  return buf;
}

/* ---- configs ------------------------------------------------------------------------------- */

static tfq_example_config *g_cfg[MAX_CFG];
static char *g_cfg_err[MAX_CFG]; /* non-NULL: building failed; the ERR text */

static int cfg_id(const char *s) {
  int id = atoi(s);
  if (id < 0 || id >= MAX_CFG) die("config id out of range");
  return id;
}

static tfq_code add_feature(tfq_example_config *cfg, char **tok, int n, tfq_status *st) {
  size_t kl;
  char *key = unhex(tok[1], &kl);
  tfq_dtype dt = parse_dtype(tok[2], strlen(tok[2]));
  int64_t dims[TFQ_MAX_RANK];
  tfq_code c;
  if (strcmp(tok[0], "fl") == 0 && n == 5) {
    int rank = parse_dims(tok[3], strlen(tok[3]), dims);
    tfq_tensor *def = strcmp(tok[4], "-") ? parse_tensor(tok[4]) : NULL;
    c = tfq_example_config_add_fixed_len(cfg, key, dt, dims, rank, def, st);
    tfq_tensor_free(def);
  } else if (strcmp(tok[0], "vl") == 0 && n == 3) {
    c = tfq_example_config_add_var_len(cfg, key, dt, st);
  } else if (strcmp(tok[0], "fls") == 0 && n == 6) {
    int rank = parse_dims(tok[3], strlen(tok[3]), dims);
    tfq_tensor *pad = strcmp(tok[5], "-") ? parse_tensor(tok[5]) : NULL;
    c = tfq_example_config_add_fixed_len_sequence(cfg, key, dt, dims, rank, atoi(tok[4]), pad, st);
    tfq_tensor_free(pad);
  } else if (strcmp(tok[0], "sp") == 0 && n >= 4) {
    int ni = atoi(tok[3]);
    if (ni < 0 || n != 7 + ni) die("bad sp line");
    char **ik = xmalloc(sizeof(char *) * (size_t)(ni ? ni : 1));
    for (int i = 0; i < ni; i++) {
      size_t l;
      ik[i] = unhex(tok[4 + i], &l);
    }
    char *vk = NULL;
    if (strcmp(tok[4 + ni], "-") != 0) {
      size_t l;
      vk = unhex(tok[4 + ni], &l);
    }
    int rank = parse_dims(tok[5 + ni], strlen(tok[5 + ni]), dims);
    if (rank != ni) die("sp size rank != n_index");
    c = tfq_example_config_add_sparse(cfg, key, (const char *const *)ik, (size_t)ni, vk, dt, dims,
                                      atoi(tok[6 + ni]), st);
    for (int i = 0; i < ni; i++) free(ik[i]);
    free(ik);
    free(vk);
  } else {
    die("bad feature line");
    c = TFQ_INTERNAL;
  }
  free(key);
  return c;
}

static void cfg_cmd(FILE *in, char **tok) {
  int id = cfg_id(tok[1]);
  long n = atol(tok[2]);
  tfq_example_config_free(g_cfg[id]);
  g_cfg[id] = NULL;
  free(g_cfg_err[id]);
  g_cfg_err[id] = NULL;
  tfq_status *st = tfq_status_new();
  tfq_example_config *cfg = NULL;
  tfq_code c = tfq_example_config_new(&cfg, st);
  static char *ft[MAX_TOK];
  for (long i = 0; i < n; i++) {
    char *l = read_line(in);
    if (!l) die("short cfg");
    int nt = split(l, ft, MAX_TOK);
    if (nt < 3) die("bad feature line");
    if (c == TFQ_OK) c = add_feature(cfg, ft, nt, st);
  }
  if (c != TFQ_OK) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) die("open_memstream");
    const char *m = tfq_status_message(st);
    fprintf(f, "ERR %d ", (int)c);
    puthex(f, m, strlen(m));
    fputs(" -1", f);
    fclose(f);
    g_cfg_err[id] = buf;
  }
  g_cfg[id] = cfg;
  tfq_status_free(st);
}

/* ---- parse commands ------------------------------------------------------------------------ */

static tfq_tensor *string_tensor(char **s, const size_t *lens, const int64_t *dims, int rank) {
  tfq_tensor *t;
  if (tfq_tensor_new(TFQ_STRING, dims, rank, &t, NULL) != TFQ_OK) die("tensor_new");
  for (int64_t i = 0; i < tfq_tensor_num_elements(t); i++)
    if (tfq_tensor_set_string(t, i, s[i], lens[i], NULL) != TFQ_OK) die("set_string");
  return t;
}

static void batch_cmd(FILE *in, char **tok) {
  char sid[256];
  snprintf(sid, sizeof sid, "%s", tok[1]);
  int id = cfg_id(tok[2]);
  int64_t n = atoll(tok[3]), m = atoll(tok[4]);
  char **rec = xmalloc(sizeof(char *) * (size_t)(n ? n : 1));
  size_t *rl = xmalloc(sizeof(size_t) * (size_t)(n ? n : 1));
  char **nm = xmalloc(sizeof(char *) * (size_t)(m ? m : 1));
  size_t *nl = xmalloc(sizeof(size_t) * (size_t)(m ? m : 1));
  for (int64_t i = 0; i < n; i++) rec[i] = read_hex_line(in, &rl[i]);
  for (int64_t i = 0; i < m; i++) nm[i] = read_hex_line(in, &nl[i]);
  if (g_cfg_err[id]) {
    printf("%s %s\n", sid, g_cfg_err[id]);
  } else {
    tfq_status *st = tfq_status_new();
    tfq_tensor *ser = string_tensor(rec, rl, &n, 1);
    tfq_tensor *names = m ? string_tensor(nm, nl, &m, 1) : NULL;
    tfq_example_result *r = NULL;
    tfq_code c = tfq_parse_example(g_cfg[id], ser, names, &r, st);
    char *main_txt = outcome_text(c, r, st);
    tfq_example_result_free(r);
    printf("%s %s\n", sid, main_txt);
    /* The same batch through tfq_parse_example_strings (names NULL or n names). */
    if (m == 0 || m == n) {
      r = NULL;
      c = tfq_parse_example_strings(g_cfg[id], (const char *const *)rec, rl, n,
                                    m ? (const char *const *)nm : NULL, m ? nl : NULL, &r, st);
      char *t = outcome_text(c, r, st);
      tfq_example_result_free(r);
      if (strcmp(t, main_txt) != 0)
        printf("%s MISMATCH tfq_parse_example_strings gives %s\n", sid, t);
      free(t);
    }
    /* No names == an empty [0] names tensor. */
    if (m == 0) {
      int64_t zero = 0;
      tfq_tensor *empty = string_tensor(NULL, NULL, &zero, 1);
      r = NULL;
      c = tfq_parse_example(g_cfg[id], ser, empty, &r, st);
      char *t = outcome_text(c, r, st);
      tfq_example_result_free(r);
      if (strcmp(t, main_txt) != 0)
        printf("%s MISMATCH tfq_parse_example with an empty names tensor gives %s\n", sid, t);
      free(t);
      tfq_tensor_free(empty);
    }
    free(main_txt);
    tfq_tensor_free(ser);
    tfq_tensor_free(names);
    tfq_status_free(st);
  }
  for (int64_t i = 0; i < n; i++) free(rec[i]);
  for (int64_t i = 0; i < m; i++) free(nm[i]);
  free(rec);
  free(rl);
  free(nm);
  free(nl);
}

/* tfq_parse_example over a serialized tensor of any shape and names of any shape (or none). */
static void nd_cmd(FILE *in, char **tok) {
  char sid[256];
  snprintf(sid, sizeof sid, "%s", tok[1]);
  int id = cfg_id(tok[2]);
  int64_t sdims[TFQ_MAX_RANK], ndims[TFQ_MAX_RANK];
  int srank = parse_dims(tok[3], strlen(tok[3]), sdims);
  int has_names = strcmp(tok[5], "-") != 0;
  int nrank = has_names ? parse_dims(tok[5], strlen(tok[5]), ndims) : 0;
  long n = atol(tok[4]), m = atol(tok[6]);
  char **rec = xmalloc(sizeof(char *) * (size_t)(n + m + 1));
  size_t *rl = xmalloc(sizeof(size_t) * (size_t)(n + m + 1));
  for (long i = 0; i < n + m; i++) rec[i] = read_hex_line(in, &rl[i]);
  if (g_cfg_err[id]) {
    printf("%s %s\n", sid, g_cfg_err[id]);
  } else {
    tfq_tensor *ser = string_tensor(rec, rl, sdims, srank);
    tfq_tensor *names = has_names ? string_tensor(rec + n, rl + n, ndims, nrank) : NULL;
    if (tfq_tensor_num_elements(ser) != n || (names && tfq_tensor_num_elements(names) != m))
      die("nd: element count != dims");
    tfq_status *st = tfq_status_new();
    tfq_example_result *r = NULL;
    tfq_code c = tfq_parse_example(g_cfg[id], ser, names, &r, st);
    char *t = outcome_text(c, r, st);
    tfq_example_result_free(r);
    printf("%s %s\n", sid, t);
    free(t);
    tfq_tensor_free(ser);
    tfq_tensor_free(names);
    tfq_status_free(st);
  }
  for (long i = 0; i < n + m; i++) free(rec[i]);
  free(rec);
  free(rl);
}

static void single_cmd(char **tok, int scalar) {
  int id = cfg_id(tok[2]);
  size_t len;
  char *rec = unhex(tok[3], &len);
  if (g_cfg_err[id]) {
    printf("%s %s\n", tok[1], g_cfg_err[id]);
  } else {
    tfq_status *st = tfq_status_new();
    tfq_example_result *r = NULL;
    tfq_code c;
    if (scalar) {
      tfq_tensor *ser = string_tensor(&rec, &len, NULL, 0);
      c = tfq_parse_example(g_cfg[id], ser, NULL, &r, st);
      tfq_tensor_free(ser);
    } else {
      c = tfq_parse_single_example(g_cfg[id], rec, len, &r, st);
    }
    char *t = outcome_text(c, r, st);
    tfq_example_result_free(r);
    printf("%s %s\n", tok[1], t);
    free(t);
    tfq_status_free(st);
  }
  free(rec);
}

static void raw_cmd(FILE *in, char **tok) {
  char sid[256];
  snprintf(sid, sizeof sid, "%s", tok[1]);
  tfq_dtype dt = parse_dtype(tok[2], strlen(tok[2]));
  int le = atoi(tok[3]);
  int64_t dims[TFQ_MAX_RANK];
  int rank = parse_dims(tok[4], strlen(tok[4]), dims);
  long n = atol(tok[5]);
  char **s = xmalloc(sizeof(char *) * (size_t)(n ? n : 1));
  size_t *l = xmalloc(sizeof(size_t) * (size_t)(n ? n : 1));
  for (long i = 0; i < n; i++) s[i] = read_hex_line(in, &l[i]);
  tfq_tensor *t = string_tensor(s, l, dims, rank);
  if (tfq_tensor_num_elements(t) != n) die("raw: element count != dims");
  tfq_status *st = tfq_status_new();
  tfq_tensor *out = NULL;
  printf("%s ", sid);
  if (tfq_decode_raw(t, dt, le, &out, st) != TFQ_OK) {
    print_err(stdout, st);
  } else {
    fputs("OK ", stdout);
    print_raw_tensor(stdout, out);
  }
  putchar('\n');
  tfq_tensor_free(out);
  tfq_tensor_free(t);
  tfq_status_free(st);
  for (long i = 0; i < n; i++) free(s[i]);
  free(s);
  free(l);
}

int main(int argc, char **argv) {
  FILE *in = stdin;
  if (argc > 1 && !(in = fopen(argv[1], "r"))) die("cannot open the scenario file");
  static char *tok[MAX_TOK];
  char *line;
  while ((line = read_line(in)) != NULL) {
    int n = split(line, tok, MAX_TOK);
    if (n == 0 || tok[0][0] == '#') continue;
    const char *cmd = tok[0];
    if (strcmp(cmd, "cfg") == 0 && n == 3)
      cfg_cmd(in, tok);
    else if (strcmp(cmd, "batch") == 0 && n == 5)
      batch_cmd(in, tok);
    else if (strcmp(cmd, "nd") == 0 && n == 7)
      nd_cmd(in, tok);
    else if (strcmp(cmd, "single") == 0 && n == 4)
      single_cmd(tok, 0);
    else if (strcmp(cmd, "scalar") == 0 && n == 4)
      single_cmd(tok, 1);
    else if (strcmp(cmd, "raw") == 0 && n == 6)
      raw_cmd(in, tok);
    else
      die("unknown command");
    fflush(stdout);
  }
  for (int i = 0; i < MAX_CFG; i++) {
    tfq_example_config_free(g_cfg[i]);
    free(g_cfg_err[i]);
  }
  if (in != stdin) fclose(in);
  return 0;
}
