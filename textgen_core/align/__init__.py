"""Make the judge agree with people's labels, and certify it (issue 32).

A fixed, stored split of the labelled cells (:mod:`.setup`); candidate edits of the criterion made from the
training part only (:mod:`.candidates`); each judged on the held-out part against the current version with a
paired test (:mod:`.heldout`, :mod:`.judging`); the best that passes saved as the criterion's next version with
its provenance (:mod:`.session`); and the Alternative Annotator Test (:mod:`.aat`).
"""

from .aat import AltTest, alt_test
from .session import Alignment, Judgement, accept, align, plan_calls
from .setup import Setup, prepare

__all__ = ["AltTest", "Alignment", "Judgement", "Setup", "accept", "align", "alt_test", "plan_calls", "prepare"]
