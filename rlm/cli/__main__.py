"""`python -m rlm.cli`."""

from rlm.cli import main

main()
