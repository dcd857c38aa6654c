"""The differential comparison shared by the conformance families: run a scenario through
TF and through tfq; both must raise the same class with the same message (TF's, without its
function-node prefix and op suffix), or both return (the values are compared by the caller)."""
import re

import numpy as np

import tfq


def tf_message(e):
    return re.sub(r"^\{\{[^}]*\}\} ", "", e.message.split(" [Op:")[0])


def compare(tf, want_fn, got_fn):
    try:
        want, want_err = want_fn(), None
    except tf.errors.OpError as e:
        want, want_err = None, e
    try:
        got, got_err = got_fn(), None
    except tfq.errors.OpError as e:
        got, got_err = None, e
    if want_err is not None:
        assert got_err is not None, "TF raised %r, tfq returned %r" % (want_err, got)
        assert type(got_err).__name__ == type(want_err).__name__
        assert str(got_err) == tf_message(want_err)
        return
    assert got_err is None, "tfq raised %r" % got_err
    return want, got


def norm(x):
    """A value as (kind, shape, list), recursively: TF tensors, numpy values, dicts, lists."""
    if hasattr(x, "numpy"):
        x = x.numpy()
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [norm(v) for v in x]
    if x is None:
        return None
    a = np.asarray(x)
    kind = "string" if a.dtype.kind in "SO" else a.dtype.name
    return (kind, a.shape, a.tolist())
