"""Features of the residual stream (DESIGN §9): sparse dictionaries of what the Informer represents at one site.

    sae.py       the TopK sparse autoencoder (written here, not SAELens: see its docstring) and its training
    sites.py     the residual sites the lab records, their activations over a split's windows, the input span of
                 every position
    metrics.py   FVU, L0, dead latents and the forecast's MSE with the reconstruction spliced in, on held-out windows
    residual.py  one recorded pass rebuilt layer by layer: every LayerNorm's σ, every head's write (frozen-LN paths)
    effects.py   a feature's direct effect on the forecast, its causal ablation or scaling, the heads that write it
    profile.py   density, activation histogram, top-activating windows, nearest features, the table of all features
    concepts.py  features (and single neurons) scored against user-given labels by AUROC, with intervals
    seeds.py     dictionaries of several seeds matched (Hungarian on decoder cosine), stability against shuffled ones,
                 the planted concepts of a generated series
    known.py     the planted concept recovered per model seed (validated evidence); a model that did not learn: unscored
    run.py       one site's dictionary trained and measured in one call (the CLI's and the screen's entry point)
"""
