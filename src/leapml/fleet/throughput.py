"""The fleet's true throughput of (job, hardware type) pairs: the physics applied to its catalogs.

:func:`physics_arrays` turns the catalogs and hidden tables into dense
arrays once; :func:`evaluate_pairs` and :func:`expected_pairs` evaluate
millions of aligned (job, hardware type) pairs at once. The simulator draws
its attempts from these, and the truth evaluators (:meth:`Fleet.expected_throughput`,
:mod:`leapml.fleet.truth`) read the same functions, so the truth is
computed one way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..schema import PRECISIONS
from .models import FAMILIES, MATURITY
from .physics import _ACT_SCALE, _USABLE_MEMORY, memory_needed_gb, step_breakdown

__all__ = ["catalog_codes", "evaluate_in_blocks", "evaluate_pairs", "expected_pairs", "launch_arrays",
           "physics_arrays", "release_factor"]

_KINDS = ("recsys", "vision", "transformer", "graph", "small", "rl")


_STACKS = ("cuda", "rocm", "synapse", "inhouse", "cpu")


_RELEASE_STACKS = ("cuda", "rocm", "synapse", "inhouse")


def catalog_codes(values: pd.Series, catalog: pd.Series, what: str) -> np.ndarray:
    """Positions of ``values`` in ``catalog``; unknown values raise."""
    index = pd.Index(catalog.astype(str))
    codes = index.get_indexer(values.astype(str))
    if (codes < 0).any():
        bad = sorted(set(values.astype(str)[codes < 0]))[:5]
        raise ValueError(f"{what} not in the catalog: {bad}")
    return codes


def physics_arrays(models: pd.DataFrame, hardware: pd.DataFrame, interactions: pd.DataFrame, releases: pd.DataFrame) -> dict:
    """Dense arrays of the catalogs and hidden tables that the physics reads."""
    hw_names = hardware["hardware_type"].astype(str).tolist()
    type_names = models["model_type"].astype(str).tolist()
    peaks = np.column_stack([hardware[f"peak_{p}_tflops"].to_numpy(float) for p in PRECISIONS])
    stack = np.array([_STACKS.index(s) for s in hardware["software"].astype(str)])
    maturity = np.array([[MATURITY[_STACKS[s]][k] for k in _KINDS] for s in stack])
    inter = np.ones((len(type_names), len(hw_names)))
    if len(interactions):
        m = pd.Index(type_names).get_indexer(interactions["model_type"].astype(str))
        h = pd.Index(hw_names).get_indexer(interactions["hardware_type"].astype(str))
        keep = (m >= 0) & (h >= 0)
        inter[m[keep], h[keep]] = interactions["_interaction"].to_numpy(float)[keep]
    families = list(FAMILIES)
    return {
        "models": {c: models[c].to_numpy() for c in models.columns if c.startswith("_")},
        "kind_code": np.array([_KINDS.index(k) for k in models["_kind"].astype(str)]),
        "family_code": np.array([families.index(f) for f in models["model_family"].astype(str)]),
        "peaks": peaks,
        "stack": stack,
        "maturity": maturity,
        "interaction": inter,
        "hw": {c: hardware[c].to_numpy(float) for c in (
            "memory_gb", "memory_bw_gbps", "intra_node_bw_gbps", "inter_node_bw_gbps", "devices_per_host")},
        "introduced": hardware["introduced"].to_numpy("datetime64[ns]"),
        "releases": releases,
    }


def evaluate_pairs(ctx: dict, model_code: np.ndarray, hw_code: np.ndarray, launch: dict, *, nominal: bool = False) -> dict:
    """Physics for aligned (job, hardware) pairs, before software releases.

    With ``nominal=True``, the hidden job factors are ignored: what a scheduler
    can estimate. Returns ``throughput``, ``memory_gb`` and ``feasible``.
    """
    m = ctx["models"]
    hw = ctx["hw"]
    prec = launch["precision"]
    prec_code = np.zeros(len(prec), dtype=np.int64)
    for i, p in enumerate(PRECISIONS):
        prec_code[prec == p] = i
    peak = ctx["peaks"][hw_code, prec_code]
    maturity = ctx["maturity"][hw_code, ctx["kind_code"][model_code]]
    variant = np.ones(len(model_code)) if nominal else launch["variant"]
    memory_factor = 1.0 if nominal else launch["memory_factor"]
    act_scale = np.ones(len(prec))
    for p, s in _ACT_SCALE.items():
        act_scale[prec == p] = s
    seq_ref = m["_seq_ref"][model_code].astype(float)
    seq = np.where(np.isfinite(launch["seq"]), launch["seq"], seq_ref)
    dph = hw["devices_per_host"][hw_code]
    mem = memory_needed_gb(
        params_m=m["_params_m"][model_code].astype(float),
        memory_params_m=m["_memory_params_m"][model_code].astype(float),
        embedding_gb=m["_embedding_gb"][model_code].astype(float),
        act_mb=m["_act_mb"][model_code].astype(float),
        seq_len=seq, seq_ref=seq_ref, attention=m["_attention"][model_code].astype(float),
        trainers=launch["trainers"], batch_size=launch["batch"], precision_scale=act_scale,
        parallelism=launch["parallelism"], devices_per_host=dph, variant=variant,
    ) * memory_factor
    feasible = (maturity > 0) & np.isfinite(peak) & (mem <= hw["memory_gb"][hw_code] * _USABLE_MEMORY)
    safe_peak = np.where(np.isfinite(peak), peak, 1.0)
    out = step_breakdown(
        gflops=m["_gflops"][model_code].astype(float),
        params_m=m["_params_m"][model_code].astype(float),
        traffic_mb=m["_traffic_mb"][model_code].astype(float),
        act_mb=m["_act_mb"][model_code].astype(float),
        host_ms=m["_host_ms"][model_code].astype(float),
        a2a_kb=m["_a2a_kb"][model_code].astype(float),
        batch_half=m["_batch_half"][model_code].astype(float),
        efficiency=m["_efficiency"][model_code].astype(float),
        overlap=m["_overlap"][model_code].astype(float),
        overhead_ms=m["_overhead_ms"][model_code].astype(float),
        seq_len=seq, seq_ref=seq_ref, attention=m["_attention"][model_code].astype(float),
        trainers=launch["trainers"], batch_size=launch["batch"], precision=prec,
        parallelism=launch["parallelism"], variant=variant, peak_tflops=safe_peak,
        memory_bw_gbps=hw["memory_bw_gbps"][hw_code], intra_node_bw_gbps=hw["intra_node_bw_gbps"][hw_code],
        inter_node_bw_gbps=hw["inter_node_bw_gbps"][hw_code], devices_per_host=dph,
        maturity=np.where(maturity > 0, maturity, 1.0),
        interaction=1.0 if nominal else ctx["interaction"][model_code, hw_code],
    )
    return {"throughput": out["throughput"], "memory_gb": mem, "feasible": feasible}


def expected_pairs(ctx: dict, model_code, hw_code, launch: dict, times) -> tuple[np.ndarray, np.ndarray]:
    """Expected throughput (releases in force at ``times``) and feasibility of aligned pairs."""
    out = evaluate_pairs(ctx, model_code, hw_code, launch)
    feasible = out["feasible"] & (ctx["introduced"][hw_code] <= times)
    thr = out["throughput"] * release_factor(ctx, hw_code, ctx["family_code"][model_code], times)
    return thr, feasible


def evaluate_in_blocks(ctx: dict, model_code, hw_code, launch: dict, *, nominal: bool = False,
                        block: int = 1 << 19) -> dict:
    """:func:`evaluate_pairs` of many pairs (``throughput``, ``memory_gb``, ``feasible``), a block at a time to bound peak memory."""
    out = {"throughput": np.empty(len(model_code)), "memory_gb": np.empty(len(model_code)),
           "feasible": np.empty(len(model_code), dtype=bool)}
    for lo in range(0, len(model_code), block):
        part = slice(lo, lo + block)
        sub = {k: v[part] for k, v in launch.items()}
        done = evaluate_pairs(ctx, model_code[part], hw_code[part], sub, nominal=nominal)
        for name, values in out.items():
            values[part] = done[name]
    return out


def release_factor(ctx: dict, hw_code: np.ndarray, family_code: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Product of the software releases in force at ``times`` for each pair."""
    factor = np.ones(len(hw_code))
    releases = ctx["releases"]
    if not len(releases):
        return factor
    families = list(FAMILIES)
    stack = ctx["stack"][hw_code]
    for (software, when), group in releases.groupby(["software", "time"], sort=True, observed=True):
        by_family = np.ones(len(families))
        by_family[[families.index(f) for f in group["model_family"].astype(str)]] = group["factor"].to_numpy(float)
        hit = (stack == _STACKS.index(str(software))) & (times >= np.datetime64(pd.Timestamp(when), "ns"))
        factor[hit] *= by_family[family_code[hit]]
    return factor


def launch_arrays(models: pd.DataFrame, frame: pd.DataFrame) -> tuple[np.ndarray, dict]:
    """Model-type codes (positions in ``models``) and launch arrays of rows, without the hidden job factors."""
    model_code = catalog_codes(frame["model_type"], models["model_type"], "model_type")
    return model_code, {
        "trainers": frame["trainer_count"].to_numpy(np.int64),
        "batch": frame["batch_size"].to_numpy(np.int64),
        "precision": frame["precision"].astype(str).to_numpy(),
        "parallelism": frame["parallelism"].astype(str).to_numpy(),
        "seq": frame["seq_len"].astype("Float64").to_numpy(float, na_value=np.nan),
    }
