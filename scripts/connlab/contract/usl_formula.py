"""Gunther's Universal Scalability Law, the formula alone: X(N) = λN / (1 + σ(N−1) + κN(N−1)).

Written once, in arithmetic that floats, NumPy arrays and the simulator chart's names all support: the fit
(connlab.analysis.usl) runs it on arrays, and the chart (connlab.site.charts.usl) on floats for its axes and
on names for the Vega expression the browser evaluates as a slider moves. It imports nothing but math, so
the site's stages import it without NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def throughput(clients: Any, lambda_: Any, sigma: Any, kappa: Any) -> Any:
    """X(N) at N = clients, with λ the throughput of one client, σ the contention and κ the crosstalk."""
    return lambda_ * clients / (1 + sigma * (clients - 1) + kappa * clients * (clients - 1))


def peak_clients(sigma: Any, kappa: Any, sqrt: Callable[[Any], Any] = math.sqrt) -> Any:
    """N* = sqrt((1 − σ)/κ), the clients where X(N) peaks; meaningful only for κ > 0 and σ < 1, which the
    caller checks with its own tolerance. sqrt is passed in so that the chart's names take Vega's."""
    return sqrt((1 - sigma) / kappa)
