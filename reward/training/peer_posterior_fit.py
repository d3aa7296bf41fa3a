"""Fitting the peer posterior: its pairwise error table counted on the pool's labelled answers."""

from __future__ import annotations

from collections.abc import Sequence

from reso.reward.labelled_records import LabelledRecord
from reso.reward.peer_errors import PeerErrors
from reso.reward.peer_posterior import PeerPosteriorScorer
from reso.reward.registry import build_scorer


def fit_peer_posterior(base_spec: str, records: Sequence[LabelledRecord]) -> PeerPosteriorScorer:
    """The peer posterior over `base_spec`, its pairwise error table counted on `records` (labelled answers
    of the pool's models to the training side's questions)."""
    return PeerPosteriorScorer(base=build_scorer(base_spec), base_spec=base_spec, errors=PeerErrors.fit(records))
