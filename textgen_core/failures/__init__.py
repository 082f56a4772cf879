"""Why answers fail: a run's failing judgements grouped into named failure modes, compared between models.

``modes_for(store, run_id)`` reads the stored modes or groups and stores them;
``stored_modes(store, run_id)`` only reads (Results, Compare, the report and
export read, never regroup). See docs/failures.md.
"""

from .modes import (METHOD, MIN_FAILURES, FailureModes, TooFewFailures, failing_judgements, find_modes, modes_for,
                    stored_modes)
from .report import comparison_lines, mode_lines
from .rules import FailureRule

__all__ = ["METHOD", "MIN_FAILURES", "FailureModes", "FailureRule", "TooFewFailures", "comparison_lines",
           "failing_judgements", "find_modes", "mode_lines", "modes_for", "stored_modes"]
