/* tfq-cat's hint after a late type error in an inferred column (see cat_hint.h). */
#include "cat_hint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the hint for a late type error --------------------------------------------------------- */

/* Appends spec entries e[0..n) as a -d SPEC, runs of 3 or more identical entries as N*ENTRY (as
 * the pipeline prints its inferred -d). */
static void put_spec(sbuf *b, char **e, size_t n) {
  for (size_t i = 0, run; i < n; i += run) {
    for (run = 1; i + run < n && strcmp(e[i], e[i + run]) == 0; run++)
      ;
    if (run < 3) run = 1;
    if (i) sb_putc(b, ',');
    if (run > 1) sb_printf(b, "%zu*", run);
    sb_puts(b, e[i]);
  }
}

char *type_error_hint(const app *a, const char *msg, int64_t line) {
  const char *spec = a->p ? tfq_pipeline_columns_spec(a->p) : NULL;
  const char *f = strstr(msg, "Field ");
  size_t col;
  char type[16];
  int off = 0;
  if (!spec || a->o.record_defaults || !f ||
      sscanf(f, "Field %zu in record %*d is not a valid %15[a-z0-9]: %n", &col, type, &off) != 2 ||
      !off || col >= tfq_pipeline_num_columns(a->p))
    return NULL;
  /* the entries, "N*" expanded (commas inside double quotes are a string default's) */
  char **e = NULL;
  size_t n = 0;
  for (const char *p = spec; *p;) {
    const char *s = p;
    int q = 0;
    while (*p && (q || *p != ',')) q ^= *p++ == '"';
    size_t rep = 1, len = (size_t)(p - s);
    const char *star = memchr(s, '*', len);
    if (star && star > s && strspn(s, "0123456789") == (size_t)(star - s)) {
      rep = strtoull(s, NULL, 10);
      len -= (size_t)(star + 1 - s);
      s = star + 1;
    }
    e = xrealloc(e, (n + rep) * sizeof *e);
    for (size_t k = 0; k < rep; k++) e[n++] = xstrndup(s, len);
    if (*p) p++;
  }
  char *hint = NULL;
  if (col < n) {
    const char *val = f + off;
    char *end;
    (void)strtod(val, &end);
    int num = strncmp(type, "int", 3) == 0 && end != val && !*end;
    free(e[col]);
    e[col] = xstrdup(num ? "float64:0.0" : "string:");
    sbuf b = {0};
    sb_printf(&b, "column %zu '%s' was inferred as %s from the first records: -d '", col,
              tfq_pipeline_column_name(a->p, col), type);
    put_spec(&b, e, n);
    sb_puts(&b, "' reads it");
    int64_t skip = a->o.skip_header_lines; /* the records before the line's, and it */
    if (tfq_pipeline_header(a->p) && skip < 1) skip = 1;
    if (line > skip) sb_printf(&b, " (or --infer-rows=%" PRId64 " samples that far)", line - skip);
    hint = b.p;
  }
  for (size_t k = 0; k < n; k++) free(e[k]);
  free(e);
  return hint;
}
