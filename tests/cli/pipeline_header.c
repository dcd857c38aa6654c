/* tfq_pipeline_options_set_header(o, -1) through the public API (issue #42, item 1): the header
 * detection tfq-cat asks for, as a library user (tfq.data.csv header=-1) gets it.  For each file:
 * tfq_pipeline_header(), the column names and the first record's first value; and the library's
 * default (no set_header) reads line 1 as data, as TF1 does.  The expectations are the files'
 * own contents (written here), not tfq's output.  Exit 0 pass, 1 fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/pipeline.h>

static int fails;

#define CHECK(c, ...)          \
  do {                         \
    if (!(c)) {                \
      fails++;                 \
      printf("FAIL %s: ", #c); \
      printf(__VA_ARGS__);     \
      printf("\n");            \
    }                          \
  } while (0)

typedef struct {
  const char *name, *data;
  int header;         /* -1 detect, 0, 1, 2: leave the default */
  int want_header;    /* tfq_pipeline_header() */
  const char *first;  /* the first column's name */
  const char *value0; /* the first record's first value, as text */
} file_case;

static void value_text(const tfq_tensor *t, char *buf, size_t cap) {
  switch (tfq_tensor_dtype(t)) {
    case TFQ_INT64:
      snprintf(buf, cap, "%lld", (long long)((const int64_t *)tfq_tensor_cdata(t))[0]);
      break;
    case TFQ_DOUBLE: snprintf(buf, cap, "%g", ((const double *)tfq_tensor_cdata(t))[0]); break;
    case TFQ_STRING: {
      size_t n;
      const char *s = tfq_tensor_string(t, 0, &n);
      snprintf(buf, cap, "%.*s", (int)n, s);
      break;
    }
    default: snprintf(buf, cap, "?");
  }
}

static void run(const char *dir, const file_case *fc) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, fc->name);
  FILE *f = fopen(path, "wb");
  if (!f || fputs(fc->data, f) < 0 || fclose(f)) {
    CHECK(0, "%s: cannot write", path);
    return;
  }
  tfq_status *st = tfq_status_new();
  tfq_pipeline_options *o = NULL;
  tfq_pipeline *p = NULL;
  tfq_tuple *b = NULL;
  if (!st || tfq_pipeline_options_new(&o, st) || tfq_pipeline_options_add_file(o, path, st)) {
    CHECK(0, "%s: options", fc->name);
    goto done;
  }
  if (fc->header != 2) tfq_pipeline_options_set_header(o, fc->header);
  tfq_pipeline_options_set_shuffle(o, 0);
  tfq_pipeline_options_set_batch_size(o, 100);
  if (tfq_pipeline_new(o, &p, st)) {
    CHECK(0, "%s: tfq_pipeline_new: %s", fc->name, tfq_status_message(st));
    goto done;
  }
  CHECK(tfq_pipeline_header(p) == fc->want_header, "%s: header %d, expected %d", fc->name,
        tfq_pipeline_header(p), fc->want_header);
  CHECK(strcmp(tfq_pipeline_column_name(p, 0), fc->first) == 0,
        "%s: first column '%s', expected '%s'", fc->name, tfq_pipeline_column_name(p, 0),
        fc->first);
  if (tfq_pipeline_next(p, &b, st)) {
    CHECK(0, "%s: tfq_pipeline_next: %s", fc->name, tfq_status_message(st));
    goto done;
  }
  char v[256];
  value_text(tfq_tuple_get(b, 0), v, sizeof v);
  CHECK(strcmp(v, fc->value0) == 0, "%s: first value '%s', expected '%s'", fc->name, v, fc->value0);
done:
  tfq_tuple_free(b);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  tfq_status_free(st);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  static const file_case cases[] = {
      {"airports.csv", "iata,lat\nORD,41.5\nJFK,40.25\n", -1, 1, "iata", "ORD"},
      {"airports_tf1.csv", "iata,lat\nORD,41.5\nJFK,40.25\n", 2, 0, "c0", "iata"},
      {"airports_no.csv", "iata,lat\nORD,41.5\nJFK,40.25\n", 0, 0, "c0", "iata"},
      {"airports_yes.csv", "iata,lat\nORD,41.5\nJFK,40.25\n", 1, 1, "iata", "ORD"},
      {"numbers.csv", "1,2\n3,4\n", -1, 0, "c0", "1"},
      {"bom_header.csv", "\xef\xbb\xbfid,v\n7,1.5\n8,2.5\n", -1, 1, "id", "7"},
      {"bom_data.csv",
       "\xef\xbb\xbf"
       "5,1.5\n8,2.5\n",
       -1, 0, "c0", "5"},
      {"bom_tf1.csv",
       "\xef\xbb\xbf"
       "5,1.5\n8,2.5\n",
       0, 0, "c0",
       "\xef\xbb\xbf"
       "5"},
      {"one_line.csv", "a,b\n", -1, 0, "c0", "a"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run(dir, &cases[i]);
  printf("%s: %zu files, %d failures\n", argv[0], sizeof cases / sizeof cases[0], fails);
  return fails ? 1 : 0;
}
