"""LASER's training loop: the loss falls, only target tokens count, batches are deterministic,
and a killed training resumes where it stopped with the same result as an uninterrupted one."""

from __future__ import annotations

import math
from itertools import pairwise
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from gharuntime.baselines.laser.models import ModelOptions, tiny_model, train_tokenizer  # noqa: E402
from gharuntime.baselines.laser.train import (  # noqa: E402
    Example,
    TrainConfig,
    collate,
    make_example,
    micro_batches,
    target_loss,
    train,
)
from gharuntime.baselines.method import MethodError  # noqa: E402

PROMPTS = [f"job build-{i % 5} on ubuntu, {i % 5} steps\n" for i in range(40)]
TARGETS = [f"duration_s={(i % 5) + 1}.00e+0{i % 5}" for i in range(40)]


@pytest.fixture(scope="module")
def tokenizer():  # type: ignore[no-untyped-def]
    return train_tokenizer(PROMPTS + TARGETS, 300)


@pytest.fixture(scope="module")
def examples(tokenizer) -> list[Example]:  # type: ignore[no-untyped-def]
    return [
        make_example(
            tokenizer.encode(p), tokenizer.encode(t), tokenizer.eos_token_id, max_length=None
        )
        for p, t in zip(PROMPTS, TARGETS, strict=True)
    ]


def _model(tokenizer):  # type: ignore[no-untyped-def]
    return tiny_model(tokenizer, "tiny", ModelOptions(), seed=0)


def _weights(model) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _seeded_training(tokenizer, examples, cfg: TrainConfig):  # type: ignore[no-untyped-def]
    """(what `train` reports, the weights after it) for the seeded tiny model under `cfg`."""
    model = _model(tokenizer)
    done = train(model, examples, tokenizer.pad_token_id, cfg)
    return done, _weights(model)


@pytest.mark.slow
def test_a_few_steps_lower_the_target_loss(tokenizer, examples) -> None:  # type: ignore[no-untyped-def]
    model = _model(tokenizer)
    result = train(
        model, examples, tokenizer.pad_token_id, TrainConfig(max_steps=12, lr=3e-3, warmup_steps=2)
    )
    assert result.steps == 12 and len(result.losses) == 12
    assert result.losses[-1] < 0.6 * result.losses[0]
    per_example = len(tokenizer.encode(TARGETS[0])) + 1  # every target has the same length
    assert result.target_tokens == 12 * 8 * per_example  # 12 steps of 8 examples
    assert not model.training  # handed back ready to predict


@pytest.mark.parametrize("padding", ["right", "left"])
def test_loss_counts_target_tokens_only(tokenizer, padding) -> None:  # type: ignore[no-untyped-def]
    model = _model(tokenizer)
    a = make_example([5, 6, 7, 8], [9, 10], tokenizer.eos_token_id, None)
    b = make_example([11, 12, 13, 14, 15, 16], [9, 10, 9, 10], tokenizer.eos_token_id, None)
    batch = collate([a, b], tokenizer.pad_token_id, padding)
    pads = [tokenizer.pad_token_id] * 4  # 7 tokens against 11
    if padding == "left":
        assert batch["input_ids"][0].tolist()[:4] == pads
        assert batch["position_ids"][0].tolist() == [0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6]
    else:  # right: no mask and no position ids, the model's defaults are right
        assert batch["input_ids"][0].tolist()[-4:] == pads
        assert "attention_mask" not in batch and "position_ids" not in batch
    _, count = target_loss(model, batch)
    assert count == 3 + 5  # the targets' tokens plus eos each
    # the loss equals the target tokens' cross-entropy with each example run alone, unpadded
    with torch.no_grad():
        loss, _ = target_loss(model, batch)
        expected = 0.0
        for e in (a, b):
            ids = torch.tensor([e.input_ids])
            logits = model(input_ids=ids).logits[0]
            n = len(e.input_ids)
            for pos in range(n - e.target_len, n):
                expected += float(
                    torch.nn.functional.cross_entropy(logits[pos - 1][None], ids[0, pos][None])
                )
    assert float(loss) == pytest.approx(expected, rel=1e-4)


