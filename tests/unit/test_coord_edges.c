/* Edge cases of src/coord (for coverage, docs/reliability.md): argument checks of the ready-made
 * ops and the batchers, the queue → queue transfer op, read → decode op errors, runner start with a
 * wait, extra queue-closed codes, the LooperThread's back-to-back mode and errors, and the
 * Coordinator's handling of late stops and never-joined threads.  Public headers, and one private
 * counter of the read-decode op (src/coord/coord_internal.h). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "coord/coord_internal.h"
#include "helpers.h"
#include "readers/readers_internal.h"
#include "readers_util.h"

static tfq_queue *float_queue(int64_t cap) { return scalar_fifo(TFQ_FLOAT, cap); }

/* ---- queue → queue transfer op ---- */

Test(coord_edges, transfer_op_rejects_a_batch_below_one) {
  tfq_queue *a = float_queue(10), *b = float_queue(10);
  tfq_status *st = tfq_status_new();
  tfq_transfer_op *op = (tfq_transfer_op *)1;
  cr_assert_eq(tfq_transfer_op_new(a, b, 0, &op, st), TFQ_INVALID_ARGUMENT);
  cr_assert_null(op);
  cr_assert_str_eq(tfq_status_message(st), "batch must be >= 1, got 0");
  tfq_transfer_op_free(NULL); /* no-op */
  tfq_status_free(st);
  tfq_queue_free(a);
  tfq_queue_free(b);
}

static void transfer_case(int64_t batch) {
  tfq_queue *from = float_queue(10), *to = float_queue(10);
  const float v[5] = {1, 2, 3, 4, 5};
  OK(enq_many_f(from, 5, v, NULL));
  OK(tfq_queue_close(from, 0, NULL, NOTIMEOUT, NULL));
  tfq_transfer_op *op;
  OK(tfq_transfer_op_new(from, to, batch, &op, NULL));
  tfq_runner *r;
  OK(tfq_runner_new(to, &r, NULL));
  OK(tfq_runner_add_op(r, tfq_transfer_step, op, "transfer", NULL));
  tfq_status *st = tfq_status_new();
  OK(tfq_runner_start(r, NULL, 0, st));
  cr_assert_eq(tfq_runner_join(r, st), TFQ_OK, "%s", tfq_status_message(st));
  /* the source's OUT_OF_RANGE made the runner close the target behind the moved elements */
  cr_assert(tfq_queue_is_closed(to));
  cr_assert_eq(tfq_queue_size(to), 5);
  for (int i = 0; i < 5; i++) cr_assert_eq(deq_f(to), v[i]);
  tfq_tuple *t = NULL;
  cr_assert_eq(tfq_queue_dequeue(to, &t, NULL, NOTIMEOUT, st), TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_runner_num_errors(r), 0);
  tfq_runner_free(r);
  tfq_transfer_op_free(op);
  tfq_status_free(st);
  tfq_queue_free(from);
  tfq_queue_free(to);
}

Test(coord_edges, transfer_op_moves_every_element_one_at_a_time_in_order) { transfer_case(1); }
Test(coord_edges, transfer_op_moves_every_element_in_batches_in_order) { transfer_case(2); }

/* ---- read → decode_csv → enqueue_many op ---- */

typedef struct rd_fixture {
  tfq_reader *reader;
  tfq_queue *work, *target;
  tfq_csv_options *csv;
  tfq_read_decode_op *op;
} rd_fixture;

/* A TextLineReader over one file of `text`, decoded as (float, float, int32) into `target`. */
static void rd_setup(rd_fixture *f, const char *text, tfq_queue *target, int with_string) {
  const char *p = write_file("in.csv", text, strlen(text));
  f->work = work_of(&p, 1);
  f->reader = new_reader(TFQ_READER_TEXT_LINE, NULL);
  OK(tfq_csv_options_new(&f->csv, NULL));
  OK(tfq_csv_options_add_default_float(f->csv, -1.f, NULL));
  OK(tfq_csv_options_add_default_float(f->csv, -1.f, NULL));
  if (with_string)
    OK(tfq_csv_options_add_default_string(f->csv, "", 0, NULL));
  else
    OK(tfq_csv_options_add_default_int32(f->csv, -1, NULL));
  f->target = target;
  OK(tfq_read_decode_op_new(f->reader, f->work, f->csv, 8, target, &f->op, NULL));
}

static void rd_teardown(rd_fixture *f) {
  tfq_read_decode_op_free(f->op);
  tfq_csv_options_free(f->csv);
  tfq_reader_free(f->reader);
  tfq_queue_free(f->work);
  tfq_queue_free(f->target);
}

TestSuite(coord_rd, .init = tmp_setup, .fini = tmp_teardown);

Test(coord_rd, read_decode_op_rejects_a_batch_below_one) {
  tfq_queue *w = string_queue(4), *t = float_queue(4);
  tfq_read_decode_op *op = (tfq_read_decode_op *)1;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_op_new(NULL, w, NULL, 0, t, &op, st), TFQ_INVALID_ARGUMENT);
  cr_assert_null(op);
  cr_assert_str_eq(tfq_status_message(st), "batch must be >= 1, got 0");
  tfq_read_decode_op_free(NULL);
  tfq_status_free(st);
  tfq_queue_free(w);
  tfq_queue_free(t);
}

