"""tfq.io: TF's feature classes (tf.io.FixedLenFeature, VarLenFeature, FixedLenSequenceFeature,
SparseFeature) for tfq.data.examples.  Same fields and defaults as TF's namedtuples."""
import collections


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """TF's tf.io.FixedLenFeature(shape, dtype, default_value=None)."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """TF's tf.io.VarLenFeature(dtype): a sparse column (indices, values, dense_shape)."""


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """TF's tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """TF's tf.io.SparseFeature: index_key a key or a list of keys (one size each)."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


# tfq_dtype codes (tfq/tensor.h) of the three Example types.
_DTYPE_CODES = {"float32": 1, "int64": 9, "string": 7}


def _dtype_name(dtype):
    """'float32', 'int64', 'string', ... from a str, numpy dtype, tf.DType or Python type."""
    if dtype is float:
        return "float32"
    if dtype is int:
        return "int64"
    if dtype in (str, bytes, object):
        return "string"
    name = getattr(dtype, "name", None)
    if name is None and isinstance(dtype, type):
        name = dtype.__name__
    if name is None:
        name = str(dtype)
    name = {"float": "float32", "double": "float64", "str": "string", "bytes": "string",
            "bytes_": "string", "object": "string", "object_": "string",
            "long": "int64", "int": "int32"}.get(name, name)
    return name


def _feature_tuple(key, f):
    """(key, kind, dtype code, shape, flat default values) for _tfq.Pipeline."""
    name = _dtype_name(f.dtype)
    code = _DTYPE_CODES.get(name)
    if code is None:
        raise TypeError("Value passed to parameter 'dense_defaults' has DataType %s not in list "
                        "of allowed values: float32, int64, string" % name)
    if isinstance(f, VarLenFeature):
        return (key, "var", code, None, None)
    if isinstance(f, SparseFeature):
        index_keys = [f.index_key] if isinstance(f.index_key, str) else list(f.index_key)
        size = [f.size] if isinstance(f.size, int) else list(f.size)
        return (key, "sparse", code, tuple(size), (index_keys, f.value_key,
                                                   bool(f.already_sorted)))
    shape = None if f.shape is None else tuple(f.shape)
    vals = None
    if f.default_value is not None:
        vals = _flatten(f.default_value)
        if name == "string":
            vals = [v.encode() if isinstance(v, str) else bytes(v) for v in vals]
    if isinstance(f, FixedLenSequenceFeature):
        if not f.allow_missing:
            from . import errors
            raise errors.InvalidArgumentError(
                None, None, "Unsupported: FixedLenSequenceFeature requires allow_missing to be "
                "True.")
        return (key, "seq", code, shape, vals)
    return (key, "fixed", code, shape, vals)


def _flatten(v):
    tolist = getattr(v, "tolist", None)
    if tolist is not None:
        v = tolist()
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            out.extend(_flatten(x))
        return out
    return [v]


SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])
SparseTensorValue.__doc__ = "TF1's tf.compat.v1.SparseTensorValue: numpy arrays."

_RAW_CODES = {"float16": 19, "half": 19, "float32": 1, "float": 1, "float64": 2, "double": 2,
              "int32": 3, "uint16": 17, "uint8": 4, "int16": 5, "int8": 6, "int64": 9,
              "complex64": 8, "complex128": 18, "bool": 10, "bfloat16": 14}


def _parse(serialized, features, single):
    import numpy as np
    from . import _tfq, errors
    if not features:
        raise errors.InvalidArgumentError(
            None, None, "Argument `features` cannot be None or falsy. Got %r" % (features,))
    feats = [_feature_tuple(k, features[k]) for k in sorted(features)]
    if single:
        recs = serialized.encode() if isinstance(serialized, str) else bytes(serialized)
    else:
        recs = [r.encode() if isinstance(r, str) else bytes(r)
                for r in np.asarray(serialized, dtype=object).reshape(-1)]
    keys, sparse, slots = _tfq.parse_example(recs, feats, single)
    out, k = {}, 0
    for key, sp in zip(keys, sparse):
        key = key.decode("utf-8", "surrogateescape")
        if sp:
            out[key] = SparseTensorValue(np.asarray(slots[k]), _arr(np, slots[k + 1]),
                                         np.asarray(slots[k + 2]))
            k += 3
        else:
            out[key] = _arr(np, slots[k])
            k += 1
    return out


def _arr(np, t):
    if t.is_string:
        s = t.strings()
        a = np.empty(len(s), dtype=object)
        a[:] = s
        return a.reshape(t.shape)
    return np.asarray(t)


def parse_example(serialized, features, example_names=None, name=None):
    """tf.io.parse_example (tf.compat.v1.parse_example), eager: a dict of numpy arrays, a VarLen
    feature as a SparseTensorValue.  `serialized`: a vector of serialized tf.train.Example."""
    return _parse(serialized, features, False)


def parse_single_example(serialized, features, example_names=None, name=None):
    """tf.io.parse_single_example, eager: outputs without the batch dimension."""
    return _parse(serialized, features, True)


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """tf.io.decode_raw (tf.compat.v1.decode_raw), eager: each string reinterpreted as an array
    of out_type; the output has the shape of the input plus one dimension."""
    import numpy as np
    from . import _tfq, errors
    code = _RAW_CODES.get(_dtype_name(out_type))
    if code is None:
        raise errors.InvalidArgumentError(
            None, None, "Value passed to parameter 'out_type' has DataType %s not in list of "
            "allowed values: float16, float32, float64, int32, uint16, uint8, int16, int8, "
            "int64, complex64, complex128, bool, bfloat16" % _dtype_name(out_type))
    a = np.asarray(input_bytes, dtype=object)
    recs = [r.encode() if isinstance(r, str) else bytes(r) for r in a.reshape(-1)]
    t = _tfq.decode_raw(recs, code, bool(little_endian))
    # bfloat16: its bits as uint16 (numpy has no bfloat16)
    return np.asarray(t).reshape(a.shape + (t.shape[-1],))
