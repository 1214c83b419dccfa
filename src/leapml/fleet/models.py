"""Model families and the model-type catalog of the synthetic fleet.

A *family* fixes the physics of its models: how parameter count, FLOPs per
sample, memory traffic, activation memory, embedding tables, host-side input
cost and communication relate, which launch configurations are typical and
which software stacks can run it. A *model type* is one member of a family,
drawn at random inside the family's ranges from one latent "size" so that its
figures are coherent (a bigger model has more parameters, more FLOPs and more
activations). Popularity across types is Zipf-like.

Every column whose name starts with ``_`` is hidden physics: the simulator
reads it, features never may.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["FAMILIES", "Family", "model_catalog"]

#: Software stacks a family can run on (see the ``software`` column of the
#: hardware catalog).
_GPU = frozenset({"cuda", "rocm"})
_ALL_ACCEL = frozenset({"cuda", "rocm", "synapse"})


@dataclass(frozen=True)
class Family:
    """The physics and launch habits shared by the model types of one family.

    Ranges are ``(low, high)`` and drawn log-uniformly. Sizes are per sample
    (one training example) at the reference sequence length, in 16-bit
    precision.
    """

    name: str
    kind: str  # recsys, vision, transformer, graph, small, rl: sets software maturity
    type_share: float  # relative number of model types
    popularity: float  # relative attempts per model type
    params_m: tuple  # dense parameters, millions
    gflops: tuple | None  # training GFLOPs per sample; None: 6 x params x seq_len
    traffic_mb: tuple  # device memory traffic per sample beyond the weights, MB
    act_mb: tuple  # activation memory per sample, MB
    host_ms: tuple  # host input-pipeline time per sample, ms
    trainers: tuple  # typical trainer counts
    batches: tuple  # typical per-trainer batch sizes
    precisions: dict  # precision -> weight
    parallelism: dict  # parallelism style -> weight
    support: frozenset = _ALL_ACCEL
    emb_gb: tuple | None = None  # embedding tables, GB (ranking families)
    a2a_kb: tuple | None = None  # embedding all-to-all per sample, KB
    seq: tuple | None = None  # sequence lengths, the first is the reference
    attention: float = 0.0  # quadratic share of FLOPs at the reference length
    memory_params_mult: float = 1.0  # parameters held in memory / active ones (MoE)
    batch_half: float = 32.0  # batch at which a 100-TFLOP/s device is half used
    efficiency: float = 0.5  # best fraction of peak FLOP/s
    overlap: float = 0.7  # fraction of compute time that hides communication
    overhead_ms: float = 5.0  # fixed per-step overhead
    hours: float = 6.0  # median run duration
    extra: dict = field(default_factory=dict)


_F = Family
#: The model families of the synthetic fleet.
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in [
        _F("ranking-dlrm", "recsys", 1.6, 3.0, (20, 300), (0.3, 4.0), (0.8, 6.0), (1.0, 6.0),
           (0.01, 0.05), (16, 32, 64, 128, 256, 512), (512, 1024, 2048, 4096),
           {"fp32": 0.2, "tf32": 0.2, "bf16": 0.4, "fp16": 0.2}, {"hybrid": 1.0},
           support=frozenset({"cuda", "rocm", "inhouse"}), emb_gb=(40, 1500), a2a_kb=(4, 40),
           batch_half=512, efficiency=0.35, overlap=0.5, overhead_ms=8, hours=14),
        _F("ranking-dcn", "recsys", 1.4, 3.0, (5, 120), (0.1, 2.0), (0.4, 4.0), (0.6, 4.0),
           (0.008, 0.04), (8, 16, 32, 64, 128, 256), (512, 1024, 2048, 4096, 8192),
           {"fp32": 0.3, "tf32": 0.2, "bf16": 0.3, "fp16": 0.2}, {"hybrid": 1.0},
           support=frozenset({"cuda", "rocm", "inhouse"}), emb_gb=(10, 400), a2a_kb=(2, 24),
           batch_half=512, efficiency=0.3, overlap=0.5, overhead_ms=6, hours=10),
        _F("ads-ctr-small", "recsys", 1.2, 2.0, (0.5, 10), (0.005, 0.08), (0.05, 0.6), (0.05, 0.5),
           (0.001, 0.006), (1, 2, 4, 8), (1024, 2048, 4096, 8192),
           {"fp32": 0.7, "bf16": 0.3}, {"data": 1.0},
           support=frozenset({"cuda", "rocm", "inhouse", "cpu"}), emb_gb=(0.5, 8), a2a_kb=None,
           batch_half=1024, efficiency=0.2, overlap=0.8, overhead_ms=3, hours=3),
        _F("retrieval-two-tower", "recsys", 1.0, 1.5, (20, 250), (0.2, 3.0), (0.5, 4.0), (0.5, 4.0),
           (0.01, 0.04), (8, 16, 32, 64, 128), (1024, 2048, 4096, 8192),
           {"fp32": 0.2, "tf32": 0.2, "bf16": 0.6}, {"hybrid": 1.0},
           support=frozenset({"cuda", "rocm", "inhouse"}), emb_gb=(10, 300), a2a_kb=(2, 16),
           batch_half=512, efficiency=0.35, overlap=0.6, overhead_ms=6, hours=12),
        _F("seq-rec-transformer", "recsys", 0.8, 1.2, (50, 600), None, (2.0, 20.0), (5.0, 60.0),
           (0.01, 0.05), (16, 32, 64, 128), (64, 128, 256, 512),
           {"bf16": 0.8, "fp32": 0.2}, {"hybrid": 1.0},
           support=frozenset({"cuda", "rocm", "inhouse"}), emb_gb=(20, 400), a2a_kb=(8, 64),
           seq=(512, 256, 1024, 2048), attention=0.25, batch_half=64, efficiency=0.4,
           overlap=0.6, overhead_ms=8, hours=16),
        _F("cnn-classification", "vision", 1.0, 0.7, (10, 80), (8, 40), (30, 120), (25, 120),
           (1.0, 4.0), (1, 2, 4, 8, 16, 32, 64), (32, 64, 128, 256),
           {"fp16": 0.4, "bf16": 0.4, "fp32": 0.2}, {"data": 1.0},
           batch_half=48, efficiency=0.45, overlap=0.8, overhead_ms=4, hours=8),
        _F("cnn-efficient", "vision", 0.6, 0.5, (3, 25), (1.0, 8.0), (40, 160), (20, 90),
           (0.8, 3.0), (1, 2, 4, 8, 16, 32), (64, 128, 256, 512),
           {"fp16": 0.4, "bf16": 0.4, "fp32": 0.2}, {"data": 1.0},
           batch_half=96, efficiency=0.25, overlap=0.8, overhead_ms=4, hours=6),
        _F("object-detection", "vision", 0.7, 0.5, (30, 250), (200, 1200), (300, 1500), (400, 2500),
           (8.0, 30.0), (1, 4, 8, 16, 32), (2, 4, 8, 16),
           {"fp16": 0.5, "bf16": 0.3, "fp32": 0.2}, {"data": 1.0},
           batch_half=4, efficiency=0.35, overlap=0.7, overhead_ms=10, hours=12),
        _F("vit", "vision", 0.8, 0.6, (80, 700), (40, 500), (60, 500), (60, 500),
           (1.0, 4.0), (8, 16, 32, 64, 128), (32, 64, 128, 256),
           {"bf16": 0.7, "fp16": 0.2, "fp32": 0.1}, {"data": 0.6, "fsdp": 0.4},
           batch_half=32, efficiency=0.5, overlap=0.75, overhead_ms=5, hours=12),
        _F("video", "vision", 0.5, 0.35, (50, 1200), (600, 9000), (2000, 15000), (1500, 9000),
           (20.0, 120.0), (1, 8, 16, 32, 64), (1, 2, 4, 8),
           {"bf16": 0.6, "fp16": 0.3, "fp32": 0.1}, {"data": 0.5, "fsdp": 0.5},
           batch_half=2, efficiency=0.4, overlap=0.7, overhead_ms=10, hours=20),
        _F("diffusion-image", "vision", 0.6, 0.45, (400, 3500), (1500, 7000), (1500, 8000), (800, 5000),
           (3.0, 12.0), (8, 16, 32, 64, 128), (2, 4, 8, 16, 32),
           {"bf16": 0.7, "fp16": 0.25, "fp32": 0.05}, {"data": 0.4, "fsdp": 0.6},
           batch_half=6, efficiency=0.45, overlap=0.75, overhead_ms=8, hours=24),
        _F("ocr-document", "vision", 0.5, 0.35, (40, 300), (30, 200), (80, 400), (80, 600),
           (2.0, 8.0), (1, 4, 8, 16, 32), (8, 16, 32, 64),
           {"fp16": 0.4, "bf16": 0.4, "fp32": 0.2}, {"data": 1.0},
           batch_half=16, efficiency=0.4, overlap=0.75, overhead_ms=6, hours=8),
        _F("clip-multimodal", "vision", 0.5, 0.4, (150, 1200), (80, 900), (150, 900), (150, 900),
           (2.0, 8.0), (16, 32, 64, 128, 256), (64, 128, 256, 512),
           {"bf16": 0.8, "fp16": 0.2}, {"data": 0.5, "fsdp": 0.5},
           batch_half=48, efficiency=0.45, overlap=0.6, overhead_ms=6, hours=18),
        _F("speech-asr", "transformer", 0.8, 0.6, (30, 700), None, (20, 150), (40, 400),
           (0.5, 3.0), (1, 4, 8, 16, 32, 64), (8, 16, 32, 64),
           {"bf16": 0.6, "fp16": 0.3, "fp32": 0.1}, {"data": 0.7, "fsdp": 0.3},
           seq=(1000, 500, 1500, 3000), attention=0.2, batch_half=12, efficiency=0.4,
           overlap=0.7, overhead_ms=6, hours=14),
        _F("tts", "transformer", 0.5, 0.35, (20, 250), None, (10, 80), (20, 200),
           (0.5, 2.0), (1, 2, 4, 8, 16), (8, 16, 32, 64),
           {"bf16": 0.5, "fp16": 0.3, "fp32": 0.2}, {"data": 1.0},
           seq=(400, 200, 800, 1200), attention=0.2, batch_half=12, efficiency=0.35,
           overlap=0.75, overhead_ms=6, hours=10),
        _F("llm-pretrain", "transformer", 0.7, 0.35, (1000, 70000), None, (500, 8000), (800, 14000),
           (0.05, 0.3), (32, 64, 128, 256, 512, 1024), (1, 2, 4, 8),
           {"bf16": 0.7, "fp8": 0.3}, {"fsdp": 0.6, "tensor": 0.4},
           seq=(4096, 2048, 8192), attention=0.15, batch_half=0.5, efficiency=0.5,
           overlap=0.75, overhead_ms=15, hours=36),
        _F("llm-finetune", "transformer", 1.2, 0.8, (500, 70000), None, (300, 6000), (400, 9000),
           (0.05, 0.3), (1, 2, 4, 8, 16, 32, 64), (1, 2, 4, 8, 16),
           {"bf16": 0.85, "fp16": 0.1, "fp8": 0.05}, {"fsdp": 0.7, "data": 0.2, "tensor": 0.1},
           seq=(2048, 1024, 4096, 8192), attention=0.15, batch_half=1, efficiency=0.45,
           overlap=0.7, overhead_ms=12, hours=8),
        _F("llm-moe", "transformer", 0.4, 0.25, (2000, 20000), None, (800, 9000), (800, 10000),
           (0.05, 0.3), (64, 128, 256, 512), (1, 2, 4, 8),
           {"bf16": 0.7, "fp8": 0.3}, {"fsdp": 0.5, "tensor": 0.5},
           seq=(4096, 2048, 8192), attention=0.15, memory_params_mult=6.0, batch_half=1,
           efficiency=0.35, overlap=0.6, overhead_ms=18, hours=30),
        _F("nlp-encoder", "transformer", 0.8, 0.6, (100, 1500), None, (10, 120), (20, 250),
           (0.1, 0.6), (1, 4, 8, 16, 32, 64), (16, 32, 64, 128),
           {"bf16": 0.5, "fp16": 0.4, "fp32": 0.1}, {"data": 0.7, "fsdp": 0.3},
           seq=(512, 128, 256, 1024), attention=0.2, batch_half=24, efficiency=0.5,
           overlap=0.75, overhead_ms=5, hours=8),
        _F("translation", "transformer", 0.5, 0.35, (200, 1500), None, (10, 80), (20, 200),
           (0.2, 0.8), (8, 16, 32, 64), (32, 64, 128, 256),
           {"bf16": 0.5, "fp16": 0.4, "fp32": 0.1}, {"data": 0.6, "fsdp": 0.4},
           seq=(256, 128, 512), attention=0.15, batch_half=32, efficiency=0.45,
           overlap=0.75, overhead_ms=5, hours=12),
        _F("gnn", "graph", 0.6, 0.45, (1, 60), (0.5, 20), (5, 60), (5, 60),
           (0.5, 4.0), (1, 2, 4, 8, 16), (256, 512, 1024, 2048),
           {"fp32": 0.6, "bf16": 0.4}, {"data": 1.0},
           support=frozenset({"cuda", "rocm", "cpu"}), batch_half=512, efficiency=0.12,
           overlap=0.6, overhead_ms=6, hours=6),
        _F("tabular-mlp", "small", 0.9, 0.9, (0.05, 5), (0.0005, 0.03), (0.01, 0.2), (0.01, 0.2),
           (0.002, 0.02), (1, 2, 4), (512, 1024, 2048, 4096, 8192),
           {"fp32": 0.8, "bf16": 0.2}, {"data": 1.0},
           support=frozenset({"cuda", "rocm", "synapse", "cpu"}), batch_half=2048,
           efficiency=0.15, overlap=0.8, overhead_ms=3, hours=1.5),
        _F("timeseries-forecast", "small", 0.6, 0.5, (1, 60), None, (0.5, 6), (1, 20),
           (0.02, 0.2), (1, 2, 4, 8), (64, 128, 256, 512),
           {"fp32": 0.6, "bf16": 0.4}, {"data": 1.0},
           support=frozenset({"cuda", "rocm", "synapse", "cpu"}), seq=(336, 96, 720),
           attention=0.1, batch_half=256, efficiency=0.25, overlap=0.8, overhead_ms=4, hours=3),
        _F("rl-agent", "rl", 0.5, 0.35, (1, 60), (0.02, 2.0), (0.2, 4.0), (0.5, 10),
           (15.0, 150.0), (1, 2, 4, 8, 16, 32), (32, 64, 128, 256, 512),
           {"fp32": 0.7, "bf16": 0.3}, {"data": 1.0},
           support=frozenset({"cuda", "rocm", "cpu"}), batch_half=256, efficiency=0.2,
           overlap=0.7, overhead_ms=5, hours=10),
    ]
}

#: Software maturity: the fraction of its best efficiency a family reaches on
#: a software stack (by family kind). Zero means the stack cannot run it.
MATURITY = {
    "cuda": {"recsys": 1.0, "vision": 1.0, "transformer": 1.0, "graph": 1.0, "small": 1.0, "rl": 1.0},
    "rocm": {"recsys": 0.55, "vision": 0.8, "transformer": 0.88, "graph": 0.6, "small": 0.85, "rl": 0.9},
    "synapse": {"recsys": 0.0, "vision": 0.75, "transformer": 0.85, "graph": 0.0, "small": 0.7, "rl": 0.0},
    "inhouse": {"recsys": 1.15, "vision": 0.0, "transformer": 0.0, "graph": 0.0, "small": 0.0, "rl": 0.0},
    "cpu": {"recsys": 0.8, "vision": 0.0, "transformer": 0.0, "graph": 0.7, "small": 1.0, "rl": 1.0},
}

_PRECISION_CODES = ("fp32", "tf32", "bf16", "fp16", "fp8")
_PARALLELISM_CODES = ("data", "fsdp", "tensor", "hybrid")


def _loguniform(rng, low_high, u):
    """Map quantiles ``u`` to a log-uniform range."""
    lo, hi = low_high
    return np.exp(np.log(lo) + u * (np.log(hi) - np.log(lo)))


def check_seed(seed) -> None:
    """Refuse a seed that is not a non-negative integer: every draw is seeded by it."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be a non-negative integer (the same seed gives the same "
                        f"draws), got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")


