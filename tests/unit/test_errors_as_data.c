/* Errors as data (status.h: file, offset, line, record, reason), TFQ_COMPRESSION_AUTO, reader
 * keys, the generalised read-decode op (raw records, keys, record count) and
 * tfq_string_input_producer_start. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "readers_util.h"

TestSuite(errors_as_data, .init = tmp_setup, .fini = tmp_teardown);

static tfq_csv_options *csv3(void) { /* float, float, int32 */
  tfq_csv_options *c;
  OK(tfq_csv_options_new(&c, NULL));
  OK(tfq_csv_options_add_default_float(c, -1.f, NULL));
  OK(tfq_csv_options_add_default_float(c, -1.f, NULL));
  OK(tfq_csv_options_add_default_int32(c, -1, NULL));
  return c;
}

/* ---- status ---- */

Test(errors_as_data, a_new_status_and_every_set_has_no_location) {
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(tfq_status_file(st), "");
  cr_assert_eq(tfq_status_offset(st), -1);
  cr_assert_eq(tfq_status_line(st), -1);
  cr_assert_eq(tfq_status_record(st), -1);
  tfq_status_set(st, TFQ_DATA_LOSS, "bad");
  tfq_status_set_location(st, "f.csv", 5, 10, 3);
  cr_assert_str_eq(tfq_status_file(st), "f.csv");
  cr_assert_eq(tfq_status_offset(st), 10);
  cr_assert_eq(tfq_status_line(st), 3);
  cr_assert_str_eq(tfq_status_reason(st), "bad");
  tfq_status_set(st, TFQ_INVALID_ARGUMENT, "other");
  cr_assert_str_eq(tfq_status_file(st), "", "a set must clear the old location");
  cr_assert_eq(tfq_status_line(st), -1);
  tfq_status_clear(st);
  cr_assert_eq(tfq_status_offset(st), -1);
  cr_assert_str_eq(tfq_status_file(NULL), "");
  cr_assert_eq(tfq_status_record(NULL), -1);
  tfq_status_free(st);
}

Test(errors_as_data, decode_csv_reports_the_failing_record_index) {
  tfq_csv_options *c = csv3();
  const char *lines[4] = {"1,2,3", "4,5,6", "7,x,9", "1,1,1"};
  size_t lens[4] = {5, 5, 5, 5};
  tfq_tuple *t = NULL;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_decode_csv_lines(c, lines, lens, 4, &t, st), TFQ_INVALID_ARGUMENT);
  cr_assert_eq(tfq_status_record(st), 2);
  cr_assert_str_eq(tfq_status_message(st), "Field 1 in record 2 is not a valid float: x");
  const char *short_lines[2] = {"1,2,3", "4,5"};
  size_t short_lens[2] = {5, 3};
  cr_assert_eq(tfq_decode_csv_lines(c, short_lines, short_lens, 2, &t, st), TFQ_INVALID_ARGUMENT);
  cr_assert_eq(tfq_status_record(st), 1, "field count errors name their record too");
  cr_assert_eq(tfq_decode_csv_lines(c, lines, lens, 2, &t, st), TFQ_OK);
  cr_assert_eq(tfq_status_record(st), -1);
  tfq_tuple_free(t);
  tfq_status_free(st);
  tfq_csv_options_free(c);
}

/* ---- readers ---- */

Test(errors_as_data, a_corrupt_tfrecord_read_reports_file_and_offset) {
  const char *p = path_of("c.tfrecord");
  tfq_tfrecord_writer *w;
  OK(tfq_tfrecord_writer_new(p, TFQ_COMPRESSION_NONE, &w, NULL));
  OK(tfq_tfrecord_writer_write(w, "abcd", 4, NULL));
  OK(tfq_tfrecord_writer_write(w, "efgh", 4, NULL));
  OK(tfq_tfrecord_writer_close(w, NULL));
  tfq_tfrecord_writer_free(w);
  size_t n;
  char *b = read_all(p, &n);
  b[20 + 13] ^= 0x20; /* the second record's payload: its data CRC fails */
  write_file("c.tfrecord", b, n);
  free(b);
  tfq_queue *q = work_of(&p, 1);
  tfq_reader *r = new_reader(TFQ_READER_TFRECORD, NULL);
  tfq_tensor *k = NULL, *v = NULL;
  tfq_status *st = tfq_status_new();
  OK(tfq_reader_read_up_to(r, q, 1, &k, &v, NULL, st));
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  cr_assert_eq(tfq_reader_read_up_to(r, q, 1, &k, &v, NULL, st), TFQ_DATA_LOSS);
  cr_assert_str_eq(tfq_status_file(st), p);
  cr_assert_eq(tfq_status_offset(st), 20, "offset %lld", (long long)tfq_status_offset(st));
  cr_assert_eq(tfq_status_line(st), -1);
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_queue_free(q);
}

