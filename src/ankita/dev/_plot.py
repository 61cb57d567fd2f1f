"""Charts for `ankita eval --plot` and `ankita bench --plot` (the optional `plot` extra).

Only this module imports matplotlib, and only when a chart is asked for; it draws with the
file-only Agg backend, so no display is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ankita._errors import ConfigError, InvalidInput

LABEL_COLOURS = {"duplicate": "#2e7d32", "conflict": "#c62828", "neither": "#757575"}


def _pyplot() -> Any:
    try:
        import matplotlib
    except ModuleNotFoundError:
        raise ConfigError("charts need matplotlib: pip install 'ankita[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _target(path: str | Path) -> Path:
    target = Path(path)
    if target.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InvalidInput(f"a chart is written as .png, .svg or .pdf, got {target.name!r}")
    if not target.parent.exists():
        raise InvalidInput(f"no folder {target.parent} to write the chart in")
    return target


def check_can_plot(path: str | Path) -> Path:
    """Refuse a bad chart path or a missing matplotlib before any long work starts."""
    target = _target(path)
    _pyplot()
    return target


def score_distributions(
    rows: list[dict[str, Any]], lines: dict[str, float], title: str, path: str | Path
) -> Path:
    """One histogram of decision scores per gold label, with the thresholds drawn: where a
    label's mass crosses a line is where that line decides wrongly."""
    target = _target(path)
    plt = _pyplot()
    bins = [i / 40 for i in range(41)]
    labels = [label for label in LABEL_COLOURS if any(r["label"] == label for r in rows)]
    figure, axes = plt.subplots(
        len(labels), 1, figsize=(8, 2.2 * len(labels) + 0.8), sharex=True, squeeze=False
    )
    for axis, label in zip(axes[:, 0], labels, strict=True):
        scores = [r["score"] for r in rows if r["label"] == label]
        right = [r["score"] for r in rows if r["label"] == label and r["predicted"] == label]
        axis.hist(
            scores,
            bins=bins,
            color=LABEL_COLOURS[label],
            alpha=0.35,
            label=f"{label}: all ({len(scores)})",
        )
        axis.hist(
            right,
            bins=bins,
            color=LABEL_COLOURS[label],
            alpha=0.9,
            label=f"decided right ({len(right)})",
        )
        for name, value in lines.items():
            axis.axvline(
                value, color="black", linestyle="--" if "merge" in name else ":", linewidth=1
            )
        axis.set_ylabel("pairs")
        axis.legend(loc="upper left", fontsize=8, frameon=False)
    for name, value in lines.items():
        axes[0, 0].annotate(
            f"{name} {value:.2f}",
            (value, 1),
            xycoords=("data", "axes fraction"),
            xytext=(3, -12),
            textcoords="offset points",
            fontsize=8,
        )
    axes[-1, 0].set_xlabel("decision score (the higher of lexical and calibrated cosine)")
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target


def latency_by_size(runs: list[dict[str, Any]], title: str, path: str | Path) -> Path:
    """Remember and recall latency (p50 and p95) against store size, both axes logarithmic."""
    target = _target(path)
    plt = _pyplot()
    good = [r for r in runs if "remember_p50_ms" in r]
    if not good:
        raise InvalidInput("no store size finished, so there is nothing to plot")
    sizes = [r["facts"] for r in good]
    figure, axis = plt.subplots(figsize=(7, 4.2))
    for key, style, name in (
        ("remember_p50_ms", "-o", "remember p50"),
        ("remember_p95_ms", "--o", "remember p95"),
        ("recall_p50_ms", "-s", "recall p50"),
        ("recall_p95_ms", "--s", "recall p95"),
    ):
        axis.plot(sizes, [r[key] for r in good], style, label=name)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("facts in the store")
    axis.set_ylabel("milliseconds")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    axis.set_title(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target
