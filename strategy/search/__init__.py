"""Search drivers: exact solving with its objectives, and the greedy tree builders."""
