/* (being written) */
#ifndef TFQ_CSV_H
#define TFQ_CSV_H
#include <tfq/export.h>
#include <tfq/status.h>
#include <tfq/tensor.h>
#endif
