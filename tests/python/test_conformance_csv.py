"""Differential conformance, decode_csv family: the same scenarios through tf.compat.v1
(decode_csv, eager) and through tfq.decode_csv; values and dtypes, or the error class and
message, must agree.  The count of scenarios is printed by pytest (one test each)."""
import numpy as np
import pytest

import tfq
from tfconform import compare

D3 = [[0], [0.0], [""]]
SCENARIOS = [
    ("plain", ["1,2.5,a", "3,4,b"], D3, {}),
    ("empty fields take defaults", [",,", "7,,x"], [[5], [1.5], ["dflt"]], {}),
    ("quoted fields", ['1,2,"a,b"', '2,3,"say ""hi"""'], D3, {}),
    ("quotes off", ['1,2,"a'], D3, {"use_quote_delim": False}),
    ("tab delimiter", ["1\t2\tz"], D3, {"field_delim": "\t"}),
    ("na_value", ["NA,NA,NA", "1,2,x"], [[9], [8.0], ["q"]], {"na_value": "NA"}),
    ("select_cols", ["1,2,3,4"], [[0], [0]], {"select_cols": [1, 3]}),
    ("int64 column", ["9223372036854775807"], [np.array([0], dtype=np.int64)], {}),
    ("float64 column", ["0.1", "1e308", "-inf", "nan"], [np.array([0.0])], {}),
    ("float32 forms", [" 1.5", "0x1p3", "1e-50", "+3."], [[0.0]], {}),
    ("int32 forms", ["+12", "-0", "0012"], [[0]], {}),
    ("required present", ["1,2"], [np.array([], dtype=np.int32), [0]], {}),
    ("required missing", [",2"], [np.array([], dtype=np.int32), [0]], {}),
    ("bad int", ["1,abc"], [[0], [0]], {}),
    ("int32 overflow", ["2147483648"], [[0]], {}),
    ("int64 overflow", ["9223372036854775808"], [np.array([0], dtype=np.int64)], {}),
    ("bad float", ["1.2.3"], [[0.0]], {}),
    ("too many fields", ["1,2,3"], [[0], [0]], {}),
    ("too few fields", ["1"], [[0], [0]], {}),
    ("unterminated quote", ['"abc'], [[""]], {}),
    ("quote inside field", ['a"b'], [[""]], {}),
    ("empty record", [""], [[0]], {}),
    ("empty records, two columns", [""], [[0], [0]], {}),
    ("2-D records", [["1,a", "2,b"], ["3,c", "4,d"]], [[0], [""]], {}),
    ("scalar record", "5,e", [[0], [""]], {}),
    ("no records", np.array([], dtype=object), [[0], [""]], {}),
    ("select_cols beyond the record", ["1,2"], [[0], [0]], {"select_cols": [0, 5]}),
    ("bytes with NUL", [b"a\x00b,1"], [[""], [0]], {}),
    ("spaces are kept in strings", [" a , b "], [[""], [""]], {}),
    ("float default for empty", ["", "2"], [[-1.0]], {}),
]


@pytest.mark.parametrize("name,records,defaults,kw", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_decode_csv_conformance(tf, name, records, defaults, kw):
    tf_defaults = [tf.constant(d) if isinstance(d, np.ndarray) else d for d in defaults]
    r = compare(tf, lambda: [np.asarray(t.numpy(), dtype=object if t.dtype == tf.string
                                        else None)
                             for t in tf.compat.v1.decode_csv(records, tf_defaults, **kw)],
                lambda: tfq.decode_csv(records, defaults, **kw))
    if r is None:
        return
    want, got = r
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape
        if w.dtype.kind == "f":
            np.testing.assert_array_equal(g, w)  # NaN == NaN here
        else:
            assert g.tolist() == w.tolist()
