/* (being written) */
#ifndef TFQ_READER_H
#define TFQ_READER_H
#include <tfq/export.h>
#include <tfq/status.h>
#include <tfq/tensor.h>
#endif
