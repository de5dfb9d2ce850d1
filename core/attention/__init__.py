"""Reading BERT attention: the maths (head averages, rollout, word aggregation) and the attention page's view."""
