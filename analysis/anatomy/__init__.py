"""The anatomy of a forecast: how it is computed through the layers (DESIGN §7).

- true_rows: the attention rows each site really used (lazy rows included), dense per head;
- transfer: the distilling step's transfer matrix P in three forms (structural, routed, Jacobian);
- rollout: attention rollout and flow from a forecast step back to the input steps and the decoder's own tokens;
- lens: the forecast each decoder layer (decoder lens) and each encoder depth (early exit, plain and tuned) would give;
- direct: each decoder head's direct share of the forecast with the LayerNorm scales frozen, and the remainder.
"""
