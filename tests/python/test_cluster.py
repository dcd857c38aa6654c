"""tfq.cluster and tfq.spark are installed with the package (tfq.cluster: a copy of
tools/tfq_feed_worker.py; tfq.spark: the one copy, examples/spark/tfq_spark.py is a shim): they
import from it, and tfq.cluster builds tfq-feed's queue."""
import importlib.util
import os

import tfq

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_spark_module_imports_without_pyspark():
    import tfq.spark
    assert callable(tfq.spark.feed_rdd) and callable(tfq.spark.ship)


def test_cluster_parses_tfq_feed_specs(tf):
    import tfq.cluster as tfw
    assert tfw.parse_spec('int64,float32:0.5,string:"a,b"') == [tf.int64, tf.float32,
                                                                  tf.string]
    assert tfq.cluster.queue_name("q", "workers", 3) == "q_w3"


def test_spark_example_shim_is_the_package():
    """examples/spark/tfq_spark.py holds no second copy: its names are tfq.spark's."""
    import tfq.spark
    spec = importlib.util.spec_from_file_location(
        "tfq_spark_shim", os.path.join(ROOT, "examples", "spark", "tfq_spark.py"))
    shim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shim)
    for name in ("TFCluster", "feed_rdd", "pipe_command", "spark_context", "kill_run", "_short"):
        assert getattr(shim, name) is getattr(tfq.spark, name), name
    assert shim.ship is not tfq.spark.ship  # the shim's ship(sc) adds the example's node.py


def test_examples_import_the_installed_package():
    """examples/distributed and examples/spark take tfq.cluster from the package, not tools/."""
    for ex in ("distributed", "spark"):
        with open(os.path.join(ROOT, "examples", ex, "node.py")) as f:
            src = f.read()
        assert "import tfq.cluster as tfw" in src and "tfq_feed_worker" not in src, ex
