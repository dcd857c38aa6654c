/* tfq-cat --select-cols by name (see cat_b.h): the names are looked up among the columns a
 * pipeline over the first input's sample gives (the header's names with --skip-header-lines,
 * else c0, c1, ...), and become the column numbers the pipeline takes (in file order, as
 * select_cols must be increasing). */
#include <stdlib.h>
#include <string.h>

#include "cat_app.h"
#include "cat_b.h"

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* Before a usage error's exit: what select_by_name holds (a leak check at exit would report it). */
static void select_free(tfq_pipeline *p, tfq_status *st, int64_t *sel) {
  tfq_pipeline_free(p);
  tfq_status_free(st);
  free(sel);
}

void select_by_name(app *a, const char *names) {
  options *o = &a->o;
  if (a->fmt != FMT_CSV) usage_error("--select-cols applies to --format=csv");
  tfq_status *st = tfq_status_new();
  tfq_pipeline_options *po;
  if (!st || tfq_pipeline_options_new(&po, st)) die_oom();
  const input_file *f = &a->files[0];
  if (tfq_pipeline_options_add_file(po, f->sample_path ? f->sample_path : f->path, st)) die_oom();
  tfq_pipeline_options_set_format(po, TFQ_FORMAT_CSV);
  if (o->compression != COMP_AUTO && !f->sample_path)
    tfq_pipeline_options_set_compression(po, (tfq_compression)o->compression);
  tfq_pipeline_options_set_field_delim(po, o->field_delim);
  tfq_pipeline_options_set_use_quote_delim(po, !o->no_quote_delim);
  /* the header as the pipeline will take it (--header, --no-header, else detected) */
  tfq_pipeline_options_set_header(po, o->header < 0 && o->skip_header_lines > 0 ? 1 : o->header);
  tfq_pipeline_options_set_skip_header_lines(po, o->skip_header_lines);
  tfq_pipeline_options_set_shuffle(po, 0);
  tfq_pipeline *p;
  tfq_code c = tfq_pipeline_new(po, &p, st);
  tfq_pipeline_options_free(po);
  if (c) {
    warnx_("--select-cols: %s", tfq_status_message(st));
    exit(EXIT_DATA);
  }
  size_t ncols = tfq_pipeline_num_columns(p), k = 0;
  int64_t *sel = xcalloc(ncols ? ncols : 1, sizeof *sel);
  for (const char *s = names; *s;) {
    size_t len = strcspn(s, ",");
    size_t i = 0;
    while (i < ncols && !(strlen(tfq_pipeline_column_name(p, i)) == len &&
                          memcmp(tfq_pipeline_column_name(p, i), s, len) == 0))
      i++;
    if (i == ncols) {
      /* a number is a column number, as without names */
      char *e;
      long long v = strtoll(s, &e, 10);
      if (e != s + len || v < 0 || (size_t)v >= ncols) {
        sbuf all = {0};
        for (size_t j = 0; j < ncols; j++)
          sb_printf(&all, "%s%s", j ? ", " : "", tfq_pipeline_column_name(p, j));
        char msg[2048]; /* a long list of columns is cut: the message is for a person */
        snprintf(msg, sizeof msg, "no column '%.*s' (the columns: %s)", (int)len, s, all.p);
        free(all.p);
        select_free(p, st, sel);
        usage_error("--select-cols: %s", msg);
      }
      i = (size_t)v;
    }
    for (size_t j = 0; j < k; j++)
      if (sel[j] == (int64_t)i) {
        select_free(p, st, sel);
        usage_error("--select-cols: '%.*s' given twice", (int)len, s);
      }
    if (k == ncols) {
      select_free(p, st, sel);
      usage_error("--select-cols: more names than columns");
    }
    sel[k++] = (int64_t)i;
    s += len + (s[len] == ',');
  }
  tfq_pipeline_free(p);
  tfq_status_free(st);
  qsort(sel, k, sizeof *sel, cmp_i64);
  free(o->select_cols);
  o->select_cols = sel;
  o->nselect = k;
}
