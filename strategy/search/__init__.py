"""The exact search: the objectives as cost vectors, the solve (solve), its driver over tasks (driver, worker) on
an executor (executors), the store that makes it resumable (store), lower bounds by lookahead (lookahead), trees
known beforehand and what may be believed of them (known), and exact endgames of a given tree (endgame), which
`strategy build --exact-below` and `strategy improve` use."""
