/* conformance_io: see conformance_io.h. */
#include "conformance_io.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

void die(const char *what) {
  fprintf(stderr, "conformance: %s\n", what);
  exit(2);
}

void *xmalloc(size_t n) {
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

char *unhex(const char *tok, size_t *len) {
  if (tok[0] != 'x') die("hex token without x");
  size_t n = strlen(tok + 1) / 2;
  char *out = xmalloc(n + 1);
  for (size_t i = 0; i < n; i++) {
    int hi = hexval(tok[1 + 2 * i]), lo = hexval(tok[2 + 2 * i]);
    if (hi < 0 || lo < 0) die("bad hex");
    out[i] = (char)(hi * 16 + lo);
  }
  out[n] = 0;
  *len = n;
  return out;
}

void puthex(FILE *f, const char *b, size_t n) {
  fputc('x', f);
  for (size_t i = 0; i < n; i++) fprintf(f, "%02x", (unsigned char)b[i]);
}

void print_err(FILE *f, tfq_status *st) {
  const char *m = tfq_status_message(st);
  fprintf(f, "ERR %d ", (int)tfq_status_code(st));
  puthex(f, m, strlen(m));
}

int split(char *line, char **tok, int max) {
  int n = 0;
  char *save = NULL;
  for (char *p = strtok_r(line, " \n", &save); p && n < max; p = strtok_r(NULL, " \n", &save))
    tok[n++] = p;
  return n;
}

char *read_line(FILE *in) {
  static char *buf = NULL;
  static size_t cap = 0;
  ssize_t n = getline(&buf, &cap, in);
  if (n < 0) return NULL;
  if (n > 0 && buf[n - 1] == '\n') buf[n - 1] = 0;
  return buf;
}

static const struct {
  const char *name;
  tfq_dtype dt;
} kDtypes[] = {{"float", TFQ_FLOAT},   {"double", TFQ_DOUBLE}, {"int32", TFQ_INT32},
               {"int64", TFQ_INT64},   {"string", TFQ_STRING}, {"uint8", TFQ_UINT8},
               {"int16", TFQ_INT16},   {"int8", TFQ_INT8},     {"bool", TFQ_BOOL},
               {"uint16", TFQ_UINT16}, {NULL, TFQ_FLOAT}};

tfq_dtype parse_dtype(const char *s, size_t n) {
  for (int i = 0; kDtypes[i].name; i++)
    if (strlen(kDtypes[i].name) == n && memcmp(kDtypes[i].name, s, n) == 0) return kDtypes[i].dt;
  die("unknown dtype");
  return TFQ_FLOAT;
}

int parse_dims(const char *s, size_t n, int64_t *dims) {
  if (n == 1 && s[0] == '_') return 0;
  if (n == 1 && s[0] == '*') return TFQ_UNKNOWN_RANK;
  int rank = 0;
  size_t i = 0;
  while (i < n) {
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

/* One value of a numeric tensor token, parsed into element i of `d`. */
static void parse_value(tfq_dtype dt, const char *tmp, void *d, int64_t i) {
  switch (dt) {
    case TFQ_FLOAT: {
      uint32_t b = (uint32_t)strtoul(tmp, NULL, 16);
      memcpy((char *)d + 4 * i, &b, 4);
      break;
    }
    case TFQ_DOUBLE: {
      uint64_t b = strtoull(tmp, NULL, 16);
      memcpy((char *)d + 8 * i, &b, 8);
      break;
    }
    case TFQ_INT32: ((int32_t *)d)[i] = (int32_t)strtoll(tmp, NULL, 10); break;
    case TFQ_INT64: ((int64_t *)d)[i] = strtoll(tmp, NULL, 10); break;
    case TFQ_UINT8: ((uint8_t *)d)[i] = (uint8_t)strtol(tmp, NULL, 10); break;
    case TFQ_INT16: ((int16_t *)d)[i] = (int16_t)strtol(tmp, NULL, 10); break;
    case TFQ_INT8: ((int8_t *)d)[i] = (int8_t)strtol(tmp, NULL, 10); break;
    case TFQ_UINT16: ((uint16_t *)d)[i] = (uint16_t)strtol(tmp, NULL, 10); break;
    case TFQ_BOOL: ((uint8_t *)d)[i] = (uint8_t)strtol(tmp, NULL, 10); break;
    default: die("dtype not supported in tensor tokens");
  }
}

tfq_tensor *parse_tensor(const char *tok) {
  const char *s1 = strchr(tok, '/');
  if (!s1) die("bad tensor token");
  const char *s2 = strchr(s1 + 1, '/');
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
    char *h = xmalloc(len + 1);
    memcpy(h, p, len);
    h[len] = 0;
    if (dt == TFQ_STRING) {
      size_t bl;
      char *b = unhex(h, &bl);
      if (tfq_tensor_set_string(t, i, b, bl, NULL) != TFQ_OK) die("set_string");
      free(b);
    } else {
      parse_value(dt, h, tfq_tensor_data(t), i);
    }
    free(h);
    if (!e) break;
    p = e + 1;
  }
  return t;
}

void print_tensor(FILE *f, const tfq_tensor *t) {
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
      case TFQ_DOUBLE: {
        uint64_t b;
        memcpy(&b, (const char *)d + 8 * i, 8);
        fprintf(f, "%016" PRIx64, b);
        break;
      }
      case TFQ_INT32: fprintf(f, "%" PRId32, ((const int32_t *)d)[i]); break;
      case TFQ_INT64: fprintf(f, "%" PRId64, ((const int64_t *)d)[i]); break;
      case TFQ_UINT8: fprintf(f, "%u", (unsigned)((const uint8_t *)d)[i]); break;
      case TFQ_INT16: fprintf(f, "%d", (int)((const int16_t *)d)[i]); break;
      case TFQ_INT8: fprintf(f, "%d", (int)((const int8_t *)d)[i]); break;
      case TFQ_UINT16: fprintf(f, "%u", (unsigned)((const uint16_t *)d)[i]); break;
      case TFQ_BOOL: fprintf(f, "%u", (unsigned)((const uint8_t *)d)[i]); break;
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

void print_tuple(FILE *f, const tfq_tuple *t) {
  for (size_t i = 0; i < tfq_tuple_size(t); i++) {
    fputc(' ', f);
    print_tensor(f, tfq_tuple_get(t, i));
  }
}
