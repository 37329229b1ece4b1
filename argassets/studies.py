"""The studies of this code location, in order: the one list the shared code is derived from.

Read by :func:`argassets.platform.study.studies` on first use. Another study (a package of its
own, or one defined in a test) is added with :func:`argassets.platform.study.register_study`.
"""

from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.political.study import STUDY as POLITICAL

STUDIES = (ARGUMENT_QUALITY, POLITICAL)
