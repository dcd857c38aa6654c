/* tfq-cat's --features SPEC, parsed into the parse config the pipeline takes (see
 * cat_example.h). */
#include "cat_example.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- the columns ------------------------------------------------------------------------ */

static ex_col *add_col(cat_example *ex) {
  ex->cols = xrealloc(ex->cols, (ex->ncols + 1) * sizeof *ex->cols);
  ex_col *c = &ex->cols[ex->ncols++];
  memset(c, 0, sizeof *c);
  return c;
}

void example_free(cat_example *ex) {
  if (!ex) return;
  for (size_t i = 0; i < ex->ncols; i++) {
    free(ex->cols[i].name);
    free(ex->cols[i].dims);
    tfq_tensor_free(ex->cols[i].dflt);
  }
  free(ex->cols);
  tfq_example_config_free(ex->cfg);
  free(ex);
}

/* Adds column c to `cfg` (the library's message in `st` when it refuses). */
static tfq_code config_add(tfq_example_config *cfg, const ex_col *c, tfq_status *st) {
  switch (c->kind) {
    case TFQ_EXAMPLE_FIXED_LEN:
      return tfq_example_config_add_fixed_len(cfg, c->name, c->dtype, c->dims, c->rank, c->dflt,
                                              st);
    case TFQ_EXAMPLE_VAR_LEN: return tfq_example_config_add_var_len(cfg, c->name, c->dtype, st);
    default:
      return tfq_example_config_add_fixed_len_sequence(cfg, c->name, c->dtype, c->dims, c->rank, 1,
                                                       c->dflt, st);
  }
}

/* Builds ex->cfg from ex->cols; a config the library refuses is a usage error naming `what`. */
static void finish_config(cat_example *ex, const char *what) {
  tfq_status *st = tfq_status_new();
  if (!st || tfq_example_config_new(&ex->cfg, st)) die_oom();
  for (size_t i = 0; i < ex->ncols; i++)
    if (config_add(ex->cfg, &ex->cols[i], st)) usage_error("%s: %s", what, tfq_status_message(st));
  if (tfq_example_config_check(ex->cfg, st)) usage_error("%s: %s", what, tfq_status_message(st));
  tfq_status_free(st);
}

/* ---- --features SPEC ---------------------------------------------------------------------- */

