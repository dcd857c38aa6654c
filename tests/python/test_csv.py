"""tfq.data.csv against Python's csv module and tf.io.decode_csv (the venv's TensorFlow)."""
import csv as pycsv
import random
import re

import numpy as np
import pytest

import tfq


def write_csv(path, rows, header=None):
    with open(path, "w", newline="") as f:
        w = pycsv.writer(f, lineterminator="\n")
        if header:
            w.writerow(header)
        w.writerows(rows)


def make_rows(n, seed=1):
    rng = random.Random(seed)
    words = ["a", "b,c", 'say "hi"', "", "x y", "zz"]
    rows = []
    for i in range(n):
        f = "" if rng.random() < 0.1 else repr(rng.uniform(-1e3, 1e3))
        rows.append([str(i), f, rng.choice(words), str(rng.randint(-2**40, 2**40))])
    return rows


@pytest.fixture
def data(tmp_path):
    rows = make_rows(1000)
    path = tmp_path / "d.csv"
    write_csv(path, rows, header=["id", "f", "s", "big"])
    return path, rows


def collect(p):
    out = {}
    for b in p:
        for k, v in b.items():
            out.setdefault(k, []).append(v)
    return {k: np.concatenate(v) for k, v in out.items()}


def test_values_match_python_csv_unshuffled(data):
    path, rows = data
    p = tfq.data.csv(path, [[0], [-1.0], [""], [np.int64(0)]], skip_header_lines=1,
                     batch_size=64, shuffle=False)
    got = collect(p)
    assert list(got) == ["c0", "c1", "c2", "c3"]
    assert got["c0"].dtype == np.int32 and got["c1"].dtype == np.float32
    assert got["c3"].dtype == np.int64 and got["c2"].dtype == object
    assert got["c0"].tolist() == [int(r[0]) for r in rows]
    want_f = np.array([np.float32(float(r[1])) if r[1] else np.float32(-1.0) for r in rows],
                      dtype=np.float32)
    np.testing.assert_array_equal(got["c1"], want_f)
    assert got["c2"].tolist() == [r[2].encode() for r in rows]
    assert got["c3"].tolist() == [int(r[3]) for r in rows]


def test_header_inference_and_shuffle_is_a_permutation(data):
    path, rows = data
    with tfq.data.csv(path, header=True, batch_size=128, seed=3, min_after_dequeue=100) as p:
        assert p.column_names == ["id", "f", "s", "big"]
        assert [c[1] for c in p.columns] == ["int64", "float64", "string", "int64"]
        got = collect(p)
    ids = got["id"].tolist()
    assert ids != sorted(ids), "shuffle=True left the input order"
    assert sorted(ids) == list(range(len(rows)))
    by_id = dict(zip(ids, got["s"].tolist()))
    assert all(by_id[int(r[0])] == r[2].encode() for r in rows)


def test_batches_are_dicts_of_batch_size(data):
    path, rows = data
    sizes = [len(b["id"]) for b in tfq.data.csv(path, header=True, batch_size=300, seed=1)]
    assert sizes == [300, 300, 300, 100]
    sizes = [len(b["id"]) for b in tfq.data.csv(path, header=True, batch_size=300, seed=1,
                                                drop_remainder=True)]
    assert sizes == [300, 300, 300]


def test_shards_partition_the_records(data):
    path, rows = data
    seen = []
    for i in range(3):
        got = collect(tfq.data.csv(path, header=True, shard=(i, 3), batch_size=50, seed=i))
        assert sorted(got["id"].tolist()) == [k for k in range(len(rows)) if k % 3 == i]
        seen += got["id"].tolist()
    assert sorted(seen) == list(range(len(rows)))


def test_epochs_and_select_cols(data):
    path, rows = data
    got = collect(tfq.data.csv(path, "int64,string:", skip_header_lines=1, select_cols=[0, 2],
                               num_epochs=2, shuffle=False, batch_size=100))
    assert got["c0"].tolist() == [int(r[0]) for r in rows] * 2
    assert got["c1"].tolist() == [r[2].encode() for r in rows] * 2


