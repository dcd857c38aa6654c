#!/usr/bin/env python3
"""Kill-and-resume acceptance test of tfq_pipeline's checkpoints (tfq/pipeline.h), TAP output.

    kill_resume.py path/to/resume_driver [--seed N] [--kills N] [--keep]

Generates CSV files (float64, int64, string, float32, int32 columns; empty fields take the
column defaults; quoted strings with commas and quotes), then drives resume_driver (one log line
per batch, a checkpoint every few batches, the log written and fsync'ed before each checkpoint):

  1. deterministic mode, 2 reader threads: an uninterrupted run gives the reference log (its
     records are the input's, checked against Python's csv module; the same log with 1 thread
     and another step size); then runs killed with SIGKILL at random moments (after a random
     number of new log lines plus a random sub-millisecond delay, or after a random delay from
     the start) and resumed from the state file, several kills per run, end with exactly the
     reference log, byte for byte.
  2. free-running mode, 2 reader threads: the same kills; the final log holds every input record
     exactly once (the multiset of records equals the input read by Python's csv module with the
     column defaults), batch indices 1..N without a gap, every batch full but the last.
  3. a state file with a flipped byte (header and body), truncated or empty is refused with a
     non-zero exit and "corrupted"; a state from other options (batch size, seed, the files) with
     "from other options or files"; the version field with "version".
  4. a pipeline without a seed (a seed from the OS) resumes too: the state's seed is used.
  5. deterministic mode resumed with other reader threads (0-3) and step sizes: still the
     reference log (neither changes the batches, and the state does not depend on them).

Before each resume the harness asks the driver (--probe) for the checkpoint's batches_out,
checks that the log is not behind it, and truncates the log to that many lines; the resumed
driver reports "restored batches_out=N" and refuses a log of another length.  The kills are
checked to be real (exit status -SIGKILL) and the restores too (batches_out > 0).
"""

import collections
import csv
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

SPEC = 'float64:-1.5,int64:-7,string:"NA",float32:0.25,int32:3'
DEFAULTS = ['-1.5', '-7', 'NA', '0.25', '3']
KINDS = ['f64', 'i64', 'str', 'f32', 'i32']
FILE_ROWS = [6000, 4500, 261, 7000, 2250]  # 20011 records: the last batch is not full
BATCH = 32
EVERY = 5
COMMON = ['--header', '--batch', str(BATCH), '--capacity', '400', '--mad', '150',
          '--step', '64', '--every', str(EVERY), '--threads', '2']
SLEEP_US = '300'

tap_n = 0
tap_failed = 0


def tap(ok, desc, diag=()):
    global tap_n, tap_failed
    tap_n += 1
    if not ok:
        tap_failed += 1
    for d in diag:
        print('# ' + d)
    print('%s %d - %s' % ('ok' if ok else 'not ok', tap_n, desc), flush=True)


def note(msg):
    print('# ' + msg, flush=True)


# ---- input and the oracle ----------------------------------------------------------------------

def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def rand_value(rng, kind):
    if kind == 'f64':
        r = rng.random()
        if r < 0.2:
            return repr(float(rng.randint(-1000, 1000)))
        if r < 0.4:
            return repr(rng.uniform(-1e-300, 1e-300))
        if r < 0.6:
            return repr(rng.uniform(-1e300, 1e300))
        return repr(rng.gauss(0, 1e6))
    if kind == 'i64':
        if rng.random() < 0.3:
            return str(rng.randint(-2**63, 2**63 - 1))
        return str(rng.randint(-100000, 100000))
    if kind == 'i32':
        if rng.random() < 0.3:
            return str(rng.randint(-2**31, 2**31 - 1))
        return str(rng.randint(-1000, 1000))
    if kind == 'f32':
        r = rng.random()
        if r < 0.3:
            return repr(f32(rng.uniform(-1.0, 1.0)))
        if r < 0.4:
            return repr(f32(rng.uniform(-3e38, 3e38)))
        return repr(f32(rng.gauss(0, 1000)))
    alphabet = 'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 ,"\'.;:-_é€'
    return ''.join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))


def make_inputs(rng, d):
    paths = []
    for i, rows in enumerate(FILE_ROWS):
        path = os.path.join(d, 'part%02d.csv' % i)
        with open(path, 'w', newline='', encoding='utf-8') as f:
            w = csv.writer(f, lineterminator='\n')
            w.writerow(['x', 'id', 'name', 'y', 'label'])
            for _ in range(rows):
                w.writerow(['' if rng.random() < 0.04 else rand_value(rng, k) for k in KINDS])
        paths.append(path)
    return paths


