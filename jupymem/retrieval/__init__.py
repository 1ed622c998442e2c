"""Retrieval: a query -> ranked memories with a confidence, or an honest "abstained".

engine (one project's search state: the legs, made on first use, and the dense leg's
tiers), lexical (the FTS5 query plan), fuzzy (typo-tolerant identifiers), embed (the
encoder and its background loading), index (each tier's vectors kept in step with the
projection, through storage's ``VectorStore``, and their in-process copy), retrieve (the legs
and their fusion) and verdict (judging the candidates and the answer or abstention).
Heavy dependencies (numpy, model2vec, sqlite-vec, rapidfuzz) are imported inside
functions, so importing this package stays light.
"""