Test(coord_rd, read_decode_component_needs_a_column_and_several_only_when_stacked) {
  rd_fixture f;
  rd_setup(&f, "1,2,3\n", float_queue(4), 0);
  tfq_status *st = tfq_status_new();
  size_t cols[2] = {0, 1};
  cr_assert_eq(tfq_read_decode_op_add_component(f.op, cols, 0, 0, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "a component needs a column");
  cr_assert_eq(tfq_read_decode_op_add_component(f.op, cols, 2, 0, st), TFQ_INVALID_ARGUMENT);
  cr_assert(contains(tfq_status_message(st), "only when stacked"), "%s", tfq_status_message(st));
  tfq_status_free(st);
  rd_teardown(&f);
}

Test(coord_rd, read_decode_step_rejects_stacking_columns_of_different_dtypes) {
  int64_t two = 2;
  tfq_spec *s = spec1(TFQ_FLOAT, 1, &two);
  rd_fixture f;
  rd_setup(&f, "1,2,3\n", fifo(s, 4), 0);
  tfq_spec_free(s);
  size_t cols[2] = {0, 2}; /* float and int32 */
  OK(tfq_read_decode_op_add_component(f.op, cols, 2, 1, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "cannot stack columns of dtypes float and int32");
  cr_assert_eq(tfq_queue_size(f.target), 0);
  tfq_status_free(st);
  rd_teardown(&f);
}

Test(coord_rd, read_decode_step_rejects_a_column_that_is_not_decoded) {
  rd_fixture f;
  rd_setup(&f, "1,2,3\n", float_queue(4), 0);
  size_t col = 5;
  OK(tfq_read_decode_op_add_component(f.op, &col, 1, 0, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "column 5 is not decoded (3 columns)");
  tfq_status_free(st);
  rd_teardown(&f);
}

Test(coord_rd, read_decode_step_stacks_string_columns_row_by_row) {
  int64_t two = 2;
  tfq_spec *s = spec1(TFQ_STRING, 1, &two);
  rd_fixture f;
  rd_setup(&f, "1,2,ab\n3,4,cd\n", fifo(s, 4), 1);
  tfq_spec_free(s);
  size_t cols[2] = {2, 2}; /* the string column twice: [B, 2] */
  OK(tfq_read_decode_op_add_component(f.op, cols, 2, 1, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(f.target, 2, &t, NULL, NOTIMEOUT, NULL));
  const tfq_tensor *x = tfq_tuple_get(t, 0);
  cr_assert_eq(tfq_tensor_rank(x), 2);
  cr_assert_eq(tfq_tensor_dim(x, 1), 2);
  const char *want[4] = {"ab", "ab", "cd", "cd"};
  for (int i = 0; i < 4; i++) {
    size_t n;
    const char *p = tfq_tensor_string(x, i, &n);
    cr_assert_eq(n, 2);
    cr_assert_eq(memcmp(p, want[i], 2), 0, "element %d", i);
  }
  tfq_tuple_free(t);
  tfq_status_free(st);
  rd_teardown(&f);
}

/* The 20 lines line(i) writes, one after another, into text[0, cap). */
static void twenty_lines(char *text, size_t cap, void (*line)(char *buf, size_t n, int i)) {
  size_t len = 0;
  text[0] = 0;
  for (int i = 0; i < 20; i++) {
    line(text + len, cap - len, i);
    len += strlen(text + len);
  }
}

static void number_line(char *buf, size_t n, int i) {
  if (i == 5)
    snprintf(buf, n, ",\"%d.5\",%d\n", i, i * 2); /* a default, a quoted number */
  else
    snprintf(buf, n, "%d,%d.5,%d\n", i, i, i * 2);
}

/* The numeric columns of a stacked component are decoded straight into its rows (tf.stack's
 * layout, columns in the component's order), across steps of 8, 8 and 4 records. */
Test(coord_rd, read_decode_step_decodes_stacked_number_columns_in_place_across_steps) {
  int64_t two = 2;
  tfq_spec *s = spec2(TFQ_FLOAT, 1, &two, TFQ_INT32, 0, NULL);
  char text[1024];
  twenty_lines(text, sizeof text, number_line);
  rd_fixture f;
  rd_setup(&f, text, fifo(s, 64), 0);
  tfq_spec_free(s);
  size_t stacked[2] = {1, 0}, alone = 2; /* columns 1 and 0 (float, float), then column 2 */
  OK(tfq_read_decode_op_add_component(f.op, stacked, 2, 1, NULL));
  OK(tfq_read_decode_op_add_component(f.op, &alone, 1, 0, NULL));
  tfq_status *st = tfq_status_new();
  tfq_code c;
  int steps = 0;
  while ((c = tfq_read_decode_step(f.op, NULL, st)) == TFQ_OK) steps++;
  cr_assert_eq(c, TFQ_OUT_OF_RANGE, "%s", tfq_status_message(st));
  cr_assert_eq(steps, 3);
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(f.target, 20, &t, NULL, NOTIMEOUT, NULL));
  const float *x = tfq_tensor_cdata(tfq_tuple_get(t, 0));
  const int32_t *y = tfq_tensor_cdata(tfq_tuple_get(t, 1));
  for (int i = 0; i < 20; i++) {
    cr_assert(x[2 * i] == (float)i + 0.5f, "row %d column 1: %g", i, (double)x[2 * i]);
    cr_assert(x[2 * i + 1] == (i == 5 ? -1.f : (float)i), "row %d column 0", i);
    cr_assert(y[i] == 2 * i, "row %d column 2", i);
  }
  tfq_tuple_free(t);
  tfq_status_free(st);
  rd_teardown(&f);
}

/* Two string columns stacked into one [B, 2] component are decoded straight into it, each row's
 * bytes together, across steps of 8, 8 and 4 records: a step while the queue still holds the last
 * one's rows (its component parked), then steps after the queue let go (refilled in place).
 * Every batch keeps its strings whatever the op does with its tensors afterwards. */
static void expect_string_rows(tfq_tuple *t, int64_t first, int64_t n) {
  const tfq_tensor *x = tfq_tuple_get(t, 0);
  const int32_t *y = tfq_tensor_cdata(tfq_tuple_get(t, 1));
  cr_assert(tfq_tensor_rank(x) == 2 && tfq_tensor_dim(x, 0) == n && tfq_tensor_dim(x, 1) == 2);
  for (int64_t r = 0; r < n; r++) {
    char want[2][32];
    int64_t i = first + r;
    snprintf(want[0], sizeof want[0], "word%lld", (long long)(i * 7)); /* column 1 first */
    snprintf(want[1], sizeof want[1], i == 9 ? "dflt" : "id-%lld", (long long)i);
    for (int j = 0; j < 2; j++) {
      size_t len;
      const char *p = tfq_tensor_string(x, 2 * r + j, &len);
      cr_assert(len == strlen(want[j]) && memcmp(p, want[j], len) == 0,
                "record %lld column %d: %.*s", (long long)i, j, (int)len, p);
    }
    cr_assert_eq(y[r], (int32_t)i, "record %lld", (long long)i);
  }
}

static void string_line(char *buf, size_t n, int i) {
  if (i == 9) /* a default, and the other string quoted */
    snprintf(buf, n, ",\"word%d\",%d\n", i * 7, i);
  else
    snprintf(buf, n, "id-%d,word%d,%d\n", i, i * 7, i);
}

Test(coord_rd, read_decode_step_decodes_stacked_string_columns_in_place_across_steps) {
  int64_t two = 2;
  tfq_spec *s = spec2(TFQ_STRING, 1, &two, TFQ_INT32, 0, NULL);
  char text[2048];
  twenty_lines(text, sizeof text, string_line);
  const char *path = write_file("in.csv", text, strlen(text));
  rd_fixture f;
  f.work = work_of(&path, 1);
  f.reader = new_reader(TFQ_READER_TEXT_LINE, NULL);
  OK(tfq_csv_options_new(&f.csv, NULL));
  OK(tfq_csv_options_add_default_string(f.csv, "dflt", 4, NULL));
  OK(tfq_csv_options_add_default_string(f.csv, "", 0, NULL));
  OK(tfq_csv_options_add_default_int32(f.csv, -1, NULL));
  f.target = fifo(s, 64);
  tfq_spec_free(s);
  OK(tfq_read_decode_op_new(f.reader, f.work, f.csv, 8, f.target, &f.op, NULL));
  size_t stacked[2] = {1, 0}, alone = 2;
  OK(tfq_read_decode_op_add_component(f.op, stacked, 2, 1, NULL));
  OK(tfq_read_decode_op_add_component(f.op, &alone, 1, 0, NULL));
  tfq_status *st = tfq_status_new();
  /* two steps while the first's rows are in the queue, then one after it is drained */
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_tuple *a, *b, *c;
  OK(tfq_queue_dequeue_many(f.target, 16, &a, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_OK, "%s", tfq_status_message(st));
  OK(tfq_queue_dequeue_many(f.target, 2, &b, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_OUT_OF_RANGE);
  OK(tfq_queue_dequeue_many(f.target, 2, &c, NULL, NOTIMEOUT, NULL));
  expect_string_rows(a, 0, 16);
  expect_string_rows(b, 16, 2);
  expect_string_rows(c, 18, 2);
  tfq_tuple_free(a);
  tfq_tuple_free(b);
  tfq_tuple_free(c);
  tfq_status_free(st);
  rd_teardown(&f);
}

/* Decodes "1,2,3\n4,5,6\n" into a stacked component of columns a[0..na) and, when nb, a scalar
 * one of column b; checks component 0's 2 * na values and component 1's 2. */
static void shared_column_case(const size_t *a, size_t na, const size_t *b, size_t nb,
                               const float *want0, const float *want1) {
  int64_t k = (int64_t)na;
  tfq_spec *s = nb ? spec2(TFQ_FLOAT, 1, &k, TFQ_FLOAT, 0, NULL) : spec1(TFQ_FLOAT, 1, &k);
  rd_fixture f;
  rd_setup(&f, "1,2,3\n4,5,6\n", fifo(s, 4), 0);
  tfq_spec_free(s);
  OK(tfq_read_decode_op_add_component(f.op, a, na, 1, NULL));
  if (nb) OK(tfq_read_decode_op_add_component(f.op, b, nb, 0, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(f.target, 2, &t, NULL, NOTIMEOUT, NULL));
  const float *x = tfq_tensor_cdata(tfq_tuple_get(t, 0));
  for (size_t i = 0; i < 2 * na; i++)
    cr_assert(x[i] == want0[i], "element %zu: %g", i, (double)x[i]);
  for (size_t i = 0; nb && i < 2; i++)
    cr_assert(((const float *)tfq_tensor_cdata(tfq_tuple_get(t, 1)))[i] == want1[i]);
  tfq_tuple_free(t);
  tfq_status_free(st);
  rd_teardown(&f);
}

/* A column in two components has two places to go: the op stacks it by copying, as before. */
Test(coord_rd, read_decode_step_stacks_a_number_column_used_twice) {
  const size_t cols[3] = {1, 0, 1};
  const float want[6] = {2, 1, 2, 5, 4, 5};
  shared_column_case(cols, 3, NULL, 0, want, NULL);
}

/* ... and so does a column that a later component uses too. */
Test(coord_rd, read_decode_step_stacks_a_number_column_another_component_uses) {
  const size_t cols[2] = {0, 1}, again = 1;
  const float want0[4] = {1, 2, 4, 5}, want1[2] = {2, 5};
  shared_column_case(cols, 2, &again, 1, want0, want1);
}

/* A decode error in a step of stacked columns: the records before it are delivered whole. */
Test(coord_rd, read_decode_step_keeps_the_stacked_records_before_an_error) {
  int64_t two = 2;
  tfq_spec *s = spec2(TFQ_FLOAT, 1, &two, TFQ_INT32, 0, NULL);
  rd_fixture f;
  rd_setup(&f, "1,2,3\n4,5,6\n7,x,9\n", fifo(s, 8), 0);
  tfq_spec_free(s);
  size_t stacked[2] = {0, 1}, alone = 2;
  OK(tfq_read_decode_op_add_component(f.op, stacked, 2, 1, NULL));
  OK(tfq_read_decode_op_add_component(f.op, &alone, 1, 0, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_INVALID_ARGUMENT);
  cr_assert(contains(tfq_status_message(st), "in.csv:3: Field 1 in record 0 is not a valid float"),
            "%s", tfq_status_message(st));
  cr_assert_eq(tfq_queue_size(f.target), 2);
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(f.target, 2, &t, NULL, NOTIMEOUT, NULL));
  const float *x = tfq_tensor_cdata(tfq_tuple_get(t, 0));
  const int32_t *y = tfq_tensor_cdata(tfq_tuple_get(t, 1));
  cr_assert(x[0] == 1 && x[1] == 2 && x[2] == 4 && x[3] == 5 && y[0] == 3 && y[1] == 6);
  tfq_tuple_free(t);
  tfq_status_free(st);
  rd_teardown(&f);
}

Test(coord_rd, read_decode_step_prefixes_a_decode_error_with_the_failing_records_key) {
  rd_fixture f;
  /* skip_header_lines = 1, as the seed program: the bad line is line 2 of the file */
  const char *text = "x1,x2,y\n4,abc,6\n";
  const char *p = write_file("in.csv", text, strlen(text));
  f.work = work_of(&p, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_skip_header_lines(o, 1);
  f.reader = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_reader_options_free(o);
  OK(tfq_csv_options_new(&f.csv, NULL));
  OK(tfq_csv_options_add_default_float(f.csv, -1.f, NULL));
  OK(tfq_csv_options_add_default_float(f.csv, -1.f, NULL));
  OK(tfq_csv_options_add_default_int32(f.csv, -1, NULL));
  f.target = float_queue(4);
  OK(tfq_read_decode_op_new(f.reader, f.work, f.csv, 8, f.target, &f.op, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_INVALID_ARGUMENT);
  /* TextLineReader keys are "<file>:<line>" counting the skipped header */
  char want[600];
  snprintf(want, sizeof want, "%s:2: Field 1 in record 0 is not a valid float: abc",
           path_of("in.csv"));
  cr_assert_str_eq(tfq_status_message(st), want);
  cr_assert_eq(tfq_queue_size(f.target), 0);
  tfq_status_free(st);
  rd_teardown(&f);
}

/* A TextLineReader with a buffer of `buf` bytes over `text`, decoded as (float, float, int32) into
 * a FIFO queue of scalars, 8 lines a step. */
static void rd_small_buffer(rd_fixture *f, const char *text, size_t buf, int64_t batch) {
  const char *p = write_file("in.csv", text, strlen(text));
  f->work = work_of(&p, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_buffer_bytes(o, buf);
  f->reader = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_reader_options_free(o);
  OK(tfq_csv_options_new(&f->csv, NULL));
  OK(tfq_csv_options_add_default_float(f->csv, -1.f, NULL));
  OK(tfq_csv_options_add_default_float(f->csv, -1.f, NULL));
  OK(tfq_csv_options_add_default_int32(f->csv, -1, NULL));
  tfq_spec *s = spec2(TFQ_FLOAT, 0, NULL, TFQ_FLOAT, 0, NULL);
  OK(tfq_spec_add(s, TFQ_INT32, NULL, 0, NULL, NULL));
  f->target = fifo(s, 4000);
  tfq_spec_free(s);
  OK(tfq_read_decode_op_new(f->reader, f->work, f->csv, batch, f->target, &f->op, NULL));
}

/* The op takes the reader's buffered lines directly and refills the buffer itself when a line
 * crosses its end: every line arrives once, in order, with its values, whatever the line lengths
 * and terminators (CRLF, a last line without '\n', a line longer than the buffer).  A buffer that
 * holds a step's 8 lines gives steps of 8 lines across its refills; one of 64 bytes cannot. */
static void every_line_across_refills(size_t buf, int full_steps) {
  char text[16384];
  size_t len = 0;
  int n = 300;
  for (int i = 0; i < n; i++) {
    const char *end = i == n - 1 ? "" : i % 7 == 3 ? "\r\n" : "\n";
    if (i == 100) /* longer than a 64-byte buffer */
      len += (size_t)snprintf(text + len, sizeof text - len, "%d.%s,%d.25,%d%s", i,
                              "0000000000000000000000000000000000000000000000000000000000000000"
                              "000000",
                              i, i, end);
    else
      len += (size_t)snprintf(text + len, sizeof text - len, "%d.5,%d.25,%d%s", i, i, i, end);
  }
  rd_fixture f;
  rd_small_buffer(&f, text, buf, 8);
  tfq_status *st = tfq_status_new();
  tfq_code c;
  int steps = 0;
  while ((c = tfq_read_decode_step(f.op, NULL, st)) == TFQ_OK) cr_assert_lt(++steps, 10 * n);
  cr_assert_eq(c, TFQ_OUT_OF_RANGE, "%s", tfq_status_message(st));
  if (full_steps)
    cr_assert_leq(steps, (n + 7) / 8 + 1, "%d steps: the refills cut steps short", steps);
  cr_assert_eq(tfq_queue_size(f.target), n);
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(f.target, n, &t, NULL, NOTIMEOUT, NULL));
  const float *a = tfq_tensor_data(tfq_tuple_get(t, 0)), *b = tfq_tensor_data(tfq_tuple_get(t, 1));
  const int32_t *y = tfq_tensor_data(tfq_tuple_get(t, 2));
  for (int i = 0; i < n; i++) {
    cr_assert_eq(a[i], i == 100 ? 100.f : (float)i + 0.5f, "row %d: %g", i, a[i]);
    cr_assert_eq(b[i], (float)i + 0.25f, "row %d", i);
    cr_assert_eq(y[i], i, "row %d", i);
  }
  cr_assert_eq(tfq_read_decode_op_records(f.op), n);
  tfq_tuple_free(t);
  tfq_status_free(st);
  rd_teardown(&f);
}

Test(coord_rd, read_decode_op_delivers_every_line_across_buffer_refills) {
  every_line_across_refills(64, 0);
}

Test(coord_rd, read_decode_op_takes_whole_steps_across_buffer_refills) {
  every_line_across_refills(256, 1);
}

/* A few lines longer than a step's share of the buffer, met half-way through a file, make
 * steps of a line or two; the short lines after them bring the steps back up to the batch, a
 * quarter more a step, rather than steps of two lines to the end. */
static int is_long(int i) { return i >= 1000 && i < 1000 + 4; }

Test(coord_rd, steps_shortened_by_long_lines_grow_back_on_short_lines) {
  enum { LONG = 4, N = 4000 };
  size_t cap = (size_t)N * 40 + LONG * 2000, len = 0;
  char *text = malloc(cap);
  cr_assert_not_null(text);
  for (int i = 0; i < N; i++) /* the long lines: i.000...000i (1,500 decimals) */
    len +=
        (size_t)(is_long(i) ? snprintf(text + len, cap - len, "%d.%01500d,%d.25,%d\n", i, i, i, i)
                            : snprintf(text + len, cap - len, "%d.5,%d.25,%d\n", i, i, i));
  rd_fixture f;
  rd_small_buffer(&f, text, 4096, 200);
  tfq_status *st = tfq_status_new();
  tfq_code c;
  int steps = 0;
  while ((c = tfq_read_decode_step(f.op, NULL, st)) == TFQ_OK) steps++;
  cr_assert_eq(c, TFQ_OUT_OF_RANGE, "%s", tfq_status_message(st));
  cr_assert_lt(steps, 100, "%d steps for %d lines in steps of up to 200", steps, N);
  cr_assert_eq(tfq_queue_size(f.target), N);
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(f.target, N, &t, NULL, NOTIMEOUT, NULL));
  const float *a = tfq_tensor_data(tfq_tuple_get(t, 0));
  const int32_t *y = tfq_tensor_data(tfq_tuple_get(t, 2));
  for (int i = 0; i < N; i++) {
    cr_assert_eq(a[i], is_long(i) ? (float)i : (float)i + 0.5f, "row %d: %g", i, a[i]);
    cr_assert_eq(y[i], i, "row %d", i);
  }
  tfq_tuple_free(t);
  tfq_status_free(st);
  rd_teardown(&f);
  free(text);
}

/* A bad value met after many refills is named by its line number, as the keyed path names it. */
Test(coord_rd, read_decode_op_names_a_bad_line_met_after_buffer_refills) {
  char text[8192];
  size_t len = 0;
  for (int i = 1; i <= 200; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, i == 157 ? "%d,x%d,%d\n" : "%d,%d,%d\n",
                            i, i, i);
  rd_fixture f;
  rd_small_buffer(&f, text, 64, 8);
  tfq_status *st = tfq_status_new();
  tfq_code c;
  while ((c = tfq_read_decode_step(f.op, NULL, st)) == TFQ_OK) {
  }
  cr_assert_eq(c, TFQ_INVALID_ARGUMENT, "%s", tfq_status_message(st));
  char want[600];
  snprintf(want, sizeof want, "%s:157: Field 1 in record 0 is not a valid float: x157",
           path_of("in.csv"));
  cr_assert_str_eq(tfq_status_message(st), want);
  tfq_status_free(st);
  rd_teardown(&f);
}

/* The op decodes whole steps of lines where they lie in the reader's buffer (span_step), and
 * leaves to the copying path what that cannot take: a file's last lines, lines longer than it
 * foresaw, a line across the buffer's end, a last line without '\n'.  Lines of 4 to ~250 bytes
 * (CRLF, quoted fields, empty fields, NA) through a buffer of `buf` bytes, `batch` lines a step:
 * every line arrives once, in order, with the values decode_csv gives the same lines, and the
 * buffer path took steps. */
static void span_case(size_t buf, int64_t batch, int final_newline, int64_t min_span) {
  enum { N = 3000 };
  size_t cap = (size_t)N * 300, len = 0;
  char *text = malloc(cap);
  cr_assert_not_null(text);
  unsigned s = 77;
  for (int i = 0; i < N; i++) {
    s = s * 1103515245u + 12345u;
    unsigned r = (s >> 16) & 0x7fffu;
    int pad = r % 11 == 0 ? 0 : i % 500 == 250 ? 200 : (int)(r % 40); /* none after a quote */
    const char *field = r % 11 == 0   ? "\"q,\"\"x\"\"\""
                        : r % 13 == 0 ? "NA"
                        : r % 17 == 0 ? ""
                                      : "w";
    len += (size_t)snprintf(text + len, cap - len, "%d.5,%s,%d,%s%.*s%s", i,
                            r % 19 == 0   ? ""
                            : r % 23 == 0 ? "NA"
                                          : "0.25",
                            i, field, pad,
                            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqr"
                            "stuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghij"
                            "klmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
                            i == N - 1 && !final_newline ? ""
                            : r % 5 == 0                 ? "\r\n"
                                                         : "\n");
  }
  const char *p = write_file("span.csv", text, len);
  tfq_queue *work = work_of(&p, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_buffer_bytes(o, buf);
  tfq_reader *reader = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_reader_options_free(o);
  tfq_csv_options *csv;
  OK(tfq_csv_options_new(&csv, NULL));
  OK(tfq_csv_options_set_na_value(csv, "NA", 2, NULL));
  OK(tfq_csv_options_add_default_float(csv, -1.f, NULL));
  OK(tfq_csv_options_add_default_float(csv, -2.f, NULL));
  OK(tfq_csv_options_add_default_int32(csv, -1, NULL));
  OK(tfq_csv_options_add_default_string(csv, "dflt", 4, NULL));
  tfq_spec *sp = spec2(TFQ_FLOAT, 0, NULL, TFQ_FLOAT, 0, NULL);
  OK(tfq_spec_add(sp, TFQ_INT32, NULL, 0, NULL, NULL));
  OK(tfq_spec_add(sp, TFQ_STRING, NULL, 0, NULL, NULL));
  tfq_queue *target = fifo(sp, N);
  tfq_spec_free(sp);
  tfq_read_decode_op *op;
  OK(tfq_read_decode_op_new(reader, work, csv, batch, target, &op, NULL));
  tfq_status *st = tfq_status_new();
  tfq_code c;
  int steps = 0;
  while ((c = tfq_read_decode_step(op, NULL, st)) == TFQ_OK) cr_assert_lt(++steps, 10 * N);
  cr_assert_eq(c, TFQ_OUT_OF_RANGE, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_read_decode_op_records(op), N);
  cr_assert_eq(tfq_queue_size(target), N);
  int64_t span = tfq__read_decode_op_span_steps(op);
  cr_assert_gt(span, N / batch / 2, "%lld of %d steps decoded in the buffer", (long long)span,
               steps);
  cr_assert_geq(span, min_span, "%lld of %d steps decoded in the buffer", (long long)span, steps);
  /* the FIFO holds them all: every step in the buffer decoded straight into its ring */
  cr_assert_eq(tfq__read_decode_op_ring_steps(op), span, "%lld of %lld steps into the ring",
               (long long)tfq__read_decode_op_ring_steps(op), (long long)span);
  /* what decode_csv makes of the same lines (TextLineReader drops "\n" and a '\r' before it) */
  int64_t n = N;
  tfq_tensor *recs;
  OK(tfq_tensor_new(TFQ_STRING, &n, 1, &recs, NULL));
  const char *q = text, *end = text + len;
  for (int64_t i = 0; i < n; i++) {
    const char *nl = memchr(q, '\n', (size_t)(end - q));
    size_t l = (size_t)((nl ? nl : end) - q);
    if (nl && l && q[l - 1] == '\r') l--;
    OK(tfq_tensor_set_string(recs, i, q, l, NULL));
    q = nl ? nl + 1 : end;
  }
  tfq_tuple *want, *got;
  OK(tfq_decode_csv(csv, recs, &want, NULL));
  OK(tfq_queue_dequeue_many(target, N, &got, NULL, NOTIMEOUT, NULL));
  for (size_t f = 0; f < 4; f++) {
    const tfq_tensor *a = tfq_tuple_get(want, f), *b = tfq_tuple_get(got, f);
    for (int64_t i = 0; i < n; i++) {
      if (f == 3) {
        size_t la, lb;
        const char *sa = tfq_tensor_string(a, i, &la), *sb = tfq_tensor_string(b, i, &lb);
        cr_assert(la == lb && memcmp(sa, sb, la) == 0, "line %lld string", (long long)i);
      } else {
        cr_assert(memcmp((const char *)tfq_tensor_cdata(a) + i * 4,
                         (const char *)tfq_tensor_cdata(b) + i * 4, 4) == 0,
                  "line %lld column %zu", (long long)i, f);
      }
    }
  }
  tfq_tuple_free(want);
  tfq_tuple_free(got);
  tfq_tensor_free(recs);
  tfq_status_free(st);
  tfq_read_decode_op_free(op);
  tfq_csv_options_free(csv);
  tfq_reader_free(reader);
  tfq_queue_free(work);
  tfq_queue_free(target);
  free(text);
}

Test(coord_rd, lines_decoded_in_the_readers_buffer_arrive_once_in_order_with_their_values) {
  span_case(16384, 32, 1, 1);
}

Test(coord_rd, lines_decoded_in_the_buffer_then_a_last_line_without_newline_and_long_steps) {
  span_case(65536, 200, 0, 1);
}

/* Steps of 1,000 lines of ~30 bytes through a buffer of 4 KiB: each step takes the lines the full
 * buffer holds (~130), decoded where they lie, rather than none (the copying path for all). */
Test(coord_rd, lines_longer_than_a_step_foresaw_make_shorter_steps_in_the_buffer) {
  span_case(4096, 1000, 1, 15);
}

static void *one_step(void *op) {
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_step(op, NULL, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_status_free(st);
  return NULL;
}

/* How many references the reader's buffer has once steps of a small file (one buffer) sit in a
 * RandomShuffleQueue of `capacity` rows: more than the stream's own when their strings point into
 * it, one when they were copied. */
static int64_t holder_refs_after_shuffle_steps(int64_t capacity) {
  enum { N = 200 };
  char text[N * 24];
  size_t len = 0;
  for (int i = 0; i < N; i++) len += (size_t)sprintf(text + len, "%d.5,0.25,s%d\n", i, i);
  tfq_spec *sp = spec2(TFQ_FLOAT, 0, NULL, TFQ_FLOAT, 0, NULL);
  OK(tfq_spec_add(sp, TFQ_STRING, NULL, 0, NULL, NULL));
  tfq_queue_options *qo;
  OK(tfq_queue_options_new(&qo, NULL));
  tfq_queue_options_set_capacity(qo, capacity);
  tfq_queue *q;
  OK(tfq_queue_new(TFQ_QUEUE_RANDOM_SHUFFLE, sp, qo, &q, NULL));
  tfq_queue_options_free(qo);
  tfq_spec_free(sp);
  rd_fixture f;
  rd_setup(&f, text, q, 1);
  tfq_status *st = tfq_status_new();
  for (int i = 0; i < 6; i++) OK(tfq_read_decode_step(f.op, NULL, st));
  cr_assert_geq(tfq__read_decode_op_span_steps(f.op), 4, "steps decoded in the buffer");
  cr_assert_eq(tfq_queue_size(q), 48);
  int64_t refs = tfq_tensor_refcount(tfq__instream_holder(f.reader->in));
  tfq_tuple *got; /* every row arrives with its string, whichever way it was stored */
  OK(tfq_queue_dequeue_many(q, 48, &got, NULL, NOTIMEOUT, NULL));
  const float *a = tfq_tensor_data(tfq_tuple_get(got, 0));
  for (int r = 0; r < 48; r++) {
    char want[16];
    size_t sl;
    const char *s = tfq_tensor_string(tfq_tuple_get(got, 2), r, &sl);
    int k = snprintf(want, sizeof want, "s%d", (int)a[r]);
    cr_assert(a[r] >= 0 && a[r] < 48 && sl == (size_t)k && memcmp(s, want, sl) == 0, "row %d", r);
  }
  tfq_tuple_free(got);
  tfq_status_free(st);
  rd_teardown(&f);
  return refs;
}

/* A shuffle pool keeps a row, and so the whole read buffer its strings point into, until the row
 * is drawn: a pool of up to 1 MiB of lines (tfq-cat's, with 2 readers) takes the views, a larger
 * one copies its strings (src/coord/ops.c views_ok; docs/performance.md, passes 10-11). */
Test(coord_rd, a_shuffle_pool_of_up_to_a_mebibyte_of_lines_keeps_the_read_buffer_a_larger_copies) {
  /* lines of ~16 bytes: 65,536 rows are 1 MiB */
  cr_assert_gt(holder_refs_after_shuffle_steps(50000), 1, "a 0.8 MiB pool views the buffer");
  cr_assert_eq(holder_refs_after_shuffle_steps(200000), 1, "a 3 MiB pool copies the strings");
}

/* A reader whose lines a second thread takes (TF's shuffle_batch(num_threads=N) over one reader)
 * is no longer decoded under its lock: the steps from then on copy their lines and decode with
 * the lock released, as before the buffer path, and every line still arrives once, in order. */
Test(coord_rd, a_reader_two_threads_take_lines_from_stops_decoding_under_its_lock) {
  enum { N = 900 }; /* rd_small_buffer's queue holds 1,000 */
  char *text = malloc((size_t)N * 32);
  cr_assert_not_null(text);
  size_t len = 0;
  for (int i = 0; i < N; i++) len += (size_t)sprintf(text + len, "%d.5,0.25,%d\n", i, i);
  rd_fixture f;
  rd_small_buffer(&f, text, 16384, 8);
  tfq_status *st = tfq_status_new();
  for (int i = 0; i < 4; i++) OK(tfq_read_decode_step(f.op, NULL, st));
  /* the first step opens the file the ordinary way */
  cr_assert_eq(tfq__read_decode_op_span_steps(f.op), 3, "one thread: lines decoded in place (%lld)",
               (long long)tfq__read_decode_op_span_steps(f.op));
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, one_step, f.op), 0);
  cr_assert_eq(pthread_join(t, NULL), 0);
  int64_t after = tfq__read_decode_op_span_steps(f.op);
  cr_assert_leq(after, 3, "the second thread's step copied its lines");
  tfq_code c;
  int steps = 0;
  while ((c = tfq_read_decode_step(f.op, NULL, st)) == TFQ_OK) cr_assert_lt(++steps, N);
  cr_assert_eq(c, TFQ_OUT_OF_RANGE, "%s", tfq_status_message(st));
  cr_assert_eq(tfq__read_decode_op_span_steps(f.op), after, "shared: no more steps in place");
  cr_assert_eq(tfq_queue_size(f.target), N);
  tfq_tuple *got;
  OK(tfq_queue_dequeue_many(f.target, N, &got, NULL, NOTIMEOUT, NULL));
  const float *a = tfq_tensor_data(tfq_tuple_get(got, 0));
  const int32_t *y = tfq_tensor_data(tfq_tuple_get(got, 2));
  for (int i = 0; i < N; i++) cr_assert(a[i] == (float)i + 0.5f && y[i] == i, "row %d", i);
  tfq_tuple_free(got);
  tfq_status_free(st);
  rd_teardown(&f);
  free(text);
}

/* ---- QueueRunner ---- */

static tfq_code fail_with_precondition(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  atomic_fetch_add((atomic_int *)ctx, 1);
  return tfq_status_set(st, TFQ_FAILED_PRECONDITION, "input exhausted");
}

static tfq_code fail_unauthenticated(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel;
  atomic_fetch_add((atomic_int *)ctx, 1);
  return tfq_status_set(st, TFQ_UNAUTHENTICATED, "no more credentials");
}

/* Runs `nops` copies of `step` (each fails once with a code added as queue-closed) and checks that
 * they end as at the end of input: no error, one run each, the queue closed.  Frees r and q. */
static void expect_clean_end(tfq_runner *r, tfq_queue *q, tfq_step_fn step, int nops) {
  atomic_int runs = 0;
  for (int i = 0; i < nops; i++) OK(tfq_runner_add_op(r, step, &runs, NULL, NULL));
  tfq_status *st = tfq_status_new();
  OK(tfq_runner_start(r, NULL, 0, st));
  cr_assert_eq(tfq_runner_join(r, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_runner_num_errors(r), 0);
  cr_assert_eq(atomic_load(&runs), nops);
  cr_assert(tfq_queue_is_closed(q), "the last op out closes the queue");
  tfq_runner_free(r);
  tfq_status_free(st);
  tfq_queue_free(q);
}

Test(coord_edges, runner_treats_an_added_queue_closed_code_as_the_end_of_input) {
  tfq_queue *q = float_queue(4);
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  tfq_runner_add_closed_code(r, TFQ_FAILED_PRECONDITION);
  tfq_runner_add_closed_code(r, TFQ_FAILED_PRECONDITION); /* a second add changes nothing */
  expect_clean_end(r, q, fail_with_precondition, 2);
}

Test(coord_edges, runner_keeps_every_added_queue_closed_code_however_many) {
  tfq_queue *q = float_queue(4);
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  /* all sixteen error codes, UNAUTHENTICATED last (a fixed table of 8 used to drop it) */
  for (int c = TFQ_CANCELLED; c <= TFQ_UNAUTHENTICATED; c++)
    tfq_runner_add_closed_code(r, (tfq_code)c);
  tfq_runner_add_closed_code(r, TFQ_OK);         /* ignored: OK always means "again" */
  tfq_runner_add_closed_code(r, (tfq_code)1000); /* ignored: not a code */
  expect_clean_end(r, q, fail_unauthenticated, 1);
}

Test(coord_edges, runner_without_the_added_code_reports_it_as_an_error) {
  tfq_queue *q = float_queue(4);
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  atomic_int runs = 0;
  OK(tfq_runner_add_op(r, fail_with_precondition, &runs, NULL, NULL));
  tfq_status *st = tfq_status_new();
  /* wait_us > 0: start reports the first run's error */
  cr_assert_eq(tfq_runner_start(r, NULL, 5 * 1000 * 1000, st), TFQ_FAILED_PRECONDITION);
  cr_assert_str_eq(tfq_status_message(st), "input exhausted");
  cr_assert_eq(tfq_runner_join(r, st), TFQ_FAILED_PRECONDITION);
  cr_assert_eq(tfq_runner_num_errors(r), 1);
  cr_assert_not(tfq_queue_is_closed(q), "an error is not the end of input");
  tfq_runner_free(r);
  tfq_status_free(st);
  tfq_queue_free(q);
}

typedef struct slow_op {
  atomic_int go;
  atomic_int runs;
} slow_op;

static tfq_code slow_then_end(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  slow_op *s = ctx;
  atomic_fetch_add(&s->runs, 1);
  while (!atomic_load(&s->go)) sleep_ms(1);
  return tfq_status_set(st, TFQ_OUT_OF_RANGE, "done");
}

Test(coord_edges, runner_start_with_a_wait_times_out_when_the_first_run_does_not_finish) {
  tfq_queue *q = float_queue(4);
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  slow_op s = {0, 0};
  OK(tfq_runner_add_op(r, slow_then_end, &s, "slow", NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_runner_start(r, NULL, 20 * 1000, st), TFQ_DEADLINE_EXCEEDED);
  cr_assert_str_eq(tfq_status_message(st), "Queues not fed before the timeout");
  atomic_store(&s.go, 1);
  cr_assert_eq(tfq_runner_join(r, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert(tfq_queue_is_closed(q));
  tfq_runner_free(r);
  tfq_status_free(st);
  tfq_queue_free(q);
}

Test(coord_edges, runner_start_with_a_wait_returns_ok_once_every_first_run_ended_cleanly) {
  tfq_queue *q = float_queue(4);
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  slow_op s = {1, 0};
  OK(tfq_runner_add_op(r, slow_then_end, &s, "quick", NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_runner_start(r, NULL, 5 * 1000 * 1000, st), TFQ_OK, "%s",
               tfq_status_message(st));
  cr_assert_eq(atomic_load(&s.runs), 1);
  cr_assert_eq(tfq_runner_join(r, st), TFQ_OK);
  tfq_runner_free(r);
  tfq_status_free(st);
  tfq_queue_free(q);
}

/* ---- Coordinator and LooperThread ---- */

Test(coord_edges, request_stop_after_join_returns_the_error_and_records_nothing) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  tfq_status *st = tfq_status_new();
  OK(tfq_coord_join(c, 0, 0, st));
  cr_assert(tfq_coord_joined(c));
  /* TF: after join, request_stop(ex) re-raises ex instead of recording it */
  cr_assert_eq(tfq_coord_request_stop(c, TFQ_ABORTED, "late"), TFQ_ABORTED);
  cr_assert_eq(tfq_coord_error(c, st), TFQ_OK);
  /* a clean code is not an error, even after join */
  cr_assert_eq(tfq_coord_request_stop(c, TFQ_OUT_OF_RANGE, "end"), TFQ_OK);
  tfq_status_free(st);
  tfq_coord_free(c);
}

Test(coord_edges, request_stop_without_a_message_uses_the_codes_name) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  OK(tfq_coord_request_stop(c, TFQ_ABORTED, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_coord_error(c, st), TFQ_ABORTED);
  cr_assert_str_eq(tfq_status_message(st), tfq_strerror(TFQ_ABORTED));
  tfq_status_free(st);
  tfq_coord_free(c);
}

Test(coord_edges, add_clean_code_twice_keeps_it_clean) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  tfq_coord_add_clean_code(c, TFQ_CANCELLED);
  tfq_coord_add_clean_code(c, TFQ_CANCELLED);
  tfq_coord_add_clean_code(c, TFQ_OUT_OF_RANGE); /* already clean by default */
  OK(tfq_coord_request_stop(c, TFQ_CANCELLED, "x"));
  cr_assert(tfq_coord_should_stop(c));
  cr_assert_eq(tfq_coord_error(c, NULL), TFQ_OK);
  tfq_coord_free(c);
}

static void *short_thread(void *arg) {
  (void)arg;
  return NULL;
}

Test(coord_edges, freeing_a_coordinator_with_unjoined_registered_threads_detaches_them) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  OK(tfq_coord_start_thread(c, NULL, short_thread, NULL, NULL));
  OK(tfq_coord_start_thread(c, "second", short_thread, NULL, NULL));
  /* never joined: free detaches both (ASan/LSan and valgrind see no leak) */
  tfq_coord_free(c);
  tfq_coord_free(NULL);
}

static void *wait_stop_main(void *arg) {
  tfq_coord_wait_for_stop(arg, -1);
  sleep_ms(200); /* outlives a zero grace period */
  return NULL;
}

Test(coord_edges, join_names_an_unnamed_straggler_thread_n) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  OK(tfq_coord_start_thread(c, NULL, wait_stop_main, c, NULL));
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_coord_join(c, 0, 0, st), TFQ_DEADLINE_EXCEEDED);
  cr_assert(
      contains(tfq_status_message(st), "Coordinator stopped with threads still running: Thread-"),
      "%s", tfq_status_message(st));
  sleep_ms(300); /* the detached straggler ends before the process does */
  tfq_status_free(st);
  tfq_coord_free(c);
}

typedef struct loop_ctx {
  atomic_int calls;
  int fail_at;
} loop_ctx;

static tfq_code loop_fn(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  loop_ctx *l = ctx;
  int n = atomic_fetch_add(&l->calls, 1) + 1;
  if (l->fail_at && n >= l->fail_at) return tfq_status_set(st, TFQ_DATA_LOSS, "looper failed");
  sleep_ms(1);
  return TFQ_OK;
}

Test(coord_edges, looper_with_a_negative_interval_runs_back_to_back_until_stopped) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  loop_ctx l = {0, 0};
  OK(tfq_coord_loop(c, -1, loop_fn, &l, "looper", NULL));
  for (int i = 0; i < 2000 && atomic_load(&l.calls) < 5; i++) sleep_ms(1);
  cr_assert_geq(atomic_load(&l.calls), 5);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 10 * 1000 * 1000, 0, NULL));
  int after = atomic_load(&l.calls);
  sleep_ms(20);
  cr_assert_eq(atomic_load(&l.calls), after, "the looper stopped");
  tfq_coord_free(c);
}

Test(coord_edges, looper_error_requests_a_stop_with_that_error) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  loop_ctx l = {0, 3};
  OK(tfq_coord_loop(c, -1, loop_fn, &l, "looper", NULL));
  cr_assert(tfq_coord_wait_for_stop(c, 10 * 1000 * 1000));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_coord_join(c, 10 * 1000 * 1000, 0, st), TFQ_DATA_LOSS);
  cr_assert_str_eq(tfq_status_message(st), "looper failed");
  cr_assert_eq(atomic_load(&l.calls), 3);
  tfq_status_free(st);
  tfq_coord_free(c);
}

/* ---- batchers ---- */

static tfq_code end_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  return tfq_status_set(st, TFQ_OUT_OF_RANGE, "end");
}

Test(coord_edges, batcher_rejects_bad_arguments_with_messages) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_source_fn src[2] = {end_source, end_source};
  tfq_batcher *b = (tfq_batcher *)1;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 2, src, NULL, 1, NULL, NULL, &b, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_null(b);
  cr_assert_str_eq(tfq_status_message(st), "a batcher needs a coordinator");
  cr_assert_eq(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 0, src, NULL, 1, NULL, c, &b, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "batch_size must be >= 1, got 0");
  cr_assert_eq(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 2, src, NULL, 2, NULL, c, &b, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "batch takes exactly one source, got 2");
  cr_assert_eq(tfq_batcher_new(TFQ_BATCHER_BATCH_JOIN, s, 2, src, NULL, 0, NULL, c, &b, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "a *_join batcher takes at least one source, got 0");
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_num_threads(o, 0);
  cr_assert_eq(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 2, src, NULL, 1, o, c, &b, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "num_threads must be >= 1");
  tfq_batch_options_free(o);
  tfq_status_free(st);
  tfq_spec_free(s);
  tfq_coord_free(c);
}

Test(coord_edges, batcher_shared_name_puts_its_queue_in_the_registry) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  OK(tfq_batch_options_set_shared_name(o, "coord_edges_shared_batch", NULL));
  tfq_source_fn src = end_source;
  tfq_batcher *b;
  OK(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 2, &src, NULL, 1, o, c, &b, NULL));
  /* the same (container, shared_name) with another capacity: TF's mismatch message */
  tfq_queue_options *qo;
  OK(tfq_queue_options_new(&qo, NULL));
  OK(tfq_queue_options_set_shared_name(qo, "coord_edges_shared_batch", NULL));
  tfq_queue_options_set_capacity(qo, 7);
  tfq_queue *q = NULL;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_open(NULL, TFQ_QUEUE_FIFO, s, qo, &q, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shared queue 'coord_edges_shared_batch' has capacity "
                   "32 but requested capacity was 7");
  /* the right capacity opens the batcher's own queue */
  tfq_queue_options_set_capacity(qo, 32);
  OK(tfq_queue_open(NULL, TFQ_QUEUE_FIFO, s, qo, &q, NULL));
  cr_assert_eq(q, tfq_batcher_queue(b));
  tfq_queue_free(q);
  OK(tfq_batch_options_set_shared_name(o, NULL, NULL)); /* NULL clears it */
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 10 * 1000 * 1000, 0, NULL));
  tfq_batcher_free(b);
  tfq_registry_clear(NULL, NULL);
  tfq_queue_options_free(qo);
  tfq_batch_options_free(o);
  tfq_status_free(st);
  tfq_spec_free(s);
  tfq_coord_free(c);
}

