"""Where a sweep's points run when they leave this machine: a Dask scheduler, a Dask
`Client` or cluster object the caller made, or Slurm jobs started through dask-jobqueue.

A point is one `run_point` call (sweeps.py); it writes its files itself, so the workers must
see the sweep directory, topology and trace files at the same paths (a shared file system)
and have this package installed. The caller's Client or cluster is borrowed, never closed:
it may serve several sweeps.
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Any, Iterator, Mapping

# Defaults of a Slurm worker job: one core and one worker process per job, since a point is
# one single-threaded simulator process; memory and walltime are what a large fabric run
# needs on a typical partition (bench/RESULTS.md: 783 MB for 1,024 hosts). Each can be
# replaced with --slurm-opt KEY=VALUE.
SLURM_DEFAULTS: dict[str, Any] = {"cores": 1, "processes": 1, "memory": "4GiB", "walltime": "01:00:00"}
# SLURMCluster's keywords that take a number or a list; the others are strings.
_INT_OPTIONS = {"cores", "processes", "death_timeout"}
_LIST_OPTIONS = {"job_extra_directives", "job_script_prologue", "worker_extra_args", "job_directives_skip"}

_INSTALL = "pip install dask==2024.12.1 distributed==2024.12.1 dask-jobqueue==0.9.0"


def parse_slurm_option(option: str, allowed: set[str]) -> tuple[str, Any]:
    """`KEY=VALUE` of `--slurm-opt`, checked against `allowed` (slurm_keywords())."""
    key, sep, value = option.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise ValueError(f"--slurm-opt {option!r}: expected KEY=VALUE, e.g. --slurm-opt queue=batch")
    if key not in allowed:
        raise ValueError(f"--slurm-opt {key}: not a dask-jobqueue SLURMCluster keyword; use one of "
                         f"{', '.join(sorted(allowed))}")
    if key in _INT_OPTIONS:
        try:
            return key, int(value)
        except ValueError:
            raise ValueError(f"--slurm-opt {key}={value}: {key} is a whole number, e.g. {key}=2") from None
    if key in _LIST_OPTIONS:
        # One directive per option, e.g. --slurm-opt job_extra_directives=--exclusive; repeated
        # options add to the list.
        return key, [value]
    return key, value


def slurm_keywords() -> set[str]:
    """The keyword arguments SLURMCluster (and the JobQueueCluster it extends) accepts."""
    SLURMCluster = _import_slurm_cluster()
    # The job class's keywords (queue, account, walltime, memory, cores ...) reach it through
    # the cluster's **job_kwargs.
    classes = [*SLURMCluster.__mro__, *getattr(SLURMCluster, "job_cls", object).__mro__]
    names: set[str] = set()
    for cls in classes:
        init = cls.__dict__.get("__init__")
        if init is None or cls is object:
            continue
        names.update(p.name for p in inspect.signature(init).parameters.values()
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    return names - {"self", "scheduler", "name"}


def slurm_cluster(jobs: int, options: Mapping[str, Any] | None = None) -> Any:
    """A dask-jobqueue SLURMCluster with `jobs` worker jobs requested (sbatch). The jobs start
    when Slurm schedules them; points wait for workers meanwhile."""
    if jobs < 1:
        raise ValueError(f"--slurm {jobs}: the number of Slurm worker jobs must be at least 1")
    SLURMCluster = _import_slurm_cluster()
    cluster = SLURMCluster(**{**SLURM_DEFAULTS, **(options or {})})
    cluster.scale(jobs=jobs)
    return cluster


def merge_slurm_options(options: list[str]) -> dict[str, Any]:
    """--slurm-opt options in order; list-valued keywords collect every occurrence."""
    merged: dict[str, Any] = {}
    allowed = slurm_keywords() if options else set()
    for option in options:
        key, value = parse_slurm_option(option, allowed)
        if isinstance(value, list):
            merged.setdefault(key, []).extend(value)
        else:
            merged[key] = value
    return merged


@contextlib.contextmanager
def dask_client(target: Any) -> Iterator[Any]:
    """A distributed Client for `target`: a scheduler address (a Client of our own, closed
    afterwards), a Client (used as is), or a cluster object such as LocalCluster or
    SLURMCluster (a Client of our own on it; the cluster stays the caller's)."""
    try:
        from distributed import Client
    except ImportError as e:
        raise ImportError(f"a sweep on a Dask cluster needs the distributed package ({_INSTALL})") from e
    if isinstance(target, Client):
        yield target
        return
    if isinstance(target, str) or hasattr(target, "scheduler_address"):
        with Client(target) as client:
            yield client
        return
    raise TypeError(f"dask={target!r}: give a scheduler address ('tcp://host:8786'), a distributed.Client, "
                    "or a cluster object (LocalCluster, dask_jobqueue.SLURMCluster)")


def _import_slurm_cluster() -> Any:
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError as e:
        raise ImportError(f"a sweep on Slurm needs the dask-jobqueue package ({_INSTALL})") from e
    return SLURMCluster
