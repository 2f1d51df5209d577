"""gharuntime.baselines: reference methods (naive, LightGBM, XGBoost, LASER)."""

__all__: list[str] = []
