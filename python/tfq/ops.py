"""TF1's ops under their names, eager: tfq.decode_csv (tf.io.decode_csv / tf.compat.v1.decode_csv).
Values are numpy arrays, as TF 2's eager .numpy() gives them; errors are tfq.errors classes with
TF's messages."""
from . import _tfq
from .data import _numpy, errors

# tfq_dtype codes (tfq/tensor.h)
_CODES = {"float32": 1, "float64": 2, "int32": 3, "int64": 9, "string": 7}


def _column(d):
    """One record_defaults entry as TF converts it to a tensor: (dtype code, default | None).
    A value with a dtype (tf.Tensor, numpy array or scalar) keeps it; Python values convert as
    tf.constant converts them: float -> float32, int -> int32, str/bytes -> string, [] ->
    float32."""
    np = _numpy()
    if hasattr(d, "numpy") and hasattr(d, "dtype"):  # a tf.Tensor
        d = d.numpy()
    if hasattr(d, "dtype"):
        a = np.asarray(d)
        name = "string" if a.dtype.kind in "USOa" else a.dtype.name
    else:
        vals = list(d) if isinstance(d, (list, tuple)) else [d]
        a = np.asarray(vals, dtype=object)
        if not vals or all(isinstance(v, float) for v in vals):
            name = "float32"
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
            name = "int32"
        elif all(isinstance(v, (str, bytes)) for v in vals):
            name = "string"
        else:
            name = type(vals[0]).__name__
    if name not in _CODES:
        raise errors.InvalidArgumentError(
            None, None, "Value for attr 'OUT_TYPE' of %s is not in the list of allowed values: "
            "float, double, int32, int64, string" % name)
    if a.size == 0:
        return (_CODES[name], None)
    if a.size != 1:
        raise errors.InvalidArgumentError(
            None, None, "record_defaults[i] must be a scalar or a vector of one element")
    v = a.reshape(-1)[0]
    v = v.item() if hasattr(v, "item") else v
    if name == "string":
        v = v.encode() if isinstance(v, str) else bytes(v)
    return (_CODES[name], v)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """tf.io.decode_csv, eager: a list of numpy arrays, one per column, each of the shape of
    `records` (bytes, str, or an array/list of them).  record_defaults as TF takes them: [0.0]
    float32, [0] int32, [""] string, np.int64(0) / np.float64(0) their dtypes, [] (or an empty
    typed array) a required column."""
    np = _numpy()
    from . import train
    if isinstance(records, train.Tensor):  # a deferred record (tfq.train): a deferred decode
        return train._decode_csv_node(
            records, dict(record_defaults=record_defaults, field_delim=field_delim,
                          use_quote_delim=use_quote_delim, na_value=na_value,
                          select_cols=select_cols),
            [_column(d) for d in record_defaults])
    recs = np.asarray(records, dtype=object)
    flat = [r.encode() if isinstance(r, str) else bytes(r) for r in recs.reshape(-1)]
    cols = [_column(d) for d in record_defaults]
    enc = (lambda s: s.encode() if isinstance(s, str) else bytes(s))
    outs = _tfq.decode_csv(flat, cols, enc(field_delim), bool(use_quote_delim), enc(na_value),
                           [] if select_cols is None else [int(c) for c in select_cols])
    res = []
    for t in outs:
        if t.is_string:
            a = np.empty(len(flat), dtype=object)
            a[:] = t.strings()
        else:
            a = np.asarray(t)
        res.append(a.reshape(recs.shape))
    return res
