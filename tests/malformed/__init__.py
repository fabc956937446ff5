"""The malformed-input corpus: a package, so that its case files may share a basename with a
unit test file (tests/unit/test_pgn.py and tests/malformed/test_pgn.py) under pytest's default
import mode."""
