"""The code location's resources, assembled by ``build.py`` from the platform's and each study's.

The classes live with what they serve (:mod:`argassets.platform.resources`, a study's
``resources.py``) and are imported from there; nothing here re-exports them.
"""
