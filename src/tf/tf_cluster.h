/* The part of <tfq/tf.h> that needs no TensorFlow: the cluster description (TF_CONFIG and the
 * "job=h:p,...;..." form), and the private JSON parser under it (tf_json.c).  src/tf/tf_config.c
 * and tf_json.c include only this header, so the parser's own
 * test (tests/tf/test_tf_config.c) and its fuzz target (tests/fuzz/fuzz_tf_config.c) build and
 * run without the wheel.  The documentation is in <tfq/tf.h>; tf_config.c, when built into
 * libtfq_tf (TFQ_TF_BRIDGE defined), includes <tfq/tf.h> too, so the compiler checks that the
 * two sets of declarations agree.  Library-private header (not installed). */
#ifndef TFQ_TF_CLUSTER_H
#define TFQ_TF_CLUSTER_H

#include <tfq/export.h>
#include <tfq/status.h>

TFQ_EXTERN_C_BEGIN

typedef struct tfq_tf_cluster tfq_tf_cluster;

TFQ_API tfq_code tfq_tf_cluster_from_tf_config(const char *json, tfq_tf_cluster **out,
                                               tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API tfq_code tfq_tf_cluster_from_spec_string(const char *spec, tfq_tf_cluster **out,
                                                 tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API void tfq_tf_cluster_free(tfq_tf_cluster *c);
TFQ_API tfq_code tfq_tf_cluster_spec_string(const tfq_tf_cluster *c, const char **out,
                                            tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API void tfq_tf_cluster_task(const tfq_tf_cluster *c, const char **type, int *index);
TFQ_API tfq_code tfq_tf_cluster_set_task(tfq_tf_cluster *c, const char *type, int index,
                                         tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API int tfq_tf_cluster_num_jobs(const tfq_tf_cluster *c);
TFQ_API const char *tfq_tf_cluster_job(const tfq_tf_cluster *c, int i);
TFQ_API int tfq_tf_cluster_num_tasks(const tfq_tf_cluster *c, const char *job);
TFQ_API int tfq_tf_cluster_task_index(const tfq_tf_cluster *c, const char *job, int i);
TFQ_API const char *tfq_tf_cluster_address(const tfq_tf_cluster *c, const char *job, int index);
TFQ_API const char *tfq_tf_cluster_target(const tfq_tf_cluster *c, const char *job, int index);
TFQ_API const char *tfq_tf_cluster_master(const tfq_tf_cluster *c);

/* ---- the JSON parser of tf_json.c (library-private) ---- */

enum {
  TFQ__J_NULL,
  TFQ__J_FALSE,
  TFQ__J_TRUE,
  TFQ__J_NUMBER,
  TFQ__J_STRING,
  TFQ__J_ARRAY,
  TFQ__J_OBJECT
};

/* A JSON value.  Strings: `str` decoded, NUL-terminated (no NUL inside), `len` bytes.  Numbers:
 * `str` is the literal as written (valid JSON grammar).  Arrays and objects: items[0..n), and for
 * objects keys[0..n) (decoded strings), in document order. */
typedef struct tfq__json tfq__json;
struct tfq__json {
  int type;
  char *str;
  size_t len;
  tfq__json **items;
  char **keys;
  size_t n, cap;
};

/* Parses the whole of `text` (one value, whitespace around it allowed).
 * @return TFQ_OK (*out the caller's, freed with tfq__json_free()); TFQ_INVALID_ARGUMENT (a syntax
 *         error: *errpos its byte offset, *errmsg a static description); TFQ_RESOURCE_EXHAUSTED. */
tfq_code tfq__json_parse(const char *text, tfq__json **out, size_t *errpos, const char **errmsg);
void tfq__json_free(tfq__json *j);
/* The last member named `key` of an object, or NULL (also when its value is null). */
const tfq__json *tfq__json_member(const tfq__json *obj, const char *key);
/* "null", "false", "true", "a number", "a string", "a list", "an object". */
const char *tfq__json_type_name(const tfq__json *j);

TFQ_EXTERN_C_END

#endif
