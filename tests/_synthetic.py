"""A synthetic regression task whose target spans 7 orders of magnitude.

Shaped like the fleet's problem: throughput = hardware speed x precision
speed-up x trainer scaling x batch utilisation / model cost, with a
memory-bound regime that cuts throughput when the model's working set does
not fit the hardware's memory, and multiplicative log-normal noise. Used by
the tests and by ``benchmarks/bench_synthetic_accuracy.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

HARDWARE = {
    # name: (relative speed, memory in relative units, fp8 support)
    "t4": (1.0, 16.0, False),
    "l4": (2.0, 24.0, True),
    "v100": (2.5, 32.0, False),
    "a10": (2.2, 24.0, False),
    "a100": (6.0, 80.0, False),
    "h100": (14.0, 80.0, True),
    "mi300": (12.0, 192.0, True),
    "tpu-v5e": (4.0, 16.0, False),
}
PRECISION_SPEEDUP = {"fp32": 1.0, "bf16": 2.0, "fp8": 3.5}


def make_throughput_regression(n_samples=2000, *, noise=0.05, random_state=0, as_frame=True):
    """Features and throughput for ``n_samples`` synthetic training jobs.

    Returns ``(X, y)``: ``X`` a DataFrame with numeric columns
    ``log10_model_cost``, ``trainer_count``, ``batch_size``, ``seq_len``,
    ``noise_feature``, and categorical ``hardware_type`` and ``precision``
    (or a float array of the numeric columns with ``as_frame=False``); ``y``
    the throughput, > 0, spanning about 10^-1 to 10^6.
    """
    rng = np.random.default_rng(random_state)
    n = int(n_samples)
    names = list(HARDWARE)
    hardware = rng.choice(names, size=n)
    speed = np.array([HARDWARE[h][0] for h in hardware])
    memory = np.array([HARDWARE[h][1] for h in hardware])
    fp8 = np.array([HARDWARE[h][2] for h in hardware])
    precision = rng.choice(list(PRECISION_SPEEDUP), size=n, p=[0.3, 0.5, 0.2])
    speedup = np.array([PRECISION_SPEEDUP[p] for p in precision])
    # fp8 on hardware without it runs at bf16 speed
    speedup = np.where((precision == "fp8") & ~fp8, PRECISION_SPEEDUP["bf16"], speedup)

    log10_cost = rng.uniform(-1.5, 1.5, n)
    trainers = 2 ** rng.integers(0, 9, n)
    batch = 2 ** rng.integers(0, 8, n)
    seq_len = rng.choice([128, 512, 2048, 8192], size=n)
    utilisation = batch / (batch + 6.0)
    # scaling efficiency falls with the number of trainers
    scaling = trainers ** (0.95 - 0.03 * np.log2(trainers))
    working_set = 10**log10_cost * batch * seq_len / 2048 / 40
    memory_bound = np.where(working_set > memory, 0.25, 1.0)
    attention = 1.0 / (1.0 + seq_len / 4096)
    log_y = (
        np.log(30.0 * speed * speedup * utilisation * scaling * memory_bound * attention)
        - log10_cost * np.log(10)
        + noise * rng.standard_normal(n)
    )
    y = np.exp(log_y)
    X = pd.DataFrame(
        {
            "log10_model_cost": log10_cost,
            "trainer_count": trainers.astype(np.int64),
            "batch_size": batch.astype(np.int64),
            "seq_len": seq_len.astype(np.int64),
            "noise_feature": rng.standard_normal(n),
            "hardware_type": pd.Categorical(hardware, categories=names),
            "precision": pd.Series(precision, dtype="str"),
        }
    )
    if not as_frame:
        return X.drop(columns=["hardware_type", "precision"]).to_numpy(np.float64), y
    return X, y
