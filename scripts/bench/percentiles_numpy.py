"""numpy's side of scripts/bench/percentiles.bench.ts: exact nearest-rank percentiles on the same values.

Reads groups.json and, per group, <i>.values (float64), <i>.good and <i>.unflagged (uint8) from
the directory given as argv[1]. Two times: "ms" is the computation alone (values already in
memory, the issue's terms); "load_ms" is reading the raw float64/uint8 files (np.fromfile, the
cheapest possible load: no parsing, no decompression), so ms + load_ms is numpy from disk. Same integer ranks as queries/percentiles.sql: rank = ceil(k*n/1000)
computed as (k*n + 999) // 1000 on Python integers, never a float p. Prints one JSON object.
"""
import json
import sys
import time

import numpy as np

PER_MILLE = (("p50", 500), ("p95", 950), ("p99", 990), ("p999", 999))


def figures(values, total):
    n = int(values.size)
    row = {"n": n, "failed": total - n, "total": total, "loss": None if total == 0 else (total - n) / total}
    if n == 0:
        row.update({name: None for name, _ in PER_MILLE})
        row["max"] = None
        return row
    s = np.sort(values)
    for name, k in PER_MILLE:
        row[name] = float(s[(k * n + 999) // 1000 - 1])
    row["max"] = float(s[n - 1])
    return row


def main(directory):
    with open(f"{directory}/groups.json") as f:
        groups = json.load(f)
    load_start = time.perf_counter()
    data = []
    for i, _ in enumerate(groups):
        values = np.fromfile(f"{directory}/{i}.values", dtype=np.float64)
        good = np.fromfile(f"{directory}/{i}.good", dtype=np.uint8).astype(bool)
        unflagged = np.fromfile(f"{directory}/{i}.unflagged", dtype=np.uint8).astype(bool)
        data.append((values, good, unflagged))
    load_ms = (time.perf_counter() - load_start) * 1000
    start = time.perf_counter()
    rows = []
    for key, (values, good, unflagged) in zip(groups, data):
        rows.append({**key, "subset": "all", **figures(values[good], int(values.size))})
        unflagged_total = int(np.count_nonzero(unflagged))
        if unflagged_total < values.size:
            rows.append({**key, "subset": "unflagged", **figures(values[good & unflagged], unflagged_total)})
    ms = (time.perf_counter() - start) * 1000
    print(json.dumps({"ms": ms, "load_ms": load_ms, "numpy": np.__version__, "rows": rows}))


if __name__ == "__main__":
    main(sys.argv[1])
