import os
from typing import Any, Callable, Iterator, Literal, Mapping, Optional, Sequence, Union

import numpy as np

from . import _tfq
from .io import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature

_Files = Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]
_Value = Union[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
_Batch = dict[str, _Value]
_OnBad = Optional[Callable[[str, str], Any]]

class Pipeline(Iterator[_Batch]):
    def __iter__(self) -> "Pipeline": ...
    def __next__(self) -> _Batch: ...
    def next_raw(self) -> tuple[_tfq.Tensor, ...]: ...
    def __enter__(self) -> "Pipeline": ...
    def __exit__(self, *exc: Any) -> bool: ...
    def close(self) -> None: ...
    def stop(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def save(self, path: Optional[Union[str, os.PathLike]] = ...) -> Optional[bytes]: ...
    def restore(self, state: Union[bytes, bytearray, memoryview, str, os.PathLike]) -> None: ...
    def stats(self) -> dict[str, int]: ...
    @property
    def columns(self) -> list[tuple[str, str, tuple[int, ...], str]]: ...
    @property
    def column_names(self) -> list[str]: ...
    @property
    def columns_spec(self) -> Optional[str]: ...
    @property
    def features_spec(self) -> Optional[str]: ...
    @property
    def format(self) -> str: ...

def csv(files: _Files, record_defaults: Optional[Union[str, Sequence[Any]]] = ..., *,
        header: Union[bool, Literal["auto"]] = ..., select_cols: Optional[Sequence[int]] = ..., field_delim: str = ...,
        na_value: Optional[str] = ..., use_quote_delim: bool = ...,
        skip_header_lines: Optional[int] = ..., infer_rows: Optional[int] = ...,
        batch_size: int = ..., shuffle: bool = ..., capacity: Optional[int] = ...,
        min_after_dequeue: Optional[int] = ..., seed: Optional[int] = ...,
        num_epochs: int = ..., num_threads: int = ..., shard: Optional[tuple[int, int]] = ...,
        max_bad_records: int = ..., deterministic: bool = ..., drop_remainder: bool = ...,
        compression: Optional[str] = ..., keys: bool = ..., step: Optional[int] = ...,
        on_bad_record: _OnBad = ...) -> Pipeline: ...
def text(files: _Files, *, skip_header_lines: Optional[int] = ..., batch_size: int = ...,
         shuffle: bool = ..., capacity: Optional[int] = ..., min_after_dequeue: Optional[int] = ...,
         seed: Optional[int] = ..., num_epochs: int = ..., num_threads: int = ...,
         shard: Optional[tuple[int, int]] = ..., max_bad_records: int = ...,
         deterministic: bool = ..., drop_remainder: bool = ..., compression: Optional[str] = ...,
         keys: bool = ..., step: Optional[int] = ..., on_bad_record: _OnBad = ...) -> Pipeline: ...
def tfrecord(files: _Files, *, batch_size: int = ..., shuffle: bool = ...,
             capacity: Optional[int] = ..., min_after_dequeue: Optional[int] = ...,
             seed: Optional[int] = ..., num_epochs: int = ..., num_threads: int = ...,
             shard: Optional[tuple[int, int]] = ..., max_bad_records: int = ...,
             deterministic: bool = ..., drop_remainder: bool = ...,
             compression: Optional[str] = ..., keys: bool = ..., step: Optional[int] = ...,
             on_bad_record: _OnBad = ...) -> Pipeline: ...
def fixed_length(files: _Files, record_bytes: int, *, header_bytes: int = ...,
                 footer_bytes: int = ..., hop_bytes: int = ..., **kwargs: Any) -> Pipeline: ...
def examples(files: _Files,
             features: Optional[Mapping[str, Union[FixedLenFeature, VarLenFeature,
                                                   FixedLenSequenceFeature]]] = ..., *,
             ragged: bool = ..., infer_rows: Optional[int] = ..., batch_size: int = ...,
             shuffle: bool = ..., capacity: Optional[int] = ...,
             min_after_dequeue: Optional[int] = ..., seed: Optional[int] = ...,
             num_epochs: int = ..., num_threads: int = ..., shard: Optional[tuple[int, int]] = ...,
             max_bad_records: int = ..., deterministic: bool = ..., drop_remainder: bool = ...,
             compression: Optional[str] = ..., keys: bool = ..., step: Optional[int] = ...,
             on_bad_record: _OnBad = ...) -> Pipeline: ...