/* Yields one [3] string batch "a","bb","ccc" then OUT_OF_RANGE. */
static tfq_code string_batch_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel,
                                    tfq_status *st) {
  if (atomic_fetch_add((atomic_int *)ctx, 1) > 0) return tfq_status_set(st, TFQ_OUT_OF_RANGE, "e");
  int64_t n = 3;
  tfq_tensor *t;
  OK(tfq_tensor_new(TFQ_STRING, &n, 1, &t, NULL));
  const char *v[3] = {"a", "bb", "ccc"};
  for (int i = 0; i < 3; i++) OK(tfq_tensor_set_string(t, i, v[i], strlen(v[i]), NULL));
  *out = tup(1, t, NULL);
  return TFQ_OK;
}

static int keep_not_row_1(void *ctx, const tfq_tuple *elem, int64_t row) { return row != 1; }

Test(coord_edges, batcher_keep_filters_string_rows_of_enqueue_many_batches) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  tfq_spec *s = spec1(TFQ_STRING, 0, NULL);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_enqueue_many(o, 1);
  tfq_batch_options_set_allow_smaller_final_batch(o, 1);
  tfq_batch_options_set_keep(o, keep_not_row_1, NULL);
  atomic_int calls = 0;
  void *ctx = &calls;
  tfq_source_fn src = string_batch_source;
  tfq_batcher *b;
  OK(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 4, &src, &ctx, 1, o, c, &b, NULL));
  tfq_tuple *t;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_batcher_next(b, &t, st), TFQ_OK, "%s", tfq_status_message(st));
  const tfq_tensor *x = tfq_tuple_get(t, 0);
  cr_assert_eq(tfq_tensor_dim(x, 0), 2);
  size_t n;
  const char *p = tfq_tensor_string(x, 0, &n);
  cr_assert(n == 1 && memcmp(p, "a", 1) == 0);
  p = tfq_tensor_string(x, 1, &n);
  cr_assert(n == 3 && memcmp(p, "ccc", 3) == 0);
  tfq_tuple_free(t);
  cr_assert_eq(tfq_batcher_next(b, &t, st), TFQ_OUT_OF_RANGE);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 10 * 1000 * 1000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(o);
  tfq_status_free(st);
  tfq_spec_free(s);
  tfq_coord_free(c);
}

