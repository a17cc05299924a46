"""Circuits: which heads work together, with evidence.

- composition: Q-, K- and V-composition scores from the weights alone (Elhage et al. 2021), beside random matrices;
- attribution: attribution patching (AtP, Kramár et al. 2024's AtP* fix) checked against exact patching;
- paths: path patching (Wang et al. 2022): a sender's patch along chosen paths only;
- benchmark: every instrument scored against planted answers (AUP, AUR, AUPRC; comprehensiveness, sufficiency).
"""
