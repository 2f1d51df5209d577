"""LASER's target encodings: round trips (property-based), the fixed layout, clamping, errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gharuntime.baselines.laser.encoding import (
    TARGET_SEPARATOR,
    CharDFA,
    Codec,
    DecimalCodec,
    EncodingError,
    Fixed,
    Free,
    ScientificCodec,
    codec_for,
    median_and_quantiles,
)

MULTI = ("duration_s", "queue_s", "log_bytes")

sci_params = st.fixed_dictionaries(
    {
        "mantissa_digits": st.integers(1, 6),
        "exp_min": st.integers(-8, 3),
        "exp_max": st.integers(3, 12),
    }
)


def test_known_encodings_written_by_hand() -> None:
    c = codec_for("sci", MULTI)
    assert c.encode({"duration_s": 123.4, "queue_s": 5, "log_bytes": 31_000}) == (
        "duration_s=1.23e+02;queue_s=5.00e+00;log_bytes=3.10e+04"
    )
    one = codec_for("sci", ("duration_s",))
    assert one.encode({"duration_s": 9.996}) == "duration_s=1.00e+01"  # rounding renormalises
    assert one.encode({"duration_s": 0.005}) == "duration_s=0.50e-02"  # below 1e-2: denormal
    assert one.encode({"duration_s": 0.0}) == "duration_s=0.00e-02"
    assert one.decode("duration_s=4.56e-01") == {"duration_s": pytest.approx(0.456)}
    d = codec_for("decimal", ("duration_s", "queue_s"))
    assert d.encode({"duration_s": 80.26, "queue_s": 0}) == "duration_s=0000080.3;queue_s=0000000.0"
    assert d.decode("duration_s=0001234.5;queue_s=0000000.0") == {
        "duration_s": 1234.5,
        "queue_s": 0,
    }
    assert codec_for("sci", ("duration_s",), mantissa_digits=1).encode({"duration_s": 80}) == (
        "duration_s=8e+01"
    )
    assert TARGET_SEPARATOR == "\n"


@settings(max_examples=200, deadline=None)
@given(params=sci_params, value=st.floats(0, 1e12, allow_nan=False))
def test_sci_round_trip_within_rounding(params: dict[str, int], value: float) -> None:
    c = ScientificCodec(("duration_s",), **params)
    text = c.encode({"duration_s": value})
    back = c.decode(text)["duration_s"]
    if value > c.max_value:
        assert back == c.max_value and c.clamped == 1
        return
    assert c.clamped == 0
    d = params["mantissa_digits"]
    if value >= 10.0 ** params["exp_min"]:  # normal numbers: d significant digits
        assert abs(back - value) <= 0.5 * 10 ** (1 - d) * value * (1 + 1e-9) + 1e-300
    else:  # denormal: a fixed absolute step of 10**(exp_min - d + 1)
        assert abs(back - value) <= 0.5 * 10.0 ** (params["exp_min"] - d + 1) * (1 + 1e-9)
    # the text is canonical: encoding the decoded value gives the same text
    assert c.encode({"duration_s": back}) == text


@settings(max_examples=200, deadline=None)
@given(
    int_digits=st.integers(1, 9),
    frac_digits=st.integers(0, 3),
    value=st.floats(0, 1e10, allow_nan=False),
)
def test_decimal_round_trip(int_digits: int, frac_digits: int, value: float) -> None:
    c = DecimalCodec(("queue_s",), int_digits=int_digits, frac_digits=frac_digits)
    back = c.decode(c.encode({"queue_s": value}))["queue_s"]
    if value > c.max_value:
        assert back == c.max_value and c.clamped >= 1
    else:
        assert abs(back - value) <= 0.5 * 10.0**-frac_digits * (1 + 1e-6) + abs(value) * 1e-12


def _conforms(codec: Codec, text: str) -> bool:
    """Does `text` follow codec.segments(): fixed texts verbatim, free slots in their language?"""
    pos = 0
    for seg in codec.segments():
        if isinstance(seg, Fixed):
            if not text.startswith(seg.text, pos):
                return False
            pos += len(seg.text)
        else:
            if not seg.dfa.accepts(text[pos : pos + seg.dfa.length]):
                return False
            pos += seg.dfa.length
    return pos == len(text)


@settings(max_examples=150, deadline=None)
@given(
    params=sci_params,
    values=st.lists(st.floats(-10, 1e13) | st.just(math.inf), min_size=3, max_size=3),
)
def test_every_encoding_follows_the_layout(params: dict[str, int], values: list[float]) -> None:
    for codec in (ScientificCodec(MULTI, **params), DecimalCodec(MULTI, int_digits=6)):
        text = codec.encode(dict(zip(MULTI, values, strict=True)))
        assert _conforms(codec, text), (codec, text)


@settings(max_examples=150, deadline=None)
@given(params=sci_params, data=st.data())
def test_every_string_of_the_layout_decodes(params: dict[str, int], data: st.DataObject) -> None:
    """What constrained decoding can write (any path through the free slots) always decodes."""
    for codec in (
        ScientificCodec(MULTI, **params),
        DecimalCodec(MULTI, int_digits=4, frac_digits=2),
    ):
        parts = []
        for seg in codec.segments():
            if isinstance(seg, Fixed):
                parts.append(seg.text)
                continue
            state = 0
            while not seg.dfa.accepting(state):
                ch = data.draw(st.sampled_from(sorted(seg.dfa.transitions[state])))
                parts.append(ch)
                state = seg.dfa.transitions[state][ch]
        values = codec.decode("".join(parts))
        assert set(values) == set(MULTI)
        assert all(math.isfinite(v) and 0 <= v <= codec.max_value for v in values.values())


def test_segments_prefill_names_signs_and_points() -> None:
    c = codec_for("sci", MULTI, exp_min=0, exp_max=9)
    segs = c.segments()
    fixed = [s.text for s in segs if isinstance(s, Fixed)]
    # exponents 0..9 share "+0": fixed, not generated; only the last digit is free
    assert fixed == ["duration_s=", ".", "e+0", ";queue_s=", ".", "e+0", ";log_bytes=", ".", "e+0"]
    free = [s for s in segs if isinstance(s, Free)]
    assert [(s.role, s.dfa.length) for s in free[:3]] == [
        ("mantissa_lead", 1),
        ("mantissa", 2),
        ("exponent", 1),
    ]
    wide = codec_for("sci", ("duration_s",), exp_min=-2, exp_max=9).segments()
    exp = wide[-1]
    assert isinstance(exp, Free) and exp.dfa.length == 3
    assert exp.dfa.accepts("-02") and exp.dfa.accepts("+09") and exp.dfa.accepts("+00")
    assert not exp.dfa.accepts("-03") and not exp.dfa.accepts("+10") and not exp.dfa.accepts("-00")


def test_out_of_range_values_are_clamped_and_counted() -> None:
    c = codec_for("sci", ("duration_s",), mantissa_digits=2, exp_min=0, exp_max=3)
    assert c.encode({"duration_s": 50_000}) == "duration_s=9.9e+03"
    assert c.encode({"duration_s": -1}) == "duration_s=0.0e+00"
    assert c.encode({"duration_s": math.inf}) == "duration_s=9.9e+03"
    assert c.clamped == 3
    assert c.encode({"duration_s": 9900}) == "duration_s=9.9e+03"  # the largest value: not clamped
    assert c.encode({"duration_s": 9960}) == "duration_s=9.9e+03"  # just above the largest
    assert c.clamped == 4
    d = codec_for("decimal", ("duration_s",), int_digits=2, frac_digits=0)
    d.encode({"duration_s": 100})
    d.encode({"duration_s": 99.7})  # rounds to 100: clamped
    d.encode({"duration_s": 42})
    assert d.clamped == 2


@pytest.mark.parametrize(
    "text",
    [
        "duration_s=1.23e+02;queue_s=5.00e+00",  # a field missing
        "duration_s=1.23e+02;queue_s=5.00e+00;log_bytes=3.10e+04;x=1",
        "queue_s=1.23e+02;duration_s=5.00e+00;log_bytes=3.10e+04",  # order is fixed
        "duration_s=1.2e+02;queue_s=5.00e+00;log_bytes=3.10e+04",  # too few digits
        "duration_s=1.23e+10;queue_s=5.00e+00;log_bytes=3.10e+04",  # exponent out of range
        "duration_s=1.23e2;queue_s=5.00e+00;log_bytes=3.10e+04",
        "duration_s=1.23E+02;queue_s=5.00e+00;log_bytes=3.10e+04",
        "duration_s=-1.2e+02;queue_s=5.00e+00;log_bytes=3.10e+04",
        "duration_s=1,23e+02;queue_s=5.00e+00;log_bytes=3.10e+04",
        "duration_s=١.23e+02;queue_s=5.00e+00;log_bytes=3.10e+04",  # a non-ASCII digit
        "",
    ],
)
def test_sci_rejects_invalid_text(text: str) -> None:
    with pytest.raises(EncodingError):
        codec_for("sci", MULTI).decode(text)


@pytest.mark.parametrize(
    "text",
    ["duration_s=000080.3", "duration_s=0000080", "duration_s=0000080.30", "duration_s=+000080.3"],
)
def test_decimal_rejects_invalid_text(text: str) -> None:
    with pytest.raises(EncodingError):
        codec_for("decimal", ("duration_s",)).decode(text)


def test_bad_settings_and_missing_values_are_clear_errors() -> None:
    with pytest.raises(EncodingError, match="unknown encoding 'hex'"):
        codec_for("hex", MULTI)
    with pytest.raises(EncodingError, match="bad parameters"):
        codec_for("sci", MULTI, digits=3)
    with pytest.raises(EncodingError, match="exp_min"):
        codec_for("sci", MULTI, exp_min=5, exp_max=2)
    with pytest.raises(EncodingError, match="exponent digit"):
        codec_for("sci", MULTI, exp_max=120)
    with pytest.raises(EncodingError, match="cannot appear"):
        codec_for("sci", ("a;b",))
    c = codec_for("sci", MULTI)
    with pytest.raises(EncodingError, match=r"log_bytes.*missing"):
        c.encode({"duration_s": 1, "queue_s": 1, "log_bytes": None})  # type: ignore[dict-item]
    with pytest.raises(EncodingError, match="NaN"):
        c.encode({"duration_s": math.nan, "queue_s": 1, "log_bytes": 1})
    with pytest.raises(EncodingError, match="no value for target 'queue_s'"):
        c.encode({"duration_s": 1})


def test_config_rebuilds_the_codec() -> None:
    for c in (codec_for("sci", MULTI, mantissa_digits=4, exp_min=-1), codec_for("decimal", MULTI)):
        cfg = c.config()
        params = {k: v for k, v in cfg.items() if k not in ("name", "targets")}
        again = codec_for(cfg["name"], cfg["targets"], **params)
        assert again.segments() == c.segments()


def test_char_dfa_languages() -> None:
    dfa = CharDFA.strings(["+01", "+02", "-01"])
    assert [w for w in ("+01", "+02", "-01", "-02", "+0", "+011") if dfa.accepts(w)] == [
        "+01",
        "+02",
        "-01",
    ]
    assert dfa.run(0, "+0") is not None and dfa.run(0, "-2") is None
    with pytest.raises(EncodingError):
        CharDFA.strings(["1", "22"])


@settings(max_examples=50, deadline=None)
@given(samples=st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=30))
def test_median_and_quantiles_match_numpy(samples: list[float]) -> None:
    decoded = [{"duration_s": v, "queue_s": v * 2} for v in samples]
    got = median_and_quantiles(decoded)
    for target, scale in (("duration_s", 1), ("queue_s", 2)):
        xs = np.array(samples) * scale
        expected = (np.percentile(xs, 50), np.percentile(xs, 10), np.percentile(xs, 90))
        assert got[target] == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_layout_has_no_unexpected_characters() -> None:
    text = codec_for("sci", MULTI).encode({"duration_s": 3.5, "queue_s": 0.0, "log_bytes": 123456})
    assert re.fullmatch(r"(\w+=\d\.\d\de[+-]\d\d;?)+", text)


def test_negative_zero_encodes_as_zero() -> None:
    """-0.0 is zero, not a negative value: no sign, no clamp (found by hypothesis in CI)."""
    for codec in (ScientificCodec(MULTI), DecimalCodec(MULTI, int_digits=6)):
        text = codec.encode(dict.fromkeys(MULTI, -0.0))
        assert "-" not in text.replace("e-", "") and _conforms(codec, text), text
        assert codec.decode(text) == dict.fromkeys(MULTI, 0.0) and codec.clamped == 0
