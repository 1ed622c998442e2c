"""Retrieval: a query -> ranked memories with a confidence, or an honest "abstained".

lexical (the FTS5 query plan), fuzzy (typo-tolerant identifiers), embed (the encoder
and its background loading), index (the sqlite-vec table kept in step with the
projection) and retrieve (the legs, fusion and the answerability decision).
Heavy dependencies (numpy, model2vec, sqlite-vec, rapidfuzz) are imported inside
functions, so importing this package stays light.
"""
