"""`gharuntime laser bench`: runs both decoders on one model and reports figures; bad input → exit 2.
No timing is asserted (latency figures live in the bench's output, not in tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from fuzz_support import run_limited  # noqa: E402

from gharuntime.baselines.laser.bench import (  # noqa: E402
    MAX_RANDOM_PARAMETERS,
    build_tokenizer,
    random_llama,
    random_llama_parameters,
)
from gharuntime.cli.main import cli  # noqa: E402

SMALL = ["--prompts", "2", "--batch-size", "2", "--repeats", "1", "--threads", "1"]
RANDOM = ["--model", "random", "--layers", "1", "--width", "32"]  # a one-layer stand-in, fast


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["laser", "bench", *args])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.stdout, result.output


def _check_figures(report: dict[str, Any], lengths: list[int], track_targets: int) -> None:
    assert report["bench"] == "laser_decode"
    assert [r["prompt_tokens"] for r in report["results"]] == lengths
    for r in report["results"]:
        assert r["constrained_valid"] == 1.0
        assert 0.0 <= r["plain_valid"] <= 1.0
        assert r["prompt_tokens_mean"] <= r["prompt_tokens"]
        assert r["constrained_s"] > 0 and r["plain_s"] > 0 and r["prefill_s"] > 0
        assert r["ratio"] == pytest.approx(r["constrained_s"] / r["plain_s"], rel=1e-2)
        assert r["constrained_example"].count("=") == track_targets
    assert report["goal"]["met"] is None  # 1024 tokens not measured here


def test_bench_json_on_a_small_random_model() -> None:
    code, stdout, output = _run(
        "--json", "--prompt-lengths", "24,48", "--track", "multi", *RANDOM, *SMALL
    )
    assert code == 0, output
    report = json.loads(stdout.strip().splitlines()[-1])
    _check_figures(report, [24, 48], 3)
    assert report["device"] == "cpu" or report["device"].startswith("cuda")


def test_bench_loads_a_model_folder(tmp_path: Path) -> None:
    tokenizer = build_tokenizer(["duration_s=1.23e+02 repo: org/x job: test"] * 20, vocab_size=300)
    model = random_llama(len(tokenizer), layers=1, width=32, heads=2, max_positions=256)
    model.save_pretrained(tmp_path / "m")
    tokenizer.save_pretrained(tmp_path / "m")
    code, stdout, output = _run(
        "--json", "--model", str(tmp_path / "m"), "--prompt-lengths", "20", *SMALL
    )
    assert code == 0, output
    report = json.loads(stdout.strip().splitlines()[-1])
    assert report["model"] == str(tmp_path / "m")
    _check_figures(report, [20], 1)
    # a prompt longer than the model's positions is a clear error
    code, _, output = _run("--model", str(tmp_path / "m"), "--prompt-lengths", "400", *SMALL)
    assert code == 2 and "exceeds the model's 256 positions" in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prompt-lengths", "256,abc"], "not a comma-separated list"),
        (["--prompt-lengths", "4"], "at least 8 tokens"),
        (
            ["--model", "no-such-model-folder"],
            "not tiny, tiny-256, random, smollm2-135m or a folder",
        ),
        (["--dtype", "float8"], "unknown dtype"),
        (["--threads", "0"], "0 is not in the range 1<=x<=1024"),
    ],
)
def test_bad_input_is_a_clear_error(args: list[str], message: str) -> None:
    code, _, output = _run(*args)
    assert code == 2
    assert message in output


def test_a_folder_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, _, output = _run("--model", str(tmp_path / "empty"), "--prompt-lengths", "16", *SMALL)
    assert code == 2 and "does not load as a causal LM" in output


def test_bench_times_the_decoder_laser_trains() -> None:
    """--model tiny is LASER's own from-scratch decoder (models.tiny_model), not a stand-in."""
    code, stdout, output = _run("--json", "--prompt-lengths", "24", "--model", "tiny", *SMALL)
    assert code == 0, output
    report = json.loads(stdout.strip().splitlines()[-1])
    assert report["model"].startswith("tiny (LASER's decoder, 2 layers × 128")
    _check_figures(report, [24], 1)


def test_layers_and_width_size_only_the_random_model() -> None:
    code, _, output = _run("--model", "tiny", "--layers", "2", "--prompt-lengths", "24")
    assert code == 2 and "--model random only" in output


@pytest.mark.parametrize(
    ("vocab", "layers", "width", "heads"), [(1024, 1, 32, 4), (300, 3, 96, 4), (500, 2, 64, 2)]
)
def test_the_counted_parameters_are_the_built_models(
    vocab: int, layers: int, width: int, heads: int
) -> None:
    model = random_llama(vocab, layers=layers, width=width, heads=heads, max_positions=64)
    built = sum(p.numel() for p in model.parameters())
    assert random_llama_parameters(vocab, layers=layers, width=width, heads=heads) == built


def test_a_random_model_too_large_is_refused_before_it_is_built(tmp_path: Path) -> None:
    """`--layers 64 --width 8192` passes each option's range and asks for a 69-billion
    parameter model (275 GB in float32): refused at once, within 6 GB of address space. Before,
    it was built until memory ran out."""
    args = ["laser", "bench", "--model", "random", "--layers", "64", "--width", "8192"]
    out = run_limited(args, tmp_path, memory_mb=6144, timeout=300)
    assert out.code == 2, out.output
    said = " ".join(out.output.split())
    assert "about 68.7 billion parameters (275 GB in float32)" in said, said
    assert f"at most {MAX_RANDOM_PARAMETERS / 1e9:.0f} billion" in said
    assert "fix: choose at most --layers 1 at --width 8192" in said and "Traceback" not in said
    code, _, output = _run("--model", "random", "--layers", "2", "--width", "10")
    assert code == 2 and "multiple of the model's 4 attention heads" in output, output
