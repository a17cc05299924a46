"""The Variants screen: every attention kind in the same trained model."""
