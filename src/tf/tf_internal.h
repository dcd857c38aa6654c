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

#endif
