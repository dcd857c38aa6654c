#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets line_reader, tfrecord, padding, cli_args and example under
tests/fuzz/corpus/<target>/seed-* (decode_csv's corpus is older and kept as is).  Each seed is
small and meaningful; the input layouts are described at the top of each fuzz_<target>.c.
Deterministic: rerunning rewrites the same files.  Files named regression-* are never touched.

  python3 tests/fuzz/gen_seeds.py"""
import gzip
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(records):
    out = b""
    for r in records:
        head = struct.pack("<Q", len(r))
        out += head + struct.pack("<I", masked(crc32c(head))) + r
        out += struct.pack("<I", masked(crc32c(r)))
    return out


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def line_reader():
    # header: mode, opts, buffer byte, truncation; see fuzz_line_reader.c
    texts = {
        "lines": b"a\nb\nc\n",
        "crlf": b"a\r\nb\r\n",
        "no_final_nl": b"first\nlast",
        "empty": b"",
        "only_nl": b"\n",
        "only_cr": b"\r",
        "cr_inside": b"a\rb\na\r\r\n",
        "blank_lines": b"\n\nx\n\n",
        "csv_header": b"x1,x2,y\n1.5,2,3\n4,5.5,6\n7,8,9",
        "nul_bytes": b"a\x00b\n\x00\n\xff\xfe\n",
        "long_line": b"short\n" + b"L" * 300 + b"\nend\n",
        "buffer_cross": b"".join(b"%03d" % i + b"x" * 90 + b"\n" for i in range(8)),
        "final_cr": b"a\nb\r",
    }
    modes = [
        ("plain_read", 0x00, 0x00), ("plain_batch", 0x08, 0x30), ("gzip_read", 0x01, 0x01),
        ("gzip_batch_skip", 0x09, 0x22), ("zlib_read", 0x02, 0x00), ("zlib_batch", 0x0A, 0xF1),
    ]
    for i, (tname, text) in enumerate(sorted(texts.items())):
        mname, mode, opts = modes[i % len(modes)]
        write("line_reader", f"{tname}-{mname}", bytes([mode, opts, 0, 0]) + text)
    body = texts["csv_header"]
    write("line_reader", "skip3_maxline16", bytes([0x08, 0x3B, 1, 0]) + body)
    write("line_reader", "maxline1", bytes([0x00, 0x04, 0, 0]) + b"a\nbb\n")
    write("line_reader", "maxline200_long", bytes([0x08, 0x0C, 0, 0]) + texts["long_line"])
    write("line_reader", "gzip_truncated", bytes([0x01, 0x00, 0, 9]) + texts["buffer_cross"])
    write("line_reader", "gzip_truncated_compat", bytes([0x19, 0x00, 0, 20]) + texts["buffer_cross"])
    write("line_reader", "zlib_truncated_batch", bytes([0x0A, 0x70, 0, 3]) + texts["lines"])
    gz = gzip.compress(b"x\ny\n", mtime=0)
    write("line_reader", "raw_gzip_valid", bytes([0x03, 0x00, 0, 0]) + gz)
    write("line_reader", "raw_gzip_multimember", bytes([0x0B, 0x10, 0, 0]) + gz + gzip.compress(b"z\n", mtime=0))
    write("line_reader", "raw_gzip_corrupt", bytes([0x03, 0, 0, 0]) + gz[:12] + b"\x00\xff" + gz[14:])
    write("line_reader", "raw_gzip_truncated", bytes([0x03, 0, 0, 0]) + gz[:-5])
    write("line_reader", "raw_gzip_trailing_garbage", bytes([0x03, 0, 0, 0]) + gz + b"junk")
    write("line_reader", "raw_gzip_bad_magic", bytes([0x03, 0, 0, 0]) + b"\x1f\x8c\x08\x00garbage")
    write("line_reader", "raw_zlib_valid", bytes([0x07, 0, 0, 0]) + zlib.compress(b"p\nq\n"))
    write("line_reader", "raw_zlib_corrupt", bytes([0x07, 0, 0, 0]) + b"\x78\x9c\x01\x02\x03")
    write("line_reader", "raw_zlib_compat_truncated", bytes([0x17, 0, 0, 0]) + zlib.compress(b"p\nq\n")[:-3])


def tfrecord_seeds():
    # header: mode, separator, buffer byte, batch byte; see fuzz_tfrecord.c
    recs = [b"alpha", b"", b"x" * 100, bytes(range(256))]
    good = tfrecord(recs)
    one = tfrecord([b"hello"])
    write("tfrecord", "none_read", bytes([0x00, ord(","), 0, 0]) + good)
    write("tfrecord", "none_batch", bytes([0x04, ord(","), 0, 2]) + good)
    write("tfrecord", "none_empty", bytes([0x00, 0, 0, 0]))
    write("tfrecord", "none_one", bytes([0x10, ord("l"), 0, 0]) + one)
    write("tfrecord", "none_cut_header", bytes([0x00, 0, 0, 0]) + good + good[:7])
    write("tfrecord", "none_cut_header_compat", bytes([0x08, 0, 0, 0]) + good + good[:7])
    write("tfrecord", "none_cut_payload", bytes([0x04, 0, 0, 3]) + good[:-10])
    bad_len_crc = bytearray(one)
    bad_len_crc[8] ^= 1
    write("tfrecord", "none_bad_length_crc", bytes([0x00, 0, 0, 0]) + bytes(bad_len_crc))
    write("tfrecord", "none_bad_length_crc_second", bytes([0x00, 0, 0, 0]) + one + bytes(bad_len_crc))
    bad_data_crc = bytearray(one)
    bad_data_crc[-1] ^= 0x80
    write("tfrecord", "none_bad_payload_crc", bytes([0x04, 0, 0, 0]) + bytes(bad_data_crc))
    # (regression-tfrecord-huge-length, kept by hand: a valid header announcing 2^40 bytes made
    # the reader allocate them before reading; now DATA_LOSS "truncated record")
    write("tfrecord", "none_small_buffer", bytes([0x04, 0, 0, 15]) + tfrecord([b"y" * 500, b"z" * 70]))
    write("tfrecord", "zlib_valid", bytes([0x01, 0, 0, 0]) + zlib.compress(good))
    write("tfrecord", "zlib_truncated", bytes([0x01, 0, 0, 0]) + zlib.compress(good)[:-6])
    write("tfrecord", "zlib_truncated_compat", bytes([0x09, 0, 0, 0]) + zlib.compress(good)[:-6])
    write("tfrecord", "gzip_valid", bytes([0x06, 0, 0, 1]) + gzip.compress(good, mtime=0))
    write("tfrecord", "gzip_multimember", bytes([0x02, 0, 0, 0]) + gzip.compress(one, mtime=0) * 2)
    write("tfrecord", "gzip_corrupt", bytes([0x02, 0, 0, 0]) + gzip.compress(good, mtime=0)[:20] + b"\xde\xad")
    write("tfrecord", "gzip_of_garbage", bytes([0x02, 0, 0, 0]) + gzip.compress(b"not a tfrecord", mtime=0))
    # round trip variants: text split at the separator, each compression, flush
    text = b"a,b,,ccc,dddd,"
    for name, mode in [("rt_zlib", 0x10), ("rt_gzip", 0x20), ("rt_gzip3", 0x30),
                       ("rt_zlib_flush", 0x50), ("rt_gzip_flush_batch", 0x64), ("rt_none_flush", 0x40)]:
        write("tfrecord", name, bytes([mode, ord(","), 0, 5]) + text)
    write("tfrecord", "rt_all_separators", bytes([0x20, 0, 0, 0]) + b"\x00" * 10)
    write("tfrecord", "rt_big_record", bytes([0x14, 0xFF, 2, 0]) + bytes(range(255)) * 8)


def padding():
    # see fuzz_padding.c: ncomp, (dtype, rank, dims...)*, capacity, registry probe, ops
    F, I32, S, I64, B, U8, D = range(7)
    U = 0xFF  # unknown dim
    ENQ, ENQM, DEQ, DEQM, DEQU, CLOSE = range(6)

    def prog(comps, cap, probe, ops):
        out = bytes([len(comps) - 1])
        for dt, dims in comps:
            out += bytes([dt, 0xFF if dims is None else len(dims)])
            out += bytes(dims or [])
        return out + bytes([cap - 1]) + bytes(probe) + bytes(ops)

    # 1 component string [?]: enqueue widths 1,2,3, then dequeue_many(3)
    write("padding", "string_vector", prog([(S, [U])], 8, [0], [ENQ, 5, 1, ENQ, 5, 2, ENQ, 5, 3, DEQM, 3]))
    # TF's test: shapes ((None,), (1, None)), strings and ints
    write("padding", "tf_partial_two_components",
          prog([(S, [U]), (I32, [1, U])], 8, [0, 0, 0],
               [ENQ, 5, 1, 5, 1, ENQ, 5, 2, 5, 2, ENQ, 5, 3, 5, 3, DEQM, 3, DEQ]))
    write("padding", "enqueue_many_then_up_to",
          prog([(F, [U, 2])], 4, [0, 0], [ENQM, 3, 5, 2, DEQU, 5, CLOSE, 0, DEQU, 5, DEQU, 1]))
    write("padding", "full_queue_deadline", prog([(I64, [])], 2, [], [ENQ, 5, ENQ, 5, ENQ, 5, DEQ, DEQ, DEQ]))
    write("padding", "enqueue_many_partial_room", prog([(U8, [U])], 3, [0], [ENQM, 4, 5, 2, DEQM, 5, DEQM, 3]))
    write("padding", "close_twice", prog([(B, [U])], 4, [0], [ENQ, 5, 3, CLOSE, 0, CLOSE, 0, CLOSE, 1, DEQ, DEQ, ENQ, 5, 1]))
    write("padding", "dequeue_many_zero", prog([(D, [U, 3, U])], 4, [0, 0, 0], [DEQM, 0, DEQU, 0]))
    write("padding", "wrong_rank", prog([(F, [U])], 4, [0], [ENQ, 0, 1, 2, ENQ, 0, 0, 1]))
    write("padding", "wrong_known_dim", prog([(I32, [2, U])], 4, [0, 0], [ENQ, 1, 3, ENQ, 5, 3, DEQ]))
    write("padding", "wrong_dtype", prog([(S, [U])], 4, [0], [ENQ, 2, 1, ENQM, 2, 2, 1]))
    write("padding", "many_batch_mismatch", prog([(F, [U]), (I32, [])], 8, [0], [ENQM, 2, 5, 1, 3, ENQM, 2, 5, 1, 5, DEQU, 4]))
    write("padding", "unknown_rank", prog([(F, None)], 4, [], [ENQ, 5]))
    write("padding", "invalid_dim", bytes([0, F, 1, 0xFD, 3]))
    write("padding", "fully_known", prog([(F, [2, 2]), (S, [])], 4, [0, 0], [ENQ, 5, 5, ENQM, 2, 5, 5, DEQM, 3]))
    write("padding", "registry_incompatible", prog([(F, [3, U])], 4, [2, 0], [ENQ, 5, 1]))
    write("padding", "registry_compatible", prog([(F, [3, U])], 4, [1, 2], [ENQ, 5, 1, DEQ]))
    write("padding", "rank4_partial", prog([(I32, [U, 1, U, 2])], 4, [0, 0, 0, 0],
                                           [ENQ, 5, 2, 1, ENQ, 5, 1, 3, DEQM, 2]))
    write("padding", "rank5_partial", prog([(F, [U, 1, 1, 1, 1])], 4, [0] * 5, [ENQ, 5, 2, ENQ, 5, 1, DEQM, 2]))
    write("padding", "zero_size_dims", prog([(S, [U, U])], 4, [0, 0], [ENQ, 5, 0, 3, ENQ, 5, 2, 0, DEQM, 2]))
    write("padding", "three_components",
          prog([(I64, [U]), (B, []), (S, [2, U])], 8, [0, 0, 0],
               [ENQM, 3, 5, 2, 5, 5, 1, DEQ, DEQM, 2, CLOSE, 1, DEQU, 1]))


# The CLI cases and extras kept after minimising with build-fuzz-clang/fuzz_cli_args -merge=1
# (the others added no coverage).
CLI_KEEP = {
        "capacity_mad",
        "compression_none_on_gzip",
        "drop_remainder",
        "empty_file",
        "err_corrupt_tfrecord",
        "err_directory",
        "err_field_count",
        "err_fixed_truncated",
        "err_int_range",
        "err_malformed_quote",
        "err_stdin_bad_number",
        "err_truncated_tfrecord",
        "field_delim",
        "field_delim_tab",
        "fixed_all",
        "gzip_explicit",
        "gzip_magic_noext",
        "help_short",
        "huge_batch",
        "inferred_spec",
        "iris_none_stats",
        "iris_table_seed",
        "na_value",
        "nonfinite_jsonl",
        "num_epochs",
        "quiet",
        "seed_printed",
        "seed_reproducible_big",
        "select_and_spec",
        "select_cols_infer",
        "shuffle_flag",
        "spec_quoted",
        "spec_required_and_quoted",
        "stdin_gzip",
        "stdin_implicit",
        "table_truncation",
        "text_utf8_jsonl",
        "text_utf8_table",
        "tf_conformance",
        "tfrecord_explicit",
        "threads_multiset",
        "tsv_gz",
        "usage_bad_batch",
        "usage_bad_batches",
        "usage_bad_compression",
        "usage_bad_default",
        "usage_bad_delim",
        "usage_bad_format",
        "usage_bad_output",
        "usage_bad_seed",
        "usage_bad_threads",
        "usage_capacity_vs_mad",
        "usage_csv_option_on_text",
        "usage_empty_spec",
        "usage_epochs_on_pipe",
        "usage_fixed_needs_record_bytes",
        "usage_record_bytes_not_fixed",
        "usage_select_not_increasing",
        "usage_select_vs_defaults",
        "usage_stdin_twice",
        "usage_unknown_option",
        "usage_unknown_type",
        "usage_unterminated_quote",
        "version_short"
}


def cli_args():
    sys.path.insert(0, os.path.join(HERE, "..", "cli"))
    import run_cli_tests as rc

    seen = set()
    for name, c in sorted(rc.CASES.items()):
        if name not in CLI_KEEP:
            continue
        args = [a.replace("{", "").replace("}", "") for a in c["args"]]
        data = b"\x00".join(a.encode() for a in args)
        if data in seen:
            continue
        seen.add(data)
        write("cli_args", name, data)
    extra = {
        "fixed_all": ["-f", "fixed", "--record-bytes=8", "--header-bytes=1", "--footer-bytes=2",
                      "--hop-bytes=3", "x.bin"],
        "spec_quoted": ["-d", 'string:"a,""b""",int:3,float:1e3,double:-0.5,long:9', "x.csv"],
        "select_and_spec": ["--select-cols=0,2,5", "-d", "int,int,str", "f.tsv.gz"],
        "capacity_mad": ["--capacity=10", "--min-after-dequeue=9", "--seed=18446744073709551615", "-j", "256"],
        "tsv_gz": ["--no-quote-delim", "--na-value=", "a.tsv.gz", "b.csv"],
        "huge_batch": ["-b", "9223372036854775807", "f.csv"],
    }
    for name, args in extra.items():
        if name in CLI_KEEP:
            write("cli_args", name, b"\x00".join(a.encode() for a in args))


