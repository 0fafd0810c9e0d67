"""The run engine shared by ask, audit and mine: typed outcomes and events, the coverage ledger
and its one statement writer, window sizing, the session (models + cache + budget + Ctrl-C +
run record) and the options every command shares."""
