/* Private helpers shared by the files of libtfq_tf. */
#ifndef TFQ_TF_INTERNAL_H
#define TFQ_TF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <tfq/tf.h>

/* A growable byte buffer for hand-encoded protocol buffers (ServerDef, ConfigProto). */
typedef struct tfq__pb {
  unsigned char *p;
  size_t n, cap;
  int oom;
} tfq__pb;

void tfq__pb_varint(tfq__pb *b, uint64_t v);
/* Field `field` as a varint (wire type 0). */
void tfq__pb_uint(tfq__pb *b, int field, uint64_t v);
/* Field `field` as length-delimited bytes (wire type 2): strings and nested messages. */
void tfq__pb_bytes(tfq__pb *b, int field, const void *data, size_t len);
void tfq__pb_free(tfq__pb *b);

/* Deletes `n` TF tensors (NULL entries skipped) and sets them to NULL. */
void tfq__tf_delete_tensors(TF_Tensor **v, size_t n);

/* Converts every component of `batch` (k components expected) into vals[0..k). On failure every
 * vals[i] is NULL. */
tfq_code tfq__tf_tuple_to_tf(const tfq_tuple *batch, size_t k, TF_Tensor **vals, tfq_status *st);

/* A session for `graph` on `target` (NULL or "": in-process direct session) whose ConfigProto
 * carries device_filters (`filters`, or `device` alone when there is none and it is non-empty)
 * and operation_timeout_in_ms (when > 0).  Never cluster_def (tf-c-api.md 4.2). */
tfq_code tfq__tf_new_session(TF_Graph *graph, const char *target, const char *device,
                             char *const *filters, int nfilters, int64_t timeout_ms,
                             TF_Session **out, tfq_status *st);

/* RunOptions{timeout_in_ms} serialized into a TF_Buffer (TF_DeleteBuffer), for the run_options
 * of every TF_SessionRun of a handle; NULL when timeout_ms <= 0.  *oom set when it could not be
 * made. */
TF_Buffer *tfq__tf_run_options(int64_t timeout_ms, int *oom);

/* One TF_SessionRun with those run options; TensorFlow's status becomes the return code. */
tfq_code tfq__tf_run(TF_Session *session, const TF_Buffer *run_options, const TF_Output *in,
                     TF_Tensor *const *vals, int nin, const TF_Output *fetch, TF_Tensor **fetched,
                     int nfetch, const TF_Operation *const *targets, int ntargets, tfq_status *st);

#endif
