#!/usr/bin/env python3
"""Parsed tf.train.Examples into TensorFlow through the bridge (issue #17, "Bridge").

Builds a TF1 graph with tf.compat.v1 placeholders -- two dense ones (xy float32 [None, 2], id
int64 [None]), two tf.compat.v1.sparse_placeholder()s (tags int64 with shape [None, None], words
string without a shape) and a `serialized` string [None] -- and the ops the C test fetches:

  * computations on what tfq fed: tf.sparse.to_dense (which also checks that the indices are
    in TF's canonical order and in range), tf.sparse.reduce_sum per row, sums of the indices,
    values and dense_shape, string lengths, the dense sums and an element-wise op on each dense
    input;
  * the same records parsed by TensorFlow itself (tf.io.parse_example on `serialized`), so the
    C side can compare TF's view of tfq's outputs with TF's own parse, element by element.

The GraphDef goes to a temporary file; the C test (test_example_bridge.c) imports it, parses the
Examples it builds with tfq_parse_example_strings, feeds them with tfq_tf_feed_new_example (mode
A) and pushes the dense features into a shared FIFOQueue that a C API session dequeues (mode B).

    .venv/bin/python tests/tf/test_example_bridge.py build/tests/tf/test_example_bridge

Exit: the C test's (0 pass, 1 fail), 77 skip (TensorFlow or the test program missing; a failure
when CI=true).
"""
import os
import subprocess
import sys
import tempfile


def skip(msg):
    print("#" * 72 + f"\n# SKIPPED: {msg}\n" + "#" * 72, flush=True)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)


def build_graph(tf):
    g = tf.Graph()
    with g.as_default():
        v1 = tf.compat.v1
        xy = v1.placeholder(tf.float32, [None, 2], name="xy")
        ids = v1.placeholder(tf.int64, [None], name="id")
        tags = v1.sparse_placeholder(tf.int64, shape=[None, None], name="tags")
        words = v1.sparse_placeholder(tf.string, name="words")
        serialized = v1.placeholder(tf.string, [None], name="serialized")

        # What TensorFlow computes from the tensors tfq fed.
        tf.reduce_sum(xy, axis=0, name="xy_sum")
        tf.negative(xy, name="xy_neg")
        tf.reduce_sum(ids, name="id_sum")
        tf.add(ids, 1, name="id_plus1")
        tf.sparse.to_dense(tags, default_value=-7, name="tags_dense")
        tf.sparse.reduce_sum(tags, axis=1, name="tags_row_sum")
        tf.reduce_sum(tags.indices, axis=0, name="tags_ix_sum")
        tf.reduce_sum(tags.values, name="tags_val_sum")
        tf.identity(tags.dense_shape, name="tags_shape_out")
        tf.sparse.to_dense(words, default_value="<none>", name="words_dense")
        tf.reduce_sum(tf.strings.length(words.values), name="words_len_sum")
        tf.identity(words.dense_shape, name="words_shape_out")

        # TensorFlow's own parse of the same records (the C config's twin).
        ref = tf.io.parse_example(serialized, {
            "xy": tf.io.FixedLenFeature([2], tf.float32, default_value=[-1.5, 2.25]),
            "id": tf.io.FixedLenFeature([], tf.int64),
            "tags": tf.io.VarLenFeature(tf.int64),
            "words": tf.io.VarLenFeature(tf.string),
        })
        tf.identity(ref["xy"], name="ref_xy")
        tf.identity(ref["id"], name="ref_id")
        tf.sparse.to_dense(ref["tags"], default_value=-7, name="ref_tags_dense")
        tf.sparse.to_dense(ref["words"], default_value="<none>", name="ref_words_dense")
        tf.identity(ref["tags"].dense_shape, name="ref_tags_shape")
        tf.identity(ref["words"].dense_shape, name="ref_words_shape")

    names = [tags.indices.op.name, tags.values.op.name, tags.dense_shape.op.name,
             words.indices.op.name, words.values.op.name, words.dense_shape.op.name]
    want = ["tags/indices", "tags/values", "tags/shape",
            "words/indices", "words/values", "words/shape"]
    if names != want:  # the naming tfq_tf_feed_new_example relies on
        print(f"FAIL: sparse_placeholder op names {names}, expected {want}", flush=True)
        sys.exit(1)
    print(f"graph: {len(g.get_operations())} ops; sparse_placeholder ops {names} "
          f"(tags/shape is a {tags.dense_shape.op.type})", flush=True)
    return g.as_graph_def().SerializeToString()


def main():
    if len(sys.argv) != 2 or not os.path.exists(sys.argv[1]):
        skip("no test_example_bridge program: build tfq with the tensorflow feature")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except ImportError as e:
        skip(f"{e}: run this with the project venv (.venv/bin/python)")
    with tempfile.TemporaryDirectory(prefix="tfq_example_bridge_") as d:
        path = os.path.join(d, "example_bridge.pb")
        with open(path, "wb") as f:
            f.write(build_graph(tf))
        r = subprocess.run([sys.argv[1], path], timeout=150)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
