"""Probability-weighted ratings (issue 32, G-Eval): reading the rating's token and weighing the scale, checked
exactly against hand computations, and every input that breaks a promise."""

from __future__ import annotations

import math

import pytest

from judge_logprobs import content, rated, tokens_of
from textgen_core.judge.metric import Answer
from textgen_core.judge.ratings import RATING, UNAVAILABLE, Weighted, rating_cell, weigh
from textgen_core.llm.logprobs import content_logprobs, field_alternatives

FIVE = (1, 2, 3, 4, 5)
TEN = tuple(range(1, 11))


def found(top, value=None, **kwargs):
    reply = rated(value or {"reason": "fine", "score": 4}, top, **kwargs)
    return field_alternatives(reply.logprobs, "score")


def test_the_weighted_rating_is_the_renormalised_mean_worked_by_hand() -> None:
    # p(4) = e^-0.2, p(3) = e^-1.9, p(5) = e^-3.0; "x" is no rating and is left out; renormalised over 3, 4, 5
    got = weigh(found({"4": -0.2, "3": -1.9, "5": -3.0, "x": -2.5}), FIVE)
    p3, p4, p5 = math.exp(-1.9), math.exp(-0.2), math.exp(-3.0)
    total = p3 + p4 + p5
    assert isinstance(got, Weighted)
    assert got.value == pytest.approx((3 * p3 + 4 * p4 + 5 * p5) / total, abs=1e-12)
    # written out: (3 x 0.1495686 + 4 x 0.8187308 + 5 x 0.0497871) / 1.0180865 = 3.9725641 / 1.0180865
    assert got.value == pytest.approx(3.9019910816, abs=1e-9)
    assert got.probabilities == pytest.approx({"3": p3 / total, "4": p4 / total, "5": p5 / total}, abs=1e-12)
    assert list(got.probabilities) == ["3", "4", "5"]
    assert got.coverage == pytest.approx(total, abs=1e-12)


def test_tokens_that_read_as_the_same_rating_add_up() -> None:
    # "5" and " 5" (and a quoted "5) are one rating: their probabilities are summed before renormalising
    got = weigh(found([("5", math.log(0.3)), (" 5", math.log(0.2)), ('"5', math.log(0.1)), ("4", math.log(0.4))],
                      {"reason": "r", "score": 5}), FIVE)
    assert got.probabilities == pytest.approx({"4": 0.4, "5": 0.6}, abs=1e-12)
    assert got.value == pytest.approx(4 * 0.4 + 5 * 0.6, abs=1e-12)


def test_probabilities_that_do_not_sum_to_one_are_renormalised() -> None:
    # the endpoint's alternatives hold 0.1 + 0.3 of the mass (or, broken, 0.9 + 0.8 = 1.7): renormalised all the same
    low = weigh(found({"2": math.log(0.1), "4": math.log(0.3)}), FIVE)
    assert low.value == pytest.approx((2 * 0.1 + 4 * 0.3) / 0.4, abs=1e-12) and low.coverage == pytest.approx(0.4)
    high = weigh(found({"2": math.log(0.9), "4": math.log(0.8)}), FIVE)
    assert high.value == pytest.approx((2 * 0.9 + 4 * 0.8) / 1.7, abs=1e-12) and high.coverage == pytest.approx(1.7)


def test_nan_inf_and_garbage_log_probabilities() -> None:
    # -inf is a probability of 0 (kept); NaN, text and a log-probability above 0 are left out and counted
    read = found([("4", -0.5), ("3", float("-inf")), ("2", float("nan")), ("1", "high"), ("5", 0.7)])
    assert read["ignored"] == 3 and read["top"] == [["4", -0.5], ["3", None]]
    got = weigh(read, FIVE)
    assert got.value == 4.0 and got.probabilities == {"3": 0.0, "4": 1.0}
    cell = rating_cell(4, Answer({"score": 4}, "k", read), FIVE, {"rating": "weighted"})
    assert cell.value == 4.0 and cell.details["ignored_alternatives"] == 3
    # every rating token at probability 0: no weighted rating, and why
    zero = found([("4", float("-inf")), ("3", float("-inf"))], chosen_logprob=float("-inf"))
    assert weigh(zero, FIVE) == "every rating token at the rating has probability 0"


def test_top_logprobs_missing_the_scale_tokens() -> None:
    # the alternatives at the rating are all words: the chosen "4" alone is no distribution but is one token of
    # the scale, so only a reply whose chosen token is no rating either has nothing to weigh
    only_chosen = weigh(found({"x": -0.1, "y": -2.0}), FIVE)
    assert only_chosen.value == 4.0 and only_chosen.probabilities == {"4": 1.0}
    none = weigh({"value": "4", "token": "four", "logprob": -0.1, "top": [["x", -0.1]], "ignored": 0}, FIVE)
    assert none == "none of the scale's ratings (1-5) is among the 2 most likely tokens at the rating"
    assert weigh([], FIVE) == "the endpoint returned no log-probabilities"