static tfq_code scalar_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  *out = tup(1, f32_scalar(1.f), NULL);
  return TFQ_OK;
}

static int keep_all(void *ctx, const tfq_tuple *elem, int64_t row) { return 1; }

Test(coord_edges, batcher_keep_with_enqueue_many_needs_a_batch_dimension) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_enqueue_many(o, 1);
  tfq_batch_options_set_keep(o, keep_all, NULL);
  tfq_source_fn src = scalar_source;
  tfq_batcher *b;
  OK(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 2, &src, NULL, 1, o, c, &b, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert(tfq_coord_wait_for_stop(c, 10 * 1000 * 1000));
  cr_assert_eq(tfq_coord_join(c, 10 * 1000 * 1000, 0, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "enqueue_many needs a batch dimension");
  tfq_batcher_free(b);
  tfq_batch_options_free(o);
  tfq_status_free(st);
  tfq_spec_free(s);
  tfq_coord_free(c);
}

static tfq_code null_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  return TFQ_OK; /* a broken source: OK without a tuple */
}

Test(coord_edges, batcher_reports_a_source_that_returns_ok_without_a_tuple) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_source_fn src = null_source;
  tfq_batcher *b;
  OK(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 2, &src, NULL, 1, NULL, c, &b, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert(tfq_coord_wait_for_stop(c, 10 * 1000 * 1000));
  cr_assert_eq(tfq_coord_join(c, 10 * 1000 * 1000, 0, st), TFQ_INTERNAL);
  cr_assert_str_eq(tfq_status_message(st), "a batch source returned OK without a tuple");
  tfq_batcher_free(b);
  tfq_status_free(st);
  tfq_spec_free(s);
  tfq_coord_free(c);
}

