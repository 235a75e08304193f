# SPDX-License-Identifier: Apache-2.0
"""The command line the tree checks share: ARGS... [--expect-offenders N]."""
import sys


def parse(doc, count):
    """(positional args, expected offenders or None); exits 2 with `doc` unless `count` positionals."""
    args = sys.argv[1:]
    expect = None
    if "--expect-offenders" in args:
        i = args.index("--expect-offenders")
        expect = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != count:
        print(doc, file=sys.stderr)
        sys.exit(2)
    return args, expect


def verdict(tool, offenders, expect):
    """The check of the check: exit status 0 only when exactly `expect` offenders were found."""
    ok = offenders == expect
    print(f"{tool}: {offenders} offenders, expected {expect}: {'ok' if ok else 'WRONG'}")
    return 0 if ok else 1
