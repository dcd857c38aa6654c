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
    """TF's tf.io.SparseFeature (not yet taken by tfq.data.examples: TFQ_UNIMPLEMENTED)."""

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
        from . import errors
        raise errors.UnimplementedError(None, None, "SparseFeature %s: tfq.data.examples takes "
                                        "FixedLen, VarLen and FixedLenSequence features" % key)
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
