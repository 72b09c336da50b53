"""Maintainer tools apart from production code: reference-model training, its tokenizer, benchmarks."""
