"""What the repository recipes (rlm.repo.audit, rlm.repo.mine) share, on top of the run engine (rlm.engine):

``files`` (which files are prose or tests, numbered rendering, comment/docstring lines),
``split`` and ``chunks`` (modules and files cut on definitions), ``corpus`` (the walked repository
and its file coverage partition), ``candidates`` (numbered candidate lines, picks checked by
code), ``calls`` (one validated recipe sub-call), ``ledger`` (what the model read; the job-done
event), ``rounds`` (rounds until two find nothing new, with their own stop reason), ``record``
(showing and resuming recorded audit and mine runs).
"""
