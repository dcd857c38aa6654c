/* decode_raw: TF's DecodeRaw op (core/kernels/decode_raw_op.cc), spec/tf1-example.md §8. */
#include <string.h>

#include "example_internal.h"

static int allowed(tfq_dtype dt) {
  switch (dt) {
    case TFQ_HALF:
    case TFQ_FLOAT:
    case TFQ_DOUBLE:
    case TFQ_INT32:
    case TFQ_UINT16:
    case TFQ_UINT8:
    case TFQ_INT16:
    case TFQ_INT8:
    case TFQ_INT64:
    case TFQ_COMPLEX64:
    case TFQ_COMPLEX128:
    case TFQ_BOOL:
    case TFQ_BFLOAT16: return 1;
    default: return 0;
  }
}

static int host_little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

tfq_code tfq_decode_raw(const tfq_tensor *bytes, tfq_dtype out_type, int little_endian,
                        tfq_tensor **out, tfq_status *st) {
  *out = NULL;
  if (!allowed(out_type))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Value passed to parameter 'out_type' has DataType %s not in list of "
                          "allowed values: float16, float32, float64, int32, uint16, uint8, int16, "
                          "int8, int64, complex64, complex128, bool, bfloat16",
                          tfq__ex_py_dtype(out_type));
  if (bytes->dtype != TFQ_STRING)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Input 'bytes' of 'DecodeRaw' Op has type %s that does not match "
                          "expected type of string.",
                          tfq__ex_py_dtype(bytes->dtype));
  if (bytes->rank >= TFQ_MAX_RANK)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "rank %d is outside [0, %d]", bytes->rank + 1,
                          TFQ_MAX_RANK);
  const tfq__str *s = tfq__strs(bytes);
  int64_t n = bytes->nelems;
  size_t len = n ? s[0].len : 0, es = tfq_dtype_size(out_type);
  for (int64_t i = 1; i < n; i++)
    if (s[i].len != len)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "DecodeRaw requires input strings to all be the same size, but "
                            "element %lld has size %zu != %zu",
                            (long long)i, len, s[i].len);
  if (len % es)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Input to DecodeRaw has length %zu that is not a multiple of %zu, the "
                          "size of %s",
                          len, es, tfq_dtype_name(out_type));
  int64_t dims[TFQ_MAX_RANK];
  if (bytes->rank) memcpy(dims, bytes->dims, (size_t)bytes->rank * sizeof *dims);
  dims[bytes->rank] = (int64_t)(len / es);
  tfq_code rc = tfq__tensor_alloc(out_type, dims, bytes->rank + 1, 0, out, st);
  if (rc) return rc;
  char *dst = (*out)->data;
  for (int64_t i = 0; i < n; i++)
    if (len) memcpy(dst + (size_t)i * len, s[i].p, len);
  size_t unit = out_type == TFQ_COMPLEX64 || out_type == TFQ_COMPLEX128 ? es / 2 : es;
  if (unit > 1 && (little_endian != 0) != host_little_endian()) {
    size_t total = (size_t)n * len;
    for (size_t off = 0; off < total; off += unit)
      for (size_t a = off, b = off + unit - 1; a < b; a++, b--) {
        char t = dst[a];
        dst[a] = dst[b];
        dst[b] = t;
      }
  }
  tfq_status_clear(st);
  return TFQ_OK;
}
