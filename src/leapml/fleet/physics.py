"""The step-time model: how long one training step takes on one hardware type.

Everything here works on aligned numpy arrays, one element per (job, hardware
type) pair, so that the simulator evaluates millions of pairs at once.

A step of one trainer is

* **compute**: FLOPs per sample x batch / (peak FLOP/s at the precision x
  efficiency). Efficiency is the family's best fraction of peak, times the
  software stack's maturity for that kind of model, times a batch term
  ``b / (b + b_half)`` (small batches leave a large device idle; ``b_half``
  grows with the square root of the device's peak), times a hidden
  per-(model type, hardware type) interaction;
* **memory traffic**: (bytes moved per sample x batch + three passes over the
  weights) / memory bandwidth; compute and traffic overlap as in a roofline
  (``max + 0.3 min``);
* **communication**: ring all-reduce of the gradients (``2 (n-1)/n`` x bytes)
  over the intra-node link when the job fits in one host (or NVLink domain),
  over the per-device network otherwise; fully sharded data parallelism moves
  1.5 times as much, tensor parallelism adds activation traffic inside the
  host, ranking models add an all-to-all of embeddings; a share of it hides
  behind compute;
* **host input pipeline**: per-sample decode / feature cost, running in
  parallel with the device (the step waits for whichever is slower);
* a fixed **per-step overhead** (launches, optimizer, synchronisation).

Throughput is ``trainers x batch / step time``. A configuration whose memory
(weights, gradients and optimizer state after sharding, activations, embedding
shards, runtime reserve) exceeds the device's memory does not run.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MEMORY_FACTOR_SIGMA", "PRECISION_BYTES", "memory_needed_gb", "step_breakdown"]

#: Bytes per value of gradients, by precision.
PRECISION_BYTES = {"fp32": 4.0, "tf32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 2.0}
#: Activation and traffic size relative to 16-bit, by precision.
_ACT_SCALE = {"fp32": 2.0, "tf32": 2.0, "bf16": 1.0, "fp16": 1.0, "fp8": 0.8}

_RUNTIME_RESERVE_GB = 1.5
_USABLE_MEMORY = 0.95  # share of device memory a job can hold (allocator, fragmentation)
#: Log-sd of a job's hidden memory factor (allocator and framework overheads no launch
#: field reveals), drawn once per job by the simulator.
MEMORY_FACTOR_SIGMA = 0.08
_BANDWIDTH_EFFICIENCY = 0.75
_LINK_EFFICIENCY = 0.8
_HOP_LATENCY_S = 6e-6


def _seq_scale(seq_len, seq_ref, attention):
    """Growth of per-sample cost with sequence length: linear plus an attention term."""
    ratio = np.where(np.isfinite(seq_len) & np.isfinite(seq_ref), seq_len / np.where(np.isfinite(seq_ref), seq_ref, 1.0), 1.0)
    return ratio * (1 + attention * ratio) / (1 + attention)


def memory_needed_gb(*, params_m, memory_params_m, embedding_gb, act_mb, seq_len, seq_ref,
                     attention, trainers, batch_size, precision_scale, parallelism,
                     devices_per_host, variant):
    """Memory one trainer needs, GB (arrays broadcast together).

    ``parallelism`` is an array of strings among ``data``, ``fsdp``,
    ``tensor``, ``hybrid``; ``precision_scale`` the activation size relative to
    16-bit. Weights, gradients and Adam state take 16 bytes a parameter,
    sharded by ``trainers`` (fsdp) or by the trainers of one host (tensor);
    embedding tables (and their row-wise optimizer state, half again) shard
    across all trainers.

    Examples
    --------
    >>> import numpy as np
    >>> gb = memory_needed_gb(params_m=np.array([7000.0]), memory_params_m=np.array([7000.0]),
    ...     embedding_gb=np.array([0.0]), act_mb=np.array([1000.0]), seq_len=np.array([2048.0]),
    ...     seq_ref=np.array([2048.0]), attention=np.array([0.1]), trainers=np.array([8]),
    ...     batch_size=np.array([4]), precision_scale=np.array([1.0]),
    ...     parallelism=np.array(["fsdp"]), devices_per_host=np.array([8]), variant=np.array([1.0]))
    >>> round(float(gb[0]), 1)
    19.5
    """
    trainers = np.asarray(trainers, float)
    shard = np.ones_like(trainers)
    shard = np.where(parallelism == "fsdp", trainers, shard)
    shard = np.where(parallelism == "tensor", np.minimum(trainers, devices_per_host), shard)
    states = memory_params_m * 1e6 * np.sqrt(variant) * 16.0 / shard / 1e9
    emb = embedding_gb * np.sqrt(variant) * 1.5 / trainers
    scale = _seq_scale(seq_len, seq_ref, attention)
    tensor_share = np.where(parallelism == "tensor", np.minimum(trainers, devices_per_host), 1.0)
    act = act_mb * scale * precision_scale * variant**0.6 * batch_size / 1e3 / np.sqrt(tensor_share)
    return states + emb + act + _RUNTIME_RESERVE_GB


def step_breakdown(*, gflops, params_m, traffic_mb, act_mb, host_ms, a2a_kb, batch_half, efficiency,
                   overlap, overhead_ms, seq_len, seq_ref, attention, trainers, batch_size,
                   precision, parallelism, variant, peak_tflops, memory_bw_gbps, intra_node_bw_gbps,
                   inter_node_bw_gbps, devices_per_host, maturity, interaction):
    """Seconds per step of each part, and the throughput, for aligned arrays.

    Parameters are arrays (or scalars) that broadcast together: model-type
    physics (``gflops`` per sample at the reference length ``seq_ref``,
    ``params_m``, ``traffic_mb``, ``act_mb``, ``host_ms``, ``a2a_kb``,
    ``batch_half``, ``efficiency``, ``overlap``, ``overhead_ms``,
    ``attention``), the job (``seq_len``, ``trainers``, ``batch_size``,
    ``precision`` and ``parallelism`` as string arrays, hidden ``variant``),
    the hardware at the job's precision (``peak_tflops``, bandwidths in GB/s,
    ``devices_per_host``), the software ``maturity`` of the stack for the
    family and the hidden ``interaction``.

    Returns
    -------
    dict of ndarray
        ``compute_s``, ``memory_s``, ``comm_s`` (before overlap),
        ``exposed_comm_s``, ``host_s``, ``overhead_s``, ``step_s`` and
        ``throughput`` (samples/s over all trainers).

    Examples
    --------
    >>> import numpy as np
    >>> out = step_breakdown(gflops=12.0, params_m=25.0, traffic_mb=60.0, act_mb=50.0, host_ms=0.2,
    ...     a2a_kb=0.0, batch_half=48.0, efficiency=0.45, overlap=0.8, overhead_ms=4.0,
    ...     seq_len=np.nan, seq_ref=np.nan, attention=0.0, trainers=np.array([1, 8]),
    ...     batch_size=256, precision=np.array(["bf16", "bf16"]),
    ...     parallelism=np.array(["data", "data"]), variant=1.0, peak_tflops=989.0,
    ...     memory_bw_gbps=3350.0, intra_node_bw_gbps=900.0, inter_node_bw_gbps=50.0,
    ...     devices_per_host=8, maturity=1.0, interaction=1.0)
    >>> bool(out["throughput"][1] > 7 * out["throughput"][0])
    True
    """
    trainers = np.asarray(trainers, float)
    batch = np.asarray(batch_size, float)
    precision = np.asarray(precision)
    scale = _seq_scale(np.asarray(seq_len, float), np.asarray(seq_ref, float), attention)
    act_scale = np.select(
        [precision == p for p in _ACT_SCALE], list(_ACT_SCALE.values()), default=1.0
    )
    grad_bytes = np.where((precision == "fp32") | (precision == "tf32"), 4.0, 2.0)

    peak = np.asarray(peak_tflops, float) * 1e12
    half = batch_half * np.sqrt(peak / 100e12)
    work = batch * scale  # samples at the reference length: a long sequence fills the device too
    eff = efficiency * maturity * interaction * work / (work + half)
    flops = gflops * 1e9 * scale * variant * batch
    compute = flops / (peak * eff)
    weights = params_m * 1e6 * np.sqrt(variant) * grad_bytes / 2 * 3
    traffic = traffic_mb * 1e6 * scale * act_scale * variant * batch + weights
    memory = traffic / (memory_bw_gbps * 1e9 * _BANDWIDTH_EFFICIENCY)
    device = np.maximum(compute, memory) + 0.3 * np.minimum(compute, memory)

    hosts = np.ceil(trainers / devices_per_host)
    intra = intra_node_bw_gbps / 2 * 1e9 * _LINK_EFFICIENCY  # one direction of the link
    inter = inter_node_bw_gbps * 1e9 * _LINK_EFFICIENCY
    link = np.where(hosts > 1, np.minimum(inter, intra), intra)
    grads = params_m * 1e6 * np.sqrt(variant) * grad_bytes
    ring = np.where(trainers > 1, 2 * (trainers - 1) / trainers, 0.0)
    volume = grads * ring
    volume = np.where(parallelism == "fsdp", 1.5 * volume, volume)
    local = np.minimum(trainers, devices_per_host)
    # tensor parallelism: gradients all-reduce across hosts only; activations inside the host
    volume = np.where(parallelism == "tensor", volume / local, volume)
    comm = volume / link + np.where(trainers > 1, 2 * (local - 1 + hosts - 1) * _HOP_LATENCY_S, 0.0)
    tensor_act = act_mb * 1e6 * scale * act_scale * variant * batch * 0.25 * (local - 1) / local
    comm = comm + np.where(parallelism == "tensor", tensor_act / intra, 0.0)
    a2a = a2a_kb * 1e3 * variant * batch * 2 * np.where(trainers > 1, (trainers - 1) / trainers, 0.0)
    comm = comm + a2a / link
    exposed = np.maximum(comm - overlap * device, 0.15 * comm)

    # a job's hidden size also sets its kernel count and its input features
    overhead = overhead_ms / 1e3 * np.sqrt(variant) * np.ones_like(device)
    host = host_ms / 1e3 * scale * batch * variant**0.8
    step = np.maximum(device + exposed + overhead, host)
    return {
        "compute_s": compute,
        "memory_s": memory,
        "comm_s": comm,
        "exposed_comm_s": exposed,
        "host_s": host,
        "overhead_s": overhead,
        "step_s": step,
        "throughput": trainers * batch / step,
    }
