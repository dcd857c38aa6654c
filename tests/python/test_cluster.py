"""tfq.cluster and tfq.spark are installed with the package (copies of tools/tfq_feed_worker.py
and examples/spark/tfq_spark.py): they import from it, and tfq.cluster builds tfq-feed's queue."""
import tfq


def test_spark_module_imports_without_pyspark():
    import tfq.spark
    assert callable(tfq.spark.feed_rdd) and callable(tfq.spark.ship)


def test_cluster_parses_tfq_feed_specs(tf):
    import tfq.cluster as tfw
    assert tfw.parse_spec('int64,float32:0.5,string:"a,b"') == [tf.int64, tf.float32,
                                                                  tf.string]
    assert tfq.cluster.queue_name("q", "workers", 3) == "q_w3"
