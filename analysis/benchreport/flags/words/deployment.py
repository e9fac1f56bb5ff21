"""Words for the deployment findings: fit on one node, licences."""

from __future__ import annotations

from benchreport import format as F

from ..rules.deployment import ExceedsNode, License
from ._common import combines, generic, writes

__all__ = ["exceeds_node", "license_", "unknown_license_sentences"]


@writes(ExceedsNode)
def exceeds_node(f: ExceedsNode) -> str:
    ck, node = f.checkpoint_bytes, f.node_bytes
    memory = f"{f.gpus_per_node} × {F.gb(f.gpu_memory_bytes)} = {F.gb(node)}"
    if f.used_share > 1:
        first = f"its checkpoint ({F.gb(ck)}) exceeds one node's raw GPU memory ({memory})"
    else:
        first = (
            f"its checkpoint ({F.gb(ck)}) fills {(f.used_share * 100):.1f}% of one node's raw GPU memory "
            f"({memory}), leaving {F.gb(node - ck)}, less than the {F.pct(f.thresholds['fit_headroom'])} needed "
            "for KV cache and activations"
        )
    if f.nodes and f.nodes > 1:
        tail = f" It runs across {f.nodes} nodes, which a seat cannot afford: the figures are a lab result, not a seat."
    else:
        tail = (
            " Served from one node it has too little room for a useful KV cache: the figures are a lab "
            "result, not a seat."
        )
    return f"{f.seats[0]}: {first}.{tail}"


@writes(License)
def license_(f: License) -> str:
    role = f" ({f.role})" if f.role else ""
    one = len(f.seats) == 1
    seats = F.join_words(list(f.seats))
    if f.code == "license.noncommercial":
        return (
            f"{f.component}{role} is licensed {f.license}, which forbids commercial use; {seats} "
            f"{'uses' if one else 'use'} it, so {'its' if one else 'their'} figures cannot be carried to a "
            "commercial seat."
        )
    said = f"declares no licence ({f.license})" if f.license else "has no licence recorded"
    return (
        f"{f.component}{role} {said}; {seats} {'uses' if one else 'use'} it. "
        "Whether it may be used commercially is unknown until its licence is known."
    )


@combines("license.unknown")
def unknown_license_sentences(findings: list[License], messages: list[str]) -> list[str]:
    """Every component without a known licence in one sentence."""
    if len(findings) == 1:
        return generic(messages)
    names = F.join_words([f"{f.component} ({f.license or 'none recorded'})" for f in findings])
    seats = sorted({s for f in findings for s in f.seats})
    return [
        f"These components declare no licence: {names}; {F.join_words(seats)} use them. Whether they may be "
        "used commercially is unknown until their licences are known."
    ]