Test(coord_edges, batch_fraction_full_is_size_over_capacity) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_capacity(o, 4);
  tfq_source_fn src = scalar_source;
  tfq_batcher *b;
  OK(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 2, &src, NULL, 1, o, c, &b, NULL));
  for (int i = 0; i < 5000 && tfq_queue_size(tfq_batcher_queue(b)) < 4; i++) sleep_ms(1);
  cr_assert_float_eq(tfq_batcher_fraction_full(b), 1.0, 1e-9);
  cr_assert_str_eq(tfq_batcher_summary_name(b), "batch/fraction_of_4_full");
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 10 * 1000 * 1000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(o);
  tfq_spec_free(s);
  tfq_coord_free(c);
}

Test(coord_edges, shuffle_batch_join_fraction_full_counts_only_what_is_over_min_after_dequeue) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_capacity(o, 5);
  tfq_batch_options_set_min_after_dequeue(o, 1);
  tfq_batch_options_set_seeds(o, 7, 8);
  tfq_source_fn src[2] = {scalar_source, scalar_source};
  tfq_batcher *b;
  OK(tfq_batcher_new(TFQ_BATCHER_SHUFFLE_BATCH_JOIN, s, 2, src, NULL, 2, o, c, &b, NULL));
  cr_assert_str_eq(tfq_batcher_summary_name(b), "shuffle_batch_join/fraction_over_1_of_4_full");
  for (int i = 0; i < 5000 && tfq_queue_size(tfq_batcher_queue(b)) < 5; i++) sleep_ms(1);
  cr_assert_float_eq(tfq_batcher_fraction_full(b), 1.0, 1e-9); /* (5 - 1) / (5 - 1) */
  tfq_tuple *t;
  OK(tfq_batcher_next(b, &t, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 0), 0), 2);
  tfq_tuple_free(t);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 10 * 1000 * 1000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(o);
  tfq_spec_free(s);
  tfq_coord_free(c);
}

