"""Text reports of measured stats: the distribution table with a histogram. Standard library only."""

from __future__ import annotations

from .verify import Stats

BAR_WIDTH = 40


def stats_json(stats: Stats) -> dict:
    """The measured figures for a JSON report, with the average."""
    return {**stats.to_json(), "average": round(stats.average, 6)}


def summary_line(stats: Stats) -> str:
    return f"secrets {stats.secrets}  total {stats.total}  average {stats.average:.4f}  worst {stats.worst}"


def distribution_table(stats: Stats) -> str:
    """One row per number of questions: count, share and a bar scaled to the largest count."""
    peak = max(stats.depth_counts) or 1
    lines = ["questions  secrets   share  histogram"]
    for depth, count in enumerate(stats.depth_counts):
        if depth == 0:
            continue
        share = 100.0 * count / stats.secrets if stats.secrets else 0.0
        bar = "#" * round(BAR_WIDTH * count / peak) if count else ""
        lines.append(f"{depth:9d}  {count:7d}  {share:5.1f}%  {bar}".rstrip())
    lines.append(summary_line(stats))
    return "\n".join(lines)
