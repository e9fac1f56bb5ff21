"""Deployment: a checkpoint that cannot fit one node, a component whose licence forbids
commercial use or is unknown (spec/flags.md, "Deployment")."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from benchreport import format as F
from benchreport.thresholds import Thresholds

from .._common import int_or_none, key_sort, na, used
from ..findings import Finding
from ..licenses import classify

__all__ = ["ExceedsNode", "License", "fit_exceeds_node", "licenses"]


@dataclass(frozen=True, kw_only=True)
class ExceedsNode(Finding):
    CODES = ("fit.exceeds_node",)
    checkpoint_bytes: float
    node_bytes: float
    gpus_per_node: int
    gpu_memory_bytes: float
    used_share: float
    headroom_left: float
    nodes: int | None
    thresholds: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class License(Finding):
    """A component whose licence forbids commercial use (noncommercial) or is not known (unknown)."""

    CODES = ("license.noncommercial", "license.unknown")
    component: str
    role: str | None
    license: str | None
    matched: str | None
    source: str | None


def fit_exceeds_node(seats: pd.DataFrame, *, thresholds: Thresholds) -> list[ExceedsNode]:
    """`fit.exceeds_node`: the checkpoint does not fit one node with KV-cache headroom.

    One node's raw GPU memory is `gpus_per_node * gpu_memory_bytes`; a checkpoint above
    (1 - `fit_headroom`) of it cannot serve from one node at a useful context length (the
    fleet paper: 204.5 GB against 205.3 GB raw). A seat spread over several nodes for that
    reason is a lab result, not a seat. A heuristic: it ignores activation memory and the
    KV cache a workload actually needs.
    """
    if seats is None or seats.empty:
        return []
    out = []
    for r in seats.itertuples(index=False):
        if F.missing(r.checkpoint_bytes) or F.missing(r.gpus_per_node) or F.missing(r.gpu_memory_bytes):
            continue
        node = float(r.gpus_per_node) * float(r.gpu_memory_bytes)
        ck = float(r.checkpoint_bytes)
        share = ck / node
        if share <= 1 - float(thresholds.fit_headroom):
            continue
        out.append(
            ExceedsNode(
                code="fit.exceeds_node",
                severity="warn",
                seats=(str(r.seat),),
                checkpoint_bytes=ck,
                node_bytes=node,
                gpus_per_node=int(r.gpus_per_node),
                gpu_memory_bytes=float(r.gpu_memory_bytes),
                used_share=share,
                headroom_left=1 - share,
                nodes=int_or_none(r.nodes),
                thresholds=used(thresholds, "fit_headroom"),
            )
        )
    return out


def licenses(components: pd.DataFrame) -> list[License]:
    """`license.noncommercial` (warn) and `license.unknown` (info), one finding per component and licence.

    Matched against the maintained list in `analysis/benchreport/flags/licenses.json` (SPDX ids
    case-insensitively, spellings such as "cc-by-nc-4.0" or "CC BY-NC-ND 4.0", the whole
    CC NonCommercial family, named non-commercial model licences, SPDX expressions with
    AND/OR). Unknown: no licence given, NOASSERTION, NONE, "other", LicenseRef-.
    """
    if components is None or components.empty:
        return []
    groups: dict[tuple, dict] = {}
    for r in components.itertuples(index=False):
        v = classify(r.license)
        if v.kind == "ok":
            continue
        g = groups.setdefault(
            (v.kind, str(r.name), na(r.license)), {"seats": set(), "role": na(r.component_role), "verdict": v}
        )
        g["seats"].add(str(r.seat))
    out = []
    for (kind, name, lic), g in sorted(groups.items(), key=lambda kv: tuple(key_sort(x) for x in kv[0])):
        code, sev = ("license.noncommercial", "warn") if kind == "noncommercial" else ("license.unknown", "info")
        out.append(
            License(
                code=code,
                severity=sev,
                seats=tuple(sorted(g["seats"])),
                component=name,
                role=g["role"],
                license=lic,
                matched=g["verdict"].matched,
                source=g["verdict"].source,
            )
        )
    return out