Test(errors_as_data, a_line_too_long_reports_its_line_and_a_later_read_up_to_keeps_it) {
  const char text[] = "h\nok\nthis line is too long\n";
  const char *p = write_file("long.txt", text, sizeof text - 1);
  tfq_queue *q = work_of(&p, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_skip_header_lines(o, 1);
  tfq_reader_options_set_max_line_bytes(o, 8);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_reader_options_free(o);
  tfq_tensor *k = NULL, *v = NULL;
  tfq_status *st = tfq_status_new();
  /* read_up_to(4) returns "ok" and hands the error to the next call, with its location */
  OK(tfq_reader_read_up_to(r, q, 4, &k, &v, NULL, st));
  cr_assert_eq(tfq_tensor_num_elements(v), 1);
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  cr_assert_eq(tfq_reader_read_up_to(r, q, 4, &k, &v, NULL, st), TFQ_RESOURCE_EXHAUSTED);
  cr_assert_str_eq(tfq_status_file(st), p);
  cr_assert_eq(tfq_status_line(st), 3);
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_queue_free(q);
}

Test(errors_as_data, key_split_takes_the_number_after_the_last_colon) {
  size_t fl;
  int64_t n;
  cr_assert(tfq_reader_key_split("a:b.csv:17", 10, &fl, &n));
  cr_assert_eq(fl, 7);
  cr_assert_eq(n, 17);
  cr_assert(!tfq_reader_key_split("file.bin", 8, &fl, &n), "no number");
  cr_assert(!tfq_reader_key_split("file:", 5, &fl, &n), "no digits");
  cr_assert(!tfq_reader_key_split(":5", 2, &fl, &n), "no file");
  cr_assert(!tfq_reader_key_split("f:12x", 5, &fl, &n));
}

/* ---- TFQ_COMPRESSION_AUTO ---- */

Test(errors_as_data, detect_compression_follows_magic_then_name_then_content) {
  const unsigned char gz[2] = {0x1F, 0x8B}, zl[2] = {0x78, 0x9C}, txt[2] = {'a', ','};
  cr_assert_eq(tfq_compression_detect(gz, 2, "x.csv", 0), TFQ_COMPRESSION_GZIP);
  cr_assert_eq(tfq_compression_detect(txt, 2, "x.csv.gz", 0), TFQ_COMPRESSION_GZIP);
  cr_assert_eq(tfq_compression_detect(txt, 2, "x.zz", 0), TFQ_COMPRESSION_ZLIB);
  cr_assert_eq(tfq_compression_detect(txt, 2, "x.zlib", 0), TFQ_COMPRESSION_ZLIB);
  cr_assert_eq(tfq_compression_detect(zl, 2, NULL, 0), TFQ_COMPRESSION_ZLIB);
  cr_assert_eq(tfq_compression_detect(txt, 2, NULL, 0), TFQ_COMPRESSION_NONE);
  cr_assert_eq(tfq_compression_detect(txt, 0, "", 0), TFQ_COMPRESSION_NONE);
}

Test(errors_as_data, an_auto_reader_reads_plain_gzip_and_zlib_files_in_one_queue) {
  const char text[] = "l1\nl2\n";
  const char *names[3];
  names[0] = write_file("plain", text, sizeof text - 1);
  names[1] = write_compressed("gz_without_ext", text, sizeof text - 1, 1);
  names[2] = write_compressed("zlib_without_ext", text, sizeof text - 1, 0);
  tfq_queue *q = work_of(names, 3);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_compression(o, TFQ_COMPRESSION_AUTO);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_reader_options_free(o);
  for (int f = 0; f < 3; f++) {
    tfq_tensor *k, *v;
    OK(tfq_reader_read_up_to(r, q, 10, &k, &v, NULL, NULL));
    cr_assert_eq(tfq_tensor_num_elements(v), 2, "file %d", f);
    cr_assert_str_eq(S(v, 0), "l1");
    cr_assert_str_eq(S(v, 1), "l2");
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  tfq_reader_free(r);
  tfq_queue_free(q);
}

Test(errors_as_data, an_auto_tfrecord_reader_tells_plain_records_from_zlib) {
  const char *names[2] = {path_of("plain.tfrecord"), path_of("z.tfrecord")};
  for (int f = 0; f < 2; f++) {
    tfq_tfrecord_writer *w;
    OK(tfq_tfrecord_writer_new(names[f], f ? TFQ_COMPRESSION_ZLIB : TFQ_COMPRESSION_NONE, &w,
                               NULL));
    OK(tfq_tfrecord_writer_write(w, "payload", 7, NULL));
    OK(tfq_tfrecord_writer_close(w, NULL));
    tfq_tfrecord_writer_free(w);
  }
  tfq_queue *q = work_of(names, 2);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_compression(o, TFQ_COMPRESSION_AUTO);
  tfq_reader *r = new_reader(TFQ_READER_TFRECORD, o);
  tfq_reader_options_free(o);
  for (int f = 0; f < 2; f++) {
    tfq_tensor *k, *v;
    OK(tfq_reader_read(r, q, &k, &v, NULL, NULL));
    cr_assert_str_eq(S(v, 0), "payload", "file %d", f);
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  tfq_tfrecord_writer *w;
  cr_assert_eq(tfq_tfrecord_writer_new(path_of("w"), TFQ_COMPRESSION_AUTO, &w, NULL),
               TFQ_INVALID_ARGUMENT, "the writer has no AUTO");
  tfq_reader_free(r);
  tfq_queue_free(q);
}

/* ---- the read-decode op ---- */

typedef struct {
  tfq_queue *work, *target;
  tfq_reader *reader;
  tfq_csv_options *csv;
  tfq_read_decode_op *op;
} rd;

static tfq_queue *queue_of(size_t n, const tfq_dtype *dts) {
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  for (size_t i = 0; i < n; i++) OK(tfq_spec_add(s, dts[i], NULL, 0, NULL, NULL));
  tfq_queue *q;
  OK(tfq_fifo_queue_new(s, 100, "target", &q, NULL));
  tfq_spec_free(s);
  return q;
}

static void rd_free(rd *f) {
  tfq_read_decode_op_free(f->op);
  tfq_reader_free(f->reader);
  tfq_csv_options_free(f->csv);
  tfq_queue_free(f->work);
  tfq_queue_free(f->target);
}

Test(errors_as_data, the_op_keeps_good_records_and_says_file_line_and_record_of_the_bad_one) {
  const char text[] = "x1,x2,y\n1,2,3\n4,5,6\n7,8,9\n1,abc,2\n5,5,5\n";
  const char *p = write_file("bad.csv", text, sizeof text - 1);
  rd f = {0};
  f.work = work_of(&p, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_skip_header_lines(o, 1);
  f.reader = new_reader(TFQ_READER_TEXT_LINE, o);
  tfq_reader_options_free(o);
  f.csv = csv3();
  tfq_dtype dts[3] = {TFQ_FLOAT, TFQ_FLOAT, TFQ_INT32};
  f.target = queue_of(3, dts);
  OK(tfq_read_decode_op_new(f.reader, f.work, f.csv, 16, f.target, &f.op, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_INVALID_ARGUMENT);
  char want[600];
  snprintf(want, sizeof want, "%s:5: Field 1 in record 0 is not a valid float: abc", p);
  cr_assert_str_eq(tfq_status_message(st), want);
  cr_assert_str_eq(tfq_status_reason(st), "Field 1 in record 0 is not a valid float: abc");
  cr_assert_str_eq(tfq_status_file(st), p);
  cr_assert_eq(tfq_status_line(st), 5);
  cr_assert_eq(tfq_status_record(st), 3, "index of the bad record in the batch read");
  cr_assert_eq(tfq_queue_size(f.target), 3, "the three good records are delivered");
  cr_assert_eq(tfq_read_decode_op_records(f.op), 3);
  tfq_status_free(st);
  rd_free(&f);
}

Test(errors_as_data, the_op_with_no_status_still_delivers_the_good_records) {
  const char text[] = "1,2,3\n1,abc,2\n";
  const char *p = write_file("bad2.csv", text, sizeof text - 1);
  rd f = {0};
  f.work = work_of(&p, 1);
  f.reader = new_reader(TFQ_READER_TEXT_LINE, NULL);
  f.csv = csv3();
  tfq_dtype dts[3] = {TFQ_FLOAT, TFQ_FLOAT, TFQ_INT32};
  f.target = queue_of(3, dts);
  OK(tfq_read_decode_op_new(f.reader, f.work, f.csv, 16, f.target, &f.op, NULL));
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, NULL), TFQ_INVALID_ARGUMENT);
  cr_assert_eq(tfq_queue_size(f.target), 1);
  rd_free(&f);
}

Test(errors_as_data, the_op_without_csv_enqueues_records_and_keys) {
  const char text[] = "alpha\nbeta\n";
  const char *p = write_file("t.txt", text, sizeof text - 1);
  rd f = {0};
  f.work = work_of(&p, 1);
  f.reader = new_reader(TFQ_READER_TEXT_LINE, NULL);
  tfq_dtype dts[2] = {TFQ_STRING, TFQ_STRING};
  f.target = queue_of(2, dts);
  OK(tfq_read_decode_op_new(f.reader, f.work, NULL, 16, f.target, &f.op, NULL));
  tfq_read_decode_op_set_keys(f.op, 1);
  OK(tfq_read_decode_step(f.op, NULL, NULL));
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, NULL), TFQ_OUT_OF_RANGE);
  tfq_tuple *b;
  OK(tfq_queue_dequeue_many(f.target, 2, &b, NULL, NOTIMEOUT, NULL));
  cr_assert_str_eq(S(tfq_tuple_get(b, 0), 1), "beta");
  char key[600];
  snprintf(key, sizeof key, "%s:2", p);
  cr_assert_str_eq(S(tfq_tuple_get(b, 1), 1), key);
  cr_assert_eq(tfq_read_decode_op_records(f.op), 2);
  tfq_tuple_free(b);
  rd_free(&f);
}

Test(errors_as_data, a_reader_error_through_the_op_names_file_and_offset) {
  const char *p = path_of("cut.tfrecord");
  tfq_tfrecord_writer *w;
  OK(tfq_tfrecord_writer_new(p, TFQ_COMPRESSION_NONE, &w, NULL));
  OK(tfq_tfrecord_writer_write(w, "abcd", 4, NULL));
  OK(tfq_tfrecord_writer_close(w, NULL));
  tfq_tfrecord_writer_free(w);
  size_t n;
  char *b = read_all(p, &n);
  b[9] ^= 0x01; /* the length CRC */
  write_file("cut.tfrecord", b, n);
  free(b);
  rd f = {0};
  f.work = work_of(&p, 1);
  f.reader = new_reader(TFQ_READER_TFRECORD, NULL);
  tfq_dtype dts[1] = {TFQ_STRING};
  f.target = queue_of(1, dts);
  OK(tfq_read_decode_op_new(f.reader, f.work, NULL, 4, f.target, &f.op, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_DATA_LOSS);
  char want[700];
  snprintf(want, sizeof want, "%s at byte offset 0: %s", p, tfq_status_reason(st));
  cr_assert_str_eq(tfq_status_message(st), want);
  cr_assert(contains(tfq_status_reason(st), "corrupted record at 0"), "%s", tfq_status_reason(st));
  cr_assert_eq(tfq_status_offset(st), 0);
  tfq_status_free(st);
  rd_free(&f);
}

/* ---- tfq_string_input_producer_start ---- */

Test(errors_as_data, string_input_producer_start_runs_epochs_under_the_coordinator) {
  int64_t three = 3;
  tfq_tensor *names;
  OK(tfq_tensor_new(TFQ_STRING, &three, 1, &names, NULL));
  const char *v[3] = {"a", "b", "c"};
  for (int i = 0; i < 3; i++) OK(tfq_tensor_set_string(names, i, v[i], 1, NULL));
  tfq_producer_options *po;
  OK(tfq_producer_options_new(&po, NULL));
  tfq_producer_options_set_num_epochs(po, 2);
  tfq_producer_options_set_shuffle(po, 0);
  tfq_coord *coord;
  OK(tfq_coord_new(&coord, NULL));
  tfq_queue *q;
  tfq_producer_runner *pr;
  OK(tfq_string_input_producer_start(names, po, coord, &q, &pr, NULL));
  char got[7] = {0};
  for (int i = 0; i < 6; i++) {
    tfq_tuple *t;
    OK(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL));
    got[i] = S(tfq_tuple_get(t, 0), 0)[0];
    tfq_tuple_free(t);
  }
  cr_assert_str_eq(got, "abcabc");
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL), TFQ_OUT_OF_RANGE,
               "the runner closes the queue after num_epochs");
  OK(tfq_coord_join(coord, 1000000, 0, NULL));
  tfq_producer_runner_free(pr);
  tfq_queue_free(q);
  tfq_coord_free(coord);
  tfq_producer_options_free(po);
  tfq_tensor_free(names);
}

