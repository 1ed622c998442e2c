"""numpy, imported in this one place, on first use.

numpy takes ~100 ms to import, and only the dense leg needs it (vectors, their
in-process copy, fusion). ``%load_ext jupymem``, the CLI and lexical search must
not pay for it, so no module imports numpy at its top: each function that needs
it calls ``np()``, which imports it once and names the pip command when it is
missing (numpy comes with model2vec, so that means a broken install).
"""

from __future__ import annotations

from types import ModuleType

from ..errors import MissingDependency

_numpy: ModuleType | None = None


def np() -> ModuleType:
    """The numpy module."""
    global _numpy
    if _numpy is None:
        try:
            import numpy
        except ImportError as err:
            raise MissingDependency("numpy is not installed: pip install numpy (it comes with model2vec)") from err
        _numpy = numpy
    return _numpy
