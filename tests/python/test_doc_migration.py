"""docs/migrating-from-tf1.md: the TF1 program and its tfq port, taken from the markdown, both run
(TF1 in graph mode from the venv's TensorFlow, the port through tfq) on the same file; what they
print must be the same (the records seen, as a multiset: the shuffle's order differs), and the
port must differ from the original only in names."""
import os
import re
import subprocess
import sys

import pytest

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "migrating-from-tf1.md")


def block(marker):
    text = open(DOC).read()
    m = re.search(r"<!-- %s -->\n```python\n(.*?)```" % re.escape(marker), text, re.S)
    assert m, "no %s block in docs/migrating-from-tf1.md" % marker
    return m.group(1)


def run(code, cwd):
    import tfq  # the package under test, wherever it was imported from
    path = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(tfq.__file__)))] +
                           os.environ.get("PYTHONPATH", "").split(os.pathsep))
    p = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                       timeout=300,
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=path))
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def test_port_changes_names_only():
    tf1, port = block("tf1-program"), block("tfq-port")
    head = "import tensorflow.compat.v1 as tf\ntf.disable_eager_execution()\n"
    assert tf1.startswith(head) and port.startswith("import tfq\n")
    norm = (lambda s: re.sub(r"\s+", " ", s))
    assert norm(port[len("import tfq\n"):].replace("tfq.", "tf.")) == norm(tf1[len(head):])


def test_tf1_program_and_tfq_port_print_the_same(tf, tmp_path):
    with open(tmp_path / "train.csv", "w") as f:
        f.write("x1,x2,target\n")
        for i in range(61):
            f.write("%d.25,%d.5,%d\n" % (i, -i, i % 7))
    want = run(block("tf1-program"), tmp_path)
    got = run(block("tfq-port"), tmp_path)
    assert got == want
    assert want.splitlines()[0] == "No more training instances"
    assert want.splitlines()[1].startswith("122 [((0.25, 0.5), 0), ((0.25, 0.5), 0), ((1.25,")
