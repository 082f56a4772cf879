"""Why answers fail: a run's failing judgements grouped into named failure modes, compared between models.

``find_modes(store, run_id)`` groups and stores; ``stored_modes(store, run_id)``
reads them back (Results, Compare, the report and export read, never regroup).
See docs/failures.md.
"""

from .modes import METHOD, MIN_FAILURES, FailureModes, TooFewFailures, failing_judgements, find_modes, stored_modes
from .rules import FailureRule

__all__ = ["METHOD", "MIN_FAILURES", "FailureModes", "FailureRule", "TooFewFailures", "failing_judgements",
           "find_modes", "stored_modes"]