def serialize(kind, text):
    """A field as resume_driver prints it."""
    if kind == 'f64':
        return '%016x' % struct.unpack('<Q', struct.pack('<d', float(text)))[0]
    if kind == 'f32':
        return '%08x' % struct.unpack('<I', struct.pack('<f', float(text)))[0]
    if kind in ('i64', 'i32'):
        return str(int(text))
    return text.encode('utf-8').hex()


def oracle(paths):
    """The input's records as resume_driver serializes them: a Counter."""
    c = collections.Counter()
    for path in paths:
        with open(path, newline='', encoding='utf-8') as f:
            rows = list(csv.reader(f))
        for row in rows[1:]:
            assert len(row) == len(KINDS), row
            c[','.join(serialize(k, v if v != '' else dflt)
                       for k, v, dflt in zip(KINDS, row, DEFAULTS))] += 1
    return c


# ---- the log -----------------------------------------------------------------------------------

def parse_log(data):
    """[(index, [records])] of a log; raises ValueError on a malformed line."""
    out = []
    for line in data.decode('ascii').split('\n')[:-1]:
        parts = line.split(' ')
        idx, n = int(parts[0]), int(parts[1])
        recs = parts[2:]
        if len(recs) != n:
            raise ValueError('line %d: %d records, %d announced' % (idx, len(recs), n))
        out.append((idx, recs))
    return out


def check_batches(batches, expected_records):
    """Problems of a complete log (list of strings, empty if none)."""
    probs = []
    for i, (idx, recs) in enumerate(batches):
        if idx != i + 1:
            probs.append('line %d has batch index %d' % (i + 1, idx))
            break
        if len(recs) != BATCH and i != len(batches) - 1:
            probs.append('batch %d has %d records, not %d' % (idx, len(recs), BATCH))
    got = collections.Counter(r for _, recs in batches for r in recs)
    if got != expected_records:
        missing = expected_records - got
        extra = got - expected_records
        probs.append('records: %d delivered, %d expected; %d missing, %d duplicated or foreign '
                     '(e.g. missing %s, extra %s)'
                     % (sum(got.values()), sum(expected_records.values()),
                        sum(missing.values()), sum(extra.values()),
                        list(missing)[:1], list(extra)[:1]))
    return probs


def truncate_lines(path, n):
    """Cuts the file after its n-th line; returns the number of lines it had."""
    if not os.path.exists(path):
        if n:
            raise AssertionError('%s is missing, checkpoint at batch %d' % (path, n))
        return 0
    with open(path, 'rb') as f:
        data = f.read()
    lines = data.count(b'\n')
    if lines < n:
        return lines
    off = 0
    for _ in range(n):
        off = data.index(b'\n', off) + 1
    with open(path, 'r+b') as f:
        f.truncate(off)
    return lines


# ---- running the driver ------------------------------------------------------------------------

class Driver:
    def __init__(self, exe, files, workdir):
        self.exe = exe
        self.files = files
        self.workdir = workdir

    def cmd(self, args, state, out):
        c = [self.exe, '--columns', SPEC] + args
        if state:
            c += ['--state', state]
        if out:
            c += ['--out', out]
        return c + self.files

    def run(self, args, state, out, timeout=300):
        return subprocess.run(self.cmd(args, state, out), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout)

    def probe(self, args, state):
        """The checkpoint's batches_out, or the driver's message (a str) if it fails."""
        r = self.run(args + ['--probe'], state, None)
        m = re.search(rb'batches_out=(\d+)', r.stdout)
        if r.returncode != 0 or not m:
            return 'probe failed (exit %d): %s' % (r.returncode, r.stderr.decode().strip())
        return int(m.group(1))


def lines_now(path, pos_lines):
    """Incremental line counter of a growing file: (offset, lines) updated."""
    off, lines = pos_lines
    try:
        with open(path, 'rb') as f:
            f.seek(off)
            data = f.read()
    except FileNotFoundError:
        return pos_lines
    return off + len(data), lines + data.count(b'\n')


