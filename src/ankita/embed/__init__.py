"""Models: the embedder seam and registry, the bundled local model, remote servers, and the
contradiction judge.
"""
