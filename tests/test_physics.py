"""Tests of the step-time model: each term moves throughput the way physics says."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from leapml.fleet.physics import memory_needed_gb, step_breakdown

BASE = {
    "gflops": 12.0, "params_m": 25.0, "traffic_mb": 60.0, "act_mb": 50.0, "host_ms": 0.05, "a2a_kb": 0.0,
    "batch_half": 48.0, "efficiency": 0.45, "overlap": 0.8, "overhead_ms": 4.0, "seq_len": np.nan, "seq_ref": np.nan,
    "attention": 0.0, "trainers": 8, "batch_size": 256, "precision": np.array(["bf16"]),
    "parallelism": np.array(["data"]), "variant": 1.0, "peak_tflops": 989.0, "memory_bw_gbps": 3350.0,
    "intra_node_bw_gbps": 900.0, "inter_node_bw_gbps": 50.0, "devices_per_host": 8, "maturity": 1.0,
    "interaction": 1.0,
}


def run(**changes):
    return {k: float(np.asarray(v).ravel()[0]) for k, v in step_breakdown(**{**BASE, **changes}).items()}


def test_throughput_is_trainers_times_batch_over_step():
    out = run()
    assert np.isclose(out["throughput"], 8 * 256 / out["step_s"])


def test_faster_device_is_faster_but_not_proportionally():
    slow, fast = run(peak_tflops=312.0), run(peak_tflops=989.0)
    assert fast["throughput"] > slow["throughput"]
    # overhead and memory traffic do not scale with peak FLOP/s
    assert fast["throughput"] / slow["throughput"] < 989 / 312


def test_small_batches_underuse_the_device():
    per_sample_small = run(batch_size=4)["compute_s"] / 4
    per_sample_large = run(batch_size=1024)["compute_s"] / 1024
    assert per_sample_small > 3 * per_sample_large


def test_scaling_across_hosts_pays_the_network():
    one_host = run(trainers=8, params_m=2000.0)
    two_hosts = run(trainers=16, params_m=2000.0)
    assert two_hosts["comm_s"] > 5 * one_host["comm_s"]
    assert two_hosts["throughput"] < 2 * one_host["throughput"]
    assert run(trainers=1)["comm_s"] == 0


def test_host_bound_jobs_wait_for_input():
    out = run(host_ms=50.0)
    assert np.isclose(out["step_s"], out["host_s"])
    assert out["throughput"] < run()["throughput"] / 10


def test_ranking_all_to_all_adds_communication():
    assert run(a2a_kb=40.0)["comm_s"] > run(a2a_kb=0.0)["comm_s"]


def test_lower_maturity_and_hidden_factors_slow_down():
    assert run(maturity=0.6)["throughput"] < run()["throughput"]
    assert run(interaction=0.8)["throughput"] < run()["throughput"]
    assert run(variant=1.5)["throughput"] < run()["throughput"]


def test_sequence_length_scales_transformer_cost():
    saturated = {"seq_ref": 2048.0, "attention": 0.2, "gflops": 1000.0, "batch_half": 1e-9}
    short = run(seq_len=1024.0, **saturated)
    long = run(seq_len=4096.0, **saturated)
    assert long["compute_s"] > 4 * short["compute_s"]  # more than linear: attention


def test_long_sequences_fill_the_device_at_small_batches():
    # the same tokens per step: one long sequence is as efficient as many short ones
    common = {"seq_ref": 2048.0, "attention": 0.0, "gflops": 1000.0, "batch_half": 2.0}
    one_long = run(seq_len=8192.0, batch_size=1, **common)
    four_short = run(seq_len=2048.0, batch_size=4, **common)
    assert np.isclose(one_long["compute_s"], four_short["compute_s"])
    assert run(seq_len=2048.0, batch_size=1, **common)["compute_s"] > one_long["compute_s"] / 4


def memory(**changes):
    base = {"params_m": 7000.0, "memory_params_m": 7000.0, "embedding_gb": 0.0, "act_mb": 1000.0,
                "seq_len": 2048.0, "seq_ref": 2048.0, "attention": 0.1, "trainers": 8, "batch_size": 4,
                "precision_scale": 1.0, "parallelism": np.array(["data"]), "devices_per_host": 8, "variant": 1.0}
    return float(np.asarray(memory_needed_gb(**{**base, **changes})).ravel()[0])


def test_memory_shards_and_grows_with_batch():
    assert memory(parallelism=np.array(["fsdp"])) < memory() / 4
    assert memory(parallelism=np.array(["tensor"])) < memory()
    assert memory(batch_size=8) > memory(batch_size=4)
    assert memory(precision_scale=2.0) > memory()
    # embeddings shard across trainers
    assert memory(embedding_gb=800.0, trainers=64) < memory(embedding_gb=800.0, trainers=8)


@settings(max_examples=60, deadline=None)
@given(
    trainers=st.sampled_from([1, 2, 8, 16, 512]),
    batch=st.integers(1, 8192),
    peak=st.floats(5, 5000),
    gflops=st.floats(1e-4, 1e5),
    precision=st.sampled_from(["fp32", "tf32", "bf16", "fp16", "fp8"]),
    parallelism=st.sampled_from(["data", "fsdp", "tensor", "hybrid"]),
)
def test_throughput_is_positive_and_finite(trainers, batch, peak, gflops, precision, parallelism):
    out = run(trainers=trainers, batch_size=batch, peak_tflops=peak, gflops=gflops,
              precision=np.array([precision]), parallelism=np.array([parallelism]))
    assert np.isfinite(out["throughput"]) and out["throughput"] > 0
    assert out["step_s"] >= out["overhead_s"]
