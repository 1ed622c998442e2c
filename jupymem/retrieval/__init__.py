"""Retrieval: a query -> ranked memories with a confidence, or an honest "abstained".

engine (one project's search state: the legs, made on first use, and the dense leg's
tiers), lexical (the FTS5 query plan), fuzzy (typo-tolerant identifiers), embed (the
encoder and its background loading), slots (where each tier's vectors are stored, and
how), index (the sqlite-vec table kept in step with the projection), retrieve (the legs
and their fusion) and verdict (judging the candidates and the answer or abstention).
Heavy dependencies (numpy, model2vec, sqlite-vec, rapidfuzz) are imported inside
functions, so importing this package stays light.
"""
