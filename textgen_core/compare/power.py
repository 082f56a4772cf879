"""How small a difference a paired comparison can detect, and how many datums a wanted one needs.

Power is that of the two-sided paired t-test (noncentral t), the large-sample
twin of the sign-flip test the comparison runs: the same as statsmodels'
``TTestPower``. Effects are raw differences divided by the spread (standard
deviation) of the paired differences.
"""

from __future__ import annotations

import math
from functools import lru_cache

from scipy import optimize, stats

from ..errors import ParameterError

POWER = 0.8
#: Largest number of datums the planner searches.
MAX_DATUMS = 100_000_000


def paired_power(effect: float, n: int, alpha: float) -> float:
    """Probability that a two-sided paired t-test at ``alpha`` rejects, for a standardized ``effect``."""
    if n < 2:
        return float("nan")
    df = n - 1
    critical = stats.t.isf(alpha / 2, df)
    shift = abs(effect) * math.sqrt(n)
    # The far tail is below 1e-9 wherever scipy's noncentral t cannot evaluate it (NaN): count it as 0.
    far = float(stats.nct.cdf(-critical, df, shift))
    return float(stats.nct.sf(critical, df, shift)) + (far if math.isfinite(far) else 0.0)


def mde(spread: float, n: int, alpha: float, power: float = POWER) -> float:
    """Minimum detectable difference: the raw difference detected with ``power`` by ``n`` pairs."""
    _check(alpha, power)
    if n < 2 or not math.isfinite(spread):
        return float("nan")
    if spread == 0:
        return 0.0
    return detectable_effect(n, alpha, power) * spread


@lru_cache(maxsize=1024)
def detectable_effect(n: int, alpha: float, power: float = POWER) -> float:
    """The standardized effect (difference / spread) that ``n`` pairs detect with ``power``."""
    high = 1.0
    while paired_power(high, n, alpha) < power:
        high *= 2
    return float(optimize.brentq(lambda d: paired_power(d, n, alpha) - power, 1e-12, high, xtol=1e-12))


def datums_needed(difference: float, spread: float, alpha: float, power: float = POWER) -> int:
    """The fewest paired datums detecting ``difference`` with ``power`` when pairs differ by ``spread`` (sd)."""
    _check(alpha, power)
    if not (math.isfinite(difference) and difference != 0):
        raise ParameterError(f"the difference to detect must be a non-zero number, got {difference!r}")
    if not (math.isfinite(spread) and spread >= 0):
        raise ParameterError(f"the spread of the paired differences must be zero or more, got {spread!r}")
    if spread == 0:
        return 2
    effect = abs(difference) / spread
    if paired_power(effect, MAX_DATUMS, alpha) < power:
        raise ParameterError(f"a difference of {difference:g} at spread {spread:g} needs more than "
                             f"{MAX_DATUMS:,} datums")
    low, high = 2, 2
    while paired_power(effect, high, alpha) < power:
        low, high = high + 1, high * 2
    while low < high:
        middle = (low + high) // 2
        if paired_power(effect, middle, alpha) >= power:
            high = middle
        else:
            low = middle + 1
    return high


def _check(alpha: float, power: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ParameterError(f"alpha must be between 0 and 1, got {alpha!r}")
    if not 0.0 < power < 1.0:
        raise ParameterError(f"power must be between 0 and 1, got {power!r}")
