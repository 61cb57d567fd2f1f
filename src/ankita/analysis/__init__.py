"""What a fact says: tokens, language, similarity, the disagreement checks and the decision (pure;
no I/O).
"""
