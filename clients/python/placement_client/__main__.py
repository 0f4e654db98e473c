"""python3 -m placement_client flush [--server HOST:PORT] [--spool_dir DIR]
[--token_file FILE] [--ca_file FILE]: uploads every spooled run.
Exit 0 all uploaded, 1 some refused as invalid, 2 the spool folder refused
(another user's, or writable by others), 3 some left (service unreachable),
4 some kept (refused for a reason not the run's: a token, a server fault;
or a sample missing from the spool)."""

import argparse
import os
import sys

from placement_client.connection import Connection
from placement_client.spool import SpoolRefused, flush_spool


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m placement_client")
    parser.add_argument("command", choices=["flush"])
    parser.add_argument("--server", default=None)
    parser.add_argument("--spool_dir", default=None)
    parser.add_argument("--token_file", default=None)
    parser.add_argument("--ca_file", default=None)
    args = parser.parse_args(argv)
    token = None
    if args.token_file:
        with open(args.token_file) as f:
            token = f.read().strip()
    connection = Connection(args.server, token=token, ca_file=args.ca_file)
    try:
        r = flush_spool(connection, args.spool_dir)
    except SpoolRefused as e:
        print(f"placement_client: {e}", file=sys.stderr)
        return 2
    finally:
        connection.close()
    print(f"uploaded {r['uploaded']}, left in the spool {r['left']}, rejected "
          f"{r['rejected']}, kept (refused, not the run's fault) {r['kept']}, "
          f"in progress {r['in_progress']}, incomplete {r['incomplete']}")
    if r["left"]:
        return 3
    return 4 if r["kept"] else 1 if r["rejected"] else 0


if __name__ == "__main__":
    sys.exit(main())
