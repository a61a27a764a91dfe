"""The Ray backend's overhead against the local worker pool, on the same machine and the same CPUs.

    python benchmarks/bench_ray_pool.py [--workers 2] [--repeat 3] [--quick]

Starts a local Ray cluster of --workers CPUs, then maps the same calls through WorkerPool(workers) and
RayPool (one actor per CPU, each with its own hard-limited worker): (a) 200 trivial calls, (b) 100 calls
that each spin 20 ms of CPU. Prints the best wall time of --repeat runs and items per second for each, and
Ray's extra cost per item. Both pools are warm (workers started) before anything is timed.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time

# a new local cluster turns on token authentication; a token of this run keeps it from writing one to ~/.ray
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))


def trivial(x):
    return x


def spin(x, seconds=0.02):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return x


def best_time(pool, func, calls, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        results = pool.map(func, calls, 60.0)
        times.append(time.perf_counter() - start)
        assert results == [args[0] for args, _ in calls], "a pool returned wrong results"
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="CPUs of the local cluster and local workers")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one run (checks that it runs)")
    options = parser.parse_args()
    trivial_n, spin_n, repeat = (20, 10, 1) if options.quick else (200, 100, options.repeat)

    import ray

    import bench_ray_pool as me  # by module name, so worker processes can import the functions
    from grpo_core.rewards.ray_pool import RayPool
    from grpo_core.rewards.pool import WorkerPool

    ray.init(address="local", num_cpus=options.workers, include_dashboard=False, logging_level="ERROR",
             log_to_driver=False)
    local, remote = WorkerPool(options.workers), RayPool(size=options.workers)
    try:
        for pool in (local, remote):
            pool.map(me.trivial, [((0,), {})] * options.workers * 2, 120.0)
        workloads = [(f"{trivial_n} trivial calls", me.trivial, trivial_n),
                     (f"{spin_n} calls spinning 20 ms of CPU", me.spin, spin_n)]
        print(f"{options.workers} workers, best of {repeat}, python {sys.version.split()[0]}, "
              f"ray {ray.__version__}, {os.cpu_count()} cores")
        print(f"{'workload':<36} {'WorkerPool items/s':>19} {'RayPool items/s':>16} {'ratio':>6} "
              f"{'Ray extra ms/item':>18}")
        for name, func, n in workloads:
            calls = [((x,), {}) for x in range(n)]
            t_local = best_time(local, func, calls, repeat)
            t_ray = best_time(remote, func, calls, repeat)
            print(f"{name:<36} {n / t_local:>19.0f} {n / t_ray:>16.0f} {t_ray / t_local:>6.2f} "
                  f"{(t_ray - t_local) / n * 1000:>18.2f}")
    finally:
        local.close()
        remote.close()
        ray.shutdown()


if __name__ == "__main__":
    main()