Test(errors_as_data, string_input_producer_start_reports_an_empty_input_to_the_coordinator) {
  int64_t zero = 0;
  tfq_tensor *names;
  OK(tfq_tensor_new(TFQ_STRING, &zero, 1, &names, NULL));
  tfq_coord *coord;
  OK(tfq_coord_new(&coord, NULL));
  tfq_queue *q;
  tfq_producer_runner *pr;
  tfq_status *st = tfq_status_new();
  OK(tfq_string_input_producer_start(names, NULL, coord, &q, &pr, st));
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_coord_join(coord, 1000000, 0, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "assertion failed: [string_input_producer requires a non-null input tensor]");
  tfq_queue *q2;
  tfq_producer_runner *pr2;
  cr_assert_eq(tfq_string_input_producer_start(names, NULL, NULL, &q2, &pr2, st),
               TFQ_INVALID_ARGUMENT, "a coordinator is required");
  cr_assert_null(q2);
  cr_assert_null(pr2);
  tfq_producer_runner_free(pr);
  tfq_queue_free(q);
  tfq_coord_free(coord);
  tfq_tensor_free(names);
  tfq_status_free(st);
}

/* ---- sharding ---- */

/* Reads every record of `p` through an op of shard i of n; returns the ids it delivered. */
static int shard_ids(const char *p, tfq_reader_kind kind, int64_t i, int64_t n, int32_t *ids) {
  rd f = {0};
  f.work = work_of(&p, 1);
  f.reader = new_reader(kind, NULL);
  OK(tfq_csv_options_new(&f.csv, NULL));
  OK(tfq_csv_options_add_default_int32(f.csv, -1, NULL));
  tfq_dtype dts[1] = {TFQ_INT32};
  f.target = queue_of(1, dts);
  OK(tfq_read_decode_op_new(f.reader, f.work, f.csv, 7, f.target, &f.op, NULL));
  OK(tfq_read_decode_op_set_shard(f.op, i, n, NULL));
  tfq_code c;
  while ((c = tfq_read_decode_step(f.op, NULL, NULL)) == TFQ_OK) {
  }
  cr_assert_eq(c, TFQ_OUT_OF_RANGE);
  int k = 0;
  tfq_tuple *b;
  while (tfq_queue_size(f.target) > 0) {
    OK(tfq_queue_dequeue(f.target, &b, NULL, NOTIMEOUT, NULL));
    ids[k++] = i32_at(b, 0, 0);
    tfq_tuple_free(b);
  }
  cr_assert_eq(tfq_read_decode_op_records(f.op), k);
  rd_free(&f);
  return k;
}

