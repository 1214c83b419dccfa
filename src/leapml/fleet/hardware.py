"""The hardware catalog: real accelerator types with their datasheet figures.

Every row but one comes from a vendor datasheet (``docs/hardware.md`` cites
each); ``inhouse-rank-v1`` is an invented in-house ranking accelerator with
plausible figures, labelled as synthetic in the ``vendor`` and ``synthetic``
columns. Peak FLOP/s are dense (no structured sparsity), per device, in
TFLOP/s; a missing figure means the device has no fast path at that precision,
and the simulator treats that precision as unsupported there.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["cost_per_device_hour", "hardware_catalog"]

_NAN = np.nan

# Columns: type, vendor, architecture, year, host_class, software stack,
# fp32, tf32, bf16, fp16, fp8 (dense TFLOP/s), memory GB, memory GB/s,
# intra-node GB/s (aggregate, both directions, per device), inter-node GB/s
# (per device, one direction), devices per host (or per NVLink domain), TDP W,
# capacity weight in the fleet (relative device count).
_ROWS = [
    ("V100-16GB-SXM2", "NVIDIA", "Volta", 2017, "hgx-8", "cuda",
     15.7, _NAN, _NAN, 125.0, _NAN, 16, 900, 300, 6.25, 8, 300, 3.0),
    ("V100-32GB-SXM2", "NVIDIA", "Volta", 2018, "hgx-8", "cuda",
     15.7, _NAN, _NAN, 125.0, _NAN, 32, 900, 300, 6.25, 8, 300, 4.0),
    ("T4-16GB", "NVIDIA", "Turing", 2018, "pcie-inference", "cuda",
     8.1, _NAN, _NAN, 65.0, _NAN, 16, 320, 32, 1.5625, 4, 70, 3.0),
    ("A10-24GB", "NVIDIA", "Ampere", 2021, "pcie-inference", "cuda",
     31.2, 62.5, 125.0, 125.0, _NAN, 24, 600, 64, 3.125, 4, 150, 2.0),
    ("A100-40GB-SXM4", "NVIDIA", "Ampere", 2020, "hgx-8", "cuda",
     19.5, 156.0, 312.0, 312.0, _NAN, 40, 1555, 600, 25.0, 8, 400, 7.0),
    ("A100-80GB-SXM4", "NVIDIA", "Ampere", 2020, "hgx-8", "cuda",
     19.5, 156.0, 312.0, 312.0, _NAN, 80, 2039, 600, 25.0, 8, 400, 9.0),
    ("A100-80GB-PCIe", "NVIDIA", "Ampere", 2021, "pcie-8", "cuda",
     19.5, 156.0, 312.0, 312.0, _NAN, 80, 1935, 64, 12.5, 8, 300, 3.0),
    ("L4-24GB", "NVIDIA", "Ada Lovelace", 2023, "pcie-inference", "cuda",
     30.3, 60.0, 121.0, 121.0, 242.5, 24, 300, 64, 3.125, 8, 72, 3.0),
    ("L40S-48GB", "NVIDIA", "Ada Lovelace", 2023, "pcie-8", "cuda",
     91.6, 183.0, 362.0, 362.0, 733.0, 48, 864, 64, 12.5, 8, 350, 3.0),
    ("H100-80GB-PCIe", "NVIDIA", "Hopper", 2022, "pcie-8", "cuda",
     51.2, 378.0, 756.0, 756.0, 1513.0, 80, 2000, 128, 25.0, 8, 350, 3.0),
    ("H100-80GB-SXM5", "NVIDIA", "Hopper", 2022, "hgx-8", "cuda",
     67.0, 495.0, 989.0, 989.0, 1979.0, 80, 3350, 900, 50.0, 8, 700, 14.0),
    ("H100-NVL-94GB", "NVIDIA", "Hopper", 2023, "pcie-8", "cuda",
     60.0, 418.0, 835.0, 835.0, 1670.0, 94, 3900, 128, 25.0, 8, 400, 2.0),
    ("H200-141GB-SXM", "NVIDIA", "Hopper", 2024, "hgx-8", "cuda",
     67.0, 495.0, 989.0, 989.0, 1979.0, 141, 4800, 900, 50.0, 8, 700, 8.0),
    ("H200-NVL-141GB", "NVIDIA", "Hopper", 2024, "pcie-8", "cuda",
     60.0, 418.0, 835.0, 835.0, 1670.0, 141, 4800, 128, 25.0, 8, 600, 2.0),
    ("B200-180GB-SXM", "NVIDIA", "Blackwell", 2024, "hgx-8", "cuda",
     75.0, 1125.0, 2250.0, 2250.0, 4500.0, 180, 8000, 1800, 50.0, 8, 1000, 6.0),
    ("GB200-NVL72", "NVIDIA", "Blackwell", 2025, "nvl72-rack", "cuda",
     80.0, 1250.0, 2500.0, 2500.0, 5000.0, 186, 8000, 1800, 50.0, 72, 1200, 6.0),
    ("MI250X-GCD", "AMD", "CDNA 2", 2021, "oam-8", "rocm",
     47.9, _NAN, 191.5, 191.5, _NAN, 64, 1638.4, 200, 12.5, 8, 280, 4.0),
    ("MI210-64GB", "AMD", "CDNA 2", 2022, "pcie-4", "rocm",
     45.3, _NAN, 181.0, 181.0, _NAN, 64, 1638.4, 300, 12.5, 4, 300, 1.5),
    ("MI300X-192GB", "AMD", "CDNA 3", 2023, "oam-8", "rocm",
     163.4, 653.7, 1307.4, 1307.4, 2614.9, 192, 5300, 896, 50.0, 8, 750, 5.0),
    ("MI325X-256GB", "AMD", "CDNA 3", 2024, "oam-8", "rocm",
     163.4, 653.7, 1307.4, 1307.4, 2614.9, 256, 6000, 896, 50.0, 8, 1000, 3.0),
    ("Gaudi2-96GB", "Intel", "Gaudi 2", 2022, "oam-8", "synapse",
     _NAN, _NAN, 432.0, _NAN, 865.0, 96, 2460, 525, 37.5, 8, 600, 2.0),
    ("Gaudi3-128GB", "Intel", "Gaudi 3", 2024, "oam-8", "synapse",
     _NAN, _NAN, 1835.0, _NAN, 1835.0, 128, 3700, 1050, 75.0, 8, 900, 2.5),
    ("inhouse-rank-v1", "In-house (synthetic)", "inhouse-rank-v1", 2024, "inhouse-16", "inhouse",
     25.0, _NAN, 180.0, 180.0, 360.0, 128, 800, 200, 25.0, 16, 220, 9.0),
    ("cpu-xeon-8480", "Intel", "Sapphire Rapids (CPU host)", 2023, "cpu-2s", "cpu",
     6.8, _NAN, 109.0, _NAN, _NAN, 512, 307.2, 128, 6.25, 2, 350, 4.0),
]

_FIELDS = [
    "hardware_type", "vendor", "architecture", "year", "host_class", "software",
    "peak_fp32_tflops", "peak_tf32_tflops", "peak_bf16_tflops", "peak_fp16_tflops",
    "peak_fp8_tflops", "memory_gb", "memory_bw_gbps", "intra_node_bw_gbps",
    "inter_node_bw_gbps", "devices_per_host", "tdp_w", "capacity_weight",
]

#: Types that join the fleet part-way through a simulated period, with the
#: fraction of the period at which they arrive.
ARRIVALS = {"Gaudi3-128GB": 0.15, "GB200-NVL72": 0.40, "MI325X-256GB": 0.65}

#: The year the catalog describes: established types were introduced this
#: many years before the start of a simulated period, to the year.
_CATALOG_YEAR = 2026


def cost_per_device_hour(tdp_w, memory_bw_gbps):
    """The catalog's cost rule: USD per device-hour from board power and memory bandwidth.

    ``cost = 0.20 + 3.0 x TDP (kW) + 0.20 x memory bandwidth (TB/s)``. Power
    and cooling, and the depreciation of a part, both grow with its board power;
    memory bandwidth stands for the HBM stacks that dominate a part's bill of
    materials. One rule for every type, so that no type is favoured by a price
    chosen for it.

    Parameters
    ----------
    tdp_w : float or array-like
        Board power (TDP), watts.
    memory_bw_gbps : float or array-like
        Memory bandwidth, GB/s.

    Returns
    -------
    float or ndarray
        USD per device-hour, rounded to the cent.

    Examples
    --------
    >>> float(cost_per_device_hour(700, 3350))
    2.97
    """
    cost = 0.20 + 3.0 * np.asarray(tdp_w, float) / 1000 + 0.20 * np.asarray(memory_bw_gbps, float) / 1000
    return np.round(cost, 2)


def hardware_catalog(*, start="2026-01-01", days: int = 60) -> pd.DataFrame:
    """The hardware catalog: one row per accelerator type (24 types).

    Parameters
    ----------
    start : str or Timestamp, default="2026-01-01"
        First day of the simulated period. Established types are introduced
        ``2026 - year`` years before it; the types of :data:`ARRIVALS` join
        part-way through the period.
    days : int, default=60
        Length of the simulated period, in days (places the arrivals).

    Returns
    -------
    DataFrame
        The columns of :data:`leapml.schema.HARDWARE_COLUMNS`, then
        ``architecture``, ``year``, ``host_class``, ``software`` (the
        software stack, which sets how mature kernels are per model family),
        ``tdp_w``, ``capacity_weight`` (relative number of devices in the
        fleet, which the scheduler weighs) and ``synthetic`` (True for the
        invented in-house part). Text columns are categoricals.

    Examples
    --------
    >>> hw = hardware_catalog()
    >>> len(hw), hw["vendor"].nunique()
    (24, 4)
    >>> hw.set_index("hardware_type").loc["H100-80GB-SXM5", "peak_bf16_tflops"]
    np.float64(989.0)
    """
    if days <= 0:
        raise ValueError(f"days must be positive, got {days}")
    start = pd.Timestamp(start)
    frame = pd.DataFrame(_ROWS, columns=_FIELDS)
    frame["cost_per_device_hour"] = cost_per_device_hour(frame["tdp_w"], frame["memory_bw_gbps"])
    introduced = [start - pd.DateOffset(years=_CATALOG_YEAR - int(y)) for y in frame["year"]]
    for i, name in enumerate(frame["hardware_type"]):
        if name in ARRIVALS:
            introduced[i] = start + pd.Timedelta(days=round(ARRIVALS[name] * days, 3))
    frame["introduced"] = pd.to_datetime(pd.Series(introduced)).astype("datetime64[ns]")
    frame["devices_per_host"] = frame["devices_per_host"].astype("int64")
    frame["year"] = frame["year"].astype("int64")
    frame["synthetic"] = frame["software"] == "inhouse"
    for name in ("memory_gb", "memory_bw_gbps", "intra_node_bw_gbps", "inter_node_bw_gbps",
                 "tdp_w", "capacity_weight"):
        frame[name] = frame[name].astype(float)
    order = [
        "hardware_type", "vendor", "peak_fp32_tflops", "peak_tf32_tflops", "peak_bf16_tflops",
        "peak_fp16_tflops", "peak_fp8_tflops", "memory_gb", "memory_bw_gbps",
        "intra_node_bw_gbps", "inter_node_bw_gbps", "devices_per_host", "cost_per_device_hour",
        "introduced", "architecture", "year", "host_class", "software", "tdp_w",
        "capacity_weight", "synthetic",
    ]
    frame = frame[order]
    for name in ("hardware_type", "vendor", "architecture", "host_class", "software"):
        frame[name] = frame[name].astype("category")
    return frame
