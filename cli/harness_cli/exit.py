"""Exit statuses of every `harness` command: the one place they are defined.

0 all good; 1 a stream failed, or the answer is "no" (`diff`: the streams differ;
`coverage`: a code is not reached; `conform`: a case disagrees; `doctor`: an SDK reads a
row otherwise than documented; `import`, `export`: some files were not converted);
2 input the harness cannot use (a bad cassette, option, request, missing key), an output
it cannot write (a full disk, a read-only folder), or an internal failure; 130
interrupted (Ctrl-C); 141 the reader of standard output went away (`harness replay x |
head`: quiet, as a process killed by SIGPIPE would be).
"""

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    FAILED = 1
    UNUSABLE = 2
    INTERRUPTED = 130
    BROKEN_PIPE = 141
