"""The greedy tree builders for games too large to solve: the rules (expected size, entropy, minimax, most parts,
random consistent) over the compiled greedy kernels (greedy), and the pilot method's lookahead (pilot). Their
exact endgames are the exact engine's work (`search.endgame`)."""