def campaign(drv, rng, args, state, out, total_lines, nkills, stats, vary=None, early=0.2):
    """One run from scratch to the end, SIGKILLed nkills times and resumed each time (with the
    arguments vary(rng, args) if given); a kill comes after a random delay from the start with
    probability `early`, else after a random number of new log lines.  Returns a list of
    problems; updates stats."""
    probs = []
    base = args
    for p in (state, out):
        if os.path.exists(p):
            os.unlink(p)
    kills = 0
    attempts = 0
    while True:
        ckpt = drv.probe(args, state) if os.path.exists(state) else 0
        if isinstance(ckpt, str):
            probs.append(ckpt)
            return probs
        had = truncate_lines(out, ckpt)
        if had < ckpt:
            probs.append('the log (%d lines) is behind the checkpoint (batch %d)' % (had, ckpt))
            return probs
        if had > ckpt:
            stats['log_ahead'] += 1
        tmp = state + '.tmp'
        if os.path.exists(tmp):  # a kill inside tfq_pipeline_save_file: its temporary file,
            stats['in_save'] += 1  # left for the next save to overwrite (never restored)
            with open(tmp, 'r+b') as f:  # garbage in it must not matter
                f.write(b'garbage')
        args = vary(rng, base) if vary else base
        errpath = os.path.join(drv.workdir, 'stderr.txt')
        with open(errpath, 'wb') as err:
            p = subprocess.Popen(drv.cmd(args, state, out), stdout=subprocess.DEVNULL, stderr=err)
            killed = False
            if kills < nkills and attempts < 4 * nkills + 10:
                attempts += 1
                if rng.random() < early:
                    # a random moment from the start: during the restore, or early
                    time.sleep(rng.uniform(0, 0.08))
                else:
                    target = rng.randint(ckpt + 1, max(ckpt + 1, total_lines - 1))
                    pos = (0, 0)
                    while p.poll() is None:
                        pos = lines_now(out, pos)
                        if pos[1] >= target:
                            break
                        time.sleep(0.001)
                    time.sleep(rng.uniform(0, 0.0015))
                if p.poll() is None:
                    p.send_signal(signal.SIGKILL)
                    killed = True
            try:
                rc = p.wait(timeout=300)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                probs.append('the driver hung')
                return probs
        with open(errpath, 'rb') as f:
            msg = f.read().decode('utf-8', 'replace')
        if 'Sanitizer' in msg or 'runtime error' in msg:
            probs.append('sanitizer report: %s' % msg.strip()[-2000:])
            return probs
        m = re.search(r'restored batches_out=(\d+)', msg)
        if m:
            n = int(m.group(1))
            stats['restores'] += 1
            if n > 0:
                stats['restores_pos'] += 1
            if n != ckpt:
                probs.append('resumed at batch %d, the probe said %d' % (n, ckpt))
        elif ckpt and not (killed and rc == -signal.SIGKILL):
            probs.append('no restore reported at checkpoint %d: %s' % (ckpt, msg.strip()))
        if killed:
            stats['kill_codes'][rc] += 1
            if rc == -signal.SIGKILL:
                kills += 1
                stats['kills'] += 1
                continue
        if rc != 0:
            probs.append('driver exit status %d: %s' % (rc, msg.strip()[-500:]))
            return probs
        if kills >= nkills:
            return probs
        if attempts >= 4 * nkills + 10:
            probs.append('the driver kept finishing before the kill (%d attempts)' % attempts)
            return probs
        # finished before the kill: start over with the remaining kills
        for p in (state, out):
            os.unlink(p) if os.path.exists(p) else None


def new_stats():
    return {'kills': 0, 'restores': 0, 'restores_pos': 0, 'kill_codes': collections.Counter(),
            'log_ahead': 0, 'in_save': 0}


def stats_diag(stats):
    return ['kill exit statuses %s; the log ahead of the checkpoint at %d resumes; %d kills '
            'inside save_file (a temporary state file left)'
            % (dict(stats['kill_codes']), stats['log_ahead'], stats['in_save'])]


def kill_plan(rng, total):
    """Kills per run: 1 to 4 each, `total` in all."""
    plan = []
    while sum(plan) < total:
        plan.append(min(rng.randint(1, 4), total - sum(plan)))
    return plan