Test(errors_as_data, three_shards_of_a_file_deliver_every_line_once_round_robin) {
  char text[400];
  size_t len = 0;
  for (int i = 0; i < 50; i++) len += (size_t)snprintf(text + len, sizeof text - len, "%d\n", i);
  const char *p = write_file("ids.csv", text, len);
  int seen[50] = {0};
  for (int64_t s = 0; s < 3; s++) {
    int32_t ids[50];
    int k = shard_ids(p, TFQ_READER_TEXT_LINE, s, 3, ids);
    cr_assert(k == 16 || k == 17, "shard %lld got %d lines", (long long)s, k);
    for (int j = 0; j < k; j++) {
      cr_assert_eq((ids[j] + 1) % 3, s, "line %d (id %d) is not shard %lld", ids[j] + 1, ids[j],
                   (long long)s);
      seen[ids[j]]++;
    }
  }
  for (int i = 0; i < 50; i++) cr_assert_eq(seen[i], 1, "id %d delivered %d times", i, seen[i]);
}

Test(errors_as_data, shards_of_tfrecords_split_by_offset_deliver_every_record_once) {
  const char *p = path_of("ids.tfrecord");
  tfq_tfrecord_writer *w;
  OK(tfq_tfrecord_writer_new(p, TFQ_COMPRESSION_NONE, &w, NULL));
  for (int i = 0; i < 64; i++) {
    char v[8];
    int n = snprintf(v, sizeof v, "%d", i);
    OK(tfq_tfrecord_writer_write(w, v, (size_t)n, NULL));
  }
  OK(tfq_tfrecord_writer_close(w, NULL));
  tfq_tfrecord_writer_free(w);
  int seen[64] = {0}, empty = 0;
  for (int64_t s = 0; s < 4; s++) {
    int32_t ids[64];
    int k = shard_ids(p, TFQ_READER_TFRECORD, s, 4, ids);
    empty += k == 0;
    for (int j = 0; j < k; j++) seen[ids[j]]++;
  }
  for (int i = 0; i < 64; i++) cr_assert_eq(seen[i], 1, "record %d delivered %d times", i, seen[i]);
  cr_assert_eq(empty, 0, "a hash of the offsets leaves no shard of 64 records empty");
}

