"""`laser`: a language model reads a job's serialized configuration and writes its targets.

The registry entry of the LASER method (`gharuntime baseline laser`). Fitting serializes every
training row (`serialize.py`, within `budget` tokens), encodes its targets (`encoding.py`,
scientific notation by default), builds or loads the model (`models.py`), and fine-tunes it on
the target tokens (`train.py`); predicting decodes with the codec's constraints and prefilled
fixed parts (`decoding.py`): the median of `samples` draws (16 by default) with P10/P90 kept for
the quantile sidecar, or greedy (`samples=1`, fastest). The draws' P10/P50/P90 (and a P99 from
the P90) are calibrated on the validation split after training (`calibration=conformal`, the
default): split-conformal offsets per recency stratum of the job group
(`gharuntime.baselines.intervals`, the trees' code), fitted on `calibration_rows` validation
jobs decoded as predict decodes them, saved with the model and recorded in the submission.
Greedy is a poor default for numbers written digit by digit: at each digit it takes the single
likeliest one, and the likeliest leading digit is 1 (Benford), so it predicts 1.0e+02 for most
jobs of 100-999 s and RMSLE grows
(`benchmarks/laser_samples.py` on gharuntime-sim-small, temporal/config, tiny, 300 steps:
greedy 2.46, median of 8 draws 1.25, of 16 draws 1.18; the training median 1.45). Under
`accelerate launch` every process fits and predicts its share (`processes.py`). This module
imports no torch; the modules that do are imported on first use.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import polars as pl

from gharuntime.baselines.intervals import (
    Calibration,
    balanced_sample,
    fit_calibration,
    row_strata,
)
from gharuntime.baselines.laser.encoding import Codec, EncodingError, codec_for
from gharuntime.baselines.laser.params import CODEC_PARAMS, SPECS
from gharuntime.baselines.laser.processes import Group
from gharuntime.baselines.laser.prompts import (
    EstimateCounter,
    TokenCounter,
    prompt_rows,
    serialize_batch,
)
from gharuntime.baselines.laser.serialize import PromptTooLong, columns_for
from gharuntime.baselines.method import QUANTILE_LEVELS, Method, MethodError, as_float
from gharuntime.baselines.params import ParamTable
from gharuntime.contract import PRIMARY_TARGET, TRACKS
from gharuntime.progress import Progress, say
from gharuntime.recency import GroupClock
from gharuntime.splits import GROUP

if TYPE_CHECKING:
    from gharuntime.baselines.laser.train import Example

__all__ = ["Laser"]


CHECKPOINT_TOKENIZER = "tokenizer"


class Laser(Method):
    """LASER: fine-tune a causal LM on serialized jobs → encoded targets; constrained decoding."""

    name: ClassVar[str] = "laser"
    version: ClassVar[str] = "2"  # 2: the median of 16 draws by default, not greedy
    # Training and draws are seeded, but float sums in another CPU's kernels can move a draw
    # to a neighbouring digit: a metric may move by this much (absolute up to 1, relative above:
    # an MAE in seconds) and still be the same result. On the same machine and threads it
    # reproduces exactly.
    reproduce_tolerance: ClassVar[float] = 0.02
    param_specs: ClassVar[ParamTable] = SPECS  # every value typed and bounded before any work

    def __init__(
        self,
        track: str,
        *,
        seed: int = 0,
        targets: Sequence[str] | None = None,
        **params: Any,
    ) -> None:
        super().__init__(track, seed=seed, targets=targets, **params)
        self.codec: Codec = self._codec()
        self.model: Any = None
        self.tokenizer: Any = None
        self.source: dict[str, Any] = {}
        self.train_summary: dict[str, Any] = {}
        self._quantiles: dict[str, dict[str, np.ndarray]] = {}
        self.calibrations: dict[str, Calibration] = {}
        self.uncalibrated = ""  # why the ranges were left as drawn ("" when calibrated)
        self.calibration_seconds = 0.0
        self.clock: GroupClock | None = None

    # --- configuration ----------------------------------------------------------------------

    def reads(self, track: str) -> tuple[str, ...]:
        base = columns_for(track)
        if self.params["calibration"] == "conformal" and self.params["calibrate_by"] == "recency":
            # the strata: each row's job group, and how long since it last ran in training
            return (*base, *(c for c in (*GROUP, "created_at") if c not in base))
        return base

    def config(self) -> dict[str, Any]:
        out = {**self.params, "codec": self.codec.config(), "lr_used": self._lr()}
        if self.train_summary:
            out["training"] = self.train_summary
        return out

    def _codec(self) -> Codec:
        extra = {k: self.params[k] for k in CODEC_PARAMS if self.params[k] is not None}
        try:
            return codec_for(str(self.params["encoding"]), self.targets, **extra)
        except (EncodingError, TypeError) as exc:
            raise MethodError(f"laser: bad encoding settings: {exc}") from exc

    def _int(self, key: str, minimum: int = 0) -> int:
        value = self.params[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise MethodError(f"laser: {key} must be an integer ≥ {minimum}, not {value!r}")
        return value

    def _lr(self) -> float:
        if self.params["lr"] is not None:
            return float(self.params["lr"])
        from gharuntime.baselines.laser.models import TINY_SIZES

        if self.params["model"] in TINY_SIZES:
            return 1e-3
        return 2e-4 if self.params["lora_r"] else 5e-5

    def _model_options(self) -> Any:
        from gharuntime.baselines.laser.models import ModelOptions

        return ModelOptions(
            model=str(self.params["model"]),
            attention=str(self.params["attention"]),
            sliding_window=self._int("sliding_window", 1),
            lora_r=self._int("lora_r"),
            lora_alpha=self.params["lora_alpha"],
            vocab_size=self._int("vocab_size", 300),
            max_positions=max(4096, 2 * self._int("budget", 1)),
        )

    def _train_config(self) -> Any:
        from gharuntime.baselines.laser.train import TrainConfig

        stop = self.params["stop_after"]
        ckpt = self.params["checkpoint_dir"]
        return TrainConfig(
            max_steps=self._int("max_steps", 1),
            batch_size=self._int("batch_size", 1),
            grad_accum=self._int("grad_accum", 1),
            lr=self._lr(),
            weight_decay=float(self.params["weight_decay"]),
            warmup_steps=self._int("warmup_steps"),
            lr_schedule=str(self.params["lr_schedule"]),
            precision=str(self.params["precision"]),
            compile=bool(self.params["compile"]),
            seed=self.seed,
            checkpoint_dir=str(ckpt) if ckpt is not None else None,
            checkpoint_every=self._int("checkpoint_every", 1),
            stop_after=int(stop) if stop is not None else None,
        )

    def _threads(self) -> None:
        threads = self._int("threads")
        if threads:
            import torch

            torch.set_num_threads(threads)

    # --- prompts ----------------------------------------------------------------------------

    def _prompts(
        self,
        frame: pl.DataFrame,
        tokenizer: Any | None,
        count: TokenCounter | EstimateCounter | None = None,
    ) -> list[str]:
        """Every row's prompt within the budget: counted by `count` (or a TokenCounter of
        `tokenizer`), or by the tokenizer-free estimate when both are None. Batched
        (prompts.py): serialize_job's texts."""
        budget = self._int("budget", 1)
        if count is None:
            count = TokenCounter(tokenizer) if tokenizer is not None else EstimateCounter()
        try:
            return serialize_batch(
                prompt_rows(frame, self.track), track=self.track, budget=budget, count=count
            )
        except PromptTooLong as exc:
            raise MethodError(f"laser: {exc} (--param budget=N)") from exc

    @staticmethod
    def _check_job_yaml(frame: pl.DataFrame) -> None:
        if "job_yaml" not in frame.columns or frame["job_yaml"].null_count() == frame.height:
            raise MethodError(
                f"laser: none of the {frame.height} training rows has job_yaml, the job's own "
                "YAML block that LASER reads; build the dataset from a source that collects "
                "workflow files (gharuntime build records them when the crawl fetched them)"
            )

    def _training_rows(self, train: pl.DataFrame) -> pl.DataFrame:
        ok = np.ones(train.height, dtype=bool)
        for target in self.targets:
            y = as_float(train[target])
            ok &= np.isfinite(y)
        rows = train.filter(pl.Series(ok))
        fraction = float(self.params["train_fraction"])
        if not 0 < fraction <= 1:
            raise MethodError(f"laser: train_fraction must be in (0, 1], not {fraction}")
        if fraction < 1:
            keep = max(1, round(rows.height * fraction))
            order = np.random.default_rng(self.seed).permutation(rows.height)[:keep]
            rows = rows[np.sort(order).tolist()]
        return rows

    # --- what fit trains on (public: the benchmarks time the training alone) ----------------

    def training_rows(self, train: pl.DataFrame) -> pl.DataFrame:
        """The rows of a training split that `fit` trains on: this track's columns, every
        target finite, the `train_fraction` sample."""
        return self._training_rows(self._fit_frames(train, None)[0])

    def target_texts(self, rows: pl.DataFrame) -> list[str]:
        """Each row's targets as the text the model learns to write (the codec's template)."""
        return [
            self.codec.encode({t: float(v[t]) for t in self.targets})
            for v in rows.iter_rows(named=True)
        ]

    def training_examples(
        self,
        rows: pl.DataFrame,
        tokenizer: Any,
        texts: list[str] | None = None,
        counter: TokenCounter | None = None,
    ) -> list[Example]:
        """The token ids `fit` trains on for `rows` (from `training_rows`): each prompt within
        the budget, the separator, the target text and end-of-sequence."""
        from gharuntime.baselines.laser.decoding import DecodingError, target_token_ids
        from gharuntime.baselines.laser.train import make_example

        texts = self.target_texts(rows) if texts is None else texts
        counter = TokenCounter(tokenizer) if counter is None else counter
        prompts = self._prompts(rows, tokenizer, counter)
        eos = tokenizer.eos_token_id
        try:
            return [
                make_example(ids, target_token_ids(tokenizer, self.codec, t), eos, None)
                for ids, t in zip(counter.ids(prompts), texts, strict=True)
            ]
        except DecodingError as exc:
            raise MethodError(f"laser: the tokenizer cannot write the targets: {exc}") from exc

    def split_tokenizer(self, rows: pl.DataFrame, texts: list[str] | None = None) -> Any:
        """The BPE tokenizer a from-scratch model (`tiny*`) trains for `rows`, as `fit` makes
        it (reused from, or saved to, the checkpoint folder when one is set)."""
        texts = self.target_texts(rows) if texts is None else texts
        vocab = int(self.params["vocab_size"])
        return self._tiny_tokenizer(rows, texts, vocab, self._train_config(), None)

    # --- fit / predict ----------------------------------------------------------------------

    def fit(
        self,
        train: pl.DataFrame,
        validation: pl.DataFrame | None = None,
        progress: Progress | None = None,
    ) -> None:
        from gharuntime.baselines.laser.models import require_laser_extra

        require_laser_extra()
        every = self._int("validate_every")
        calibrate = self.params["calibration"] == "conformal"
        train, validation = self._fit_frames(train, validation if every or calibrate else None)
        self._check_job_yaml(train)
        rows = self._training_rows(train)
        self._threads()
        options = self._model_options()
        config = self._train_config()
        config.check()

        from gharuntime.baselines.laser import models
        from gharuntime.baselines.laser.train import train as run_training

        group = Group()  # under `accelerate launch`: this process's place among the others
        progress = progress if group.main else None
        loaded = models.load_base(options)
        texts = self.target_texts(rows)
        if loaded is None:  # tiny: a tokenizer trained on this split, then a fresh model
            tokenizer = group.broadcast(  # trained (and saved) once, by the main process
                self._tiny_tokenizer(rows, texts, options.vocab_size, config, progress)
                if group.main
                else None
            )
            model = models.tiny_model(tokenizer, options.model, options, self.seed)
            self.source = {"model": options.model, "note": "trained from scratch"}
        else:
            model, tokenizer, self.source = loaded.model, loaded.tokenizer, loaded.source
        say(
            progress,
            f"serializing {rows.height} training jobs (budget {self.params['budget']} tokens)",
        )
        started = time.perf_counter()
        counter = TokenCounter(tokenizer)
        examples = self.training_examples(rows, tokenizer, texts, counter)
        serialize_s = time.perf_counter() - started
        model = models.apply_lora(model, options)
        say(
            progress,
            f"serialized and tokenized {len(examples)} jobs in {serialize_s:.1f} s; training "
            f"{options.model} for {config.max_steps} steps",
        )
        evaluate, checked = (
            self._validation(validation, tokenizer, counter, progress) if every else (None, 0)
        )
        started = time.perf_counter()
        result = run_training(
            model,
            examples,
            tokenizer.pad_token_id,
            config,
            progress,
            evaluate,
            every if evaluate else 0,
        )
        train_s = time.perf_counter() - started
        if result.stopped_early:
            raise MethodError(
                f"laser: training stopped after step {result.steps} as asked (stop_after); "
                f"rerun with the same checkpoint_dir to resume"
            )
        self.model = models.merge_lora(model)
        self.tokenizer = tokenizer
        self.train_summary = {
            **result.summary(),
            # fit's time, split: prompts written and tokenized, then the training loop
            "serialize_s": round(serialize_s, 3),
            "train_s": round(train_s, 3),
            "examples": len(examples),
            "clamped_targets": self.codec.clamped,
            "mean_prompt_tokens": round(
                float(np.mean([len(e.input_ids) - e.target_len for e in examples])), 1
            ),
            **({"validation_rows": checked, "validation_metric": "rmsle"} if checked else {}),
        }
        self._calibrate(train, validation if calibrate else None, progress)

    def _validation(
        self,
        validation: pl.DataFrame | None,
        tokenizer: Any,
        counter: Any,
        progress: Progress | None,
    ) -> tuple[Any, int]:
        """A scorer of the model on a seeded sample of the validation split (the primary
        target's RMSLE of one greedy decode per job), and the rows it reads; (None, 0) when
        the split has no row with the target."""
        from gharuntime.baselines.laser.decoding import DecodingError, constrained_generate

        target = PRIMARY_TARGET if PRIMARY_TARGET in self.targets else self.targets[0]
        if validation is None or validation.height == 0:
            say(progress, "no validation rows: training max_steps and keeping the last step")
            return None, 0
        rows = validation.filter(pl.Series(np.isfinite(as_float(validation[target]))))
        keep = min(rows.height, self._int("validation_rows", 1))
        if keep == 0:
            say(
                progress,
                f"no validation row has {target}: training max_steps and keeping the last step",
            )
            return None, 0
        order = np.random.default_rng(self.seed + 17).permutation(rows.height)[:keep]
        rows = rows[np.sort(order).tolist()]
        prompts = self._prompts(rows, tokenizer, counter)
        truth = np.log1p(np.clip(as_float(rows[target]), 0.0, None))
        batch = self._int("decode_batch_size", 1)

        def evaluate(model: Any) -> float:
            try:
                texts = constrained_generate(
                    model,
                    tokenizer,
                    prompts,
                    self.codec,
                    samples=1,
                    seed=self.seed,
                    batch_size=batch,
                )
            except DecodingError as exc:
                raise MethodError(f"laser: validation decoding failed: {exc}") from exc
            pred = np.array([self.codec.decode(drawn[0]).get(target, np.nan) for drawn in texts])
            pred = np.clip(np.nan_to_num(pred, nan=0.0, posinf=0.0), 0.0, None)
            return float(np.sqrt(np.mean((np.log1p(pred) - truth) ** 2)))

        say(
            progress,
            f"validating every {self._int('validate_every')} steps on {keep} validation jobs",
        )
        return evaluate, keep

    def _tiny_tokenizer(
        self,
        rows: pl.DataFrame,
        texts: list[str],
        vocab: int,
        config: Any,
        progress: Progress | None,
    ) -> Any:
        """The BPE tokenizer of a from-scratch model: trained on this split's prompts (budgeted
        by a tokenizer-free estimate) and targets; kept with the checkpoints for a resume."""
        from transformers import AutoTokenizer

        from gharuntime.baselines.laser.models import train_tokenizer

        saved = (
            Path(config.checkpoint_dir) / CHECKPOINT_TOKENIZER if config.checkpoint_dir else None
        )
        if saved is not None and saved.is_dir():
            say(progress, f"reusing the tokenizer saved in {saved}")
            return AutoTokenizer.from_pretrained(saved)
        say(progress, f"training a {vocab}-token BPE tokenizer on {rows.height} jobs")
        tokenizer = train_tokenizer([*self._prompts(rows, None), *texts], vocab)
        if saved is not None:
            tokenizer.save_pretrained(saved)
        return tokenizer

    def _draws(
        self, inputs: pl.DataFrame, seed: int
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Per target, the median, P10 and P90 of `samples` constrained draws for every row
        of `inputs` (several launched processes decode a share each)."""
        from gharuntime.baselines.laser.decoding import (
            DecodingError,
            constrained_generate,
        )
        from gharuntime.baselines.laser.encoding import median_and_quantiles

        group = Group()  # several processes decode a share of the jobs each
        prompts = self._prompts(inputs, self.tokenizer)
        try:
            mine = constrained_generate(
                self.model,
                self.tokenizer,
                [prompts[i] for i in group.share(len(prompts))],
                self.codec,
                samples=self._int("samples", 1),
                temperature=float(self.params["temperature"]),
                seed=seed + 1_000_003 * group.rank,
                batch_size=self._int("decode_batch_size", 1),
            )
        except DecodingError as exc:
            raise MethodError(f"laser: {exc}") from exc
        texts = group.collect(len(prompts), mine)
        out = {t: np.zeros(len(prompts)) for t in self.targets}
        p10 = {t: np.zeros(len(prompts)) for t in self.targets}
        p90 = {t: np.zeros(len(prompts)) for t in self.targets}
        for i, drawn in enumerate(texts):
            stats = median_and_quantiles([self.codec.decode(x) for x in drawn])
            for t in self.targets:
                out[t][i], p10[t][i], p90[t][i] = stats[t]
        for values in (out, p10, p90):
            for t in self.targets:
                values[t] = np.clip(np.nan_to_num(values[t], nan=0.0, posinf=0.0), 0.0, None)
        return out, p10, p90

    def predict(self, inputs: pl.DataFrame) -> dict[str, np.ndarray]:
        if self.model is None:
            raise MethodError("laser: predict before fit")
        self._threads()
        out, p10, p90 = self._draws(inputs, self.seed)
        # P10/P50/P90 of the draws (P50 is the prediction); no P99: 16 draws cannot give it
        # (a calibrated model adds one from the P90 and the validation jobs' errors)
        self._quantiles = (
            {
                "p10": {t: np.minimum(p10[t], out[t]) for t in self.targets},
                "p50": {t: out[t].copy() for t in self.targets},
                "p90": {t: np.maximum(p90[t], out[t]) for t in self.targets},
            }
            if self._int("samples", 1) > 1
            else {}
        )
        if self._quantiles and self.calibrations:
            self._quantiles = self._calibrated(inputs, self._quantiles)
        return out

    # --- calibrated ranges ------------------------------------------------------------------

    def _calibrate(
        self, train: pl.DataFrame, validation: pl.DataFrame | None, progress: Progress | None
    ) -> None:
        """Fit each target's split-conformal offsets on a sample of the validation split,
        decoded as predict decodes (gharuntime.baselines.intervals); say why not where it
        cannot run."""
        self.calibrations, self.uncalibrated, self.clock = {}, "", None
        if self.params["calibration"] != "conformal":
            self.uncalibrated = "calibration=none: the raw P10/P90 of the draws"
            return
        if self._int("samples", 1) < 2:
            self.uncalibrated = "samples=1 (greedy) gives no range to calibrate"
            return
        finite = np.zeros(validation.height if validation is not None else 0, dtype=bool)
        for target in self.targets:
            if validation is not None:
                finite |= np.isfinite(as_float(validation[target]))
        if validation is None or not finite.any():
            self.uncalibrated = (
                "no validation split with these targets (as in cross_repo), so the ranges are "
                "the raw P10/P90 of the draws, not calibrated on held-out jobs"
            )
            say(progress, f"not calibrating the ranges: {self.uncalibrated}")
            return
        by_recency = self.params["calibrate_by"] == "recency"
        self.clock = GroupClock.from_frame(train) if by_recency else None
        uses_history = TRACKS[self.track].uses_history
        rows = validation.filter(pl.Series(finite))
        strata = row_strata(rows, self.clock, uses_history)
        pick = balanced_sample(strata, self._int("calibration_rows", 1), self.seed + 29)
        rows, strata = rows[pick.tolist()], strata[pick]
        say(progress, f"calibrating the ranges on {rows.height} validation jobs")
        started = time.perf_counter()
        out, p10, p90 = self._draws(rows, self.seed + 7_919)
        for target in self.targets:
            y = as_float(rows[target])
            ok = np.isfinite(y) & (y >= 0)
            if not ok.any():
                continue
            logs = {
                "p10": np.log1p(np.minimum(p10[target], out[target])[ok]),
                "p50": np.log1p(out[target][ok]),
                "p90": np.log1p(np.maximum(p90[target], out[target])[ok]),
            }
            logs["p99"] = logs["p90"]  # the P99 is the P90 plus its own offset
            self.calibrations[target] = fit_calibration(
                np.log1p(y[ok]),
                logs,
                QUANTILE_LEVELS,
                strata=strata[ok] if by_recency else None,
                source="validation",
            )
        self.calibration_seconds = round(time.perf_counter() - started, 3)

    def calibrate(
        self, train: pl.DataFrame, validation: pl.DataFrame, progress: Progress | None = None
    ) -> None:
        """Calibrate a fitted model's ranges on `validation` as fit does at its end (`train`
        gives the job groups' recency): for a model saved before calibration existed. A
        MethodError says why where it cannot (no model, calibration=none, greedy decoding, no
        validation job with a target)."""
        if self.model is None:
            raise MethodError("laser: nothing to calibrate before fit (or load a saved model)")
        if self.params["calibration"] != "conformal":
            raise MethodError(
                "laser: this model was trained with calibration=none; retrain it without "
                "that parameter to have its ranges calibrated"
            )
        self._calibrate(train, validation, progress)
        if not self.calibrations:
            raise MethodError(f"laser: the ranges cannot be calibrated: {self.uncalibrated}")

    def _calibrated(
        self, inputs: pl.DataFrame, drawn: dict[str, dict[str, np.ndarray]]
    ) -> dict[str, dict[str, np.ndarray]]:
        """The draws' levels with each target's offsets added on the log1p scale (a P99 from
        the P90), ordered so that no level crosses another, and P10-P90 widened to hold the
        prediction; a target without a calibration keeps its draws' levels (and then no target
        gives a P99: a sidecar gives the same levels for every target)."""
        strata = row_strata(inputs, self.clock, TRACKS[self.track].uses_history)
        out: dict[str, dict[str, np.ndarray]] = {q: {} for q in QUANTILE_LEVELS}
        for t in self.targets:
            calibration = self.calibrations.get(t)
            if calibration is None:  # no validation row had it: its levels as drawn
                for q in drawn:
                    out[q][t] = drawn[q][t]
                continue
            bases = {q: np.log1p(drawn[q][t]) for q in ("p10", "p50", "p90")}
            bases["p99"] = bases["p90"]
            adjusted = calibration.adjust(bases, strata if calibration.by == "recency" else None)
            ordered = np.sort(np.stack([adjusted[q] for q in QUANTILE_LEVELS]), axis=0)
            for q, row in zip(QUANTILE_LEVELS, ordered, strict=True):
                out[q][t] = np.clip(np.expm1(row), 0.0, None)
            # the range holds the prediction (the draws' median), as the raw one does: where
            # the offsets moved it past the median, it is widened, never narrowed
            point = drawn["p50"][t]
            out["p10"][t] = np.minimum(out["p10"][t], point)
            out["p90"][t] = np.maximum(out["p90"][t], point)
            out["p99"][t] = np.maximum(out["p99"][t], out["p90"][t])
        if len(out["p99"]) < len(self.targets):  # every target gives the same levels
            del out["p99"]
        return out

    def calibration(self) -> dict[str, Any]:
        if self.calibrations:
            return {
                t: {**c.to_json(), "seconds": self.calibration_seconds}
                for t, c in self.calibrations.items()
            }
        if self.uncalibrated and self._int("samples", 1) > 1:
            return {t: {"method": "none", "why": self.uncalibrated} for t in self.targets}
        return {}

    def quantiles(self) -> dict[str, dict[str, np.ndarray]]:
        return self._quantiles

    # --- saved state ------------------------------------------------------------------------

    def save_state(self, folder: Path) -> dict[str, Any]:
        if self.model is None:
            raise MethodError("laser: save before fit")
        from gharuntime.baselines.laser.models import save_fitted

        try:
            state = save_fitted(self.model, self.tokenizer, folder, self.source)
        except ValueError as exc:
            raise MethodError(f"laser: cannot save the model: {exc}") from exc
        (folder / "training.json").write_text(
            json.dumps(self.train_summary, indent=2) + "\n", encoding="utf-8"
        )
        return {
            **state,
            "codec": self.codec.config(),
            "training": self.train_summary,
            "calibration": self.calibration(),
            "group_clock": self.clock.to_json() if self.clock is not None else None,
        }

    @classmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> Method:
        if importlib.util.find_spec("torch") is None:
            raise MethodError(
                f"{folder}: a LASER model needs the laser extra: pip install 'gharuntime[laser]'"
            )
        from gharuntime.baselines.laser.models import load_fitted

        config = dict(meta["config"])
        params = {k: v for k, v in config.items() if k in cls.param_specs}
        params["checkpoint_dir"] = None
        method = cls(
            str(meta["track"]),
            seed=int(meta.get("seed", 0)),
            targets=meta.get("targets"),
            **params,
        )
        state = meta["state"]
        loaded = load_fitted(folder, state)
        method.model, method.tokenizer, method.source = (
            loaded.model,
            loaded.tokenizer,
            loaded.source,
        )
        method.train_summary = dict(state.get("training", {}))
        method._load_calibration(state)
        if method.codec.config() != state["codec"]:
            raise MethodError(
                f"{folder}: the saved codec {state['codec']} does not match its config"
            )
        return method

    def _load_calibration(self, state: dict[str, Any]) -> None:
        """The calibration saved beside the weights (a model saved before it has none: its
        ranges are the draws' own)."""
        saved = state.get("calibration") or {}
        if not isinstance(saved, dict):
            raise MethodError("the saved calibration is not an object")
        self.calibrations = {}
        for target, data in saved.items():
            if isinstance(data, dict) and data.get("method") == "none":
                self.uncalibrated = str(data.get("why", ""))
                continue
            if target not in self.targets:
                raise MethodError(f"the saved calibration names an unknown target {target!r}")
            try:
                self.calibrations[target] = Calibration.from_json(data, tuple(QUANTILE_LEVELS))
            except ValueError as exc:
                raise MethodError(f"damaged calibration of {target}: {exc}") from None
            seconds = data.get("seconds")
            if isinstance(seconds, int | float) and not isinstance(seconds, bool):
                self.calibration_seconds = float(seconds)
        clock = state.get("group_clock")
        try:
            self.clock = GroupClock.from_json(clock) if clock is not None else None
        except ValueError as exc:
            raise MethodError(f"damaged group clock: {exc}") from None
        if self.clock is None and any(c.by == "recency" for c in self.calibrations.values()):
            raise MethodError("calibrated by recency but no group_clock saved")
        if not self.calibrations and not self.uncalibrated:
            self.uncalibrated = "a model saved before calibration: the raw P10/P90 of the draws"
