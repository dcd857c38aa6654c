"""tfq: TensorFlow 1.x input pipelines in C, from Python (docs/python.md).

    import tfq
    for batch in tfq.data.csv("train.csv", header=True, batch_size=128, seed=1):
        ...   # a dict of column name -> numpy array

tfq.data: files -> shuffled batches (csv, text, tfrecord, examples); tfq.io: TF's feature
classes; tfq.errors: TF's exception classes.  TensorFlow is not needed; numpy is (at run time).
"""
from . import _tfq, errors
from . import io
from . import data
from . import train
from .train import Session, global_variables_initializer, local_variables_initializer, stack
from .ops import decode_csv
from .queues import FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue
from .readers import (FixedLengthRecordReader, IdentityReader, ReaderBase, TextLineReader,
                      TFRecordReader, WholeFileReader)

_tfq._set_error_classes(dict(errors._CLASSES))

library_version = _tfq.version()
__version__ = library_version  # one version: meson.build's project(), libtfq's and the wheel's

__all__ = ["FixedLengthRecordReader", "IdentityReader", "ReaderBase", "TextLineReader",
           "TFRecordReader", "WholeFileReader", "FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue", "Session", "global_variables_initializer", "local_variables_initializer", "stack",
           "data", "decode_csv", "errors", "io", "library_version", "train"]
