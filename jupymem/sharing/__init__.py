"""Sharing: memory that travels with the repository in a committed ``.jupymem/`` folder.

sharelog (the shared log's file format, read and checked), journal (one write: its
events, queued for the writer's file), share (the cache that follows the files, and
the write path), switch (turning sharing on and off, and what status says) and folder
(real files in a real folder, never a link followed).

Imports storage, intake and the shared vocabulary; never retrieval (its sibling) or
anything above.
"""
