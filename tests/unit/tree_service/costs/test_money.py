"""Exact money (T20) beyond tests/tree_service/test_costs.py's arithmetic tests: costs and
what remains of a quota computed exactly whatever the ambient decimal context, a step that
would have to round refused, and amounts parsed and printed without loss."""

from __future__ import annotations

import decimal
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tree_service.costs.money import cost_of, format_money, is_currency, parse_money, remaining

# Amounts as parse_money admits them: up to 18 integer digits and 12 decimals.
AMOUNTS = st.decimals(min_value=0, max_value=Decimal("9" * 18 + "." + "9" * 12), places=12)
TOKENS = st.integers(min_value=0, max_value=10**12)


def test_a_cost_is_the_runs_times_the_token_prices_and_the_fee_exactly():
    cost = cost_of(
        input_tokens=3,
        output_tokens=2,
        parallelism=3,
        input_price_per_million=Decimal("0.1"),
        output_price_per_million=Decimal("0.3"),
        per_run_fee=Decimal("0.002"),
    )
    assert cost == Decimal("0.0060027")
    assert format_money(cost) == "0.0060027"


def test_tenths_add_up_where_floats_would_not():
    cost = cost_of(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        parallelism=1,
        input_price_per_million=Decimal("0.1"),
        output_price_per_million=Decimal("0.2"),
        per_run_fee=Decimal(0),
    )
    assert format_money(cost) == "0.3"
    assert 0.1 + 0.2 != 0.3  # what the float arithmetic would have given


def test_the_smallest_price_of_one_token_is_kept():
    cost = cost_of(
        input_tokens=1,
        output_tokens=0,
        parallelism=1,
        input_price_per_million=Decimal("0.000000000001"),
        output_price_per_million=Decimal(0),
        per_run_fee=Decimal(0),
    )
    assert format_money(cost) == "0.000000000000000001"


@given(
    input_tokens=TOKENS,
    output_tokens=TOKENS,
    parallelism=st.integers(min_value=1, max_value=1_000),
    input_price=AMOUNTS,
    output_price=AMOUNTS,
    fee=AMOUNTS,
)
def test_a_cost_equals_the_same_sum_in_fractions(
    *, input_tokens, output_tokens, parallelism, input_price, output_price, fee
):
    cost = cost_of(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        parallelism=parallelism,
        input_price_per_million=input_price,
        output_price_per_million=output_price,
        per_run_fee=fee,
    )
    exact = parallelism * (
        (input_tokens * Fraction(input_price) + output_tokens * Fraction(output_price)) / 1_000_000
        + Fraction(fee)
    )
    assert isinstance(cost, Decimal) and Fraction(cost) == exact


def test_a_cost_and_what_remains_do_not_depend_on_the_ambient_decimal_context():
    fee = Decimal("999999999999999999.999999999999")
    with decimal.localcontext(decimal.Context(prec=3, rounding=decimal.ROUND_DOWN)):
        cost = cost_of(
            input_tokens=1,
            output_tokens=1,
            parallelism=2,
            input_price_per_million=Decimal("0.000002"),
            output_price_per_million=Decimal(0),
            per_run_fee=fee,
        )
        left = remaining(fee, Decimal("0.000000000001"), Decimal(0))
    assert format_money(cost) == "2000000000000000000.000000000002"
    assert format_money(left) == "999999999999999999.999999999998"


def test_what_remains_is_the_limit_less_the_reserved_and_the_spent_and_may_be_negative():
    assert remaining(Decimal("10"), Decimal("2.5"), Decimal("0.25")) == Decimal("7.25")
    assert format_money(remaining(Decimal(5), Decimal(8), Decimal(0))) == "-3"
    assert format_money(remaining(Decimal(5), Decimal(2), Decimal(3))) == "0"
    # Thirty significant digits: more than the default context's 28 keep.
    limit = Decimal("100000000000000000.000000000001")
    assert remaining(limit, Decimal(0), Decimal(0)) == limit


def test_a_step_that_would_have_to_round_is_refused_rather_than_rounded():
    with pytest.raises(decimal.Inexact):
        remaining(Decimal("1E+100"), Decimal("1E-100"), Decimal(0))
    with pytest.raises(decimal.Inexact):
        cost_of(
            input_tokens=1,
            output_tokens=0,
            parallelism=1,
            input_price_per_million=Decimal("1E+100"),
            output_price_per_million=Decimal(0),
            per_run_fee=Decimal("1E-100"),
        )


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("0", Decimal(0)),
        ("000", Decimal(0)),
        ("0.000000000001", Decimal("1E-12")),
        ("9" * 18, Decimal("9" * 18)),
        ("9" * 18 + "." + "9" * 12, Decimal("9" * 18 + "." + "9" * 12)),
        ("12.50", Decimal("12.5")),
    ],
)
def test_a_plain_decimal_is_parsed_exactly(text, amount):
    parsed = parse_money(text)
    assert isinstance(parsed, Decimal) and parsed == amount


# Refusals beyond those in test_costs.py: what Decimal() itself would accept must not pass.
@pytest.mark.parametrize(
    "text", ["", "+1", "1.0.0", "1_000", "0x10", "1 ", "1\t", "１", "٣", "1.5e2", "-0", "0.-1"]
)
def test_what_is_not_a_plain_non_negative_decimal_is_refused(text):
    assert parse_money(text) is None


def test_an_amount_with_a_trailing_newline_is_refused():
    assert parse_money("1\n") is None


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (Decimal("1E+3"), "1000"),  # no exponent
        (Decimal("100"), "100"),  # the zeros of an integer stay
        (Decimal("1E-18"), "0.000000000000000001"),
        (Decimal("10.500"), "10.5"),
        (Decimal("-0.00"), "0"),
        (Decimal("-0"), "0"),
        (Decimal("-12.340"), "-12.34"),
    ],
)
def test_an_amount_is_printed_in_full_without_exponent_or_trailing_zeros(amount, text):
    assert format_money(amount) == text


@given(st.decimals(allow_nan=False, allow_infinity=False, min_value=-(10**30), max_value=10**30))
def test_a_printed_amount_reads_back_as_the_same_amount(amount):
    text = format_money(amount)
    assert Decimal(text) == amount
    assert "e" not in text.lower()
    assert not (("." in text and text.endswith("0")) or text.endswith("."))


@given(AMOUNTS)
def test_an_amount_parse_money_admits_survives_printing_and_parsing(amount):
    assert parse_money(format_money(amount)) == amount


@pytest.mark.parametrize("code", ["EUR", "USD", "JPY"])
def test_a_currency_is_three_upper_case_letters(code):
    assert is_currency(code)


@pytest.mark.parametrize("code", ["", "eur", "Eur", "EU", "EURO", "E1R", " EUR", "ÉUR"])
def test_anything_else_is_not_a_currency(code):
    assert not is_currency(code)


def test_a_currency_with_a_trailing_newline_is_refused():
    assert not is_currency("EUR\n")
