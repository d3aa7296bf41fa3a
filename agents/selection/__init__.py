"""Who answers a subtask: the two-stage selector and what it reads.

The coarse stage embeds the subtask (`embeddings.py`; optionally a model-written target profile,
`target_profile.py`), retrieves the most similar agent profiles from a FAISS index (`index.py`) and scores
them (`scoring.py`, with `posterior.py`'s Beta posteriors for Thompson sampling and KL-UCB) from DADB
statistics mirrored in memory (`stats_cache.py`); `selector.py` returns the best `Candidate`s
(`ReputationSelector`, `RandomSelector`, both implementing `Selector`), configured by `config.py`'s `SelectorConfig`,
each with its score's terms (`candidate_score.py`'s `CandidateScore`) or the rule that chose it (`RuleChoice`).

Public names are imported on first use, so importing the package loads neither FAISS nor an embedding model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.agents.selection.candidate_score import CandidateScore, Rule, RuleChoice
    from reso.agents.selection.config import SelectorConfig
    from reso.agents.selection.embeddings import Embedder, load_embedder
    from reso.agents.selection.index import ProfileIndex, profile_index_for_pool
    from reso.agents.selection.posterior import beta_posterior, kl_upper_bound, thompson_belief
    from reso.agents.selection.scoring import score_components
    from reso.agents.selection.selector import Candidate, RandomSelector, ReputationSelector, Selector
    from reso.agents.selection.stats_cache import Standings, StatsCache
    from reso.agents.selection.target_profile import TargetProfileWriter

__all__ = [
    "Candidate",
    "CandidateScore",
    "Embedder",
    "ProfileIndex",
    "RandomSelector",
    "ReputationSelector",
    "Rule",
    "RuleChoice",
    "Selector",
    "SelectorConfig",
    "Standings",
    "StatsCache",
    "TargetProfileWriter",
    "beta_posterior",
    "kl_upper_bound",
    "load_embedder",
    "profile_index_for_pool",
    "score_components",
    "thompson_belief",
]

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "candidate_score": ["CandidateScore", "Rule", "RuleChoice"],
    "embeddings": ["Embedder", "load_embedder"],
    "index": ["ProfileIndex", "profile_index_for_pool"],
    "posterior": ["beta_posterior", "kl_upper_bound", "thompson_belief"],
    "scoring": ["score_components"],
    "config": ["SelectorConfig"],
    "selector": ["Candidate", "RandomSelector", "ReputationSelector", "Selector"],
    "stats_cache": ["Standings", "StatsCache"],
    "target_profile": ["TargetProfileWriter"],
})
