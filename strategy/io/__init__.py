"""Trees on disk and what is computed from them: format, verification, export, graph, reports."""