def test_right_padding_trains_the_model_left_padding_trains(tokenizer, examples) -> None:  # type: ignore[no-untyped-def]
    """The layout changes how fast, not what is trained: a seeded fp32 training with
    right-padded batches (the default) and with left-padded ones (the layout before issue #41)
    give the same loss curve and weights to float rounding, and padding is not in the
    checkpoint's fingerprint."""
    curves, weights = {}, {}
    for padding in ("left", "right"):
        cfg = TrainConfig(max_steps=6, lr=3e-3, warmup_steps=2, precision="fp32", padding=padding)
        done, weights[padding] = _seeded_training(tokenizer, examples, cfg)
        curves[padding] = done.losses
        assert "padding" not in cfg.fingerprint_fields()
    assert curves["right"][-1] < curves["right"][0]
    assert curves["left"] == pytest.approx(curves["right"], rel=1e-4)
    for k, v in weights["left"].items():
        assert torch.allclose(v, weights["right"][k], atol=1e-4), k  # type: ignore[call-overload]
    with pytest.raises(MethodError, match="padding must be right or left"):
        TrainConfig(padding="middle").check()


@pytest.mark.parametrize("padding", ["right", "left"])
def test_the_last_layer_at_the_kept_positions_trains_the_same_model(
    tokenizer, examples, padding: str
) -> None:  # type: ignore[no-untyped-def]
    """`last_layer="kept"` (the default) changes how fast, not what is trained: a seeded fp32
    training gives the loss curve and weights of the full last layer to float rounding; the
    summary says which ran, and the setting is not in the checkpoint's fingerprint."""
    curves, weights = {}, {}
    for last in ("full", "kept"):
        cfg = TrainConfig(
            max_steps=6, lr=3e-3, warmup_steps=2, precision="fp32", padding=padding, last_layer=last
        )
        done, weights[last] = _seeded_training(tokenizer, examples, cfg)
        assert done.summary()["last_layer"] == last
        curves[last] = done.losses
        assert "last_layer" not in cfg.fingerprint_fields()
    assert curves["kept"][-1] < curves["kept"][0]
    assert curves["full"] == pytest.approx(curves["kept"], rel=1e-4)
    for k, v in weights["full"].items():
        assert torch.allclose(v, weights["kept"][k], atol=1e-4), k  # type: ignore[call-overload]
    with pytest.raises(MethodError, match="last_layer must be kept or full"):
        TrainConfig(last_layer="none").check()


def test_batch_order_is_a_function_of_seed_and_epoch() -> None:
    lengths = list(range(50, 10, -1))
    assert micro_batches(lengths, 4, seed=1, epoch=0) == micro_batches(lengths, 4, 1, 0)
    assert micro_batches(lengths, 4, 1, 0) != micro_batches(lengths, 4, 1, 1)
    batches = micro_batches(lengths, 4, 1, 0)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))


@pytest.mark.slow
def test_killed_training_resumes_to_the_same_weights(tokenizer, examples, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cfg = {"max_steps": 6, "batch_size": 4, "grad_accum": 2, "lr": 3e-3, "warmup_steps": 2}
    whole = _model(tokenizer)
    train(whole, examples, tokenizer.pad_token_id, TrainConfig(**cfg))

    ckpt = tmp_path / "ckpt"
    killed = _model(tokenizer)
    first = train(
        killed, examples, tokenizer.pad_token_id,
        TrainConfig(**cfg, checkpoint_dir=str(ckpt), checkpoint_every=2, stop_after=3),
    )  # fmt: skip
    assert first.stopped_early and first.steps == 3  # step 3 ran, its checkpoint did not
    assert (ckpt / "latest.json").is_file() and (ckpt / "step-2").is_dir()

    resumed = _model(tokenizer)  # a new process: fresh weights, state from the checkpoint
    second = train(
        resumed, examples, tokenizer.pad_token_id,
        TrainConfig(**cfg, checkpoint_dir=str(ckpt), checkpoint_every=2),
    )  # fmt: skip
    assert second.resumed_from == 2 and second.steps == 6 and len(second.losses) == 4
    a, b = _weights(whole), _weights(resumed)
    assert a.keys() == b.keys()
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-6), k  # type: ignore[call-overload]


def test_checkpoint_of_another_training_is_refused(tokenizer, examples, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ckpt = str(tmp_path / "ckpt")
    train(
        _model(tokenizer),
        examples,
        tokenizer.pad_token_id,
        TrainConfig(max_steps=1, checkpoint_dir=ckpt),
    )
    with pytest.raises(MethodError, match="different training"):
        train(
            _model(tokenizer), examples[:20], tokenizer.pad_token_id,
            TrainConfig(max_steps=2, checkpoint_dir=ckpt),
        )  # fmt: skip


def test_bad_settings_are_refused(tokenizer, examples) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MethodError, match="batch_size"):
        train(_model(tokenizer), examples, 0, TrainConfig(batch_size=0))
    with pytest.raises(MethodError, match="precision"):
        train(_model(tokenizer), examples, 0, TrainConfig(precision="fp8"))


