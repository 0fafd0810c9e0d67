"""Corpus access: probing, indexing, walking repositories, profiling and searching."""
