#!/usr/bin/env python3
"""A seeded mutation fuzzer of ibvp-sim's inputs (docs/fuzzing.md).

    python3 tests/fuzz/fuzz.py --sim build/ibvp-sim --count 3000 --seed 1
    python3 tests/fuzz/fuzz.py --sim build/ibvp-sim --seed 1 --only 1234 --keep /tmp/f   # one mutant again

It mutates every shipped scenario (configs/), topology file (configs/topologies/) and the
ibnetdiscover dumps of tests/fuzz/corpus/, runs ibvp-sim on each mutant in a directory of its
own (cwd and --out inside it) and classifies the outcome:

  ran          exit 0, and nothing written outside the output directory
  refused      exit 2 with the project's error: a file of the run, a key or line, and a fix
  deadlock     exit 3 naming a cycle of ports
  crash        a signal, exit 1 (an uncaught exception), another status, or a sanitizer report
  hang         no exit within --timeout
  bad-refusal  exit 2 without the file, the key (or line) or the fix
  escaped      a file appeared outside the output directory
  false-deadlock  exit 3 without a cycle

The last five are failures: the program prints each one's reproducer (seed, index, command),
keeps its input under WORK/failures/, and exits 1. Mutant i of seed s depends only on (s, i)
(and on WORK, for the paths into it that some mutations write).
Standard library and PyYAML only.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutators as mu  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FAILURES = ("crash", "hang", "bad-refusal", "escaped", "false-deadlock")
CLASSES = ("ran", "refused", "deadlock") + FAILURES

# A mutant's run stays short: the corpus scenarios are cut to this duration before mutation.
DURATION = "300us"

# Problems about a file as a whole: the only refusals that need neither a key nor a line.
WHOLE_FILE = re.compile(r"the document is empty|a directory, not a|not a regular file|cannot read the|"
                        r"cannot open the|no Switch or Ca record|bytes, more than the limit|reading the .* failed|"
                        r"holds no|no switch|no node|is empty|no [a-z ]*file at |an input file may hold|"
                        r"named by an empty path", re.I)


# ---- the corpus ---------------------------------------------------------------------------------

@dataclass
class Seed:
    kind: str  # scenario | topology | dump
    path: Path
    text: bytes  # what mutations start from
    hosts: list[str] = field(default_factory=list)


def _prepare_scenario(doc: dict, src: Path) -> dict:
    """The scenario cut to a short run that still exercises its sections."""
    doc["duration"] = DURATION
    doc.pop("warmup", None)
    for f in doc.get("flows", []) if isinstance(doc.get("flows"), list) else []:
        if isinstance(f, dict):
            f.pop("start", None)
            f.pop("stop", None)
    outs = doc.get("outputs")
    if isinstance(outs, dict):
        for k in ("rate_window", "rate_step", "progress_interval"):
            outs.pop(k, None)
    # Seed 002's connection manager: a few refusals in a row are enough to exercise it.
    cn = doc.get("connections")
    if isinstance(cn, dict):
        cn["refusals_in_a_row"] = 20
    pt = doc.get("perftest")
    if isinstance(pt, dict):
        pt["iterations"] = "2"
        pt.pop("min_bytes", None)
        pt["max_bytes"] = "64"
        pt.pop("sizes", None)
        doc["duration"] = "2ms"
    for key in mu.INPUT_FILE_KEYS:
        sec = doc.get(key[0])
        if isinstance(sec, dict) and isinstance(sec.get(key[1]), str) and not os.path.isabs(sec[key[1]]):
            sec[key[1]] = str((src.parent / sec[key[1]]).resolve())
    return doc


def load_corpus(root: Path, only: str | None) -> list[Seed]:
    seeds: list[Seed] = []
    for p in sorted((root / "configs").rglob("*.yaml")):
        rel = p.relative_to(root).as_posix()
        if only and not re.search(only, rel):
            continue
        doc = mu.load(p.read_text())
        if p.parent.name == "topologies":
            hosts = [h["name"] if isinstance(h, dict) else h for h in doc.get("hosts", [])]
            seeds.append(Seed("topology", p, p.read_bytes(), [str(h) for h in hosts]))
        else:
            seeds.append(Seed("scenario", p, mu.dump(_prepare_scenario(doc, p)).encode()))
    for p in sorted((root / "tests/fuzz/corpus").glob("*.net")):
        rel = p.relative_to(root).as_posix()
        if only and not re.search(only, rel):
            continue
        hosts = re.findall(r'^Ca\s+\d+\s+"([^"]+)"', p.read_text(), re.M)
        seeds.append(Seed("dump", p, p.read_bytes(), hosts))
    return seeds


def schema_paths(root: Path) -> list[str]:
    """Every key path the scenario schema declares, list items as [0]."""
    out: list[str] = []

    def walk(s: dict, path: str, depth: int) -> None:
        if depth > 8:
            return
        if s.get("type") == "object" and "properties" in s:
            for k, v in s["properties"].items():
                walk(v, f"{path}.{k}" if path else k, depth + 1)
        elif s.get("type") == "array" and isinstance(s.get("items"), dict) and "properties" in s["items"]:
            out.append(path)
            walk(s["items"], path + "[0]", depth + 1)
        else:
            out.append(path)

    walk(json.loads((root / "docs/scenario.schema.json").read_text()), "", 0)
    return out


# ---- mutants ------------------------------------------------------------------------------------

@dataclass
class Mutant:
    index: int
    seed_path: str
    kind: str
    what: list[str]
    files: dict[str, bytes]  # name in the input dir -> content; "scenario.yaml" is run
    sets: list[str]
    main: str = "scenario.yaml"  # or a special path (a directory, a FIFO, /dev/null)
    fifo: bool = False
    mutations: list[str] = field(default_factory=list)
    named_files: list[str] = field(default_factory=list)


def _wrapper(topology_file: str, hosts: list[str]) -> dict:
    """A scenario that runs a topology file: one flow between its first two hosts."""
    doc: dict = {"name": "topo", "duration": DURATION, "topology": {"file": topology_file}}
    if len(hosts) >= 2:
        doc["flows"] = [{"name": "f", "src": hosts[0], "dst": hosts[1], "load": "0.5"}]
    return doc


def make_mutant(seed: int, index: int, corpus: list[Seed], paths: list[str], exclude: set[str],
                ctx: dict) -> Mutant:
    rng = random.Random(f"{seed}:{index}")
    s = corpus[index % len(corpus)] if ctx.get("baseline") else rng.choice(corpus)
    m = Mutant(index, s.path.relative_to(ROOT).as_posix(), s.kind, [], {}, [])
    n = 0 if ctx.get("baseline") else rng.choice([1, 1, 1, 2, 2, 3])

    def allowed(table: dict) -> list[str]:
        return [k for k in table if k not in exclude]

    if s.kind == "dump":
        data = s.text
        for _ in range(n):
            name = rng.choice(allowed(mu.DUMP_MUTATIONS))
            data, what = mu.DUMP_MUTATIONS[name](rng, data)
            m.mutations.append(name)
            m.what.append(f"{name}: {what}")
        m.files["fabric.net"] = data
        m.files["scenario.yaml"] = mu.dump(_wrapper("fabric.net", s.hosts)).encode()
        return m

    # Scenarios and topology files: document mutations, then text mutations of the result.
    doc = mu.load(s.text.decode())
    doc_kinds = allowed(mu.DOC_MUTATIONS)
    if s.kind == "topology":  # file names belong to the scenario around it
        doc_kinds = [k for k in doc_kinds if k not in ("special_file", "output_path")]
    kinds = doc_kinds + allowed(mu.TEXT_MUTATIONS) + [k for k in ("random_set", "special_scenario") if k not in exclude]
    text_ops: list[str] = []
    for _ in range(n):
        name = rng.choice(kinds)
        m.mutations.append(name)
        if name in mu.DOC_MUTATIONS:
            what = mu.DOC_MUTATIONS[name](rng, doc, ctx)
            m.what.append(f"{name}: {what}")
            if name == "special_file" and what:
                m.named_files.append(what.split(" = ", 1)[1])
        elif name in mu.TEXT_MUTATIONS:
            text_ops.append(name)
        elif name == "random_set":
            arg, what = mu.random_set(rng, paths)
            m.sets.append(arg)
            m.what.append(f"random_set: {what}")
        else:
            m.main = rng.choice(["dir", "fifo", "/dev/null", "/dev/zero", "empty", "missing"])
            m.what.append(f"special_scenario: {m.main}")
    data = mu.dump(doc).encode()
    for name in text_ops:
        data, what = mu.TEXT_MUTATIONS[name](rng, data)
        m.what.append(f"{name}: {what}")
    if s.kind == "topology":
        m.files["fabric.yaml"] = data
        m.files["scenario.yaml"] = mu.dump(_wrapper("fabric.yaml", s.hosts)).encode()
    else:
        m.files["scenario.yaml"] = data
    return m


# ---- running and judging ---------------------------------------------------------------------------

@dataclass
class Outcome:
    mutant: Mutant
    cls: str
    rc: int | None
    detail: str
    command: list[str]
    seconds: float
    workdir: Path


SANITIZER = re.compile(r"ERROR: (Address|Leak|Memory|Thread|UndefinedBehavior)Sanitizer|runtime error: |"
                       r"SUMMARY: \w+Sanitizer")
ERROR_LINE = re.compile(r"^ibvp-sim: (.*)$", re.M)


def judge_refusal(stderr: str, known: list[str]) -> str | None:
    """None when stderr is the project's error (file, key or line, fix); else what is missing."""
    lines = [m.group(1) for m in ERROR_LINE.finditer(stderr)]
    if not lines:
        return "no 'ibvp-sim: ' error line"
    msg = lines[-1]
    if stderr.rstrip().rsplit("\n", 1)[-1] != "ibvp-sim: " + msg:
        return "the message is not one line (control characters of a value echoed as they are)"
    rest = None
    for f in sorted(known, key=len, reverse=True):
        if msg.startswith(f + ":"):
            rest = msg[len(f) + 1:]
            break
    if rest is None:
        return "names no file of the run"
    line = re.match(r"^(\d+):", rest)
    if line:
        rest = rest[line.end():]
    if not re.search(r"\(fix: .+\)$", rest):
        return "gives no fix"
    # A key path as the loader writes it; after "--set" whatever was given as the key.
    key = re.match(r"^ (.+?): " if f == "--set" else r"^ ([^\s:]+): ", rest)
    if not line and not key and not WHOLE_FILE.search(rest):
        return "names no key or line"
    return None


