"""Models trained elsewhere, imported into our Informer: each source's quirks become named InformerConfig options.

    pth.py   a `torch.save(state_dict)` file read safely (shared by the Informer2020 and TSL imports)
    tsl.py   Time-Series-Library's models/Informer.py (a checkpoint.pth)
    hf.py    Hugging Face transformers' InformerForPrediction (a save_pretrained folder)

Informer2020's own import is `analysis.checkpoints.official` (kept where it was); it reads its file through `pth.py` too.
"""
