"""`python -m webmill_spark local-cluster start|stop|status` and
`python -m webmill_spark run --master URL --out JOB INPUT...`."""

import sys

USAGE = """usage: python -m webmill_spark COMMAND ...

commands:
  local-cluster start|stop|status   a standalone Spark cluster on this machine
  run --master URL --out JOB INPUT... [-- RUN_FLAGS]
                                    a webmill job with its ingest as Spark tasks
"""


def main() -> int:
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if args else 2
    if args[0] == "local-cluster":
        from . import cluster

        return cluster.main(args[1:])
    if args[0] == "run":
        from . import run

        return run.main(args[1:])
    print(f"webmill_spark: unknown command {args[0]!r}\n{USAGE}", file=sys.stderr, end="")
    return 2


if __name__ == "__main__":
    sys.exit(main())
