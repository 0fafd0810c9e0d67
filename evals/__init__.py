"""Quality and cost measurements (benchmarks print figures; they are not tests)."""