def listing(d: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(d, followlinks=False):
        for n in filenames + [x for x in dirnames if os.path.islink(os.path.join(dirpath, x))]:
            out.add(os.path.relpath(os.path.join(dirpath, n), d))
    return out


def run_mutant(m: Mutant, sim: Path, work: Path, timeout: float, env: dict) -> Outcome:
    d = work / f"m{m.index}"
    if d.exists():
        shutil.rmtree(d)
    inp, cwd, outside = d / "in", d / "a" / "b" / "cwd", d / "outside"
    for x in (inp, cwd, outside):
        x.mkdir(parents=True)
    os.symlink(outside, d / "link_out")
    os.mkfifo(d / "fifo")
    for name, data in m.files.items():
        (inp / name).write_bytes(data)
    special = {"dir": str(d / "adir"), "fifo": str(d / "fifo"), "empty": str(inp / "empty.yaml"),
               "missing": str(inp / "missing.yaml"), "scenario.yaml": str(inp / "scenario.yaml")}
    main = special.get(m.main, m.main)
    if m.main == "dir":
        Path(main).mkdir()
    elif m.main == "empty":
        Path(main).write_bytes(b"")
    before = listing(d)
    out = cwd / "out"
    cmd = [str(sim), main, "--out", str(out), "--quiet"]
    for s in m.sets:
        cmd += ["--set", s]
    t0 = time.monotonic()
    rc: int | None
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        rc, stderr = p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        rc, stderr = None, (e.stderr or b"").decode("utf-8", "replace")
    seconds = time.monotonic() - t0
    # Whatever appeared in the mutant's directory outside out/ (the mutant's own files were there before).
    after = listing(d)
    escaped = sorted(f for f in after - before if not f.startswith("a/b/cwd/out/") and f != "a/b/cwd/out")
    known = [main, "--set"] + [str(inp / n) for n in m.files] + [os.path.normpath(str(inp / n)) for n in m.files]
    for f in m.named_files:  # files the mutant names (a device, the FIFO), as given and from in/
        known += [f, os.path.normpath(str(inp / f))]
    tail = stderr.strip()[-1500:]
    if rc is None:
        cls, detail = "hang", f"no exit in {timeout:g} s"
    elif SANITIZER.search(stderr):
        cls, detail = "crash", tail
    elif rc < 0:
        cls, detail = "crash", f"signal {-rc}: {tail}"
    elif rc == 0:
        cls, detail = "ran", ""
    elif rc == 2:
        problem = judge_refusal(stderr, known)
        cls, detail = ("refused", tail) if problem is None else ("bad-refusal", f"{problem}: {tail}")
    elif rc == 3:
        cls = "deadlock" if "waiting for each other's credits" in stderr else "false-deadlock"
        detail = tail
    else:
        cls, detail = "crash", f"exit {rc}: {tail}"
    if escaped and cls != "crash" and cls != "hang":
        cls, detail = "escaped", "written outside the output directory: " + ", ".join(escaped[:8])
    return Outcome(m, cls, rc, detail, cmd, seconds, d)


def keep_failure(o: Outcome, failures: Path, seed: int) -> Path:
    dest = failures / f"m{o.mutant.index}"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(o.workdir / "in", dest)
    (dest / "README.txt").write_text(
        f"class: {o.cls} (exit {o.rc})\nseed {seed}, mutant {o.mutant.index}, from {o.mutant.seed_path}\n"
        f"mutations:\n" + "".join(f"  {w[:300]}\n" for w in o.mutant.what) +
        f"command (run from a fresh directory; paths as in the fuzzer's work directory):\n  "
        f"{shlex.join(o.command)[:2000]}\n"
        f"again: python3 tests/fuzz/fuzz.py --sim SIM --seed {seed} --only {o.mutant.index}\n"
        f"detail:\n{o.detail}\n")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", type=Path, default=ROOT / "build" / "ibvp-sim", help="the ibvp-sim to test")
    ap.add_argument("--count", type=int, default=300, help="mutants to run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="index of the first mutant")
    ap.add_argument("--only", type=int, action="append", help="run just this mutant index (repeatable)")
    ap.add_argument("--corpus", help="regular expression: only corpus files whose path matches")
    ap.add_argument("--exclude", action="append", default=[], metavar="KIND",
                    help="a mutation kind left out (repeatable), e.g. special_file")
    ap.add_argument("--exclude-key", action="append", default=[], metavar="KEY",
                    help="a key path no mutation touches (repeatable), e.g. duration")
    ap.add_argument("--timeout", type=float, default=20.0, help="wall seconds before a mutant counts as a hang")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--work", type=Path, help="work directory (default: a temporary one); failures kept below it")
    ap.add_argument("--list", action="store_true", help="print the mutants without running them")
    ap.add_argument("--baseline", action="store_true",
                    help="run each corpus file once, unmutated (all must run): checks the corpus itself")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per mutant")
    args = ap.parse_args(argv)

    corpus = load_corpus(ROOT, args.corpus)
    if not corpus:
        print("fuzz: the corpus is empty", file=sys.stderr)
        return 2
    paths = schema_paths(ROOT)
    sim = args.sim.resolve()
    if not args.list and not sim.exists():
        print(f"fuzz: {sim} does not exist: build it first", file=sys.stderr)
        return 2
    work = Path(args.work or (tempfile.gettempdir() + "/ibvp-fuzz-list" if args.list else
                              tempfile.mkdtemp(prefix="ibvp-fuzz-"))).resolve()
    if not args.list:
        work.mkdir(parents=True, exist_ok=True)
    failures = work / "failures"
    indices = args.only or list(range(args.start, args.start + args.count))
    if args.baseline:
        indices = list(range(len(corpus)))
    exclude = set(args.exclude)
    mu.EXCLUDED_KEYS.update(args.exclude_key)

    def ctx_for(i: int) -> dict:
        d = work / f"m{i}"
        return {"outside": str(d / "outside"), "outside_link": str(d / "link_out"), "fifo": str(d / "fifo"),
                "self": str(d / "in" / "scenario.yaml"), "host": "h1", "baseline": args.baseline}

    mutants = [make_mutant(args.seed, i, corpus, paths, exclude, ctx_for(i)) for i in indices]
    if args.list:
        for m in mutants:
            print(f"{m.index:6d} {m.seed_path}: " + "; ".join(w[:120] for w in m.what) +
                  ("  " + " ".join(f"--set {s[:60]}" for s in m.sets) if m.sets else ""))
        return 0

    env = dict(os.environ)
    # SystemC switches coroutine stacks: ASan cannot follow fake stacks (Makefile's test-asan).
    env.setdefault("ASAN_OPTIONS", "detect_stack_use_after_return=0:detect_leaks=1")
    # LeakSanitizer may scan a freed SystemC stack it took for the main thread's (Makefile).
    env.setdefault("LSAN_OPTIONS", "use_stacks=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    counts = {c: 0 for c in CLASSES}
    by_kind: dict[str, dict[str, int]] = {}
    failed: list[Outcome] = []
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for o in pool.map(lambda m: run_mutant(m, sim, work, args.timeout, env), mutants):
            counts[o.cls] += 1
            for k in set(o.mutant.mutations):
                by_kind.setdefault(k, {c: 0 for c in CLASSES})[o.cls] += 1
            if args.verbose:
                print(f"{o.mutant.index:6d} {o.cls:<12} {o.seconds:6.2f}s {o.mutant.seed_path}: "
                      + "; ".join(w[:100] for w in o.mutant.what), flush=True)
            if o.cls in FAILURES or (args.baseline and o.cls != "ran"):
                keep_failure(o, failures, args.seed)
                failed.append(o)
            shutil.rmtree(o.workdir, ignore_errors=True)
    wall = time.monotonic() - t0

    print(f"\nfuzz: seed {args.seed}, {len(mutants)} mutants of {len(corpus)} corpus files against {sim} "
          f"in {wall:.1f} s ({args.jobs} jobs)")
    cols = [c for c in CLASSES if counts[c] or c in ("ran", "refused")]
    print(f"  {'mutation':<18}" + "".join(f"{c:>15}" for c in cols))
    for k in sorted(by_kind):
        print(f"  {k:<18}" + "".join(f"{by_kind[k][c]:>15}" for c in cols))
    print(f"  {'all mutants':<18}" + "".join(f"{counts[c]:>15}" for c in cols))
    if failed:
        print(f"\nfuzz: {len(failed)} failures; inputs and README.txt of each under {failures}")
        for o in failed:
            print(f"\n[{o.cls}] seed {args.seed}, mutant {o.mutant.index} ({o.mutant.seed_path}; exit {o.rc})")
            for w in o.mutant.what:
                print(f"  {w[:200]}")
            print(f"  again: {sys.argv[0]} --sim {sim} --seed {args.seed} --only {o.mutant.index}")
            print("  " + o.detail[-600:].replace("\n", "\n  "))
        return 1
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
