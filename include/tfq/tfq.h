/* tfq: TensorFlow 1.x input pipelines in C.  The umbrella header.
 *
 *   #include <tfq/tfq.h>      link with -ltfq (pkg-config --libs tfq)
 *
 * version.h   compile-time and run-time versions
 * status.h    codes (numbered like TF_Code) and the status object
 * alloc.h     the pluggable allocator
 * tensor.h    dtypes, tensors, tuples (elements and batches), component specs
 * queue.h     FIFO, RandomShuffle, PaddingFIFO and Priority queues; the shared-name registry
 * reader.h    TextLine, FixedLength, TFRecord, WholeFile and Identity readers; TFRecord writer
 * csv.h       decode_csv
 * example.h   tf.train.Example parsing (parse_example, parse_single_example), decode_raw
 * producer.h  input producers (string_input_producer and friends)
 * coord.h     Coordinator, QueueRunner, LooperThread, batchers
 * ops.h       ready-made QueueRunner ops (read -> decode -> enqueue_many, queue -> queue)
 * sparse.h    SparseTensors through queues and batchers (TF's SparseTensorsMap)
 *
 * These are the stable API (0.x: stable within a minor version; the ABI is not frozen while the
 * version is 0.x).  Not included here: tfq/experimental.h (calls that may change or go; define
 * TFQ_EXPERIMENTAL before including it) and tfq/tf.h (the TensorFlow bridge, -ltfq_tf). */
#ifndef TFQ_TFQ_H
#define TFQ_TFQ_H

#include <tfq/alloc.h>
#include <tfq/coord.h>
#include <tfq/csv.h>
#include <tfq/example.h>
#include <tfq/export.h>
#include <tfq/ops.h>
#include <tfq/pipeline.h>
#include <tfq/producer.h>
#include <tfq/queue.h>
#include <tfq/reader.h>
#include <tfq/sparse.h>
#include <tfq/status.h>
#include <tfq/tensor.h>
#include <tfq/version.h>

#endif
