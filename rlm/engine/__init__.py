"""The run engine shared by ask, audit and mine: the session (models + cache + budget + Ctrl-C +
run record), the options every command shares, typed outcomes and events, the coverage ledger
and its one statement writer, window sizing and chunk fit, the budget, interrupts, pre-flight
checks and estimates; the machinery behind the gate: map (fan-out), call (retry with the
validation error), guarded reduce, synthesis, candidates."""
