"""Fixtures of the python suite: the reference TensorFlow (skips loudly without it, fails under
CI=true) and data files."""
import os
import sys

import pytest


@pytest.fixture(scope="session")
def tf():
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow
    except ImportError as e:
        msg = "TensorFlow is not importable (%s): the reference checks cannot run" % e
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        sys.stderr.write("SKIP: " + msg + "\n")
        pytest.skip(msg)
    return tensorflow
