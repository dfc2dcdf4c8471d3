"""The decision tree as data: the file format and its JSON Schema (format), verification by walking every
secret (verify), comparison (compare), the race of two trees (race), the figures people read (report) and the
generator record (record).
Standard library and orjson only: the player and the verifier need no engine."""