def test_the_chosen_token_counts_when_the_top_list_leaves_it_out() -> None:
    got = weigh(found({"3": math.log(0.25)}, chosen_logprob=math.log(0.5)), FIVE)
    assert got.probabilities == pytest.approx({"3": 1 / 3, "4": 2 / 3}, abs=1e-12)


def test_a_rating_split_across_tokens_falls_back_with_the_tokens_named() -> None:
    # a digit-by-digit tokenizer writes 10 as "1", "0": the alternatives at "1" are not alternatives to 10
    split = found({"1": -0.1, "9": -2.0}, {"reason": "top", "score": 10}, split_digits=True)
    assert split == ("the rating 10 is written across 2 tokens ('1', '0'); the alternatives at its first token "
                     "are not alternatives to the whole rating")
    assert weigh(split, TEN) == split
    # the same tokenizer writing 7 on a 1-10 scale: "1" may begin 10, and no whole "10" token shows otherwise
    seven = found({"7": -0.1, "1": -2.0}, {"reason": "ok", "score": 7}, split_digits=True)
    assert weigh(seven, TEN).startswith("on a 1-10 scale a single digit may begin a two-digit rating")
    # a tokenizer with whole "10" tokens: its alternatives are whole ratings and are weighed
    whole = weigh(found({"7": math.log(0.5), "10": math.log(0.25), "1": math.log(0.25)},
                        {"reason": "ok", "score": 7}), TEN)
    assert whole.value == pytest.approx(0.5 * 7 + 0.25 * 10 + 0.25 * 1, abs=1e-12)


def test_reading_the_rating_token_in_odd_replies() -> None:
    # the key name inside the reason does not mislead: the last unescaped "score" key is the rating's
    tokens = tokens_of('{"reason": "a \\"score\\": 9 is wrong", "score": 2}')
    read = field_alternatives(content(tokens, tokens.index("2"), {"2": -0.1}), "score")
    assert read["value"] == "2" and read["token"] == "2"
    # a rating after the colon in one token is read; one sharing its token with the key is refused, not misread
    glued = field_alternatives(content(['{"score', '": 4', "}"], 1, {"4": -0.1}), "score")
    assert glued["value"] == "4" and glued["token"] == '": 4'
    shared = field_alternatives(content(['{"score": 4', "}"], 0, {"4": -0.1}), "score")
    assert isinstance(shared, str) and "shares its token" in shared
    assert field_alternatives(content(['{"label": 4}'], 0, {}), "score") == \
        "the tokens of the reply hold no 'score' field"
    assert field_alternatives([{"logprob": -1}], "score") == \
        "the endpoint's log-probabilities name no token at some place of the reply"
    assert content_logprobs({"choices": [{"logprobs": None}]}) is None
    assert content_logprobs({"choices": [{"logprobs": {"content": []}}]}) is None
    assert content_logprobs({"choices": "x"}) is None


def test_the_cell_keeps_the_chosen_rating_beside_the_weighted_one() -> None:
    read = found({"4": math.log(0.75), "2": math.log(0.25)})
    answer = Answer({"reason": "r", "score": 4}, "key", read)
    weighted = rating_cell(4, answer, FIVE, {"rating": "weighted"})
    assert weighted.value == pytest.approx(3.5, abs=1e-12)
    assert weighted.details["score"] == 4 and weighted.details["weighted"] == weighted.value
    chosen = rating_cell(4, answer, FIVE, {"rating": "chosen"})
    assert chosen.value == 4.0 and chosen.details == {"score": 4}
    missing = rating_cell(4, Answer({"score": 4}, "key", "the endpoint returned no log-probabilities with its "
                                                          "reply"), FIVE, {"rating": "weighted"})
    assert missing.value == 4.0 and missing.details[UNAVAILABLE].startswith("the endpoint returned no")


def test_the_parameter_is_declared_once_and_validated() -> None:
    from textgen_core.errors import ParameterError
    from textgen_core.registry import get_metric

    for name in ("coherence", "summary_coherence"):
        assert get_metric(name).param("rating") is RATING
        assert get_metric(name).resolve() == {"rating": "chosen"}
    with pytest.raises(ParameterError, match="'mean' is not one of chosen, weighted"):
        get_metric("coherence").resolve({"rating": "mean"})
