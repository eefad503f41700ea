#!/usr/bin/python3
"""Ratios of bnorm_bench's kernels to memcpy in the same run.

Usage: build/bnorm_bench --benchmark_format=json [--benchmark_repetitions=N ...] > run.json
       /usr/bin/python3 bench/ratios.py run.json
Prints, per kernel, shape and thread count: GB/s (the median aggregate when
the run has repetitions, else the median of the entries), memcpy's GB/s for the same
shape, threads and element size (f16 / bf16 kernels against memcpy<f16>),
and their ratio; with repetitions, also the coefficient of variation of
the kernel's and of memcpy's rate over the repetitions (cv %, Google
Benchmark's "cv" aggregate), to tell a ratio's distance from a target
from run-to-run noise. Then the normalization family's one-thread rows
(LayerNormalization, RMSNormalization, GroupNormalization and their
ceilings) against memcpy of the same shape and element size, with each
kernel's ceiling and its share of it.
"""
import json
import re
import statistics
import sys

NAME = re.compile(r"^(BM_[^/]+)/shape:(\d)/threads:(\d)/real_time")
SHAPES = {"0": "[32,64,112,112]", "1": "[1,64,56,56]", "2": "[4,64,28,28]"}


def main(path):
    with open(path) as f:
        run = json.load(f)
    rates = {}
    cvs = {}
    has_aggregates = any(b.get("run_type") == "aggregate" for b in run["benchmarks"])
    for b in run["benchmarks"]:
        m = NAME.match(b["name"])
        if not m or "bytes_per_second" not in b:
            continue
        if has_aggregates and b.get("aggregate_name") == "cv":
            cvs[m.groups()] = 100 * b["bytes_per_second"]
        if has_aggregates and b.get("aggregate_name") != "median":
            continue
        rates.setdefault(m.groups(), []).append(b["bytes_per_second"] / 1e9)
    rate = {k: statistics.median(v) for k, v in rates.items()}
    print(f"{'kernel':34} {'shape':17} {'threads':>7} {'GB/s':>8} {'memcpy':>8} {'ratio':>6}"
          + (f" {'cv %':>11}" if cvs else ""))
    order = lambda k: (k[0], k[1], k[2] == "0")  # kernel, shape, 1 thread before all
    for (kernel, shape, threads), gbs in sorted(rate.items(), key=lambda kv: order(kv[0])):
        if kernel.startswith("BM_memcpy"):
            continue
        half = "f16" in kernel or "bf16" in kernel
        base_key = ("BM_memcpy<f16>" if half else "BM_memcpy<float>", shape, threads)
        base = rate.get(base_key)
        ratio = f"{gbs / base:6.2f}" if base else "     -"
        base_text = f"{base:8.2f}" if base else "       -"
        print(f"{kernel:34} {SHAPES.get(shape, shape):17} {threads if threads != '0' else 'all':>7} "
              f"{gbs:8.2f} {base_text} {ratio}" + cv_text(cvs, (kernel, shape, threads), base_key))


FAMILY = re.compile(r"^(BM_[^/]+)/shape:(\d)/real_time")
FAMILY_SHAPES = {"0": "[32,512,768]", "1": "[1,128,768]", "2": "[8,256,56,56]"}


def family(run):
    """The normalization family's one-thread rows (kernels_bench.cpp's
    family_rows, ceilings_bench.cpp's family_ceiling_rows) against
    BM_family_memcpy_f32 / _f16 of the same shape; a kernel with a ceiling
    (BM_ceiling_<kernel>_compute_<type>) also shows the ceiling's ratio and
    the kernel's share of it."""
    rates, cvs = {}, {}
    has_aggregates = any(b.get("run_type") == "aggregate" for b in run["benchmarks"])
    for b in run["benchmarks"]:
        m = FAMILY.match(b["name"])
        if not m or "bytes_per_second" not in b:
            continue
        if has_aggregates and b.get("aggregate_name") == "cv":
            cvs[m.groups()] = 100 * b["bytes_per_second"]
        if has_aggregates and b.get("aggregate_name") != "median":
            continue
        rates.setdefault(m.groups(), []).append(b["bytes_per_second"] / 1e9)
    rate = {k: statistics.median(v) for k, v in rates.items()}
    if not rate:
        return
    print(f"\n{'kernel (one thread)':34} {'shape':15} {'GB/s':>8} {'memcpy':>8} {'ratio':>6}"
          f" {'ceiling':>8} {'share':>6}" + (f" {'cv %':>11}" if cvs else ""))
    for (kernel, shape), gbs in sorted(rate.items()):
        if kernel.startswith("BM_family_memcpy"):
            continue
        half = kernel.endswith("f16")
        base_key = ("BM_family_memcpy_f16" if half else "BM_family_memcpy_f32", shape)
        base = rate.get(base_key)
        ratio = f"{gbs / base:6.2f}" if base else "     -"
        kind, _, dtype = kernel[3:].rpartition("_")
        ceiling = rate.get((f"BM_ceiling_{kind}_compute_{dtype}", shape))
        ceil_text = f"{ceiling / base:8.2f} {gbs / ceiling:6.2f}" if ceiling and base else f"{'-':>8} {'-':>6}"
        print(f"{kernel:34} {FAMILY_SHAPES.get(shape, shape):15} {gbs:8.2f} "
              f"{base if base else 0:8.2f} {ratio} {ceil_text}" + cv_text(cvs, (kernel, shape), base_key))


def cv_text(cvs, key, base_key):
    """' kernel/memcpy' cv in percent, '-' where a run has none."""
    if not cvs:
        return ""
    show = lambda k: f"{cvs[k]:.1f}" if k in cvs else "-"
    return f" {show(key) + '/' + show(base_key):>11}"


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdin")
    with open(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdin") as f:
        family(json.load(f))