Test(coord_edges, free_functions_accept_null) {
  tfq_batch_options_free(NULL);
  tfq_batcher_free(NULL);
  tfq_runner_free(NULL);
  tfq_coord_free(NULL);
}

Test(coord_edges, join_lists_every_straggler_separated_by_spaces) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  OK(tfq_coord_start_thread(c, "first", wait_stop_main, c, NULL));
  OK(tfq_coord_start_thread(c, "second", wait_stop_main, c, NULL));
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_coord_join(c, 0, 0, st), TFQ_DEADLINE_EXCEEDED);
  const char *m = tfq_status_message(st);
  cr_assert(contains(m, "second first") || contains(m, "first second"), "%s", m);
  sleep_ms(300); /* the detached stragglers end before the process does */
  tfq_status_free(st);
  tfq_coord_free(c);
}

static tfq_code end_after_close(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  tfq_queue *q = ctx;
  /* someone else closed the queue first */
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  return tfq_status_set(st, TFQ_OUT_OF_RANGE, "end");
}

Test(coord_edges, runner_ignores_a_queue_someone_else_already_closed) {
  tfq_queue *q = float_queue(4);
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  OK(tfq_runner_add_op(r, end_after_close, q, NULL, NULL));
  tfq_status *st = tfq_status_new();
  OK(tfq_runner_start(r, NULL, 0, st));
  /* the runner's own close then fails with "is already closed": not an error (Python's runner) */
  cr_assert_eq(tfq_runner_join(r, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_runner_num_errors(r), 0);
  tfq_runner_free(r);
  tfq_status_free(st);
  tfq_queue_free(q);
}

static tfq_code slow_loop_fn(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  atomic_fetch_add((atomic_int *)ctx, 1);
  sleep_ms(3); /* longer than the interval: the next run starts at once */
  return TFQ_OK;
}

Test(coord_edges, looper_slower_than_its_interval_runs_again_at_once_and_still_stops) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  atomic_int calls = 0;
  OK(tfq_coord_loop(c, 1000, slow_loop_fn, &calls, NULL, NULL));
  for (int i = 0; i < 2000 && atomic_load(&calls) < 4; i++) sleep_ms(1);
  cr_assert_geq(atomic_load(&calls), 4);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 10 * 1000 * 1000, 0, NULL));
  tfq_coord_free(c);
}

