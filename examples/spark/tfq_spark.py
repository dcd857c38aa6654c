"""The Spark integration of this example now lives in the package: ``import tfq.spark``
(python/tfq/spark.py, installed by ``pip install .`` on the driver and every executor).  This
shim keeps ``import tfq_spark`` (with this directory on sys.path) working, so there is one copy;
its ``ship(sc)`` ships this example's node.py, as before."""
import os

from tfq.spark import *  # noqa: F401,F403
from tfq.spark import _short, ship as _ship  # noqa: F401  (_short: the tests' error excerpts)

HERE = os.path.dirname(os.path.abspath(__file__))


def ship(sc, node_py=os.path.join(HERE, "node.py")):
    """tfq.spark.ship with this example's node.py."""
    _ship(sc, node_py)
