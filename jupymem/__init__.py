"""jupymem: durable memory for the notebooks of a git repository."""
