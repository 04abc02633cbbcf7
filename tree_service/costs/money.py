"""Exact money: decimal strings in, exact decimals computed, decimal strings out (never floats)."""

from __future__ import annotations

import decimal
import re
from decimal import Decimal

# Whole strings only (fullmatch): `$` would also match before a trailing newline.
MONEY = re.compile(r"[0-9]{1,18}(\.[0-9]{1,12})?")
CURRENCY = re.compile(r"[A-Z]{3}")
TOKENS_PER_PRICE_UNIT = 1_000_000
# Enough digits for the largest cost the limits allow (1,000 runs x 10^12 tokens x 10^18 per
# million, with 18 decimals), so no step ever rounds.
_EXACT = decimal.Context(prec=80, traps=[decimal.Inexact, decimal.InvalidOperation])


def is_currency(text: str) -> bool:
    """Whether `text` is a currency code: three upper-case letters (USD, EUR, CNY)."""
    return CURRENCY.fullmatch(text) is not None


def parse_money(text: str) -> Decimal | None:
    """The amount `text` states, or None when it is not a plain non-negative decimal."""
    if not MONEY.fullmatch(text):
        return None
    return Decimal(text)


def format_money(amount: Decimal) -> str:
    """The exact amount without exponent or trailing zeros ("0.045", "12", "-3.5")."""
    text = format(amount, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def cost_of(
    *,
    input_tokens: int,
    output_tokens: int,
    parallelism: int,
    input_price_per_million: Decimal,
    output_price_per_million: Decimal,
    per_run_fee: Decimal,
) -> Decimal:
    """parallelism x (tokens x price per million / 1,000,000 + fee), computed exactly."""
    with decimal.localcontext(_EXACT):
        per_run = (
            Decimal(input_tokens) * input_price_per_million
            + Decimal(output_tokens) * output_price_per_million
        ) / TOKENS_PER_PRICE_UNIT + per_run_fee
        return Decimal(parallelism) * per_run


def remaining(limit: Decimal, reserved: Decimal, spent: Decimal) -> Decimal:
    with decimal.localcontext(_EXACT):
        return limit - reserved - spent
