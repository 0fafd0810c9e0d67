"""What each tool tells an agent: when to use it, what it costs, what comes back."""

_REPORT = ("Returns the rlm report (the same JSON as `rlm ask --json`): `answer` (Markdown), "
           "`findings` each with `evidence` quoted from the file by code and `source` "
           "{path, line_start, line_end}, `coverage` (chunks_total, chunks_ok, chunks_failed with "
           "their line ranges and reasons, bytes read by the model vs scanned by code, `complete`, "
           "and a one-paragraph `statement`), `usage` (calls, tokens, wall_s) and `run_id`; plus a "
           "short text summary. `coverage.complete: false` means part of the corpus was not read "
           "(failed, interrupted or over budget chunks are named): say so, or `resume` the run.")

ASK = (
    "Answer a question about a file or folder too big to read into your context (large logs, "
    "transcripts, dumps, whole folders). Use it instead of reading or paging through a big file: "
    "rlm measures the corpus, then picks a strategy (direct read if small, code search for quoted "
    "strings/ids, a template profile for logs, or a fan-out of isolated model calls over chunks) "
    "and checks every finding's evidence against the file. Cost: from zero model calls "
    "(code-only) to one call per chunk plus a merge and a synthesis; cap it with max_calls or "
    "max_tokens (a cut is declared in the coverage). Long runs send progress notifications; "
    "cancelling stops the run, keeps what finished and leaves it resumable. Paths must lie under "
    "the server's roots. " + _REPORT)

AUDIT = (
    "Audit a repository folder: a module map, findings (facts and risks) with path:line evidence "
    "checked by code, in rounds until a round adds nothing new. Use it to get oriented in an "
    "unfamiliar codebase or to look for risks without reading every file. Cost: several model "
    "calls per module per round (the server's budget options apply). `focus` picks lenses: any of "
    "structure, risks, tests, comma-separated (default all three). " + _REPORT)

MINE = (
    "Mine a repository for requirements: for each question, facts of the form {claim, "
    "evidence_path 'path:start-end', quote, confidence verified|inferred}. A question without a "
    "verified fact keeps a placeholder naming it, never a guess. Cost: one call when at most ~30 "
    "files are relevant, else one call per group of files. " + _REPORT)

RUNS = (
    "List recent rlm runs (newest first) whose corpus lies under the allowed roots: id, date, "
    "command, corpus, question, strategy, status (done, incomplete, interrupted, died, error), "
    "chunk counts and tokens. No model call. Use it to find a run_id for `show` or `resume`.")

SHOW = (
    "Return the recorded report of a run (a run_id, a unique prefix of one, or 'last'): the same "
    "report `ask` returns, without re-running anything. No model call. A run that ended without "
    "a report (killed) is described in one line with how to resume it.")

RESUME = (
    "Re-run a recorded `ask` run (run_id, a unique prefix, or 'last') after it was interrupted, "
    "cancelled, over budget or had failed chunks: answered calls come from the call cache, so "
    "only the failed or unfinished chunks call the model again; merge and synthesis are redone. "
    "Cost: one model call per chunk not yet answered, plus the merge and synthesis calls. "
    "Uses this server's model configuration and the recorded run's strategy and budgets. "
    + _REPORT)

GREP = (
    "Search a file (or the text files of a folder) for a regular expression (RE2: Python syntax "
    "without lookarounds or backreferences, linear time) and return "
    "the matching lines with their 1-based line numbers. Code only, no model call, cheap even on "
    "gigabyte files. Bounded: at most max_hits lines (default 50, at most 500), each cut at 500 "
    "characters; `hits_total` counts all matching lines and `truncated` says when the list is "
    "cut. Case-sensitive unless the pattern starts with (?i). Use it to locate evidence, then "
    "`read_lines` for context.")

READ_LINES = (
    "Return lines start..end (1-based, inclusive) of one file, e.g. the context around a "
    "finding's path:line evidence, without reading the whole file. Code only, no model call. "
    "Bounded: at most 400 lines per call, each cut at 2,000 characters; a cut range says where "
    "to continue. .gz files are read decompressed.")
