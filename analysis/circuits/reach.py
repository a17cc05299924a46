"""Which heads a sender's patch can reach: the order of the attention sites in the forward pass and the paths between
them, read off the Informer's wiring (no forward pass).

    encoder replica a, layer i  →  later layers of replica a (its input is their input); every cross-attention's keys,
                                   values and output (the memory); decoder layers from 1 on (through cross.0)
    decoder_self.l              →  decoder_self.m for m > l; cross.m's queries and output for m ≥ l
    cross.l                     →  decoder_self.m for m > l; cross.m's queries and output for m > l

Nothing else: the heads of one site run side by side (a head never reaches another head of its site, nor itself),
an encoder replica never reads another, no decoder site feeds the encoder, and cross-attention's keys and values are
the encoder's memory, which no decoder head touches. A path patch into a receiver no path reaches changes nothing,
and a measured 0 with a [0, 0] interval would read as a finding: such receivers are refused, by name.
"""
from __future__ import annotations

from informer_lab.model import Informer, Site

from informer_lab.analysis.errors import ConfigError


def execution_order(model: Informer) -> dict[str, int]:
    """Site name → its place in the forward pass: the encoder replicas' layers, then per decoder layer l its
    self-attention and its cross-attention (model.sites lists all decoder_self sites before the cross sites)."""
    names = [s.name for s in model.sites if s.kind == "encoder"]
    for layer in range(len(model.decoder.layers)):
        names += [f"decoder_self.{layer}", f"cross.{layer}"]
    return {name: i for i, name in enumerate(names)}


def why_unreached(sender: Site, receiver: Site, what: str) -> str | None:
    """None when a path from a head of `sender` reaches `what` (q, k, v or out) of a head of `receiver` (another
    site); else why not, in words."""
    if receiver.name == sender.name:
        return "the heads of one site run side by side (and a head does not patch itself)"
    if receiver.kind == "encoder":
        if sender.kind != "encoder":
            return "the encoder runs before every decoder site"
        if receiver.replica != sender.replica:
            return "another encoder replica reads its own input only"
        return None if receiver.layer > sender.layer else "it runs before the sender"
    if receiver.kind == "cross" and what in ("k", "v"):
        return None if sender.kind == "encoder" else "cross-attention's keys and values are the encoder's memory"
    m = receiver.layer  # decoder_self.m or cross.m, read from the decoder's stream (and cross.m's output, the memory)
    if sender.kind == "encoder":  # the memory enters the stream at cross.0, read by the layers after it
        ok = m >= 1 or (receiver.kind == "cross" and what == "out")
    elif sender.kind == "decoder_self":
        ok = m > sender.layer if receiver.kind == "decoder_self" else m >= sender.layer
    else:
        ok = m > sender.layer
    return None if ok else "it runs before the sender's effect reaches the decoder's stream there"


def check_reachable(model: Informer, sender: Site, head: int, receivers) -> None:
    """ConfigError naming every receiver (Receiver-like: site, head, what) that no path from head `head` of `sender`
    reaches, and why."""
    sites = {s.name: s for s in model.sites}
    bad = [(r, why) for r in receivers
           if (why := why_unreached(sender, sites[r.site], r.what)) is not None]
    if bad:
        listed = "; ".join(f"{r.site}:{r.head}.{r.what} ({why})" for r, why in bad[:6])
        more = f" and {len(bad) - 6} more" if len(bad) > 6 else ""
        raise ConfigError(f"no path from {sender.name}:{head} reaches {listed}{more}: choose receivers after the "
                          "sender on its way to the forecast")


def reachable(model: Informer, sender: Site) -> list[tuple[Site, str]]:
    """Every (site, what) a head of `sender` reaches, in execution order."""
    order = execution_order(model)
    return [(s, what) for s in sorted(model.sites, key=lambda s: order[s.name]) for what in ("q", "k", "v", "out")
            if why_unreached(sender, s, what) is None]


__all__ = ["check_reachable", "execution_order", "reachable", "why_unreached"]