def model_catalog(seed: int = 0, *, n_types: int = 700, zipf_exponent: float = 0.5) -> pd.DataFrame:
    """Draw the model-type catalog: ``n_types`` types in the families of :data:`FAMILIES`.

    Parameters
    ----------
    seed : int, default=0
        Seed of every draw; the same seed gives the same catalog.
    n_types : int, default=700
        Number of model types, shared among families by their ``type_share``.
    zipf_exponent : float, default=0.5
        Popularity of the type at rank ``r`` is proportional to ``r**-zipf_exponent``;
        ranks are a random order weighted by each family's ``popularity``.

    Returns
    -------
    DataFrame
        One row per model type: ``model_type``, ``model_family`` (categoricals)
        and hidden physics columns starting with ``_`` (``_popularity``, which
        sums to one, ``_params_m``, ``_gflops``, ``_embedding_gb``, the type's
        usual launch configuration ``_base_*``, ...).

    Examples
    --------
    >>> models = model_catalog(seed=0)
    >>> len(models) > 660, models["model_family"].nunique()
    (True, 24)
    >>> round(float(models["_popularity"].sum()), 6)
    1.0
    """
    if n_types < len(FAMILIES):
        raise ValueError(f"n_types must be at least {len(FAMILIES)} (one per family), got {n_types}")
    if zipf_exponent < 0:
        raise ValueError(f"zipf_exponent must be >= 0, got {zipf_exponent}")
    check_seed(seed)
    rng = np.random.default_rng([seed, 7])
    fams = list(FAMILIES.values())
    shares = np.array([f.type_share for f in fams])
    counts = np.maximum(1, np.floor(shares / shares.sum() * n_types).astype(int))
    # hand the types left over by rounding to the largest families
    counts[np.argsort(-shares)[: n_types - counts.sum()]] += 1
    rows = []
    for fam, count in zip(fams, counts, strict=True):
        size = rng.uniform(size=count)  # one latent size drives every figure of a type

        def jitter(scale=0.12, size=size):
            return np.clip(size + rng.normal(0, scale, len(size)), 0, 1)

        params = _loguniform(rng, fam.params_m, size)
        seq_ref = fam.seq[0] if fam.seq else np.nan
        if fam.gflops is None:
            gflops = 6 * params * 1e6 * seq_ref / 1e9 * rng.uniform(1.0, 1.3, count)
        else:
            gflops = _loguniform(rng, fam.gflops, jitter())
        emb = _loguniform(rng, fam.emb_gb, jitter(0.2)) if fam.emb_gb else np.zeros(count)
        a2a = _loguniform(rng, fam.a2a_kb, jitter(0.2)) if fam.a2a_kb else np.zeros(count)
        # usual launch configuration of the type: near the middle of the family's habits
        n_tr = len(fam.trainers)
        base_tr = np.array(fam.trainers)[np.clip(np.round(jitter(0.25) * (n_tr - 1)), 0, n_tr - 1).astype(int)]
        if fam.emb_gb:
            # embedding tables (with optimizer state) must shard to ~40 GB a trainer
            need = 2 ** np.ceil(np.log2(np.maximum(emb * 1.5 / 40, 1)))
            base_tr = np.maximum(base_tr, need).astype(int)
        n_b = len(fam.batches)
        base_b = np.array(fam.batches)[rng.integers(0, n_b, count)]
        precs = list(fam.precisions)
        base_prec = rng.choice(precs, size=count, p=np.array(list(fam.precisions.values())) / sum(fam.precisions.values()))
        pars = list(fam.parallelism)
        base_par = rng.choice(pars, size=count, p=np.array(list(fam.parallelism.values())) / sum(fam.parallelism.values()))
        if fam.seq:
            base_seq = np.array(fam.seq)[rng.integers(0, len(fam.seq), count)].astype(float)
        else:
            base_seq = np.full(count, np.nan)
        rows.append(pd.DataFrame({
            "model_family": fam.name,
            "_kind": fam.kind,
            "_params_m": params,
            "_memory_params_m": params * fam.memory_params_mult,
            "_gflops": gflops,
            "_seq_ref": seq_ref,
            "_attention": fam.attention,
            "_traffic_mb": _loguniform(rng, fam.traffic_mb, jitter()),
            "_act_mb": _loguniform(rng, fam.act_mb, jitter()),
            "_host_ms": _loguniform(rng, fam.host_ms, rng.uniform(size=count)),
            "_embedding_gb": emb,
            "_a2a_kb": a2a,
            "_batch_half": fam.batch_half * np.exp(rng.normal(0, 0.3, count)),
            "_efficiency": fam.efficiency * np.exp(rng.normal(0, 0.1, count)),
            "_overlap": np.clip(fam.overlap + rng.normal(0, 0.05, count), 0.2, 0.95),
            "_overhead_ms": fam.overhead_ms * np.exp(rng.normal(0, 0.25, count)),
            "_hours": fam.hours * np.exp(rng.normal(0, 0.3, count)),
            "_base_trainers": base_tr.astype(int),
            "_base_batch": base_b.astype(int),
            "_base_precision": base_prec,
            "_base_parallelism": base_par,
            "_base_seq": base_seq,
            "_family_popularity": fam.popularity,
        }))
    models = pd.concat(rows, ignore_index=True)
    n = len(models)
    within = models.groupby("model_family", sort=False).cumcount()
    models.insert(0, "model_type", [f"{f}-{i:03d}" for f, i in zip(models["model_family"], within, strict=True)])
    # weighted random order (Efraimidis-Spirakis keys), then Zipf weights by rank
    keys = np.log(rng.uniform(size=n)) / models["_family_popularity"].to_numpy()
    rank = np.empty(n, dtype=int)
    rank[np.argsort(-keys)] = np.arange(1, n + 1)
    weight = rank.astype(float) ** -zipf_exponent
    models["_popularity"] = weight / weight.sum()
    models = models.drop(columns="_family_popularity")
    models["model_type"] = models["model_type"].astype("category")
    models["model_family"] = pd.Categorical(models["model_family"], categories=list(FAMILIES))
    for name in ("_kind", "_base_precision", "_base_parallelism"):
        models[name] = models[name].astype("category")
    return models
