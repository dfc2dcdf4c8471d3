"""Compute, prove, store and play optimal strategies for Bulls and Cows and Mastermind."""

__version__ = "0.1.0"