def test_cosine_schedule_warms_up_then_decays_to_its_floor() -> None:
    cfg = TrainConfig(max_steps=111, lr=1e-3, warmup_steps=10, min_lr_ratio=0.1)
    lrs = [cfg.lr_at(s) for s in range(cfg.max_steps)]
    assert lrs[0] == pytest.approx(1e-4) and lrs[9] == pytest.approx(1e-3)
    assert all(a >= b for a, b in pairwise(lrs[9:]))  # never rises again
    assert lrs[60] == pytest.approx(1e-3 * (0.1 + 0.9 * 0.5))  # half way: half the way down
    assert lrs[-1] == pytest.approx(1e-4)
    flat = TrainConfig(max_steps=110, lr=1e-3, warmup_steps=10, lr_schedule="constant")
    assert {flat.lr_at(s) for s in range(10, 110)} == {1e-3}
    # the schedule depends on the step count, so a checkpoint resumes only the same count
    assert "max_steps" in cfg.fingerprint_fields() and "max_steps" not in flat.fingerprint_fields()
    with pytest.raises(MethodError, match="lr_schedule"):
        TrainConfig(lr_schedule="linear").check()


def _poison(model, calls: set[int]):  # type: ignore[no-untyped-def]
    """Make the embedding output NaN on the given forward calls (0-based)."""
    seen = {"n": 0}

    def hook(_module, _inputs, output):  # type: ignore[no-untyped-def]
        n = seen["n"]
        seen["n"] += 1
        return output * float("nan") if n in calls else output

    return model.get_input_embeddings().register_forward_hook(hook)


def test_a_step_with_a_nan_gradient_changes_no_weight(tokenizer, examples) -> None:  # type: ignore[no-untyped-def]
    cfg = TrainConfig(max_steps=3, lr=3e-3, warmup_steps=1, lr_schedule="constant")
    clean = _model(tokenizer)
    train(clean, examples, tokenizer.pad_token_id, TrainConfig(**{**cfg.__dict__, "max_steps": 2}))
    model = _model(tokenizer)
    handle = _poison(model, {2})  # the third step's forward pass
    result = train(model, examples, tokenizer.pad_token_id, cfg)
    handle.remove()
    assert result.skipped_steps == 1 and result.summary()["skipped_steps"] == 1
    assert math.isnan(result.losses[2])
    after = _weights(model)
    assert all(torch.equal(after[k], v) for k, v in _weights(clean).items())  # step 3 did nothing


def test_training_that_keeps_diverging_stops_with_a_clear_error(tokenizer, examples) -> None:  # type: ignore[no-untyped-def]
    model = _model(tokenizer)
    _poison(model, set(range(1000)))
    with pytest.raises(MethodError, match=r"diverged.*non-finite gradient.*lower lr"):
        train(model, examples, tokenizer.pad_token_id, TrainConfig(max_steps=30, warmup_steps=1))


def test_checkpoints_print_no_tied_weights_notice(
    tokenizer, examples, tmp_path: Path, capfd, caplog
) -> None:  # type: ignore[no-untyped-def]
    """accelerate warns "Removed shared tensor {'lm_head.weight'}" for every checkpoint of a model
    with tied embeddings; LASER's output carries none of it (and its own lines stay)."""
    caplog.set_level("WARNING")
    model = _model(tokenizer)
    assert model.config.tie_word_embeddings  # the tie is what triggers the notice
    result = train(
        model, examples, tokenizer.pad_token_id,
        TrainConfig(max_steps=3, batch_size=4, checkpoint_dir=str(tmp_path / "ckpt"), checkpoint_every=1),
    )  # fmt: skip
    assert result.steps == 3 and (tmp_path / "ckpt" / "step-3").is_dir()
    out, err = capfd.readouterr()
    shown = out + err + caplog.text
    assert "Removed shared tensor" not in shown, shown


