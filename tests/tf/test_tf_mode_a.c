/* Feed mode A: a tfq pipeline (FIFOQueue, dequeue_many) feeds a local TF session whose graph sums
 * the columns of each batch; TensorFlow's sums must equal tfq's own exactly (values are chosen so
 * that every partial sum is exact in any order).  Also: every shared dtype survives
 * tfq -> TF_Tensor -> tfq (copy and take), and code/dtype numbering is one to one. */
#include <string.h>

#include "tf_test_util.h"

#define ROWS 10000
#define BATCH 250

static void roundtrip_dtypes(void) {
  const tfq_dtype all[] = {TFQ_FLOAT, TFQ_DOUBLE, TFQ_INT32,  TFQ_UINT8,
                           TFQ_INT16, TFQ_INT8,   TFQ_STRING, TFQ_COMPLEX64,
                           TFQ_INT64, TFQ_BOOL,   TFQ_UINT16, TFQ_COMPLEX128};
  tfq_status *st = tfq_status_new();
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
    int64_t dims[2] = {3, 5};
    tfq_tensor *t, *back, *back2;
    CHECK_OK(tfq_tensor_new(all[k], dims, 2, &t, st), st);
    if (all[k] == TFQ_STRING) {
      for (int i = 0; i < 15; i++) {
        char buf[64];
        int n = snprintf(buf, sizeof buf, "element %d with a NUL\x01 and a long tail %d", i, i);
        buf[8] = '\0';
        CHECK_OK(tfq_tensor_set_string(t, i, buf, (size_t)n, st), st);
      }
    } else {
      unsigned char *p = tfq_tensor_data(t);
      for (size_t i = 0; i < tfq_tensor_byte_size(t); i++)
        p[i] = all[k] == TFQ_BOOL ? (unsigned char)(i & 1) : (unsigned char)(i * 7 + 1);
    }
    TF_Tensor *tf;
    CHECK_OK(tfq_tf_tensor_to_tf(t, &tf, st), st);
    CHECK(TF_TensorType(tf) == (TF_DataType)all[k], "dtype");
    CHECK(TF_NumDims(tf) == 2 && TF_Dim(tf, 0) == 3 && TF_Dim(tf, 1) == 5, "shape");
    if (all[k] != TFQ_STRING)
      CHECK(TF_TensorData(tf) == tfq_tensor_data(t), "%s was copied, not lent",
            tfq_dtype_name(all[k]));
    CHECK_OK(tfq_tf_tensor_from_tf(tf, &back, st), st);
    CHECK_OK(tfq_tf_tensor_from_tf_take(tf, &back2, st), st);
    for (int r = 0; r < 2; r++) {
      tfq_tensor *b = r ? back2 : back;
      CHECK(tfq_tensor_dtype(b) == all[k] && tfq_tensor_rank(b) == 2 && tfq_tensor_dim(b, 1) == 5,
            "meta");
      if (all[k] == TFQ_STRING) {
        for (int i = 0; i < 15; i++) {
          size_t l1, l2;
          const char *s1 = tfq_tensor_string(t, i, &l1), *s2 = tfq_tensor_string(b, i, &l2);
          CHECK(l1 == l2 && memcmp(s1, s2, l1) == 0, "string %d", i);
        }
      } else {
        CHECK(memcmp(tfq_tensor_cdata(t), tfq_tensor_cdata(b), tfq_tensor_byte_size(t)) == 0,
              "bytes of %s", tfq_dtype_name(all[k]));
      }
    }
    tfq_tensor_free(back);
    tfq_tensor_free(back2); /* deletes the TF_Tensor, which drops its reference to t */
    CHECK(tfq_tensor_refcount(t) == 1, "refcount %lld", (long long)tfq_tensor_refcount(t));
    tfq_tensor_free(t);
  }
  for (int c = 0; c <= 16; c++) {
    CHECK((int)tfq_tf_code_from_tf((TF_Code)c) == c && (int)tfq_tf_code_to_tf((tfq_code)c) == c,
          "code %d", c);
  }
  tfq_dtype dt;
  /* half and bfloat16 are tfq dtypes since decode_raw (TF's numbers): they map through */
  CHECK(tfq_tf_dtype_from_tf(TF_HALF, &dt, st) == TFQ_OK && dt == TFQ_HALF, "half");
  CHECK(tfq_tf_dtype_from_tf(TF_BFLOAT16, &dt, st) == TFQ_OK && dt == TFQ_BFLOAT16, "bfloat16");
  CHECK(tfq_tf_dtype_from_tf(TF_QINT8, &dt, st) == TFQ_UNIMPLEMENTED, "qint8");
  tfq_status_free(st);
  printf("mode A: 12 dtypes round-trip tfq -> TF_Tensor -> tfq (numeric lent without copy)\n");
}

