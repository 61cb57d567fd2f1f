"""Finding the facts that matter: index terms, postings and vectors in memory, candidate search
for a write, and recall.
"""
