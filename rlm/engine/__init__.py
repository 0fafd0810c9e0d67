"""The machinery behind the gate: map (fan-out), guarded reduce, synthesis, coverage."""