def test_bad_records_budget_and_callback(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("1,2\n3,x\n5,6\n7,y\n9,10\n")
    seen = []
    got = collect(tfq.data.csv(path, "int32:0,int32:0", max_bad_records=2, shuffle=False,
                               on_bad_record=lambda w, r: seen.append((w, r))))
    assert got["c0"].tolist() == [1, 5, 9]
    assert [w for w, _ in seen] == ["%s:2" % path, "%s:4" % path]
    with pytest.raises(tfq.errors.InvalidArgumentError) as e:
        collect(tfq.data.csv(path, "int32:0,int32:0", max_bad_records=1, shuffle=False,
                             on_bad_record=lambda w, r: None))
    assert "x" in str(e.value) or "y" in str(e.value)


def test_errors_are_tf_classes(tmp_path):
    with pytest.raises(tfq.errors.NotFoundError):
        tfq.data.csv(tmp_path / "missing.csv")
    with pytest.raises(tfq.errors.InvalidArgumentError) as e:
        tfq.data.csv(tmp_path / "x.csv", "int32", batch_size=0)
    assert "batch_size" in str(e.value)
    assert isinstance(e.value, tfq.errors.OpError)
    assert e.value.error_code == tfq.errors.INVALID_ARGUMENT


def test_against_tf_decode_csv(tf, data):
    path, rows = data
    lines = open(path).read().splitlines()[1:]
    defaults = [[0], [-1.0], [""], [np.int64(0)]]
    want = tf.io.decode_csv(lines, record_defaults=[[0], [-1.0], [""],
                                                    tf.constant([0], dtype=tf.int64)])
    got = collect(tfq.data.csv(path, defaults, skip_header_lines=1, batch_size=97,
                               shuffle=False))
    for i, w in enumerate(want):
        g = got["c%d" % i]
        w = w.numpy()
        assert g.dtype == w.dtype
        assert g.tolist() == w.tolist()


def test_decode_error_message_is_tfs(tf, tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("1,2\n3,abc\n")
    with pytest.raises(tf.errors.InvalidArgumentError) as want:  # the bad record alone
        tf.io.decode_csv(["3,abc"], record_defaults=[[0], [0]])
    with pytest.raises(tfq.errors.InvalidArgumentError) as got:
        collect(tfq.data.csv(path, [[0], [0]], shuffle=False))
    tf_msg = re.sub(r"^\{\{[^}]*\}\} ", "", want.value.message.split(" [Op:")[0])
    assert str(got.value) == "%s:2: %s" % (path, tf_msg)


def test_text_lines(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("alpha\nbeta\n\ngamma\n")
    got = collect(tfq.data.text(path, shuffle=False, batch_size=3))
    assert got["line"].tolist() == [b"alpha", b"beta", b"", b"gamma"]


def test_header_auto_detects_a_header_line_and_a_bom(tmp_path):
    # oracle: Python's csv module reads the same files; csv.Sniffer says whether line 1 is a
    # header
    rows = [["%d" % i, "%.2f" % (i / 3), "w%d" % (i % 5)] for i in range(300)]
    with_header = tmp_path / "h.csv"
    with_header.write_bytes(b"\xef\xbb\xbf" + ("id,price,word\n" + "".join(
        ",".join(r) + "\n" for r in rows)).encode())
    no_header = tmp_path / "n.csv"
    no_header.write_text("".join(",".join(r) + "\n" for r in rows))
    for path, has in ((with_header, True), (no_header, False)):
        text = path.read_bytes().decode("utf-8-sig")
        assert pycsv.Sniffer().has_header(text[:2048]) == has
        want = list(pycsv.reader(text.splitlines()))[1 if has else 0:]
        with tfq.data.csv(str(path), header="auto", shuffle=False, batch_size=1000) as it:
            b = next(it)
        names = list(b)
        assert names == (["id", "price", "word"] if has else ["c0", "c1", "c2"])
        assert len(b[names[0]]) == len(want)
        assert [int(x) for x in b[names[0]]] == [int(r[0]) for r in want]
        assert [bytes(x).decode() for x in b[names[2]]] == [r[2] for r in want]
    with pytest.raises(ValueError):
        tfq.data.csv(str(no_header), header="yes")