Test(errors_as_data, a_shard_outside_its_count_is_refused) {
  const char *p = write_file("x.csv", "1\n", 2);
  rd f = {0};
  f.work = work_of(&p, 1);
  f.reader = new_reader(TFQ_READER_TEXT_LINE, NULL);
  tfq_dtype dts[1] = {TFQ_STRING};
  f.target = queue_of(1, dts);
  OK(tfq_read_decode_op_new(f.reader, f.work, NULL, 4, f.target, &f.op, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_read_decode_op_set_shard(f.op, 3, 3, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "shard 3 of 3: need 0 <= index < count");
  cr_assert_eq(tfq_read_decode_op_set_shard(f.op, 0, 0, st), TFQ_INVALID_ARGUMENT);
  tfq_status_free(st);
  rd_free(&f);
}

/* Past a file's first read the op takes the reader's buffered lines directly (readers_shared.h):
 * the same records, the same accounting and the same error, with file, line and record, as the
 * ordinary read. */
Test(errors_as_data, the_op_on_buffered_lines_delivers_and_locates_errors_as_the_ordinary_read) {
  char text[4096];
  size_t n = 0;
  int64_t want_sum = 0;
  for (int line = 1; line <= 40; line++) {
    if (line == 30) {
      n += (size_t)snprintf(text + n, sizeof text - n, "1,abc,2\n");
      continue;
    }
    n += (size_t)snprintf(text + n, sizeof text - n, "%d.5,%d,%d%s\n", line, -line, line * 10,
                          line % 3 ? "" : "\r");
    if (line != 31 && line != 32) want_sum += line * 10; /* 31, 32: dropped with the bad batch */
  }
  const char *p = write_file("mid.csv", text, n);
  rd f = {0};
  f.work = work_of(&p, 1);
  f.reader = new_reader(TFQ_READER_TEXT_LINE, NULL);
  f.csv = csv3();
  tfq_dtype dts[3] = {TFQ_FLOAT, TFQ_FLOAT, TFQ_INT32};
  f.target = queue_of(3, dts);
  OK(tfq_read_decode_op_new(f.reader, f.work, f.csv, 8, f.target, &f.op, NULL));
  tfq_status *st = tfq_status_new();
  for (int step = 0; step < 3; step++) OK(tfq_read_decode_step(f.op, NULL, st));
  cr_assert_eq(tfq_read_decode_step(f.op, NULL, st), TFQ_INVALID_ARGUMENT);
  char want[600];
  snprintf(want, sizeof want, "%s:30: Field 1 in record 0 is not a valid float: abc", p);
  cr_assert_str_eq(tfq_status_message(st), want);
  cr_assert_eq(tfq_status_line(st), 30);
  cr_assert_eq(tfq_status_record(st), 5, "lines 25-32 read together: the sixth");
  cr_assert_eq(tfq_read_decode_op_records(f.op), 29);
  OK(tfq_read_decode_step(f.op, NULL, st));
  cr_assert_eq(tfq_read_decode_op_records(f.op), 37);
  cr_assert_eq(tfq_reader_num_records_produced(f.reader), 40);
  int64_t sum = 0;
  for (int i = 0; i < 37; i++) {
    tfq_tuple *t;
    OK(tfq_queue_dequeue(f.target, &t, NULL, NOTIMEOUT, NULL));
    int32_t y = *(const int32_t *)tfq_tensor_cdata(tfq_tuple_get(t, 2));
    float x = *(const float *)tfq_tensor_cdata(tfq_tuple_get(t, 0));
    cr_assert_eq(x, (float)(y / 10) + 0.5f, "row %d: %g %d", i, (double)x, y);
    sum += y;
    tfq_tuple_free(t);
  }
  cr_assert_eq(sum, want_sum);
  tfq_status_free(st);
  rd_free(&f);
}