# ---- example: serialized tf.train.Examples (the encoding Python's protobuf writes: packed lists,
# map entries key then value; each entry checked byte for byte against
# tf.train.Example.SerializeToString, which may write the entries in another order) ------------

def _varint(v):
    v &= (1 << 64) - 1
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80])
        v >>= 7
    return out + bytes([v])


def _ld(tag, body):
    return bytes([tag]) + _varint(len(body)) + body


def _feature(v, packed=True):
    if v is None:
        return b""
    if not v:
        return _ld(0x1A, b"")
    if isinstance(v[0], bytes):
        return _ld(0x0A, b"".join(_ld(0x0A, x) for x in v))
    if isinstance(v[0], float):
        vals = [struct.pack("<f", x) for x in v]
        return _ld(0x12, _ld(0x0A, b"".join(vals)) if packed else b"".join(b"\x0d" + x for x in vals))
    if packed:
        return _ld(0x1A, _ld(0x0A, b"".join(_varint(x) for x in v)))
    return _ld(0x1A, b"".join(b"\x08" + _varint(x) for x in v))


def _example(items, packed=True):
    """items: (key, values) pairs in wire order; values None = an empty Feature."""
    entries = b"".join(_ld(0x0A, _ld(0x0A, k.encode()) + _ld(0x12, _feature(v, packed)))
                       for k, v in items)
    return _ld(0x0A, entries)


