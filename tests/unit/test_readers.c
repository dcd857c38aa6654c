/* Readers: the numbered reader cases (c<N> in the test names, docs/conformance.md, "Case numbers"),
 * their DATA_LOSS twins (tfq never ends a truncated file silently by default), and the ReaderBase
 * details checked against the reference wheel (tensorflow-cpu 2.21, tf.compat.v1). */
#include <pthread.h>

#include "readers_util.h"

TestSuite(readers, .init = tmp_setup, .fini = tmp_teardown);

/* ---- 65-70: IdentityReader ---- */

Test(readers, c65_identity_reads_each_work_unit_then_out_of_range) {
  const char *w[] = {"A", "B", "C"};
  tfq_queue *q = work_of(w, 3);
  tfq_reader *r = new_reader(TFQ_READER_IDENTITY, NULL);
  EXPECT_READ(r, q, "A", "A");
  cr_assert_eq(tfq_reader_num_records_produced(r), 1);
  EXPECT_READ(r, q, "B", "B");
  EXPECT_READ(r, q, "C", "C");
  cr_assert_eq(tfq_reader_num_records_produced(r), 3);
  expect_fail(r, q, TFQ_OUT_OF_RANGE,
              "is closed and has insufficient elements (requested 1, current size 0)");
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 3);
  cr_assert_eq(tfq_reader_num_records_produced(r), 3);
  cr_assert_eq(tfq_queue_size(q), 0);
  tfq_reader_free(r);
  tfq_queue_free(q);
}

Test(readers, c66_identity_counters_start_at_zero) {
  tfq_reader *r = new_reader(TFQ_READER_IDENTITY, NULL);
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 0);
  cr_assert_eq(tfq_reader_num_records_produced(r), 0);
  tfq_reader_free(r);
}

Test(readers, c67_identity_interleaved_enqueues) {
  tfq_queue *q = string_queue(-1);
  tfq_reader *r = new_reader(TFQ_READER_IDENTITY, NULL);
  for (int i = 0; i < 3; i++) {
    enqueue_str(q, "DD");
    enqueue_str(q, "EE");
    EXPECT_READ(r, q, "DD", "DD");
    EXPECT_READ(r, q, "EE", "EE");
  }
  close_queue(q);
  expect_fail(r, q, TFQ_OUT_OF_RANGE, "is closed");
  tfq_reader_free(r);
  tfq_queue_free(q);
}

Test(readers, c68_identity_serialize_restore) {
  tfq_queue *q = string_queue(-1);
  enqueue_str(q, "X");
  enqueue_str(q, "Y");
  enqueue_str(q, "Z");
  tfq_reader *r = new_reader(TFQ_READER_IDENTITY, NULL);
  EXPECT_READ(r, q, "X", "X");
  cr_assert_eq(tfq_reader_num_records_produced(r), 1);
  char *state;
  size_t len;
  cr_assert_eq(tfq_reader_serialize_state(r, &state, &len, NULL), TFQ_OK);
  /* TF's ReaderBaseState, as the wheel serialises it: 08 01 10 01 18 01 22 01 58 */
  cr_assert_eq(len, 9);
  cr_assert(memcmp(state, "\x08\x01\x10\x01\x18\x01\x22\x01X", 9) == 0);
  EXPECT_READ(r, q, "Y", "Y");
  EXPECT_READ(r, q, "Z", "Z");
  cr_assert_eq(tfq_reader_num_records_produced(r), 3);
  enqueue_str(q, "Y");
  enqueue_str(q, "Z");
  close_queue(q);
  cr_assert_eq(tfq_reader_restore_state(r, state, len, NULL), TFQ_OK);
  cr_assert_eq(tfq_reader_num_records_produced(r), 1);
  EXPECT_READ(r, q, "Y", "Y");
  EXPECT_READ(r, q, "Z", "Z");
  cr_assert_eq(tfq_reader_num_records_produced(r), 3);
  expect_fail(r, q, TFQ_OUT_OF_RANGE, NULL);
  tfq_free(state);
  tfq_reader_free(r);
  tfq_queue_free(q);
}

Test(readers, c70_identity_reset) {
  tfq_queue *q = string_queue(-1);
  enqueue_str(q, "X");
  enqueue_str(q, "Y");
  enqueue_str(q, "Z");
  tfq_reader *r = new_reader(TFQ_READER_IDENTITY, NULL);
  EXPECT_READ(r, q, "X", "X");
  cr_assert_eq(tfq_reader_num_records_produced(r), 1);
  cr_assert_gt(tfq_queue_size(q), 0);
  EXPECT_READ(r, q, "Y", "Y");
  cr_assert_gt(tfq_reader_num_work_units_completed(r), 0);
  cr_assert_eq(tfq_reader_num_records_produced(r), 2);
  cr_assert_eq(tfq_reader_reset(r, NULL), TFQ_OK);
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 0);
  cr_assert_eq(tfq_reader_num_records_produced(r), 0);
  cr_assert_eq(tfq_queue_size(q), 1);
  EXPECT_READ(r, q, "Z", "Z");
  enqueue_str(q, "K");
  enqueue_str(q, "L");
  EXPECT_READ(r, q, "K", "K");
  tfq_reader_free(r);
  tfq_queue_free(q);
}