def test_validation_keeps_the_weights_of_the_best_scoring_step(tokenizer, examples) -> None:  # type: ignore[no-untyped-def]
    """Scored every 3 steps; the scripted scores are best at step 6, so the model ends holding
    step 6's weights (copied when it was scored), not step 12's."""
    scores = iter([0.9, 0.4, 0.7, 0.8])  # steps 3, 6, 9, 12
    seen: dict[int, dict[str, object]] = {}

    def evaluate(model) -> float:  # type: ignore[no-untyped-def]
        assert not model.training  # scored in eval mode
        seen[len(seen)] = _weights(model)
        return next(scores)

    model = _model(tokenizer)
    config = TrainConfig(max_steps=12, lr=3e-3, warmup_steps=2)
    result = train(model, examples, tokenizer.pad_token_id, config, None, evaluate, 3)
    assert [s for s, _ in result.validation] == [3, 6, 9, 12]
    assert result.best_step == 6 and result.summary()["best_step"] == 6
    final = _weights(model)
    assert all(bool((final[k] == seen[1][k]).all()) for k in final)
    assert any(not bool((final[k] == seen[3][k]).all()) for k in final)  # not the last step's


def test_without_a_scorer_the_last_step_is_kept(tokenizer, examples) -> None:  # type: ignore[no-untyped-def]
    result = train(_model(tokenizer), examples, tokenizer.pad_token_id, TrainConfig(max_steps=2))
    assert result.validation == [] and result.best_step is None
    assert "best_step" not in result.summary()


def test_bf16_autocast_follows_the_fp32_loss_curve(tokenizer, examples) -> None:  # type: ignore[no-untyped-def]
    """The same seeded training in bf16 autocast and in float32, in one process (accelerate's
    process-wide precision no longer pins the first one): over 30 steps the loss curves agree
    within 0.05 per step plus 5% of the loss, and both learn."""
    curves = {}
    for precision in ("fp32", "bf16", "fp32"):
        cfg = TrainConfig(max_steps=30, lr=3e-3, warmup_steps=3, precision=precision)
        result = train(_model(tokenizer), examples, tokenizer.pad_token_id, cfg)
        assert result.precision == precision
        if precision in curves:  # float32 twice: the same curve exactly
            assert result.losses == curves[precision]
        curves[precision] = result.losses
    fp32, bf16 = curves["fp32"], curves["bf16"]
    assert len(fp32) == len(bf16) == 30 and fp32 != bf16
    for a, b in zip(fp32, bf16, strict=True):
        assert abs(a - b) <= 0.05 + 0.05 * a, (fp32, bf16)
    assert bf16[-1] < 0.5 * bf16[0]


def test_auto_precision_reads_the_device_table(tokenizer, examples) -> None:  # type: ignore[no-untyped-def]
    from gharuntime.baselines.laser.train import PRECISION_BY_DEVICE, device_kind

    kind = device_kind()
    assert kind in PRECISION_BY_DEVICE
    cfg = TrainConfig(max_steps=1, warmup_steps=1)
    summary = train(_model(tokenizer), examples, tokenizer.pad_token_id, cfg).summary()
    assert (summary["device"], summary["precision"]) == (kind, PRECISION_BY_DEVICE[kind])


def test_compiled_training_follows_the_eager_loss_curve(tokenizer, examples) -> None:  # type: ignore[no-untyped-def]
    """compile=True runs the training forward through torch.compile (dynamic shapes: the
    micro-batches have different widths) and trains the same model: the seeded loss curve
    agrees with the eager one to float rounding, the summary says it was compiled, and the
    caller's model comes back uncompiled (its weights under their own names, for predict)."""
    curves, weights = {}, {}
    for compiled in (False, True):
        model = _model(tokenizer)
        cfg = TrainConfig(max_steps=6, lr=3e-3, warmup_steps=2, precision="fp32", compile=compiled)
        result = train(model, examples, tokenizer.pad_token_id, cfg)
        assert result.summary()["compiled"] is compiled
        curves[compiled], weights[compiled] = result.losses, _weights(model)
        assert type(model).__name__ == "MistralForCausalLM"
        assert not any("_orig_mod" in k for k in model.state_dict())
    assert len(curves[True]) == 6 and curves[True][-1] < curves[True][0]
    for a, b in zip(curves[False], curves[True], strict=True):
        assert abs(a - b) <= 1e-3 + 1e-3 * a, curves
    for k, v in weights[False].items():
        assert torch.allclose(v, weights[True][k], atol=1e-3), k  # type: ignore[call-overload]


def test_a_resume_may_switch_compile_on(tokenizer, examples, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """compile changes how fast, not what is trained: it is not in the checkpoint's fingerprint."""
    base = TrainConfig(max_steps=4, lr=3e-3, warmup_steps=1, precision="fp32")
    assert (
        base.fingerprint_fields()
        == TrainConfig(
            max_steps=4, lr=3e-3, warmup_steps=1, precision="fp32", compile=True
        ).fingerprint_fields()
    )
    assert "compile" not in base.fingerprint_fields()
