/* Small helpers for the TensorFlow bridge tests (plain C programs: exit 0 pass, 1 fail, 77 skip).
 */
#ifndef TFQ_TF_TEST_UTIL_H
#define TFQ_TF_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <tfq/tf.h>

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
      exit(1);                                                        \
    }                                                                 \
  } while (0)

/* CHECKs that a tfq call returned TFQ_OK, printing the status message otherwise. */
#define CHECK_OK(call, st)                                                    \
  do {                                                                        \
    tfq_code c_ = (call);                                                     \
    CHECK(c_ == TFQ_OK, "%s: %s", tfq_code_name(c_), tfq_status_message(st)); \
  } while (0)

/* A TCP port on 127.0.0.1 that was free a moment ago. */
int tft_free_port(void);

/* Graph helpers (abort the test on error). */
TF_Operation *tft_placeholder(TF_Graph *g, const char *name, TF_DataType dt, const int64_t *dims,
                              int rank);
/* Sum over axis 0 of `in` (Sum with a Const reduction index). */
TF_Operation *tft_sum0(TF_Graph *g, const char *name, TF_Output in);
TF_Operation *tft_unary(TF_Graph *g, const char *type, const char *name, TF_Output in);

#endif
