"""Bar chart of the number of questions (matplotlib, an optional extra: pip install 'strategy[plot]')."""

from __future__ import annotations

import io
import os
from pathlib import Path

from ..files import write_atomic
from ..tree.verify import Stats


def plot_distribution(stats: Stats, title: str, path: str | os.PathLike) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("plotting needs matplotlib: pip install 'strategy[plot]'") from None
    depths = list(range(1, len(stats.depth_counts)))
    counts = stats.depth_counts[1:]
    fig, ax = plt.subplots(figsize=(7, 4))
    bars = ax.bar(depths, counts, color="#3b6ea8")
    ax.bar_label(bars, labels=[str(c) if c else "" for c in counts], fontsize=8)
    ax.set_xlabel("questions")
    ax.set_ylabel("secrets")
    ax.set_xticks(depths)
    # a tree's objective is text, never mathtext ($...$ in a shared file broke the drawing)
    ax.set_title(f"{title}\ntotal {stats.total}, average {stats.average:.4f}, worst {stats.worst}", parse_math=False)
    fig.tight_layout()
    fmt = Path(path).suffix.lstrip(".").lower()
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    plt.close(fig)
    write_atomic(path, buf.getvalue())