def example():
    # header: mode (config = mode % 4, names = mode & 4, batch of 0 = mode & 8), separator
    nan = struct.unpack("<f", struct.pack("<I", 0x7FA00001))[0]
    recs = {
        0: [
            [("a", [1.0, 2.0]), ("b", [7]), ("c", [b"x", b"\x00y"])],
            [("b", [-1]), ("c", [])],
            [("a", [nan, -0.0]), ("b", [2**63 - 1]), ("a", None)],
            [("c", [b"only"])],
        ],
        1: [
            [("a", [0.5]), ("b", [1, 2, 3]), ("", [b"empty key"])],
            [("a", None), ("b", [])],
            [("b", [5]), ("b", [6, 7])],
        ],
        2: [
            [("a", [1.0, 2.0, 3.0, 4.0]), ("c", [b"p", b"q"]), ("i", [3, 1]), ("v", [30, 10])],
            [("c", [b"r", b"s"]), ("i", [50, -1, 50]), ("v", [1, 2, 3])],
            [("a", [1.0]), ("c", [b"t", b"u"])],
        ],
        3: [
            [("i", [2, 0]), ("j", [1, 3]), ("v", [0.25, 0.5]), ("z", []), ("b", [b"w"])],
            [("i", [1]), ("j", [1, 2]), ("v", [1.0]), ("z", [])],
            [("z", []), ("b", [b"x", b"y"])],
        ],
    }

    def put(name, mode, records):
        sep = next(c for c in range(255, -1, -1) if all(c not in r for r in records))
        write("example", name, bytes([mode, sep]) + bytes([sep]).join(records))

    for cfg, exs in sorted(recs.items()):
        packed = [_example(e) for e in exs]
        put(f"cfg{cfg}_batch", cfg, packed)
        put(f"cfg{cfg}_batch_names", cfg | 4, packed)
        put(f"cfg{cfg}_unpacked", cfg, [_example(e, packed=False) for e in exs])
        for i, r in enumerate(packed):
            put(f"cfg{cfg}_single{i}", cfg, [r])
        put(f"cfg{cfg}_concatenated", cfg, [packed[0] + packed[-1]])
        put(f"cfg{cfg}_truncated", cfg, [packed[0][:-3], packed[1]])
        put(f"cfg{cfg}_empty_batch", cfg | 8, [])
    worked = ["0a130a110a0161120c120a0a080000803f00000040",
              "0a130a110a0161120c120a0d0000803f0d00000040", "0a0501", "0a070a050a01611200",
              "2a046d6574610a0f0a0d0a0161120812060a0400008040", "0a0a0a080a016112031a0100",
              "0a400a0a0a016112051a030a0105", "228080808008" + "0a0f0a0d0a0161120812060a0400008040"]
    for cfg in range(4):
        put(f"worked_cfg{cfg}", cfg, [bytes.fromhex(h) for h in worked])
    many = [_example([("a", [float(i), 1.0]), ("b", [i])]) for i in range(12)]
    put("cfg0_twelve_minibatches", 0, many)
    put("cfg2_fls_stride_error_in_minibatch",
        2, [_example([("a", [1.0, 2.0]), ("c", [b"a", b"b"])])] * 8 + [_example([("a", [1.0])])])

if __name__ == "__main__":
    line_reader()
    tfrecord_seeds()
    padding()
    cli_args()
    example()
    for t in ("line_reader", "tfrecord", "padding", "cli_args", "example"):
        print(t, len(os.listdir(os.path.join(CORPUS, t))))