/* Messages copied from the wheel (they include the protobuf debug string). */
Test(readers, restore_state_errors_reset_the_reader_with_tf_messages) {
  tfq_reader_options *o = opts();
  cr_assert_eq(tfq_reader_options_set_name(o, "test_reader", NULL), TFQ_OK);
  tfq_reader *r = new_reader(TFQ_READER_IDENTITY, o);
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_reader_restore_state(r, "\xff\x01garbage", 9, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Could not parse state for IdentityReader 'test_reader': \\377\\001garbage");
  cr_assert_eq(tfq_reader_restore_state(r, "\x08\x02\x10\x01", 4, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Inconsistent work started vs. finished when restoring in IdentityReader "
                   "'test_reader': goo.gle/debugproto  \nwork_started: 2\nwork_finished: 1\n");
  const char neg[] = "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01";
  cr_assert_eq(tfq_reader_restore_state(r, neg, 11, st), TFQ_INVALID_ARGUMENT);
  cr_assert(strstr(tfq_status_message(st),
                   "Unexpected negative value when restoring in "
                   "IdentityReader 'test_reader': "));
  cr_assert_eq(tfq_reader_restore_state(r, "\x08\x01\x10\x02", 4, st), TFQ_OK);
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 2);
  cr_assert_eq(tfq_reader_restore_state(r,
                                        "\x18\x05\x22\x03"
                                        "abc",
                                        7, st),
               TFQ_OK);
  cr_assert_eq(tfq_reader_num_records_produced(r), 5);
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 0);
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
}

Test(readers, serialize_state_unimplemented_for_file_readers) {
  tfq_reader_kind k[3] = {TFQ_READER_TEXT_LINE, TFQ_READER_FIXED_LENGTH, TFQ_READER_TFRECORD};
  tfq_status *st = tfq_status_new();
  for (int i = 0; i < 3; i++) {
    tfq_reader *r = new_reader(k[i], NULL);
    char *s;
    size_t n;
    cr_assert_eq(tfq_reader_serialize_state(r, &s, &n, st), TFQ_UNIMPLEMENTED);
    cr_assert_str_eq(tfq_status_message(st), "Reader SerializeState");
    cr_assert_eq(tfq_reader_restore_state(r, "", 0, st), TFQ_UNIMPLEMENTED);
    cr_assert_str_eq(tfq_status_message(st), "Reader RestoreState");
    tfq_reader_free(r);
  }
  tfq_reader *r = new_reader(TFQ_READER_WHOLE_FILE, NULL);
  char *s;
  size_t n;
  cr_assert_eq(tfq_reader_serialize_state(r, &s, &n, st), TFQ_OK);
  cr_assert_eq(n, 0); /* the wheel: b'' for an untouched reader */
  tfq_free(s);
  tfq_reader_free(r);
  tfq_status_free(st);
}

