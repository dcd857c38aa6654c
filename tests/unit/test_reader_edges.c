/* Edge cases of src/readers (for coverage, docs/reliability.md): reader_new argument checks,
 * display names, read_up_to's count check, ReaderBaseState parsing as protobuf does it (checked
 * against the wheel: a known field with another wire type is skipped as unknown; fixed32/fixed64
 * fields are skipped; an overlong varint keeps its low 64 bits), the C-escaped debug string of a
 * bad state, WholeFileReader on a file bigger than its buffer, overlong lines, the TFRecord
 * writer's closed state, and the producers' argument checks.  Public headers only. */
#include <stdlib.h>

#include "helpers.h"
#include "readers/readers_internal.h"
#include "readers_util.h"

TestSuite(reader_edges, .init = tmp_setup, .fini = tmp_teardown);

Test(reader_edges, reader_new_rejects_an_unknown_kind_a_zero_line_cap_and_compression) {
  tfq_status *st = tfq_status_new();
  tfq_reader *r = (tfq_reader *)1;
  cr_assert_eq(tfq_reader_new((tfq_reader_kind)99, NULL, &r, st), TFQ_INVALID_ARGUMENT);
  cr_assert_null(r);
  cr_assert_str_eq(tfq_status_message(st), "unknown reader kind 99");
  tfq_reader_options *o = opts();
  tfq_reader_options_set_max_line_bytes(o, 0);
  cr_assert_eq(tfq_reader_new(TFQ_READER_TEXT_LINE, o, &r, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "max_line_bytes must be >= 1");
  /* the line cap matters only to TextLineReader */
  r = new_reader(TFQ_READER_TFRECORD, o);
  tfq_reader_free(r);
  tfq_reader_options_set_max_line_bytes(o, 10);
  tfq_reader_options_set_compression(o, (tfq_compression)7);
  cr_assert_eq(tfq_reader_new(TFQ_READER_TEXT_LINE, o, &r, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "unknown compression 7");
  tfq_reader_options_free(o);
  tfq_status_free(st);
}

Test(reader_edges, reader_name_is_kind_and_node_name) {
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, NULL);
  cr_assert_str_eq(tfq_reader_name(r), "TextLineReader 'TextLineReaderV2'");
  tfq_reader_free(r);
  tfq_reader_options *o = opts();
  OK(tfq_reader_options_set_name(o, "test_reader", NULL));
  r = new_reader(TFQ_READER_WHOLE_FILE, o);
  cr_assert_str_eq(tfq_reader_name(r), "WholeFileReader 'test_reader'");
  tfq_reader_free(r);
  OK(tfq_reader_options_set_name(o, NULL, NULL)); /* back to the default */
  r = new_reader(TFQ_READER_FIXED_LENGTH, o);
  cr_assert_str_eq(tfq_reader_name(r), "FixedLengthRecordReader 'FixedLengthRecordReaderV2'");
  tfq_reader_free(r);
  tfq_reader_options_free(o);
}

Test(reader_edges, read_up_to_rejects_a_negative_count_without_touching_the_queue) {
  tfq_queue *w = string_queue(4);
  enqueue_str(w, "x");
  tfq_reader *r = new_reader(TFQ_READER_IDENTITY, NULL);
  tfq_tensor *k = NULL, *v = NULL;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_reader_read_up_to(r, w, -1, &k, &v, NULL, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "num_records must be >= 0 not -1");
  cr_assert_null(k);
  cr_assert_null(v);
  cr_assert_eq(tfq_queue_size(w), 1);
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_queue_free(w);
}

Test(reader_edges, compression_from_string_knows_exactly_zlib_and_gzip) {
  cr_assert_eq(tfq_compression_from_string("ZLIB"), TFQ_COMPRESSION_ZLIB);
  cr_assert_eq(tfq_compression_from_string("GZIP"), TFQ_COMPRESSION_GZIP);
  cr_assert_eq(tfq_compression_from_string("gzip"), TFQ_COMPRESSION_NONE);
  cr_assert_eq(tfq_compression_from_string(""), TFQ_COMPRESSION_NONE);
  cr_assert_eq(tfq_compression_from_string(NULL), TFQ_COMPRESSION_NONE);
}

/* ---- ReaderBaseState parsing: what the wheel's IdentityReader accepts and rejects ---- */

static tfq_reader *identity(void) {
  tfq_reader_options *o = opts();
  OK(tfq_reader_options_set_name(o, "t", NULL));
  tfq_reader *r = new_reader(TFQ_READER_IDENTITY, o);
  tfq_reader_options_free(o);
  return r;
}

static tfq_code restore(tfq_reader *r, const char *bytes, size_t n, tfq_status *st) {
  return tfq_reader_restore_state(r, bytes, n, st);
}

Test(reader_edges, restore_skips_a_known_field_with_another_wire_type_as_protobuf_does) {
  tfq_reader *r = identity();
  tfq_status *st = tfq_status_new();
  /* field 1 length-delimited (empty), then work_finished = 2 */
  cr_assert_eq(restore(r, "\x0a\x00\x10\x02", 4, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 2);
  /* field 1 as fixed64, field 4 as a varint, then num_records_produced = 3 */
  cr_assert_eq(restore(r, "\x09\x01\x02\x03\x04\x05\x06\x07\x08\x20\x01\x18\x03", 13, st), TFQ_OK,
               "%s", tfq_status_message(st));
  cr_assert_eq(tfq_reader_num_records_produced(r), 3);
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 0);
  tfq_status_free(st);
  tfq_reader_free(r);
}

Test(reader_edges, restore_skips_unknown_fixed_and_length_delimited_fields) {
  tfq_reader *r = identity();
  tfq_status *st = tfq_status_new();
  const char s[] =
      "\x29\1\2\3\4\5\6\7\x08" /* field 5 fixed64 */
      "\x35\1\2\3\4"           /* field 6 fixed32 */
      "\x3a\x02zz"             /* field 7 bytes */
      "\x40\x05"               /* field 8 varint */
      "\x10\x04";              /* work_finished = 4 */
  cr_assert_eq(restore(r, s, sizeof s - 1, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 4);
  tfq_status_free(st);
  tfq_reader_free(r);
}

Test(reader_edges, restore_keeps_the_low_64_bits_of_an_overlong_varint) {
  tfq_reader *r = identity();
  tfq_status *st = tfq_status_new();
  /* ten bytes: nine 0xff then 0x02; bit 64 is dropped, leaving INT64_MAX (as the wheel does) */
  const char s[] = "\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02";
  cr_assert_eq(restore(r, s, sizeof s - 1, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_reader_num_work_units_completed(r), INT64_MAX);
  tfq_status_free(st);
  tfq_reader_free(r);
}

/* Cases checked against the tensorflow-cpu 2.21 wheel (IdentityReader.restore_state). */
Test(reader_edges, restore_skips_groups_up_to_their_matching_end_as_protobuf_does) {
  tfq_reader *r = identity();
  tfq_status *st = tfq_status_new();
  struct {
    const char *bytes;
    size_t n;
    int64_t finished;
  } good[] = {
      {"\x0b\x0c", 2, 0},                 /* empty group, field 1 */
      {"\x0b\x10\x05\x0c\x10\x02", 6, 2}, /* the group's own field 2 is skipped */
      {"\x0b\x13\x14\x0c\x10\x03", 6, 3}, /* nested groups */
      {"\x23\x22\x01"
       "a\x24\x10\x01",
       7, 1},                             /* field 4 inside a group */
      {"\x0b\x8c\x80\x80\x80\x10", 6, 0}, /* 5-byte end tag, bits past 32 dropped */
      {"\xfb\xff\xff\xff\x0f\xfc\xff\xff\xff\x0f", 10, 0}, /* field 2^29-1 */
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    cr_assert_eq(restore(r, good[i].bytes, good[i].n, st), TFQ_OK, "case %zu: %s", i,
                 tfq_status_message(st));
    cr_assert_eq(tfq_reader_num_work_units_completed(r), good[i].finished, "case %zu", i);
  }
  /* 100 nested groups parse, 101 exceed protobuf's recursion limit */
  char deep[202];
  for (int d = 100; d <= 101; d++) {
    memset(deep, 0x0b, (size_t)d);
    memset(deep + d, 0x0c, (size_t)d);
    cr_assert_eq(restore(r, deep, 2 * (size_t)d, st), d == 100 ? TFQ_OK : TFQ_INVALID_ARGUMENT,
                 "depth %d", d);
  }
  const struct {
    const char *bytes;
    size_t n;
  } bad[] = {
      {"\x0b\x14", 2},     /* group ended with another field number */
      {"\x0b\x10\x01", 3}, /* group never ended */
      {"\x0c", 1},         /* end group at the top level */
      {"\x0b\x0e\x0c", 3}, /* wire type 6 inside a group */
      {"\x0b\x04", 2},     /* field 0 inside a group */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq(restore(r, bad[i].bytes, bad[i].n, st), TFQ_INVALID_ARGUMENT, "bad case %zu", i);
  tfq_status_free(st);
  tfq_reader_free(r);
}

Test(reader_edges, restore_reads_tags_of_up_to_five_bytes_keeping_the_low_32_bits) {
  tfq_reader *r = identity();
  tfq_status *st = tfq_status_new();
  cr_assert_eq(restore(r, "\x90\x00\x05", 3, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 5, "2-byte tag of field 2");
  cr_assert_eq(restore(r, "\x90\x80\x80\x80\x70\x06", 6, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_reader_num_work_units_completed(r), 6, "5-byte tag, top bits dropped");
  cr_assert_eq(restore(r, "\x90\x80\x80\x80\x80\x00\x05", 7, st), TFQ_INVALID_ARGUMENT,
               "a 6-byte tag");
  cr_assert_eq(restore(r, "\x80\x80\x80\x80\x10\x00", 6, st), TFQ_INVALID_ARGUMENT,
               "tag 2^32 is field 0 once truncated");
  tfq_status_free(st);
  tfq_reader_free(r);
}

Test(reader_edges, restore_rejects_truncated_and_malformed_states_and_resets) {
  tfq_reader *r = identity();
  tfq_status *st = tfq_status_new();
  OK(restore(r, "\x10\x02", 2, NULL));
  struct {
    const char *bytes;
    size_t n;
    const char *escaped;
  } bad[] = {
      {"\x08", 1, "\\010"},          /* varint cut short */
      {"\x00\x01", 2, "\\000\\001"}, /* field number 0 */
      {"\x22\x05"
       "ab",
       4, "\\\"\\005ab"},             /* bytes longer than the state */
      {"\x35\0\0", 3, "5\\000\\000"}, /* fixed32 cut short */
      {"\x29\0", 2, ")\\000"},        /* fixed64 cut short */
      {"\x0f", 1, "\\017"},           /* wire type 7 */
      {"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12, NULL}, /* 11-byte varint */
      {"\x22\x80", 2, "\\\"\\200"},                                   /* length cut short */
  };
  char want[256];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_assert_eq(restore(r, bad[i].bytes, bad[i].n, st), TFQ_INVALID_ARGUMENT, "case %zu", i);
    if (bad[i].escaped) {
      snprintf(want, sizeof want, "Could not parse state for IdentityReader 't': %s",
               bad[i].escaped);
      cr_assert_str_eq(tfq_status_message(st), want, "case %zu", i);
    }
    cr_assert_eq(tfq_reader_num_work_units_completed(r), 0, "a failed restore resets");
    OK(restore(r, "\x10\x02", 2, NULL));
  }
  tfq_status_free(st);
  tfq_reader_free(r);
}

Test(reader_edges, restore_error_debug_string_c_escapes_the_current_work) {
  tfq_reader *r = identity();
  tfq_status *st = tfq_status_new();
  /* work_started 2 > work_finished 1, current_work = "a\n\r\t\"'\\\x01\x7f" */
  const char s[] =
      "\x08\x02\x10\x01\x22\x0a"
      "a\n\r\t\"'\\\x01\x7f"
      "z";
  cr_assert_eq(restore(r, s, sizeof s - 1, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Inconsistent work started vs. finished when restoring in IdentityReader 't': "
                   "goo.gle/debugproto  \nwork_started: 2\nwork_finished: 1\n"
                   "current_work: \"a\\n\\r\\t\\\"\\'\\\\\\001\\177z\"\n");
  tfq_status_free(st);
  tfq_reader_free(r);
}

Test(reader_edges, serialize_state_round_trips_the_current_work) {
  tfq_queue *w = string_queue(4);
  enqueue_str(w, "work\none");
  tfq_reader *r = identity();
  tfq_tensor *k, *v;
  OK(tfq_reader_read(r, w, &k, &v, NULL, NULL));
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  char *s;
  size_t n;
  OK(tfq_reader_serialize_state(r, &s, &n, NULL));
  /* 08 01 10 01 18 01 22 08 "work\none" (TF's bytes for the same reads) */
  cr_assert_eq(n, 16);
  cr_assert_eq(memcmp(s, "\x08\x01\x10\x01\x18\x01\x22\x08work\none", 16), 0);
  tfq_reader *r2 = identity();
  OK(tfq_reader_restore_state(r2, s, n, NULL));
  cr_assert_eq(tfq_reader_num_records_produced(r2), 1);
  cr_assert_eq(tfq_reader_num_work_units_completed(r2), 1);
  tfq_free(s);
  tfq_reader_free(r2);
  tfq_reader_free(r);
  tfq_queue_free(w);
}

/* ---- WholeFile and TextLine sizes ---- */

Test(reader_edges, whole_file_reader_returns_a_file_many_times_its_buffer) {
  size_t n = 10000;
  char *data = malloc(n);
  for (size_t i = 0; i < n; i++) data[i] = (char)('a' + i % 26);
  const char *p = write_file("big.bin", data, n);
  tfq_queue *w = work_of(&p, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_buffer_bytes(o, 64);
  tfq_reader *r = new_reader(TFQ_READER_WHOLE_FILE, o);
  tfq_tensor *k, *v;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_reader_read(r, w, &k, &v, NULL, st), TFQ_OK, "%s", tfq_status_message(st));
  size_t len;
  const char *got = tfq_tensor_string(v, 0, &len);
  cr_assert_eq(len, n);
  cr_assert_eq(memcmp(got, data, n), 0);
  cr_assert_str_eq(S(k, 0), p);
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  cr_assert_eq(tfq_reader_read(r, w, &k, &v, NULL, st), TFQ_OUT_OF_RANGE);
  free(data);
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(w);
}

Test(reader_edges, text_line_longer_than_max_line_bytes_is_resource_exhausted_naming_the_line) {
  const char *text = "short\nthis line is too long\nok\n";
  const char *p = write_file("long.txt", text, strlen(text));
  tfq_queue *w = work_of(&p, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_max_line_bytes(o, 8);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_tensor *k, *v;
  tfq_status *st = tfq_status_new();
  OK(tfq_reader_read(r, w, &k, &v, NULL, st));
  cr_assert_str_eq(S(v, 0), "short");
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  cr_assert_eq(tfq_reader_read(r, w, &k, &v, NULL, st), TFQ_RESOURCE_EXHAUSTED);
  char want[600];
  snprintf(want, sizeof want, "line 2 of %s is longer than max_line_bytes (8)", p);
  cr_assert(strstr(tfq_status_message(st), want), "%s", tfq_status_message(st));
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(w);
}

Test(reader_edges, text_line_read_up_to_longer_than_max_line_bytes_keeps_the_earlier_lines) {
  const char *text = "a\nb\nthis line is too long\n";
  const char *p = write_file("long2.txt", text, strlen(text));
  tfq_queue *w = work_of(&p, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_max_line_bytes(o, 4);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_tensor *k, *v;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_reader_read_up_to(r, w, 10, &k, &v, NULL, st), TFQ_OK, "%s",
               tfq_status_message(st));
  cr_assert_eq(tfq_tensor_dim(v, 0), 2);
  cr_assert_str_eq(S(v, 1), "b");
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  /* the kept error comes next */
  cr_assert_eq(tfq_reader_read_up_to(r, w, 10, &k, &v, NULL, st), TFQ_RESOURCE_EXHAUSTED);
  cr_assert(strstr(tfq_status_message(st), "line 3 of"), "%s", tfq_status_message(st));
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(w);
}

/* ---- TFRecord writer ---- */

Test(reader_edges, tfrecord_writer_rejects_an_unknown_compression) {
  tfq_tfrecord_writer *w = (tfq_tfrecord_writer *)1;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_tfrecord_writer_new(path_of("x.tfrecord"), (tfq_compression)9, &w, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "unknown compression 9");
  tfq_status_free(st);
}

Test(reader_edges, tfrecord_writer_after_close_fails_with_failed_precondition) {
  tfq_tfrecord_writer *w;
  const char *p = path_of("c.tfrecord");
  OK(tfq_tfrecord_writer_new(p, TFQ_COMPRESSION_GZIP, &w, NULL));
  OK(tfq_tfrecord_writer_write(w, "abc", 3, NULL));
  OK(tfq_tfrecord_writer_flush(w, NULL));
  OK(tfq_tfrecord_writer_close(w, NULL));
  OK(tfq_tfrecord_writer_close(w, NULL)); /* idempotent */
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_tfrecord_writer_write(w, "d", 1, st), TFQ_FAILED_PRECONDITION);
  cr_assert_str_eq(tfq_status_message(st), "TFRecord writer is closed");
  cr_assert_eq(tfq_tfrecord_writer_flush(w, st), TFQ_FAILED_PRECONDITION);
  tfq_tfrecord_writer_free(w);
  tfq_tfrecord_writer_free(NULL);
  /* what was written before the close reads back */
  tfq_queue *q = work_of(&p, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_compression(o, TFQ_COMPRESSION_GZIP);
  tfq_reader *r = new_reader(TFQ_READER_TFRECORD, o);
  tfq_tensor *k, *v;
  OK(tfq_reader_read(r, q, &k, &v, NULL, st));
  cr_assert_str_eq(S(v, 0), "abc");
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  cr_assert_eq(tfq_reader_read(r, q, &k, &v, NULL, st), TFQ_OUT_OF_RANGE);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
  tfq_status_free(st);
}

/* ---- producers: argument checks against the queue ---- */

static tfq_queue *queue_of(tfq_dtype dt, int rank, const int64_t *dims, size_t ncomp) {
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  for (size_t i = 0; i < ncomp; i++) OK(tfq_spec_add(s, dt, dims, rank, NULL, NULL));
  tfq_queue *q = fifo(s, 100);
  tfq_spec_free(s);
  return q;
}

static tfq_code producer_for(tfq_queue *q, tfq_tuple *rows, tfq_status *st) {
  tfq_producer *p = NULL;
  tfq_code c = tfq_producer_new(q, rows, NULL, &p, st);
  tfq_producer_free(p);
  return c;
}

Test(reader_edges, producer_new_checks_rows_against_the_queue) {
  tfq_status *st = tfq_status_new();
  int64_t three = 3, two = 2;
  float v3[3] = {1, 2, 3};
  tfq_queue *q1 = queue_of(TFQ_FLOAT, 0, NULL, 1), *q2 = queue_of(TFQ_FLOAT, 0, NULL, 2);

  tfq_tuple *rows = tup(1, f32_vec(3, v3), NULL);
  cr_assert_eq(producer_for(q2, rows, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "the queue has 2 components but the input has 1");
  OK(producer_for(q1, rows, st));
  tfq_tuple_free(rows);

  rows = tup(1, f32_scalar(1), NULL);
  cr_assert_eq(producer_for(q1, rows, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Shape () must have rank at least 1");
  tfq_tuple_free(rows);

  int32_t i3[3] = {1, 2, 3};
  rows = tup(1, i32_vec(3, i3), NULL);
  cr_assert_eq(producer_for(q1, rows, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Type mismatch in component 0. Expected float, got int32");
  tfq_tuple_free(rows);

  rows = tup(2, f32_vec(3, v3), f32_vec(2, v3));
  cr_assert_eq(producer_for(q2, rows, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "all input tensors must have the same dimension 0: "
                   "component 1 has 2, expected 3");
  tfq_tuple_free(rows);

  int64_t d32[2] = {3, 2};
  rows = tup(1, tensor(TFQ_FLOAT, 2, d32), NULL); /* rows of shape [2], queue wants [] */
  cr_assert_eq(producer_for(q1, rows, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shape mismatch in component 0 between the input rows and the queue");
  tfq_tuple_free(rows);

  tfq_queue *q3 = queue_of(TFQ_FLOAT, 1, &three, 1); /* [3] elements, rows [3, 2]: dims differ */
  rows = tup(1, tensor(TFQ_FLOAT, 2, d32), NULL);
  cr_assert_eq(producer_for(q3, rows, st), TFQ_INVALID_ARGUMENT);
  tfq_tuple_free(rows);
  tfq_queue *q4 = queue_of(TFQ_FLOAT, 1, &two, 1); /* [2] elements: matches */
  rows = tup(1, tensor(TFQ_FLOAT, 2, d32), NULL);
  OK(producer_for(q4, rows, st));
  tfq_tuple_free(rows);

  tfq_queue_free(q1);
  tfq_queue_free(q2);
  tfq_queue_free(q3);
  tfq_queue_free(q4);
  tfq_status_free(st);
}

Test(reader_edges, string_and_range_producers_reject_bad_inputs) {
  tfq_queue *q = (tfq_queue *)1;
  tfq_producer_thread *th = (tfq_producer_thread *)1;
  tfq_status *st = tfq_status_new();
  float v[2] = {1, 2};
  tfq_tensor *f = f32_vec(2, v);
  cr_assert_eq(tfq_string_input_producer(f, NULL, &q, &th, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "string_input_producer expects a 1-D string tensor");
  cr_assert_null(q);
  cr_assert_null(th);
  tfq_tensor_free(f);
  cr_assert_eq(tfq_range_input_producer(-1, NULL, &q, &th, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "limit must be >= 0 not -1");
  tfq_tuple *rows = tup(1, f32_scalar(1), NULL);
  cr_assert_eq(tfq_input_producer(rows, NULL, &q, &th, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Shape () must have rank at least 1");
  cr_assert_null(q);
  tfq_tuple_free(rows);
  tfq_status_free(st);
}

Test(reader_edges, slice_input_producer_slices_string_rows_in_order) {
  int64_t d[2] = {3, 2};
  tfq_tensor *t = tensor(TFQ_STRING, 2, d);
  const char *s[6] = {"a0", "a1", "b0", "b1", "c0", "c1"};
  for (int i = 0; i < 6; i++) OK(tfq_tensor_set_string(t, i, s[i], 2, NULL));
  tfq_tuple *rows = tup(1, t, NULL);
  tfq_producer_options *o;
  OK(tfq_producer_options_new(&o, NULL));
  tfq_producer_options_set_num_epochs(o, 1);
  tfq_producer_options_set_shuffle(o, 0);
  tfq_queue *q;
  tfq_producer_thread *th;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_slice_input_producer(rows, o, &q, &th, st), TFQ_OK, "%s",
               tfq_status_message(st));
  for (int r = 0; r < 3; r++) {
    tfq_tuple *e;
    OK(tfq_queue_dequeue(q, &e, NULL, NOTIMEOUT, NULL));
    const tfq_tensor *x = tfq_tuple_get(e, 0);
    cr_assert_eq(tfq_tensor_rank(x), 1);
    for (int j = 0; j < 2; j++) {
      size_t n;
      const char *p = tfq_tensor_string(x, j, &n);
      cr_assert(n == 2 && memcmp(p, s[r * 2 + j], 2) == 0, "row %d col %d", r, j);
    }
    tfq_tuple_free(e);
  }
  tfq_tuple *e = NULL;
  cr_assert_eq(tfq_queue_dequeue(q, &e, NULL, NOTIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  OK(tfq_producer_thread_join(th, st));
  tfq_queue_free(q);
  tfq_producer_options_free(o);
  tfq_tuple_free(rows);
  tfq_status_free(st);
}

Test(reader_edges, a_buffer_below_64_bytes_is_raised_and_reading_works) {
  const char *text = "one\ntwo\nthree\n";
  const char *p = write_file("tiny.txt", text, strlen(text));
  tfq_queue *w = work_of(&p, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_buffer_bytes(o, 1);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_tensor *k, *v;
  OK(tfq_reader_read_up_to(r, w, 10, &k, &v, NULL, NULL));
  cr_assert_eq(tfq_tensor_dim(v, 0), 3);
  cr_assert_str_eq(S(v, 2), "three");
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(w);
}

Test(reader_edges, tfrecord_length_beyond_2_to_the_62_is_data_loss_not_an_allocation) {
  unsigned char rec[12];
  uint64_t n = (uint64_t)1 << 63;
  for (int i = 0; i < 8; i++) rec[i] = (unsigned char)(n >> (8 * i));
  uint32_t crc = tfq_crc32c_mask(tfq_crc32c_extend(0, rec, 8));
  for (int i = 0; i < 4; i++) rec[8 + i] = (unsigned char)(crc >> (8 * i));
  const char *p = write_file("huge.tfrecord", rec, sizeof rec);
  tfq_queue *w = work_of(&p, 1);
  tfq_reader *r = new_reader(TFQ_READER_TFRECORD, NULL);
  tfq_tensor *k, *v;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_reader_read(r, w, &k, &v, NULL, st), TFQ_DATA_LOSS);
  cr_assert(strstr(tfq_status_message(st), "record size too large"), "%s", tfq_status_message(st));
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_queue_free(w);
}

Test(reader_edges, a_path_through_a_regular_file_is_failed_precondition) {
  const char *f = write_file("plain", "x", 1);
  char p[600];
  snprintf(p, sizeof p, "%s/child.txt", f);
  const char *pp = p;
  tfq_queue *w = work_of(&pp, 1);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, NULL);
  tfq_tensor *k, *v;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_reader_read(r, w, &k, &v, NULL, st),
               TFQ_FAILED_PRECONDITION); /* ENOTDIR, as TF's ErrnoToCode */
  cr_assert(strstr(tfq_status_message(st), p), "%s", tfq_status_message(st));
  cr_assert_eq(tfq_reader_read(r, w, &k, &v, NULL, st), TFQ_OUT_OF_RANGE);
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_queue_free(w);
}

static void *plain_close_main(void *arg) {
  OK(tfq_queue_close(arg, 0, NULL, NOTIMEOUT, NULL));
  return NULL;
}

Test(reader_edges, producer_reports_cancelled_when_its_queue_is_closed_under_it) {
  tfq_producer_options *o;
  OK(tfq_producer_options_new(&o, NULL));
  tfq_producer_options_set_capacity(o, 2);
  tfq_queue *q;
  tfq_producer_thread *th;
  tfq_status *st = tfq_status_new();
  OK(tfq_range_input_producer(3, o, &q, &th, st));
  tfq_tuple *e;
  OK(tfq_queue_dequeue(q, &e, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(e);
  OK(tfq_queue_close(q, 1, NULL, NOTIMEOUT, NULL));
  /* unlimited epochs: the run ends with the enqueue's CANCELLED (queue.h: join reports it) */
  cr_assert_eq(tfq_producer_thread_join(th, st), TFQ_CANCELLED);
  /* a pending enqueue is cancelled by the close; a later one finds the queue closed */
  cr_assert(strstr(tfq_status_message(st), "is closed.") ||
                strstr(tfq_status_message(st), "Enqueue operation was cancelled"),
            "%s", tfq_status_message(st));
  cr_assert_eq(tfq_producer_thread_join(NULL, st), TFQ_OK);
  tfq_queue_free(q);
  tfq_producer_options_free(o);
  tfq_status_free(st);
}

Test(reader_edges, producer_of_one_epoch_accepts_a_queue_closed_behind_its_last_enqueue) {
  tfq_producer_options *o;
  OK(tfq_producer_options_new(&o, NULL));
  tfq_producer_options_set_capacity(o, 2);
  tfq_producer_options_set_num_epochs(o, 1);
  tfq_producer_options_set_shuffle(o, 0);
  tfq_queue *q;
  tfq_producer_thread *th;
  tfq_status *st = tfq_status_new();
  OK(tfq_range_input_producer(3, o, &q, &th, st));
  tfq_tuple *e = NULL;
  for (int i = 0; i < 5000 && tfq_queue_size(q) < 2; i++) sleep_ms(1);
  /* a consumer's plain close waits behind the producer's pending enqueue_many */
  pthread_t closer;
  cr_assert_eq(pthread_create(&closer, NULL, plain_close_main, q), 0);
  sleep_ms(20);
  for (int i = 0; i < 3; i++) {
    OK(tfq_queue_dequeue(q, &e, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(*(const int32_t *)tfq_tensor_cdata(tfq_tuple_get(e, 0)), i);
    tfq_tuple_free(e);
  }
  pthread_join(closer, NULL);
  /* whichever close came second found the queue closed: not an error for the producer */
  cr_assert_eq(tfq_producer_thread_join(th, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_queue_dequeue(q, &e, NULL, NOTIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  tfq_queue_free(q);
  tfq_producer_options_free(o);
  tfq_status_free(st);
}

/* Bytes a reference to the stream's buffer holder keeps (string views of a decode step point
 * into them) are never written over: a refill after they are consumed, the compaction of what is
 * left and the growth for a long record all move on to a new buffer, while a buffer nobody else
 * holds is reused in place.  Plain and gzip streams. */
static void held_bytes_stay(int gz) {
  char text[4096];
  for (size_t i = 0; i < sizeof text; i++) text[i] = (char)('a' + (i * 7) % 26);
  const char *p = gz ? write_compressed("held.gz", text, sizeof text, 1)
                     : write_file("held.txt", text, sizeof text);
  tfq__instream *in;
  OK(tfq__instream_open(p, gz ? TFQ_COMPRESSION_GZIP : TFQ_COMPRESSION_NONE, 256, 0, 0, &in, NULL));
  const char *b;
  size_t avail;
  OK(tfq__instream_ensure(in, 200, &b, &avail, NULL));
  tfq_tensor *held = tfq_tensor_ref(tfq__instream_holder(in));
  const char *kept = b; /* the first 200 bytes, consumed below */
  tfq__instream_consume(in, 200);
  OK(tfq__instream_ensure(in, 200, &b, &avail, NULL)); /* compacts: a new buffer */
  cr_assert_neq(tfq__instream_holder(in), held, "a held buffer is not compacted in place");
  cr_assert(memcmp(b, text + 200, 200) == 0);
  tfq__instream_consume(in, avail); /* all of it: nothing held, the next refill reuses it */
  tfq_tensor *now = tfq__instream_holder(in);
  OK(tfq__instream_ensure(in, 100, &b, &avail, NULL));
  cr_assert_eq(tfq__instream_holder(in), now, "a buffer nobody holds is refilled in place");
  tfq_tensor *held2 = tfq_tensor_ref(now);
  const char *kept2 = b;
  uint64_t at = tfq__instream_pos(in);
  tfq__instream_consume(in, 50);
  OK(tfq__instream_ensure(in, 1000, &b, &avail, NULL)); /* grows past 256 bytes */
  cr_assert(avail >= 1000);
  cr_assert(memcmp(b, text + at + 50, 1000) == 0);
  cr_assert(memcmp(kept, text, 200) == 0, "the first held bytes are intact");
  cr_assert(memcmp(kept2, text + at, 50) == 0, "the second held bytes are intact");
  tfq_tensor_free(held);
  tfq_tensor_free(held2);
  tfq__instream_close(in);
}

Test(reader_edges, bytes_a_holder_keeps_survive_refills_compaction_and_growth) {
  held_bytes_stay(0);
}

Test(reader_edges, bytes_a_holder_keeps_survive_refills_of_a_gzip_stream) { held_bytes_stay(1); }
