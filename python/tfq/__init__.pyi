from . import data as data, errors as errors, io as io, train as train
from .ops import decode_csv as decode_csv

__version__: str
library_version: str
from .queues import (FIFOQueue as FIFOQueue, PaddingFIFOQueue as PaddingFIFOQueue,
                     PriorityQueue as PriorityQueue, QueueBase as QueueBase,
                     RandomShuffleQueue as RandomShuffleQueue)
from .readers import (FixedLengthRecordReader as FixedLengthRecordReader,
                      IdentityReader as IdentityReader, ReaderBase as ReaderBase,
                      TextLineReader as TextLineReader, TFRecordReader as TFRecordReader,
                      WholeFileReader as WholeFileReader)
from .train import (Session as Session, global_variables_initializer as global_variables_initializer,
                    local_variables_initializer as local_variables_initializer, stack as stack)
