"""Feature-based transfer vs fine-tuning, measured (lecture: 两种迁移策略的界定).

One small task, the sentiment of Chinese shopping reviews (``data``), solved three ways: (a) feature-based,
a FROZEN mini-elmo-zh or mini-bert-zh turns each review into a vector for a logistic regression
(``features``); (b) fine-tuning, a copy of mini-bert-zh plus a new head, every parameter trained
(``finetune``); (c) LoRA (``lora``), the same loop training only low-rank adapters and the head.
Each approach's one hyper-parameter is chosen on the same validation split (``tuning``); ``compare``
says whether two accuracies differ beyond sampling error.
``run`` runs the whole experiment; ``python -m core.transfer`` writes it to ``assets/transfer_results.json``
(``results``), which the page shows instantly in class, read through ``view.read_view``. Pure package: no
Streamlit.
"""
from .compare import (
    Comparison,
    ElmoPageGap,
    LayerTies,
    compare,
    curve_verdict,
    elmo_page_gap,
    layer_ties,
    validation_pick,
)
from .data import (
                   DATA_FILES,
                   DATA_PACKAGE,
                   DATA_PACKAGE_VERSION,
                   DEFAULT_CONFIG,
                   LABELS,
                   Dataset,
                   TransferConfig,
                   data_dir,
                   load_reviews,
                   sample_dataset,
)
from .features import POOLINGS, bert_features, fit_probe, standardised_mix
from .finetune import count_params, fine_tune
from .results import (
                   RESULTS_PATH,
                   RESULTS_VERSION,
                   curve_text,
                   load_results,
                   model_fingerprint,
                   save_results,
                   stale_models,
                   summary_lines,
)
from .run import BERT_MODEL, ELMO_MODEL, Progress, recompute, run_transfer
from .tuning import FINETUNE_LRS, LORA_LRS, choose, tune_lr, validation_split
from .view import (
                   NOTHING_SHOWN,
                   Approach,
                   BertFeatures,
                   Choice,
                   ElmoFeatures,
                   Shown,
                   Trained,
                   TransferView,
                   read_view,
                   shown_results,
)

__all__ = [
    "Approach", "BertFeatures", "Choice", "ElmoFeatures", "Trained", "TransferView", "read_view",
    "NOTHING_SHOWN", "Shown", "shown_results",
    "Comparison", "ElmoPageGap", "LayerTies", "compare", "curve_verdict", "elmo_page_gap", "layer_ties",
    "validation_pick",
    "BERT_MODEL", "DATA_FILES", "DATA_PACKAGE", "DATA_PACKAGE_VERSION", "DEFAULT_CONFIG", "ELMO_MODEL", "LABELS",
    "FINETUNE_LRS", "LORA_LRS", "POOLINGS", "RESULTS_PATH", "RESULTS_VERSION", "Dataset", "Progress", "TransferConfig",
    "bert_features", "choose", "count_params", "curve_text", "data_dir", "fine_tune", "fit_probe",
    "load_results", "load_reviews", "model_fingerprint", "recompute", "run_transfer", "sample_dataset",
    "save_results",
    "stale_models", "standardised_mix", "summary_lines", "tune_lr", "validation_split",
]
