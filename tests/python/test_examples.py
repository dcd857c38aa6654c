"""tfq.data.examples and tfq.data.tfrecord against tf.io.parse_example (the venv's TF)."""
import numpy as np
import pytest

import tfq


def write_examples(tf, path, n):
    recs = []
    with tf.io.TFRecordWriter(str(path)) as w:
        for i in range(n):
            f = {"id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                 "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5, -i / 3])),
                 "tags": tf.train.Feature(bytes_list=tf.train.BytesList(
                     value=[b"t%d" % k for k in range(i % 4)]))}
            if i % 5:
                f["w"] = tf.train.Feature(float_list=tf.train.FloatList(value=[i / 7.0]))
            rec = tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()
            w.write(rec)
            recs.append(rec)
    return recs


def test_parse_example_matches_tf(tf, tmp_path):
    path = tmp_path / "e.tfrecord"
    recs = write_examples(tf, path, 300)
    tf_feats = {"id": tf.io.FixedLenFeature([], tf.int64),
                "x": tf.io.FixedLenFeature([2], tf.float32),
                "w": tf.io.FixedLenFeature([], tf.float32, default_value=-1.0),
                "tags": tf.io.VarLenFeature(tf.string)}
    feats = {"id": tfq.io.FixedLenFeature([], "int64"),
             "x": tfq.io.FixedLenFeature([2], np.float32),
             "w": tfq.io.FixedLenFeature([], "float32", default_value=-1.0),
             "tags": tfq.io.VarLenFeature("string")}
    bs = 64
    p = tfq.data.examples(path, feats, batch_size=bs, shuffle=False)
    for k, batch in enumerate(p):
        want = tf.io.parse_example(recs[k * bs:(k + 1) * bs], tf_feats)
        for key in ("id", "x", "w"):
            assert batch[key].dtype == want[key].numpy().dtype
            np.testing.assert_array_equal(batch[key], want[key].numpy())
        ind, vals, shape = batch["tags"]
        np.testing.assert_array_equal(ind, want["tags"].indices.numpy())
        assert vals.tolist() == want["tags"].values.numpy().tolist()
        np.testing.assert_array_equal(shape, want["tags"].dense_shape.numpy())
    assert p.stats()["records_out"] == 300


def test_tf_feature_classes_are_taken(tf, tmp_path):
    path = tmp_path / "e.tfrecord"
    write_examples(tf, path, 10)
    p = tfq.data.examples(path, {"x": tf.io.FixedLenFeature([2], tf.float32)}, shuffle=False,
                          batch_size=10)
    assert next(p)["x"].shape == (10, 2)


def test_inferred_features_and_raw_records(tf, tmp_path):
    path = tmp_path / "e.tfrecord"
    recs = write_examples(tf, path, 50)
    p = tfq.data.examples(path, batch_size=50, shuffle=False)
    assert p.features_spec == "id:int64, tags:string[*], w:float32[*], x:float32[2]"
    b = next(p)
    assert b["id"].tolist() == list(range(50))
    raw = next(tfq.data.tfrecord(path, batch_size=50, shuffle=False))
    assert raw["record"].tolist() == recs