static const char *skip_sp(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

/* A double-quoted token at *pp ('""' stands for '"'), unquoted into b; usage error if it does
 * not end. */
static void quoted(const char **pp, sbuf *b, const char *spec) {
  const char *p = *pp + 1;
  sb_add(b, "", 0);
  for (;;) {
    if (!*p) usage_error("unterminated quote in --features '%s'", spec);
    if (*p == '"') {
      if (p[1] != '"') break;
      p++;
    }
    sb_putc(b, *p++);
  }
  *pp = p + 1;
}

/* The entry starting at s, up to its ',' (for messages). */
static int entry_len(const char *s) {
  size_t n = 0;
  int depth = 0;
  while (s[n] && (depth || s[n] != ',')) depth += s[n] == '[' ? 1 : s[n] == ']' ? -1 : 0, n++;
  return (int)n;
}

static int parse_type(const char *s, size_t n, tfq_dtype *out) {
  static const struct {
    const char *name;
    tfq_dtype dt;
  } types[] = {{"float32", TFQ_FLOAT}, {"float", TFQ_FLOAT},   {"int64", TFQ_INT64},
               {"long", TFQ_INT64},    {"string", TFQ_STRING}, {"bytes", TFQ_STRING},
               {"str", TFQ_STRING}};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (strlen(types[i].name) == n && memcmp(types[i].name, s, n) == 0) {
      *out = types[i].dt;
      return 1;
    }
  return 0;
}

/* SHAPE at *pp ('[' ... ']'): sets the kind, rank and dims of c. */
static void parse_shape(const char **pp, ex_col *c) {
  const char *start = *pp, *p = *pp + 1, *close = strchr(p, ']');
  int n = close ? (int)(close - start + 1) : (int)strlen(start);
  if (!close) p = close = start;
  p = skip_sp(p);
  c->kind = TFQ_EXAMPLE_FIXED_LEN;
  if (p == start) {
    /* no ']' */
  } else if (*p == '*' && skip_sp(p + 1) == close) {
    c->kind = TFQ_EXAMPLE_VAR_LEN;
    p = close;
  } else if (*p == '?') {
    c->kind = TFQ_EXAMPLE_FIXED_LEN_SEQUENCE;
    p = skip_sp(p + 1);
    if (*p == ',' && skip_sp(p + 1) != close)
      p++;
    else if (p != close)
      p = start; /* not "[?]" nor "[?," and a dim */
  }
  while (p != start && p != close) {
    p = skip_sp(p);
    char *end;
    errno = 0;
    long long d = *p >= '0' && *p <= '9' ? strtoll(p, &end, 10) : -1;
    if (d < 0 || errno || c->rank >= TFQ_MAX_RANK) {
      p = start;
      break;
    }
    c->dims = xrealloc(c->dims, (size_t)(c->rank + 1) * sizeof *c->dims);
    c->dims[c->rank++] = d;
    p = skip_sp(end);
    if (*p == ',' && skip_sp(p + 1) != close)
      p++;
    else if (p != close)
      p = start;
  }
  if (p == start)
    usage_error(
        "invalid shape '%.*s' for feature '%s' in --features (expected [d1,d2,...] for "
        "FixedLen, [*] for VarLen or [?,d2,...] for FixedLenSequence)",
        n, start, c->name);
  *pp = close + 1;
}

/* =DEFAULT (after the '='): a scalar of c's dtype, repeated to fill c's shape (FixedLen), or
 * the padding of a FixedLenSequence feature (one element, its default_value). */
static void parse_default(const char **pp, ex_col *c, const char *spec) {
  const char *p = skip_sp(*pp);
  sbuf d = {0};
  if (*p == '"') {
    quoted(&p, &d, spec);
  } else {
    const char *s = p;
    while (*p && *p != ',') p++;
    const char *e = p;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
    sb_add(&d, s, (size_t)(e - s));
  }
  *pp = p;
  if (c->kind == TFQ_EXAMPLE_VAR_LEN)
    usage_error(
        "feature '%s' in --features: a default applies to FixedLen features and pads [?] "
        "features (not [*])",
        c->name);
  float f = 0;
  long long i = 0;
  char *end = d.p;
  errno = 0;
  if (c->dtype == TFQ_FLOAT) f = strtof(d.p, &end);
  if (c->dtype == TFQ_INT64) i = strtoll(d.p, &end, 10);
  if (c->dtype != TFQ_STRING && (!d.n || *end || errno == ERANGE))
    usage_error("invalid default '%s' for feature '%s' (%s) in --features", d.p, c->name,
                c->dtype == TFQ_FLOAT ? "float32" : "int64");
  int seq = c->kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE; /* the padding: one element */
  if (tfq_tensor_new(c->dtype, c->dims, seq ? 0 : c->rank, &c->dflt, NULL)) die_oom();
  int64_t n = tfq_tensor_num_elements(c->dflt);
  for (int64_t k = 0; k < n; k++) {
    if (c->dtype == TFQ_FLOAT) ((float *)tfq_tensor_data(c->dflt))[k] = f;
    if (c->dtype == TFQ_INT64) ((int64_t *)tfq_tensor_data(c->dflt))[k] = (int64_t)i;
    if (c->dtype == TFQ_STRING && tfq_tensor_set_string(c->dflt, k, d.p, d.n, NULL)) die_oom();
  }
  free(d.p);
}

/* What example_features is building: the parser's usage errors exit from anywhere in it, and
 * a leak check at exit finds the half-built columns through this pointer (reachable, not lost). */
static cat_example *volatile g_building; /* volatile: a store never read back stays */

cat_example *example_features(const char *spec) {
  const char *p = skip_sp(spec);
  if (!*p) usage_error("empty --features");
  cat_example *ex = g_building = xcalloc(1, sizeof *ex);
  for (;;) {
    p = skip_sp(p);
    const char *entry = p;
    sbuf name = {0};
    if (*p == '"') {
      quoted(&p, &name, spec);
    } else {
      const char *s = p;
      while (*p && *p != ':' && *p != ',') p++;
      const char *e = p;
      while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
      sb_add(&name, s, (size_t)(e - s));
    }
    p = skip_sp(p);
    if (*p != ':' || !name.n) {
      if (!*entry || *entry == ',') usage_error("empty entry in --features '%s'", spec);
      usage_error("invalid --features entry '%.*s' (expected NAME:TYPE[SHAPE][=DEFAULT])",
                  entry_len(entry), entry);
    }
    ex_col *c = add_col(ex);
    c->name = name.p;
    c->kind = TFQ_EXAMPLE_FIXED_LEN;
    p = skip_sp(p + 1);
    const char *t = p;
    while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z')) p++;
    if (!parse_type(t, (size_t)(p - t), &c->dtype))
      usage_error(
          "unknown type '%.*s' for feature '%s' in --features (expected float32, int64 or "
          "string, or the aliases float, long, bytes, str)",
          (int)(p - t), t, c->name);
    p = skip_sp(p);
    if (*p == '[') parse_shape(&p, c);
    p = skip_sp(p);
    if (*p == '=') {
      p++;
      parse_default(&p, c, spec);
      ex->padded |= c->kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE;
    }
    p = skip_sp(p);
    if (*p && *p != ',')
      usage_error("invalid --features entry '%.*s' (expected NAME:TYPE[SHAPE][=DEFAULT])",
                  entry_len(entry), entry);
    if (!*p) break;
    p++;
  }
  finish_config(ex, "--features");
  g_building = NULL;
  return ex;
}