def main():
    argv = sys.argv[1:]
    if not argv:
        print('usage: kill_resume.py path/to/resume_driver [--seed N] [--kills N] [--keep]')
        return 2
    exe = os.path.abspath(argv[0])
    seed = 20240611
    total_kills = 50
    keep = '--keep' in argv
    if '--seed' in argv:
        seed = int(argv[argv.index('--seed') + 1])
    if '--kills' in argv:
        total_kills = int(argv[argv.index('--kills') + 1])
    rng = random.Random(seed)
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix='tfq_kill_resume_')
    print('1..9', flush=True)
    note('seed %d, %d kills, work dir %s' % (seed, total_kills, work))
    files = make_inputs(rng, work)
    expected = oracle(files)
    nrec = sum(expected.values())
    drv = Driver(exe, files, work)

    det = COMMON + ['--deterministic', '--seed', '7', '--sleep-us', SLEEP_US]
    free = COMMON + ['--seed', '11', '--sleep-us', SLEEP_US]
    ref_path = os.path.join(work, 'det_reference.log')
    r = drv.run(det, os.path.join(work, 'det_reference.state'), ref_path)
    ok = r.returncode == 0
    ref = open(ref_path, 'rb').read() if ok else b''
    probs = check_batches(parse_log(ref), expected) if ok else [r.stderr.decode()]
    total_lines = ref.count(b'\n')
    tap(ok and not probs, 'deterministic uninterrupted run: %d records in %d batches, each '
        'input record once' % (nrec, total_lines), probs)

    alt_path = os.path.join(work, 'det_alt.log')
    alt_args = [a for a in det]
    alt_args[alt_args.index('--threads') + 1] = '1'
    alt_args[alt_args.index('--step') + 1] = '37'
    alt_args[alt_args.index('--sleep-us') + 1] = '0'
    r = drv.run(alt_args, os.path.join(work, 'det_alt.state'), alt_path)
    alt = open(alt_path, 'rb').read() if r.returncode == 0 else None
    tap(alt == ref, 'deterministic: 1 reader thread and step 37 give the same log',
        [] if alt == ref else ['exit %d: %s' % (r.returncode, r.stderr.decode()[-300:])])

    # 1. deterministic: kills, resumes, the reference log byte for byte
    det_kills = total_kills // 2
    state = os.path.join(work, 'det.state')
    out = os.path.join(work, 'det.log')
    stats = new_stats()
    probs = []
    plan = kill_plan(rng, det_kills)
    for i, nk in enumerate(plan):
        p = campaign(drv, rng, det, state, out, total_lines, nk, stats)
        if not p:
            got = open(out, 'rb').read()
            if got != ref:
                a, b = got.split(b'\n'), ref.split(b'\n')
                first = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]),
                             min(len(a), len(b)))
                p = ['the log differs from the reference from line %d (%d lines, reference %d)'
                     % (first + 1, len(a) - 1, len(b) - 1)]
        probs += ['run %d: %s' % (i + 1, x) for x in p]
        if p:
            break
    tap(not probs and stats['kills'] == det_kills,
        'deterministic, 2 readers: %d runs, %d kills (SIGKILL), %d restores (%d at batch > 0): '
        'the final log equals the uninterrupted one byte for byte'
        % (len(plan), stats['kills'], stats['restores'], stats['restores_pos']),
        probs + stats_diag(stats))
    det_stats = stats

    # 2. free-running: kills, resumes, every record exactly once
    free_kills = total_kills - det_kills
    state = os.path.join(work, 'free.state')
    out = os.path.join(work, 'free.log')
    stats = new_stats()
    probs = []
    plan = kill_plan(rng, free_kills)
    for i, nk in enumerate(plan):
        p = campaign(drv, rng, free, state, out, total_lines, nk, stats)
        if not p:
            p = check_batches(parse_log(open(out, 'rb').read()), expected)
        probs += ['run %d: %s' % (i + 1, x) for x in p]
        if p:
            break
    tap(not probs and stats['kills'] == free_kills,
        'free-running, 2 readers: %d runs, %d kills (SIGKILL), %d restores (%d at batch > 0): '
        'every input record exactly once across the checkpoints'
        % (len(plan), stats['kills'], stats['restores'], stats['restores_pos']),
        probs + stats_diag(stats))
    all_kills = det_stats['kills'] + stats['kills']
    all_pos = det_stats['restores_pos'] + stats['restores_pos']
    tap(all_kills == total_kills and all_pos >= total_kills // 2,
        'kills and restores happened: %d kills with exit status -SIGKILL, %d restores of a state '
        'at batch > 0' % (all_kills, all_pos))

    # 3. a corrupted state, a state from other options: a state from the middle of a run
    mid_state = os.path.join(work, 'det_mid.state')
    r = drv.run(det + ['--limit', str(40 * EVERY)], mid_state, os.path.join(work, 'det_mid.log'))
    have_state = r.returncode == 0 and os.path.exists(mid_state)
    good = open(mid_state, 'rb').read() if have_state else b''
    note('deterministic state file at batch %d: %d bytes (capacity 400, step 64, batch %d, '
         '5 columns)' % (40 * EVERY, len(good), BATCH))
    bad_state = os.path.join(work, 'bad.state')
    scratch = os.path.join(work, 'scratch.log')
    probs = []

    def refused(args, data, want):
        with open(bad_state, 'wb') as f:
            f.write(data)
        if os.path.exists(scratch):
            os.unlink(scratch)
        r = drv.run(args, bad_state, scratch)
        msg = r.stderr.decode('utf-8', 'replace')
        if r.returncode == 0 or 'Sanitizer' in msg or 'runtime error' in msg or r.returncode < 0 or want not in msg:
            return 'exit %d, %r' % (r.returncode, msg.strip()[-300:])
        return None

    if not have_state:
        probs.append('no state file was left by the deterministic runs')
    positions = [i for i in range(28) if i not in range(8, 12)]
    positions += sorted(rng.sample(range(28, len(good)), min(24, max(0, len(good) - 28))))
    positions.append(len(good) - 1)
    for pos in positions if have_state else []:
        data = bytearray(good)
        data[pos] ^= 1 << rng.randint(0, 7)
        e = refused(det, bytes(data), 'corrupted')
        if e:
            probs.append('byte %d flipped: %s' % (pos, e))
    for cut in ([len(good) // 2, 27, 0] if have_state else []):
        e = refused(det, good[:cut], 'corrupted')
        if e:
            probs.append('truncated to %d bytes: %s' % (cut, e))
    tap(not probs, 'a corrupted state is refused with "corrupted" (%d flipped bytes, header and '
        'body; 3 truncations)' % len(positions), probs)

    probs = []
    if have_state:
        data = bytearray(good)
        data[8] ^= 2  # the version
        e = refused(det, bytes(data), 'version')
        if e:
            probs.append('version flipped: %s' % e)
        other = 'from other options or files'
        b33 = list(det)
        b33[b33.index('--batch') + 1] = '33'
        s8 = list(det)
        s8[s8.index('--seed') + 1] = '8'
        nodet = [a for a in det if a != '--deterministic']
        for what, args, fl in (('batch size 33', b33, files), ('seed 8', s8, files),
                               ('not deterministic', nodet, files),
                               ('a file less', det, files[:-1])):
            d2 = Driver(exe, fl, work)
            with open(bad_state, 'wb') as f:
                f.write(good)
            if os.path.exists(scratch):
                os.unlink(scratch)
            r = d2.run(args, bad_state, scratch)
            msg = r.stderr.decode('utf-8', 'replace')
            if r.returncode <= 0 or other not in msg:
                probs.append('%s: exit %d, %r' % (what, r.returncode, msg.strip()[-300:]))
    else:
        probs.append('no state file')
    tap(not probs, 'a state from other options (batch size, seed, mode, files) is refused with '
        '"from other options or files"; another version with "version"', probs)

    # 4. without a seed: the state's seed is used on resume
    state = os.path.join(work, 'noseed.state')
    out = os.path.join(work, 'noseed.log')
    noseed = COMMON + ['--sleep-us', SLEEP_US]
    stats = new_stats()
    probs = campaign(drv, rng, noseed, state, out, total_lines, 2, stats, early=0)
    if not probs:
        probs = check_batches(parse_log(open(out, 'rb').read()), expected)
    tap(not probs and stats['kills'] == 2 and stats['restores_pos'] >= 1,
        'free-running without a seed: %d kills, %d restores (%d at batch > 0), every record once'
        % (stats['kills'], stats['restores'], stats['restores_pos']), probs)

    # 5. deterministic, each resume with other reader threads and step: still the reference
    def vary(rng, args):
        a = list(args)
        a[a.index('--threads') + 1] = str(rng.choice([0, 1, 2, 3]))
        a[a.index('--step') + 1] = str(rng.choice([16, 64, 200]))
        return a

    state = os.path.join(work, 'vary.state')
    out = os.path.join(work, 'vary.log')
    stats = new_stats()
    probs = campaign(drv, rng, det, state, out, total_lines, 4, stats, vary, early=0)
    if not probs and open(out, 'rb').read() != ref:
        probs = ['the log differs from the reference']
    tap(not probs and stats['kills'] == 4 and stats['restores_pos'] >= 3,
        'deterministic, resumed with 0-3 reader threads and step 16-200: %d kills, %d restores, '
        'the reference log' % (stats['kills'], stats['restores_pos']), probs)

    note('runtime %.1f s' % (time.monotonic() - t0))
    if tap_failed == 0 and not keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        note('work dir kept: %s' % work)
    return 1 if tap_failed else 0


if __name__ == '__main__':
    sys.exit(main())
