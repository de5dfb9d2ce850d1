"""Two models' guesses at one position (the objectives page's ① and ③): one probability scale for both panels,
and the real token always drawn, with its rank, even when it ranks below the top k."""
from __future__ import annotations

from core.figures.predictions import topk_bars
from core.fillmask.prediction import Candidate
from core.views.objectives import Prediction, shown_candidates

LEFT = Prediction([Candidate("个", 0.067), Candidate("只", 0.05), Candidate("块", 0.04)], actual=0.005, rank=26)
MASKED = Prediction([Candidate("苹", 0.523), Candidate("梨", 0.1), Candidate("桃", 0.05)], actual=0.523, rank=1)


def test_the_real_token_is_added_below_the_top_k_and_found_inside_it():
    assert shown_candidates(LEFT, "苹", 2) == (["个", "只", "苹"], [0.067, 0.05, 0.005], 2)
    assert shown_candidates(MASKED, "苹", 2) == (["苹", "梨"], [0.523, 0.1], 0)
    unknown = Prediction(LEFT.candidates, actual=None, rank=None)
    assert shown_candidates(unknown, "苹", 2) == (["个", "只"], [0.067, 0.05], None)


def test_panels_that_compare_share_one_scale_and_mark_the_real_token():
    slots, truth = [], []
    for name, prediction in (("left", LEFT), ("masked", MASKED)):
        tokens, scores, real = shown_candidates(prediction, "苹", 2)
        slots.append((name, tokens, scores))
        truth.append((real, f"苹 #{prediction.rank}"))
    fig = topk_bars(slots, shared_x=True, truth=truth)
    assert fig.layout.xaxis.range == fig.layout.xaxis2.range  # a 6.7 % bar is a tenth of a 52.3 % one
    assert fig.layout.yaxis.ticktext == ("个", "只", "苹 #26") and fig.layout.yaxis2.ticktext[0] == "苹 #1"
    left, masked = fig.data
    assert left.marker.color[2] != left.marker.color[0] and masked.marker.color[0] == left.marker.color[2]
    # each on its own scale (the fill-mask page's masks are separate questions)
    separate = topk_bars(slots)
    assert separate.layout.xaxis.range != separate.layout.xaxis2.range