/* ---- steady state: allocations ---- */

static _Atomic long rd_mallocs;
static void *count_malloc(size_t n) {
  rd_mallocs++;
  return malloc(n);
}
static void *count_realloc(void *p, size_t n) {
  if (!p) rd_mallocs++;
  return realloc(p, n);
}

/* The string column of a step is shared with the queue (its rows are not copied), so the next
 * step cannot refill it: the op parks it and refills a parked one the queue has let go of.  Steps
 * of 8 records of (float, float, string) into a FIFOQueue that holds the rows of the last LAG
 * steps (each step is followed by a dequeue_many_into of the 8 records of the step LAG before)
 * then allocate at most one block a step (the components' tuple): a new string column would be
 * two more (its views and its bytes).  Every record comes out right from the refilled columns.
 * With the rows of more steps held than the park has places (lag 40), the oldest parked columns
 * are let go: every record still comes out right, and nothing leaks (the sanitizer runs). */
static void string_steps_case(int lag, int bounded) {
  cr_assert_eq(tfq_set_allocator(count_malloc, count_realloc, free), TFQ_OK);
  enum { N = 800, STEPS = 90, WARM = 50 };
  char *text = malloc(N * 32), *p = text;
  for (int i = 0; i < N; i++) p += sprintf(p, "%d,%d.5,word%d\n", i, i, i);
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_FLOAT, NULL, 0, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_FLOAT, NULL, 0, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_STRING, NULL, 0, NULL, NULL));
  rd_fixture f;
  rd_setup(&f, text, fifo(s, 8 * (lag + 1)), 1);
  tfq_spec_free(s);
  tfq_status *st = tfq_status_new();
  tfq_tuple *dst;
  OK(tfq_tuple_new(3, &dst, NULL));
  long before = 0;
  for (int k = 0; k < STEPS; k++) {
    if (k == WARM) before = rd_mallocs;
    cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_OK, "%s", tfq_status_message(st));
    if (k < lag) continue;
    OK(tfq_queue_dequeue_many_into(f.target, 8, dst, NULL, NOTIMEOUT, NULL));
    const float *x = tfq_tensor_cdata(tfq_tuple_get(dst, 1));
    for (int i = 0; i < 8; i++) {
      int r = 8 * (k - lag) + i;
      char want[16];
      size_t len;
      snprintf(want, sizeof want, "word%d", r);
      const char *w = tfq_tensor_string(tfq_tuple_get(dst, 2), i, &len);
      cr_assert(len == strlen(want) && !memcmp(w, want, len), "record %d: %.*s", r, (int)len, w);
      cr_assert(x[i] == (float)r + 0.5f, "record %d: %g", r, (double)x[i]);
    }
  }
  long steady = rd_mallocs - before;
  if (bounded)
    cr_assert_leq(steady, STEPS - WARM, "%ld allocations in %d steady steps", steady, STEPS - WARM);
  tfq_tuple_free(dst);
  tfq_status_free(st);
  rd_teardown(&f);
  free(text);
  cr_assert_eq(tfq_set_allocator(NULL, NULL, NULL), TFQ_OK);
}

Test(coord_rd, steady_steps_with_a_string_column_allocate_no_column) { string_steps_case(3, 1); }
Test(coord_rd, string_columns_held_longer_than_the_park_holds_still_come_out_right) {
  string_steps_case(40, 0);
}