int main(void) {
  roundtrip_dtypes();
  tfq_status *st = tfq_status_new();

  /* The graph: placeholders f [?,3] float, d [?] double, k [?] int64, s [?] string; outputs the
   * column sums (strings: the sum of their lengths). */
  TF_Graph *g = TF_NewGraph();
  int64_t shf[2] = {-1, 3}, sh1[1] = {-1};
  TF_Operation *pf = tft_placeholder(g, "f", TF_FLOAT, shf, 2);
  TF_Operation *pd = tft_placeholder(g, "d", TF_DOUBLE, sh1, 1);
  TF_Operation *pk = tft_placeholder(g, "k", TF_INT64, sh1, 1);
  TF_Operation *ps = tft_placeholder(g, "s", TF_STRING, sh1, 1);
  TF_Operation *len = tft_unary(g, "StringLength", "slen", (TF_Output){ps, 0});
  TF_Output fetch[4] = {{tft_sum0(g, "sf", (TF_Output){pf, 0}), 0},
                        {tft_sum0(g, "sd", (TF_Output){pd, 0}), 0},
                        {tft_sum0(g, "sk", (TF_Output){pk, 0}), 0},
                        {tft_sum0(g, "ss", (TF_Output){len, 0}), 0}};
  TF_Status *s = TF_NewStatus();
  TF_SessionOptions *so = TF_NewSessionOptions();
  TF_Session *sess = TF_NewSession(g, so, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_DeleteSessionOptions(so);

  /* The tfq side: a FIFOQueue of (f [3], d, k, s) filled with ROWS rows. */
  tfq_spec *spec;
  int64_t d3[1] = {3};
  CHECK_OK(tfq_spec_new(&spec, st), st);
  CHECK_OK(tfq_spec_add(spec, TFQ_FLOAT, d3, 1, "f", st), st);
  CHECK_OK(tfq_spec_add(spec, TFQ_DOUBLE, NULL, 0, "d", st), st);
  CHECK_OK(tfq_spec_add(spec, TFQ_INT64, NULL, 0, "k", st), st);
  CHECK_OK(tfq_spec_add(spec, TFQ_STRING, NULL, 0, "s", st), st);
  tfq_queue *q;
  CHECK_OK(tfq_fifo_queue_new(spec, -1, "rows", &q, st), st);
  {
    tfq_tuple *b;
    tfq_tensor *f, *d, *k, *str;
    int64_t df[2] = {ROWS, 3}, dn[1] = {ROWS};
    CHECK_OK(tfq_tuple_new(4, &b, st), st);
    CHECK_OK(tfq_tensor_new(TFQ_FLOAT, df, 2, &f, st), st);
    CHECK_OK(tfq_tensor_new(TFQ_DOUBLE, dn, 1, &d, st), st);
    CHECK_OK(tfq_tensor_new(TFQ_INT64, dn, 1, &k, st), st);
    CHECK_OK(tfq_tensor_new(TFQ_STRING, dn, 1, &str, st), st);
    float *pfv = tfq_tensor_data(f);
    double *pdv = tfq_tensor_data(d);
    int64_t *pkv = tfq_tensor_data(k);
    for (int64_t i = 0; i < ROWS; i++) {
      for (int j = 0; j < 3; j++) pfv[i * 3 + j] = (float)((i * (j + 1)) % 97) * 0.25f - 12.0f;
      pdv[i] = (double)(i % 1001) * 0.125 - 31.0;
      pkv[i] = i * i - 5000000;
      char buf[64];
      memset(buf, 'a' + (int)(i % 26), sizeof buf);
      CHECK_OK(tfq_tensor_set_string(str, i, buf, (size_t)(i % 41), st), st);
    }
    tfq_tuple_set_take(b, 0, f);
    tfq_tuple_set_take(b, 1, d);
    tfq_tuple_set_take(b, 2, k);
    tfq_tuple_set_take(b, 3, str);
    CHECK_OK(tfq_queue_enqueue_many(q, b, NULL, TFQ_NO_TIMEOUT, st), st);
    tfq_tuple_free(b);
    CHECK_OK(tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st), st);
  }

  const char *names[4] = {"f", "d:0", "k", "s"};
  tfq_tf_feed *feed;
  CHECK_OK(tfq_tf_feed_new(g, names, 4, &feed, st), st);
  const char *bad[1] = {"nope"};
  tfq_tf_feed *nofeed;
  CHECK(tfq_tf_feed_new(g, bad, 1, &nofeed, st) == TFQ_NOT_FOUND, "unknown name");

  int64_t lent0, ret0, lent1, ret1;
  tfq_tf_lent_counts(&lent0, &ret0);
  float tf_f[3] = {0}, c_f[3] = {0};
  double tf_d = 0, c_d = 0;
  int64_t tf_k = 0, c_k = 0, tf_s = 0, c_s = 0, batches = 0;
  for (;;) {
    tfq_tuple *b;
    tfq_code c = tfq_queue_dequeue_many(q, BATCH, &b, NULL, TFQ_NO_TIMEOUT, st);
    if (c == TFQ_OUT_OF_RANGE) break;
    CHECK_OK(c, st);
    TF_Tensor *out[4];
    CHECK_OK(tfq_tf_feed_run(feed, sess, b, fetch, out, 4, NULL, 0, st), st);
    tfq_tensor *o[4];
    for (int i = 0; i < 4; i++) CHECK_OK(tfq_tf_tensor_from_tf_take(out[i], &o[i], st), st);
    /* tfq's own sums of the same batch, in row order. */
    const float *bf = tfq_tensor_cdata(tfq_tuple_get(b, 0));
    const double *bd = tfq_tensor_cdata(tfq_tuple_get(b, 1));
    const int64_t *bk = tfq_tensor_cdata(tfq_tuple_get(b, 2));
    float sf[3] = {0};
    double sd = 0;
    int64_t sk = 0, ss = 0;
    for (int i = 0; i < BATCH; i++) {
      for (int j = 0; j < 3; j++) sf[j] += bf[i * 3 + j];
      sd += bd[i];
      sk += bk[i];
      size_t l;
      (void)tfq_tensor_string(tfq_tuple_get(b, 3), i, &l);
      ss += (int64_t)l;
    }
    const float *of = tfq_tensor_cdata(o[0]);
    for (int j = 0; j < 3; j++) {
      CHECK(of[j] == sf[j], "batch %lld col %d: TF %.9g tfq %.9g", (long long)batches, j, of[j],
            sf[j]);
      tf_f[j] += of[j];
      c_f[j] += sf[j];
    }
    CHECK(*(const double *)tfq_tensor_cdata(o[1]) == sd, "double sum");
    CHECK(*(const int64_t *)tfq_tensor_cdata(o[2]) == sk, "int64 sum");
    CHECK(*(const int32_t *)tfq_tensor_cdata(o[3]) == (int32_t)ss, "string lengths");
    tf_d += *(const double *)tfq_tensor_cdata(o[1]);
    c_d += sd;
    tf_k += *(const int64_t *)tfq_tensor_cdata(o[2]);
    c_k += sk;
    tf_s += *(const int32_t *)tfq_tensor_cdata(o[3]);
    c_s += ss;
    for (int i = 0; i < 4; i++) tfq_tensor_free(o[i]);
    tfq_tuple_free(b);
    batches++;
  }
  tfq_tf_lent_counts(&lent1, &ret1);
  CHECK(batches == ROWS / BATCH, "batches %lld", (long long)batches);
  CHECK(lent1 - lent0 == 3 * batches && ret1 - ret0 == lent1 - lent0, "lent %lld returned %lld",
        (long long)(lent1 - lent0), (long long)(ret1 - ret0));
  printf("mode A: %lld batches of %d rows fed to a local session; every batch's sums equal\n",
         (long long)batches, BATCH);
  printf("mode A: totals TF  f=[%.2f %.2f %.2f] d=%.3f k=%lld strlen=%lld\n", tf_f[0], tf_f[1],
         tf_f[2], tf_d, (long long)tf_k, (long long)tf_s);
  printf("mode A: totals tfq f=[%.2f %.2f %.2f] d=%.3f k=%lld strlen=%lld\n", c_f[0], c_f[1],
         c_f[2], c_d, (long long)c_k, (long long)c_s);
  printf("mode A: %lld numeric buffers lent, %lld returned by TensorFlow's deallocator\n",
         (long long)(lent1 - lent0), (long long)(ret1 - ret0));
  CHECK(tf_d == c_d && tf_k == c_k && tf_s == c_s && !memcmp(tf_f, c_f, sizeof tf_f), "totals");

  tfq_tf_feed_free(feed);
  tfq_queue_free(q);
  tfq_spec_free(spec);
  TF_CloseSession(sess, s);
  TF_DeleteSession(sess, s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
  tfq_status_free(st);
  printf("mode A: PASS\n");
  return 0;
}
