"""The player: tree walker, terminal player, noisy-answer mode. Standard library and orjson only
(noisy mode loads the engine on demand)."""
