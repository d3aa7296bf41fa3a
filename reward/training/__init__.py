"""Fitting, measuring and searching Collaborative Reward Models: the research side of `reso.reward`.

A running ReSo never imports this package: it loads fitted models through the scorers of `reso.reward`
(`build_scorer`), and `tests/unit_tests/test_runtime_apart.py` keeps it so. Here live

- fitting: the small CRM (`small_crm_fit.fit_small_crm`, its settings searched by `crm_search`), the staged
  CRM (`staged_crm_fit`), the calibrated CRM (`calibration_fit`), the peer posterior's error table
  (`peer_posterior_fit`), and LoRA training of a process reward model (`prm_training.train_prm`);
- measuring: AUC, calibration, choice among candidates and ProcessBench's F1 on labelled records
  (`crm_eval`, `crm_candidates`), the same answers in ProcessBench's layout (`step_layout`), and what each
  part of the small CRM adds (`crm_ablation`).

Public names are imported on first use, so importing the package loads no model library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.reward.training.calibration_fit import fit_calibration
    from reso.reward.training.crm_ablation import ablate
    from reso.reward.training.crm_eval import evaluate_scores
    from reso.reward.training.peer_posterior_fit import fit_peer_posterior
    from reso.reward.training.prm_training import train_prm
    from reso.reward.training.small_crm_fit import fit_small_crm
    from reso.reward.training.staged_crm_fit import fit_staged_crm

__all__ = [
    "ablate",
    "evaluate_scores",
    "fit_calibration",
    "fit_peer_posterior",
    "fit_small_crm",
    "fit_staged_crm",
    "train_prm",
]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "calibration_fit": ["fit_calibration"],
    "crm_ablation": ["ablate"],
    "crm_eval": ["evaluate_scores"],
    "peer_posterior_fit": ["fit_peer_posterior"],
    "prm_training": ["train_prm"],
    "small_crm_fit": ["fit_small_crm"],
    "staged_crm_fit": ["fit_staged_crm"],
})