Test(readers, construction_errors_use_tf_messages) {
  tfq_reader_options *o = opts();
  tfq_status *st = tfq_status_new();
  tfq_reader *r;
  tfq_reader_options_set_skip_header_lines(o, -1);
  cr_assert_eq(tfq_reader_new(TFQ_READER_TEXT_LINE, o, &r, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "skip_header_lines must be >= 0 not -1");
  tfq_reader_options_set_record_bytes(o, -1);
  cr_assert_eq(tfq_reader_new(TFQ_READER_FIXED_LENGTH, o, &r, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "record_bytes must be >= 0 not -1");
  tfq_reader_options_set_record_bytes(o, 3);
  tfq_reader_options_set_hop_bytes(o, -2);
  cr_assert_eq(tfq_reader_new(TFQ_READER_FIXED_LENGTH, o, &r, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "hop_bytes must be >= 0 not -2");
  tfq_status_free(st);
  tfq_reader_options_free(o);
}

Test(readers, work_queue_must_hold_scalar_strings) {
  tfq_spec *s;
  tfq_queue *q;
  tfq_status *st = tfq_status_new();
  tfq_reader *r = new_reader(TFQ_READER_IDENTITY, NULL);
  cr_assert_eq(tfq_spec_new(&s, NULL), TFQ_OK);
  cr_assert_eq(tfq_spec_add(s, TFQ_INT32, NULL, 0, NULL, NULL), TFQ_OK);
  cr_assert_eq(tfq_fifo_queue_new(s, 4, NULL, &q, NULL), TFQ_OK);
  expect_fail(r, q, TFQ_INVALID_ARGUMENT, "Expected queue with single string component");
  tfq_queue_free(q);
  cr_assert_eq(tfq_spec_add(s, TFQ_STRING, NULL, 0, NULL, NULL), TFQ_OK);
  cr_assert_eq(tfq_fifo_queue_new(s, 4, NULL, &q, NULL), TFQ_OK);
  expect_fail(r, q, TFQ_INVALID_ARGUMENT, "Expected single component queue");
  tfq_queue_free(q);
  tfq_spec_free(s);
  /* a [2] string element */
  int64_t two = 2;
  cr_assert_eq(tfq_spec_new(&s, NULL), TFQ_OK);
  cr_assert_eq(tfq_spec_add(s, TFQ_STRING, &two, 1, NULL, NULL), TFQ_OK);
  cr_assert_eq(tfq_fifo_queue_new(s, 4, NULL, &q, NULL), TFQ_OK);
  tfq_tensor *t;
  tfq_tuple *tu;
  cr_assert_eq(tfq_tensor_new(TFQ_STRING, &two, 1, &t, NULL), TFQ_OK);
  cr_assert_eq(tfq_tuple_new(1, &tu, NULL), TFQ_OK);
  tfq_tuple_set_take(tu, 0, t);
  cr_assert_eq(tfq_queue_enqueue(q, tu, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OK);
  tfq_tuple_free(tu);
  expect_fail(r, q, TFQ_INVALID_ARGUMENT, "Expected to dequeue a one-element string tensor");
  tfq_queue_free(q);
  tfq_spec_free(s);
  tfq_reader_free(r);
  tfq_status_free(st);
}

/* ---- 71-72: WholeFileReader ---- */

static const char *k71[3] = {"One\na\nb\n", "Two\nC\nD", "Three x, y, z"};

Test(readers, c71_whole_file_exact_bytes) {
  const char *f[3];
  for (int i = 0; i < 3; i++) {
    char n[16];
    snprintf(n, sizeof n, "whole%d", i);
    f[i] = strdup(write_file(n, k71[i], strlen(k71[i])));
  }
  tfq_queue *q = work_of(f, 3);
  tfq_reader *r = new_reader(TFQ_READER_WHOLE_FILE, NULL);
  for (int i = 0; i < 3; i++) EXPECT_READ(r, q, f[i], k71[i]);
  expect_fail(r, q, TFQ_OUT_OF_RANGE, NULL);
  tfq_reader_free(r);
  tfq_queue_free(q);
  for (int i = 0; i < 3; i++) free((void *)f[i]);
}

Test(readers, c72_whole_file_cycles) {
  const char *f[9];
  for (int i = 0; i < 3; i++) {
    char n[16];
    snprintf(n, sizeof n, "whole%d", i);
    f[i] = f[i + 3] = f[i + 6] = strdup(write_file(n, k71[i], strlen(k71[i])));
  }
  tfq_queue *q = work_of(f, 9);
  tfq_reader *r = new_reader(TFQ_READER_WHOLE_FILE, NULL);
  for (int i = 0; i < 9; i++) EXPECT_READ(r, q, f[i], k71[i % 3]);
  expect_fail(r, q, TFQ_OUT_OF_RANGE, NULL);
  tfq_reader_free(r);
  tfq_queue_free(q);
  for (int i = 0; i < 3; i++) free((void *)f[i]);
}

Test(readers, whole_file_empty_file_gives_one_empty_record_and_open_errors_are_sticky) {
  const char *f[3] = {strdup(write_file("empty", "", 0)), strdup(path_of("missing")), "x"};
  tfq_queue *q = work_of(f, 2);
  tfq_reader *r = new_reader(TFQ_READER_WHOLE_FILE, NULL);
  expect_read(r, q, f[0], "", 0);
  expect_fail(r, q, TFQ_NOT_FOUND, "missing; No such file or directory");
  expect_fail(r, q, TFQ_NOT_FOUND, "missing; No such file or directory"); /* sticky, as TF */
  tfq_reader_free(r);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

/* ---- 73-79: TextLineReader ---- */

static void make_text_files(const char *f[2], int crlf) {
  for (int i = 0; i < 2; i++) {
    char buf[256] = "", n[16];
    for (int j = 0; j < 5; j++) {
      char line[32];
      snprintf(line, sizeof line, "%d: %d", i, j);
      strcat(buf, line);
      if (j < 4 || i == 0) strcat(buf, crlf ? "\r\n" : "\n");
    }
    snprintf(n, sizeof n, "text%d.txt", i);
    f[i] = strdup(write_file(n, buf, strlen(buf)));
  }
}

static void check_text_files(tfq_reader *r, tfq_queue *q, const char *f[2], int first) {
  for (int i = 0; i < 2; i++)
    for (int j = first; j < 5; j++) {
      char key[600], val[32];
      snprintf(key, sizeof key, "%s:%d", f[i], j + 1);
      snprintf(val, sizeof val, "%d: %d", i, j);
      EXPECT_READ(r, q, key, val);
    }
  expect_fail(r, q, TFQ_OUT_OF_RANGE, NULL);
}

Test(readers, c73_text_line_two_files) {
  const char *f[2];
  make_text_files(f, 0);
  tfq_queue *q = work_of(f, 2);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, NULL);
  check_text_files(r, q, f, 0);
  tfq_reader_free(r);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

Test(readers, text_line_crlf_files_read_like_lf_files) {
  const char *f[2];
  make_text_files(f, 1);
  tfq_queue *q = work_of(f, 2);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, NULL);
  check_text_files(r, q, f, 0);
  tfq_reader_free(r);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

Test(readers, c75_text_line_skip_header_lines) {
  const char *f[2];
  make_text_files(f, 0);
  tfq_queue *q = work_of(f, 2);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_skip_header_lines(o, 1);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  check_text_files(r, q, f, 1);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

/* Also confirmed with the wheel: "a\rb\na\r\r\nx\r" → "a\rb", "a\r", "x"; a file of "\r" gives
 * nothing; "\r\n\r\n" gives two empty lines; "\n" gives one; an empty file nothing. */
Test(readers, c77_text_line_strips_one_trailing_cr_only) {
  const char *f[5] = {strdup(write_file("cr.txt", "a\rb\na\r\r\nx\r", 10)),
                      strdup(write_file("cr2.txt", "\r", 1)),
                      strdup(write_file("crlf.txt", "\r\n\r\n", 4)),
                      strdup(write_file("nl.txt", "\n", 1)), strdup(write_file("e.txt", "", 0))};
  tfq_queue *q = work_of(f, 5);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, NULL);
  char k[600];
  snprintf(k, sizeof k, "%s:1", f[0]);
  EXPECT_READ(r, q, k, "a\rb");
  snprintf(k, sizeof k, "%s:2", f[0]);
  EXPECT_READ(r, q, k, "a\r");
  snprintf(k, sizeof k, "%s:3", f[0]);
  EXPECT_READ(r, q, k, "x");
  snprintf(k, sizeof k, "%s:1", f[2]);
  EXPECT_READ(r, q, k, "");
  snprintf(k, sizeof k, "%s:2", f[2]);
  EXPECT_READ(r, q, k, "");
  snprintf(k, sizeof k, "%s:1", f[3]);
  EXPECT_READ(r, q, k, "");
  expect_fail(r, q, TFQ_OUT_OF_RANGE, NULL);
  tfq_reader_free(r);
  tfq_queue_free(q);
  for (int i = 0; i < 5; i++) free((void *)f[i]);
}

Test(readers, c78_text_line_skip_more_lines_than_the_file_has) {
  const char *f[2] = {strdup(write_file("three.txt", "1\n2\n3\n", 6)),
                      strdup(write_file("six.txt", "1\n2\n3\n4\n5\n6", 11))};
  tfq_queue *q = work_of(f, 2);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_skip_header_lines(o, 5);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  char k[600];
  snprintf(k, sizeof k, "%s:6", f[1]);
  EXPECT_READ(r, q, k, "6");
  expect_fail(r, q, TFQ_OUT_OF_RANGE, NULL);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

Test(readers, c79_text_line_counts_a_file_on_the_read_after_its_last_line) {
  const char *f[2];
  make_text_files(f, 0);
  tfq_queue *q = work_of(f, 2);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, NULL);
  for (int j = 0; j < 5; j++) {
    tfq_tensor *k, *v;
    cr_assert_eq(tfq_reader_read(r, q, &k, &v, NULL, NULL), TFQ_OK);
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 0);
  char k[600];
  snprintf(k, sizeof k, "%s:1", f[1]);
  EXPECT_READ(r, q, k, "1: 0");
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 1);
  tfq_reader_free(r);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

Test(readers, text_line_open_failure_skips_the_file) {
  const char *f[2] = {strdup(path_of("nope.txt")), strdup(write_file("ok.txt", "z\n", 2))};
  tfq_queue *q = work_of(f, 2);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, NULL);
  expect_fail(r, q, TFQ_NOT_FOUND, "nope.txt; No such file or directory");
  char k[600];
  snprintf(k, sizeof k, "%s:1", f[1]);
  EXPECT_READ(r, q, k, "z");
  expect_fail(r, q, TFQ_OUT_OF_RANGE, NULL);
  tfq_reader_free(r);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

Test(readers, text_line_gzip_and_zlib_input) {
  const char *text = "l1\r\nl2\n\nlast";
  const char *f[2] = {strdup(write_compressed("t.gz", text, strlen(text), 1)),
                      strdup(write_compressed("t.z", text, strlen(text), 0))};
  tfq_compression c[2] = {TFQ_COMPRESSION_GZIP, TFQ_COMPRESSION_ZLIB};
  for (int i = 0; i < 2; i++) {
    tfq_queue *q = work_of(&f[i], 1);
    tfq_reader_options *o = opts();
    tfq_reader_options_set_compression(o, c[i]);
    tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
    const char *want[4] = {"l1", "l2", "", "last"};
    for (int j = 0; j < 4; j++) {
      char k[600];
      snprintf(k, sizeof k, "%s:%d", f[i], j + 1);
      EXPECT_READ(r, q, k, want[j]);
    }
    expect_fail(r, q, TFQ_OUT_OF_RANGE, NULL);
    tfq_reader_free(r);
    tfq_reader_options_free(o);
    tfq_queue_free(q);
  }
  free((void *)f[0]);
  free((void *)f[1]);
}

Test(readers, text_line_multi_member_gzip_reads_every_member) {
  size_t n1, n2;
  unsigned char *a = compress_buf("a\nb\n", 4, 1, &n1), *b = compress_buf("c\n", 2, 1, &n2);
  unsigned char buf[512];
  memcpy(buf, a, n1);
  memcpy(buf + n1, b, n2);
  const char *f = write_file("m.gz", buf, n1 + n2);
  free(a);
  free(b);
  tfq_queue *q = work_of(&f, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_compression(o, TFQ_COMPRESSION_GZIP);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_tensor *k, *v;
  cr_assert_eq(tfq_reader_read_up_to(r, q, 10, &k, &v, NULL, NULL), TFQ_OK);
  cr_assert_eq(tfq_tensor_num_elements(v), 3);
  cr_assert_str_eq(S(v, 2), "c");
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
}

/* A gzip file cut short: TF (the wheel, TFRecordReader and TextLineDataset) ends silently after
 * the bytes it could inflate; tfq reports DATA_LOSS, after the complete lines. */
static void truncated_gzip(int compat) {
  char text[4000];
  for (int i = 0; i < 400; i++) memcpy(text + 10 * i, "line 0123\n", 10);
  text[9] = '\n';
  size_t n;
  unsigned char *c = compress_buf(text, sizeof text, 1, &n);
  const char *f = write_file("cut.gz", c, n - 6);
  free(c);
  tfq_queue *q = work_of(&f, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_compression(o, TFQ_COMPRESSION_GZIP);
  tfq_reader_options_set_tf_compat_truncation(o, compat);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_tensor *k, *v;
  int64_t total = 0;
  tfq_status *st = tfq_status_new();
  tfq_code code;
  while ((code = tfq_reader_read_up_to(r, q, 64, &k, &v, NULL, st)) == TFQ_OK) {
    total += tfq_tensor_num_elements(v);
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  if (compat) {
    cr_assert_eq(code, TFQ_OUT_OF_RANGE);
  } else {
    cr_assert_eq(code, TFQ_DATA_LOSS, "%s", tfq_status_message(st));
    cr_assert(strstr(tfq_status_message(st), "truncated GZIP stream"), "%s",
              tfq_status_message(st));
    cr_assert(strstr(tfq_status_message(st), "cut.gz ends at compressed offset"));
  }
  cr_assert_leq(total, 400);
  cr_assert_geq(total, 390);
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
}
Test(readers, truncated_gzip_is_data_loss_by_default) { truncated_gzip(0); }
Test(readers, truncated_gzip_ends_silently_with_tf_compat) { truncated_gzip(1); }

Test(readers, gzip_mode_rejects_a_plain_file_like_tf) {
  const char *f = write_file("plain.txt", "hello\n", 6);
  tfq_queue *q = work_of(&f, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_compression(o, TFQ_COMPRESSION_GZIP);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  expect_fail(r, q, TFQ_DATA_LOSS, "inflate() failed with error -3: incorrect header check");
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
}

Test(readers, text_line_long_lines_across_buffers_and_the_cap) {
  size_t n = 3000;
  char *text = malloc(2 * n + 2);
  memset(text, 'a', n);
  text[n] = '\n';
  memset(text + n + 1, 'b', n);
  text[2 * n + 1] = '\n';
  const char *f = write_file("long.txt", text, 2 * n + 2);
  tfq_queue *q = work_of(&f, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_buffer_bytes(o, 100);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  char k[600];
  snprintf(k, sizeof k, "%s:1", f);
  expect_read(r, q, k, text, n);
  snprintf(k, sizeof k, "%s:2", f);
  expect_read(r, q, k, text + n + 1, n);
  tfq_reader_free(r);
  tfq_queue_free(q);
  /* the same file with a cap of 2999 bytes */
  q = work_of(&f, 1);
  tfq_reader_options_set_max_line_bytes(o, n - 1);
  r = new_reader(TFQ_READER_TEXT_LINE, o);
  expect_fail(r, q, TFQ_RESOURCE_EXHAUSTED, "line 1 of ");
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
  free(text);
}

/* read_up_to's batch path finds line ends 64 bytes at a time: lines of every length from 0 to 150
 * (so every '\n' place in a block, and a '\r' at the end of one block before the '\n' that opens
 * the next), '\r' lines, a last line without '\n', through buffers of 100 bytes (lines longer go
 * one at a time), 1,000 bytes and the default, in batches of 7. */
Test(readers, text_line_batches_find_every_line_end_in_any_place_of_a_block) {
  enum { NL = 300 };
  char *text = malloc(NL * 160), *lines[NL];
  size_t lens[NL], n = 0;
  for (int i = 0; i < NL; i++) {
    size_t len = (size_t)((i * 37) % 151);
    lines[i] = text + n;
    for (size_t j = 0; j < len; j++) text[n++] = (char)('a' + (i + j) % 26);
    lens[i] = len;
    if (i % 3 == 1) text[n++] = '\r'; /* CRLF: the '\r' is not part of the line */
    if (i < NL - 1) text[n++] = '\n';
  }
  const char *f = write_file("blocks.txt", text, n);
  size_t buffers[3] = {100, 1000, 0};
  for (int b = 0; b < 3; b++) {
    tfq_queue *q = work_of(&f, 1);
    tfq_reader_options *o = opts();
    if (buffers[b]) tfq_reader_options_set_buffer_bytes(o, buffers[b]);
    tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
    int got = 0;
    for (;;) {
      tfq_tensor *k, *v;
      tfq_code c = tfq_reader_read_up_to(r, q, 7, &k, &v, NULL, NULL);
      if (c == TFQ_OUT_OF_RANGE) break;
      cr_assert_eq(c, TFQ_OK);
      for (int64_t i = 0; i < tfq_tensor_num_elements(v); i++, got++) {
        cr_assert_lt(got, NL);
        size_t len;
        const char *s = tfq_tensor_string(v, i, &len);
        cr_assert_eq(len, lens[got], "buffer %zu line %d: %zu bytes, want %zu", buffers[b], got + 1,
                     len, lens[got]);
        cr_assert(len == 0 || !memcmp(s, lines[got], len), "buffer %zu line %d", buffers[b],
                  got + 1);
      }
      tfq_tensor_free(k);
      tfq_tensor_free(v);
    }
    cr_assert_eq(got, NL, "buffer %zu: %d lines", buffers[b], got);
    tfq_reader_free(r);
    tfq_reader_options_free(o);
    tfq_queue_free(q);
  }
  free(text);
}

/* read_up_to: batches end at file ends; n = 0; an error after k records comes on the next call. */
Test(readers, read_up_to_never_mixes_files_and_handles_zero) {
  const char *f[2] = {strdup(write_file("a.txt", "1\n2\n3\n", 6)),
                      strdup(write_file("b.txt", "4\n", 2))};
  tfq_queue *q = work_of(f, 2);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, NULL);
  tfq_tensor *k, *v;
  cr_assert_eq(tfq_reader_read_up_to(r, q, 0, &k, &v, NULL, NULL), TFQ_OK);
  cr_assert_eq(tfq_tensor_num_elements(k), 0);
  cr_assert_eq(tfq_tensor_rank(k), 1);
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  int64_t sizes[3] = {2, 1, 1};
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(tfq_reader_read_up_to(r, q, 2, &k, &v, NULL, NULL), TFQ_OK);
    cr_assert_eq(tfq_tensor_dim(k, 0), sizes[i]);
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  cr_assert_eq(tfq_reader_num_records_produced(r), 4);
  cr_assert_eq(tfq_reader_read_up_to(r, q, 2, &k, &v, NULL, NULL), TFQ_OUT_OF_RANGE);
  tfq_reader_free(r);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

Test(readers, read_up_to_returns_records_before_an_error_then_the_error) {
  size_t n;
  const char *text = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  unsigned char *c = compress_buf(text, strlen(text), 1, &n);
  const char *f = write_file("e.gz", c, n - 4); /* lose part of the trailer */
  free(c);
  tfq_queue *q = work_of(&f, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_compression(o, TFQ_COMPRESSION_GZIP);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_tensor *k, *v;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_reader_read_up_to(r, q, 100, &k, &v, NULL, st), TFQ_OK);
  cr_assert_eq(tfq_tensor_num_elements(v), 9);
  cr_assert_eq(tfq_reader_num_records_produced(r), 9);
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  cr_assert_eq(tfq_reader_read_up_to(r, q, 100, &k, &v, NULL, st), TFQ_DATA_LOSS);
  cr_assert_null(k);
  cr_assert(strstr(tfq_status_message(st), "e.gz"));
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
}

/* ---- 80-85: FixedLengthRecordReader ---- */

/* header 5 'H', 7 records "000".."666" each followed by `gap` 'G's, footer 2 'F'. */
static size_t fixed_file(char *buf, int gap) {
  size_t n = 0;
  memcpy(buf, "HHHHH", 5);
  n = 5;
  for (int j = 0; j < 7; j++) {
    for (int b = 0; b < 3; b++) buf[n++] = (char)('0' + j);
    for (int g = 0; g < gap; g++) buf[n++] = 'G';
  }
  buf[n++] = 'F';
  buf[n++] = 'F';
  return n;
}

static void check_fixed(int gap, tfq_compression comp, int cut, int compat, tfq_code end) {
  char buf[64];
  size_t n = fixed_file(buf, gap) - (size_t)cut;
  const char *f[2];
  if (comp == TFQ_COMPRESSION_NONE)
    f[0] = strdup(write_file("fixed.bin", buf, n));
  else
    f[0] = strdup(write_compressed("fixed.z", buf, n, comp == TFQ_COMPRESSION_GZIP));
  if (comp == TFQ_COMPRESSION_NONE)
    f[1] = strdup(write_file("empty.bin", "HHHHHFF", 7));
  else
    f[1] = strdup(write_compressed("empty.z", "HHHHHFF", 7, comp == TFQ_COMPRESSION_GZIP));
  tfq_queue *q = work_of(f, 2);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_header_bytes(o, 5);
  tfq_reader_options_set_record_bytes(o, 3);
  tfq_reader_options_set_footer_bytes(o, 2);
  tfq_reader_options_set_hop_bytes(o, gap ? 4 : 0);
  tfq_reader_options_set_compression(o, comp);
  tfq_reader_options_set_tf_compat_truncation(o, compat);
  tfq_reader *r = new_reader(TFQ_READER_FIXED_LENGTH, o);
  int records = cut ? 6 : 7;
  for (int j = 0; j < records; j++) {
    char k[600], v[4] = {(char)('0' + j), (char)('0' + j), (char)('0' + j), 0};
    snprintf(k, sizeof k, "%s:%d", f[0], j);
    EXPECT_READ(r, q, k, v);
  }
  if (end == TFQ_DATA_LOSS)
    expect_fail(r, q, TFQ_DATA_LOSS, "ends inside record 6");
  else
    expect_fail(r, q, TFQ_OUT_OF_RANGE, "is closed");
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

Test(readers, c80_fixed_length_header_records_footer) {
  check_fixed(0, TFQ_COMPRESSION_NONE, 0, 0, TFQ_OUT_OF_RANGE);
}
Test(readers, c81_fixed_length_hop_skips_gap_bytes) {
  check_fixed(1, TFQ_COMPRESSION_NONE, 0, 0, TFQ_OUT_OF_RANGE);
}
Test(readers, c82_fixed_length_gzip) {
  check_fixed(0, TFQ_COMPRESSION_GZIP, 0, 0, TFQ_OUT_OF_RANGE);
  check_fixed(1, TFQ_COMPRESSION_GZIP, 0, 0, TFQ_OUT_OF_RANGE);
}
Test(readers, c82_fixed_length_zlib) {
  check_fixed(0, TFQ_COMPRESSION_ZLIB, 0, 0, TFQ_OUT_OF_RANGE);
  check_fixed(1, TFQ_COMPRESSION_ZLIB, 0, 0, TFQ_OUT_OF_RANGE);
}
/* Cut 1 byte (2 with the gap): record 6 no longer has its footer after it, so TF drops it
 * silently; tfq says DATA_LOSS. */
Test(readers, fixed_length_partial_last_record_is_data_loss_by_default) {
  check_fixed(0, TFQ_COMPRESSION_NONE, 1, 0, TFQ_DATA_LOSS);
  check_fixed(1, TFQ_COMPRESSION_GZIP, 2, 0, TFQ_DATA_LOSS);
}
Test(readers, fixed_length_partial_last_record_dropped_with_tf_compat) {
  check_fixed(0, TFQ_COMPRESSION_NONE, 1, 1, TFQ_OUT_OF_RANGE);
  check_fixed(1, TFQ_COMPRESSION_ZLIB, 2, 1, TFQ_OUT_OF_RANGE);
}

static void short_header(int compat) {
  const char *f[2] = {strdup(write_file("s4", "abcd", 4)),
                      strdup(write_file("s20", "HHHHHHHHHHabcdefg", 17))};
  tfq_queue *q = work_of(f, 2);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_header_bytes(o, 10);
  tfq_reader_options_set_record_bytes(o, 3);
  tfq_reader_options_set_tf_compat_truncation(o, compat);
  tfq_reader *r = new_reader(TFQ_READER_FIXED_LENGTH, o);
  if (compat)
    expect_fail(r, q, TFQ_OUT_OF_RANGE, "reached end of file");
  else
    expect_fail(r, q, TFQ_DATA_LOSS, "inside its header");
  char k[600];
  snprintf(k, sizeof k, "%s:0", f[1]);
  EXPECT_READ(r, q, k, "abc");
  snprintf(k, sizeof k, "%s:1", f[1]);
  EXPECT_READ(r, q, k, "def");
  /* 1 byte left: with hop = record it cannot be a footer of 0 bytes */
  if (compat)
    expect_fail(r, q, TFQ_OUT_OF_RANGE, "is closed");
  else
    expect_fail(r, q, TFQ_DATA_LOSS, "ends inside record 2");
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}
Test(readers, c85_fixed_length_short_header_out_of_range_with_tf_compat) { short_header(1); }
Test(readers, c85_fixed_length_short_header_data_loss_by_default) { short_header(0); }

/* ---- 86-95: TFRecordReader ---- */

static const char *tfrecord_file(const char *name, int file, int nrec, tfq_compression c) {
  const char *p = path_of(name);
  tfq_tfrecord_writer *w;
  cr_assert_eq(tfq_tfrecord_writer_new(p, c, &w, NULL), TFQ_OK);
  for (int j = 0; j < nrec; j++) {
    char rec[64];
    snprintf(rec, sizeof rec, "Record %d of file %d", j, file);
    cr_assert_eq(tfq_tfrecord_writer_write(w, rec, strlen(rec), NULL), TFQ_OK);
  }
  cr_assert_eq(tfq_tfrecord_writer_close(w, NULL), TFQ_OK);
  tfq_tfrecord_writer_free(w);
  return p;
}

static void check_tfrecords(tfq_compression c) {
  const char *f[2] = {strdup(tfrecord_file("r0", 0, 7, c)), strdup(tfrecord_file("r1", 1, 7, c))};
  tfq_queue *q = work_of(f, 2);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_compression(o, c);
  tfq_reader *r = new_reader(TFQ_READER_TFRECORD, o);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 7; j++) {
      char k[600], v[64];
      snprintf(k, sizeof k, "%s:%d", f[i], 34 * j);
      snprintf(v, sizeof v, "Record %d of file %d", j, i);
      EXPECT_READ(r, q, k, v);
    }
  expect_fail(r, q, TFQ_OUT_OF_RANGE, NULL);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

Test(readers, c86_tfrecord_two_files_keys_are_offsets) { check_tfrecords(TFQ_COMPRESSION_NONE); }
Test(readers, c88_tfrecord_zlib) { check_tfrecords(TFQ_COMPRESSION_ZLIB); }
Test(readers, c88_tfrecord_gzip) { check_tfrecords(TFQ_COMPRESSION_GZIP); }

Test(readers, c87_tfrecord_read_up_to_batches_3_3_1_3_3_1) {
  const char *f[2] = {strdup(tfrecord_file("r0", 0, 7, 0)), strdup(tfrecord_file("r1", 1, 7, 0))};
  tfq_queue *q = work_of(f, 2);
  tfq_reader *r = new_reader(TFQ_READER_TFRECORD, NULL);
  int64_t want[6] = {3, 3, 1, 3, 3, 1}, total = 0;
  for (int i = 0; i < 6; i++) {
    tfq_tensor *k, *v;
    cr_assert_eq(tfq_reader_read_up_to(r, q, 3, &k, &v, NULL, NULL), TFQ_OK);
    cr_assert_eq(tfq_tensor_dim(v, 0), want[i]);
    total += want[i];
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  cr_assert_eq(total, 14);
  tfq_tensor *k, *v;
  cr_assert_eq(tfq_reader_read_up_to(r, q, 3, &k, &v, NULL, NULL), TFQ_OUT_OF_RANGE);
  tfq_reader_free(r);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

static const unsigned char rec123[19] = {3,    0,    0,    0,    0,    0,    0,    0,    0xb0, 0x99,
                                         0x49, 0x0e, 0x31, 0x32, 0x33, 0xce, 0x0b, 0xe7, 0x01};

Test(readers, tfrecord_writer_matches_the_spec_bytes) {
  const char *p = path_of("w123");
  tfq_tfrecord_writer *w;
  cr_assert_eq(tfq_tfrecord_writer_new(p, TFQ_COMPRESSION_NONE, &w, NULL), TFQ_OK);
  cr_assert_eq(tfq_tfrecord_writer_write(w, "123", 3, NULL), TFQ_OK);
  tfq_tfrecord_writer_free(w);
  size_t n;
  char *b = read_all(p, &n);
  cr_assert_eq(n, 19);
  cr_assert(memcmp(b, rec123, 19) == 0);
  free(b);
}

static tfq_reader *tfr_reader(int compat) {
  tfq_reader_options *o = opts();
  tfq_reader_options_set_tf_compat_truncation(o, compat);
  tfq_reader *r = new_reader(TFQ_READER_TFRECORD, o);
  tfq_reader_options_free(o);
  return r;
}

/* The wheel's message is "truncated record at 0' failed with Read less bytes than requested"
 * (TF 1.15's is "truncated record at 0").  Sticky until reset. */
Test(readers, c90_tfrecord_cut_inside_the_payload_is_data_loss) {
  for (int compat = 0; compat < 2; compat++) {
    const char *f = write_file("c14", rec123, 14);
    tfq_queue *q = work_of(&f, 1);
    tfq_reader *r = tfr_reader(compat);
    expect_fail(r, q, TFQ_DATA_LOSS,
                "truncated record at 0' failed with Read less bytes than requested");
    expect_fail(r, q, TFQ_DATA_LOSS, "truncated record at 0");
    tfq_reader_free(r);
    tfq_queue_free(q);
  }
}

Test(readers, c91_tfrecord_cut_inside_the_header_ends_silently_with_tf_compat) {
  const char *f[2] = {strdup(write_file("c5", rec123, 5)), strdup(write_file("e", "", 0))};
  tfq_queue *q = work_of(f, 2);
  tfq_reader *r = tfr_reader(1);
  expect_fail(r, q, TFQ_OUT_OF_RANGE, "is closed");
  tfq_reader_free(r);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

Test(readers, c91_tfrecord_cut_inside_the_header_is_data_loss_by_default) {
  const char *f[2] = {strdup(write_file("e", "", 0)), strdup(write_file("c5", rec123, 5))};
  tfq_queue *q = work_of(f, 2);
  tfq_reader *r = tfr_reader(0);
  expect_fail(r, q, TFQ_DATA_LOSS, "truncated record header at 0");
  tfq_reader_free(r);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
}

/* Wheel: at offset 0 the message adds " (Is this even a TFRecord file?)"; elsewhere not. */
Test(readers, c93_tfrecord_flipped_length_crc_is_corrupted_record) {
  unsigned char b[38];
  memcpy(b, rec123, 19);
  memcpy(b + 19, rec123, 19);
  b[9] ^= 1;
  const char *f = write_file("flip0", b, 38);
  b[9] ^= 1;
  b[28] ^= 1;
  const char *f2 = write_file("flip19", b, 38);
  const char *fs[2] = {strdup(f), strdup(f2)};
  tfq_queue *q = work_of(fs, 2);
  tfq_reader *r = tfr_reader(0);
  expect_fail(r, q, TFQ_DATA_LOSS, "corrupted record at 0 (Is this even a TFRecord file?)");
  cr_assert_eq(tfq_reader_reset(r, NULL), TFQ_OK);
  char k[600];
  snprintf(k, sizeof k, "%s:0", fs[1]);
  EXPECT_READ(r, q, k, "123");
  tfq_status *st = tfq_status_new();
  tfq_tensor *kk, *vv;
  cr_assert_eq(tfq_reader_read(r, q, &kk, &vv, NULL, st), TFQ_DATA_LOSS);
  cr_assert_str_eq(tfq_status_message(st), "corrupted record at 19");
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_queue_free(q);
  free((void *)fs[0]);
  free((void *)fs[1]);
}

Test(readers, tfrecord_flipped_payload_is_corrupted_record_at_offset_plus_12) {
  unsigned char b[19];
  memcpy(b, rec123, 19);
  b[13] ^= 1;
  const char *f = write_file("flip13", b, 19);
  tfq_queue *q = work_of(&f, 1);
  tfq_reader *r = tfr_reader(0);
  tfq_status *st = tfq_status_new();
  tfq_tensor *k, *v;
  cr_assert_eq(tfq_reader_read(r, q, &k, &v, NULL, st), TFQ_DATA_LOSS);
  cr_assert_str_eq(tfq_status_message(st), "corrupted record at 12");
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_queue_free(q);
}

Test(readers, c94_tfrecord_unknown_compression_string_reads_uncompressed) {
  cr_assert_eq(tfq_compression_from_string("BOGUS"), TFQ_COMPRESSION_NONE);
  cr_assert_eq(tfq_compression_from_string("GZIP"), TFQ_COMPRESSION_GZIP);
  cr_assert_eq(tfq_compression_from_string("ZLIB"), TFQ_COMPRESSION_ZLIB);
  cr_assert_eq(tfq_compression_from_string(""), TFQ_COMPRESSION_NONE);
  const char *f = write_file("r", rec123, 19);
  tfq_queue *q = work_of(&f, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_compression(o, tfq_compression_from_string("BOGUS"));
  tfq_reader *r = new_reader(TFQ_READER_TFRECORD, o);
  char k[600];
  snprintf(k, sizeof k, "%s:0", f);
  EXPECT_READ(r, q, k, "123");
  expect_fail(r, q, TFQ_OUT_OF_RANGE, NULL);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
}

/* ---- 95: a reader blocked on an empty queue does not block others ---- */

typedef struct {
  tfq_reader *r;
  tfq_queue *q;
  tfq_code code;
  char val[64];
} blocked_read;

static void *blocked_main(void *arg) {
  blocked_read *b = arg;
  tfq_tensor *k, *v;
  b->code = tfq_reader_read(b->r, b->q, &k, &v, NULL, NULL);
  if (b->code == TFQ_OK) {
    snprintf(b->val, sizeof b->val, "%s", S(v, 0));
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  return NULL;
}

Test(readers, c95_blocked_reader_does_not_block_other_readers) {
  blocked_read b[2];
  pthread_t th[2];
  for (int i = 0; i < 2; i++) {
    b[i].r = new_reader(TFQ_READER_TEXT_LINE, NULL);
    b[i].q = string_queue(-1);
    b[i].code = TFQ_UNKNOWN;
    cr_assert_eq(pthread_create(&th[i], NULL, blocked_main, &b[i]), 0);
  }
  usleep(20000);
  for (int i = 1; i >= 0; i--) { /* feed the second reader first */
    char name[16], content[16];
    snprintf(name, sizeof name, "file-%d", i);
    snprintf(content, sizeof content, "file-%d", i);
    enqueue_str(b[i].q, write_file(name, content, strlen(content)));
    cr_assert_eq(pthread_join(th[i], NULL), 0);
    cr_assert_eq(b[i].code, TFQ_OK);
    cr_assert_str_eq(b[i].val, content);
  }
  for (int i = 0; i < 2; i++) {
    tfq_reader_free(b[i].r);
    tfq_queue_free(b[i].q);
  }
}

/* A reader shared by several threads: every record comes out exactly once. */
typedef struct {
  tfq_reader *r;
  tfq_queue *q;
  int64_t count, sum;
} shared_read;

static void *shared_main(void *arg) {
  shared_read *s = arg;
  tfq_tensor *k, *v;
  while (tfq_reader_read_up_to(s->r, s->q, 7, &k, &v, NULL, NULL) == TFQ_OK) {
    for (int64_t i = 0; i < tfq_tensor_num_elements(v); i++) {
      /* not S(): its static buffers are shared by the four threads */
      size_t len;
      const char *p = tfq_tensor_string(v, i, &len);
      char buf[32];
      if (len >= sizeof buf) len = sizeof buf - 1;
      memcpy(buf, p, len);
      buf[len] = 0;
      s->sum += atoi(buf);
    }
    s->count += tfq_tensor_num_elements(v);
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  return NULL;
}

Test(readers, shared_reader_serialises_threads) {
  char *text = malloc(100000);
  size_t n = 0;
  for (int i = 1; i <= 1000; i++) n += (size_t)sprintf(text + n, "%d\n", i);
  const char *f = write_file("shared.txt", text, n);
  free(text);
  const char *fs[4] = {f, f, f, f};
  tfq_queue *q = work_of(fs, 4);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, NULL);
  shared_read s[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    s[i] = (shared_read){r, q, 0, 0};
    cr_assert_eq(pthread_create(&th[i], NULL, shared_main, &s[i]), 0);
  }
  int64_t count = 0, sum = 0;
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(pthread_join(th[i], NULL), 0);
    count += s[i].count;
    sum += s[i].sum;
  }
  cr_assert_eq(count, 4000);
  cr_assert_eq(sum, 4 * 500500);
  cr_assert_eq(tfq_reader_num_records_produced(r), 4000);
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 4);
  tfq_reader_free(r);
  tfq_queue_free(q);
}
