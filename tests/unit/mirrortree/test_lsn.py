"""LSN arithmetic for consistency tokens."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mirrortree.lsn import commit_point, format_lsn, parse_lsn

BLOCK = 8192
SEGMENT = 16 * 1024 * 1024


@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_format_and_parse_round_trip(value):
    assert parse_lsn(format_lsn(value)) == value


@pytest.mark.parametrize("text", ["", "0", "/1", "1/", "G/0", "123456789/0"])
def test_malformed_lsns_are_refused(text):
    with pytest.raises(ValueError):
        parse_lsn(text)


@pytest.mark.parametrize("text", ["80000000/0", "FFFFFFFF/FFFFFFFF"])
def test_positions_beyond_the_drivers_range_are_refused(text):
    with pytest.raises(ValueError, match="beyond the largest WAL position"):
        parse_lsn(text)
    assert parse_lsn("7FFFFFFF/FFFFFFFF") == 2**63 - 1


def test_a_position_just_past_a_page_header_maps_back_to_the_page_boundary():
    assert commit_point(0x3050018, BLOCK, SEGMENT) == 0x3050000  # short header
    assert commit_point(0x4000028, BLOCK, SEGMENT) == 0x4000000  # long header, new segment
    assert commit_point(0x3050020, BLOCK, SEGMENT) == 0x3050020  # inside a page: unchanged
