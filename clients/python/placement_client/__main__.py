"""python3 -m placement_client flush [--server HOST:PORT] [--spool_dir DIR]
[--token_file FILE] [--ca_file FILE]: uploads every spooled run.
Exit 0 all uploaded, 1 some refused, 3 some left (service unreachable)."""

import argparse
import os
import sys

from placement_client.connection import Connection
from placement_client.spool import flush_spool


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
    finally:
        connection.close()
    print(f"uploaded {r['uploaded']}, left in the spool {r['left']}, rejected "
          f"{r['rejected']}, in progress {r['in_progress']}, incomplete "
          f"{r['incomplete']}")
    return 3 if r["left"] else 1 if r["rejected"] else 0


if __name__ == "__main__":
    sys.exit(main())
