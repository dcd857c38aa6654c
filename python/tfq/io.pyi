from typing import Any, NamedTuple, Optional, Sequence

class FixedLenFeature(NamedTuple):
    shape: Sequence[int]
    dtype: Any
    default_value: Any = ...

class VarLenFeature(NamedTuple):
    dtype: Any

class FixedLenSequenceFeature(NamedTuple):
    shape: Sequence[int]
    dtype: Any
    allow_missing: bool = ...
    default_value: Any = ...

class SparseFeature(NamedTuple):
    index_key: Any
    value_key: str
    dtype: Any
    size: Any
    already_sorted: bool = ...
