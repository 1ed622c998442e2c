"""The faces: the modules that talk to a front end.

magics (IPython), ask (``%%ask``), cli (the ``jupymem`` command), server (the REST
API), browse (the widget browser), render (text and HTML for people), mcp_tools and
jupyter_ai_persona (what Jupyter AI loads). Each translates between its front end and
the core (``jupymem.core.Project``) and holds no logic another face would need.
Nothing outside this package imports it (``tests/test_architecture.py``), except the
entry points in ``jupymem/__init__.py``, lazily.
"""
