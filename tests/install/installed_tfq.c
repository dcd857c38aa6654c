/* Compiled by install_prefix.sh against an installed tfq only (the prefix's headers, tfq.pc and
 * library, shared or static): decodes two CSV records, passes them through a FIFOQueue and
 * prints what comes out, with the versions of the header and of the library it runs with. */
#include <stdio.h>
#include <tfq/tfq.h>

static int fail(const char *what, tfq_status *st) {
  fprintf(stderr, "installed_tfq: %s: %s\n", what, st ? tfq_status_message(st) : "no status");
  return 1;
}

int main(void) {
  tfq_status *st = tfq_status_new();
  if (!st) return fail("status", NULL);
  tfq_csv_options *o;
  if (tfq_csv_options_new(&o, st) || tfq_csv_options_add_default_int64(o, 0, st) ||
      tfq_csv_options_add_default_float(o, 0, st) ||
      tfq_csv_options_add_default_string(o, "", 0, st))
    return fail("csv options", st);
  static const char csv[] = "7,2.5,abc\n-3,,\"x,y\"\n";
  tfq_tuple *rows;
  if (tfq_decode_csv_buffer(o, csv, sizeof csv - 1, &rows, st)) return fail("decode_csv", st);
  tfq_spec *spec;
  tfq_queue *q;
  if (tfq_spec_new(&spec, st) || tfq_spec_add(spec, TFQ_INT64, NULL, 0, "id", st) ||
      tfq_spec_add(spec, TFQ_FLOAT, NULL, 0, "x", st) ||
      tfq_spec_add(spec, TFQ_STRING, NULL, 0, "s", st) ||
      tfq_fifo_queue_new(spec, 4, "installed", &q, st))
    return fail("queue", st);
  if (tfq_queue_enqueue_many(q, rows, NULL, TFQ_NO_TIMEOUT, st)) return fail("enqueue", st);
  tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, NULL); /* no TFQ_WARN_UNUSED: export.h */
  tfq_tuple *out;
  while (tfq_queue_dequeue_up_to(q, 1, &out, NULL, TFQ_NO_TIMEOUT, st) == TFQ_OK) {
    const int64_t *id = tfq_tensor_data(tfq_tuple_get(out, 0));
    const float *x = tfq_tensor_data(tfq_tuple_get(out, 1));
    size_t len;
    const char *s = tfq_tensor_string(tfq_tuple_get(out, 2), 0, &len);
    printf("record %lld %g %.*s\n", (long long)id[0], (double)x[0], (int)len, s);
    tfq_tuple_free(out);
  }
  printf("end %s\n", tfq_status_message(st));
  printf("header %s %u\n", TFQ_VERSION_STRING, (unsigned)TFQ_VERSION_NUMBER);
  printf("library %s %u\n", tfq_version_string(), tfq_version_number());
  tfq_tuple_free(rows);
  tfq_queue_free(q);
  tfq_spec_free(spec);
  tfq_csv_options_free(o);
  tfq_status_free(st);
  return 0;
}
