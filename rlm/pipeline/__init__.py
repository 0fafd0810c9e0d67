"""The ask pipeline: the gate (which way to answer, and why), the strategies, aggregation
(exact counts over extracted records), the answers written by code, the report builder and the
headline. (Named `pipeline`, not `ask`, so that the package does not shadow `rlm.ask`.)"""
