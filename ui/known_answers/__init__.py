"""The Known answers screen: the instruments tested against a planted answer, and the uniform / permuted attention
baselines for every head."""
