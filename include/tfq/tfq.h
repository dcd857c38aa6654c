/* tfq: TensorFlow 1.x input pipelines in C.  The umbrella header.
 *
 *   #include <tfq/tfq.h>      link with -ltfq (pkg-config --libs tfq)
 *
 * status.h  codes (numbered like TF_Code) and the status object
 * alloc.h   the pluggable allocator
 * tensor.h  dtypes, tensors, tuples (elements and batches), component specs
 * queue.h   FIFOQueue with TensorFlow 1.x semantics
 *
 * The ABI is not frozen while the version is 0.x. */
#ifndef TFQ_TFQ_H
#define TFQ_TFQ_H

#include <tfq/alloc.h>
#include <tfq/coord.h>
#include <tfq/csv.h>
#include <tfq/export.h>
#include <tfq/queue.h>
#include <tfq/reader.h>
#include <tfq/status.h>
#include <tfq/tensor.h>
#include <tfq/version.h>

TFQ_EXTERN_C_BEGIN

/* Run-time version: TFQ_VERSION_NUMBER and TFQ_VERSION_STRING of the library actually loaded.
 * Thread-safety: any.  Since: 0.1 */
TFQ_API unsigned tfq_version_number(void);
TFQ_API const char *tfq_version_string(void);

TFQ_EXTERN_C_END

#endif
