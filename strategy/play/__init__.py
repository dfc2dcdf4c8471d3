"""The player: tree walker, terminal player, live play without a tree, noisy-answer mode. Standard library and
orjson up to the first question; the candidates are NumPy arrays from the first answer on (noisy mode and live
play's exact search load the engine on demand)."""
