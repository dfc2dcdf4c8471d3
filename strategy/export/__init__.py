"""Renderings of a verified tree: lookup tables (tables: CSV, JSON lines, SQLite), graphs (graph: GraphML, GEXF,
DOT), the offline web page (page, with page.html), the distribution plot (plot) and the second-question table
(second_table)."""
