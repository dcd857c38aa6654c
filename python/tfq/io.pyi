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

class SparseTensorValue(NamedTuple):
    indices: Any
    values: Any
    dense_shape: Any

def parse_example(serialized: Any, features: dict[str, Any], example_names: Any = ...,
                  name: Optional[str] = ...) -> dict[str, Any]: ...
def parse_single_example(serialized: Any, features: dict[str, Any], example_names: Any = ...,
                         name: Optional[str] = ...) -> dict[str, Any]: ...
def decode_raw(input_bytes: Any, out_type: Any, little_endian: bool = ...,
               fixed_length: Optional[int] = ..., name: Optional[str] = ...) -> Any: ...
