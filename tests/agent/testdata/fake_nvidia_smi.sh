#!/bin/sh
# Replays recorded nvidia-smi output: FAKE_SMI_NODE=testdata/<node> (without
# extension). `nvidia-smi nvlink -s` prints <node>.nvlink.txt, a query prints
# <node>.csv.
if [ "$1" = "nvlink" ]; then
  cat "$FAKE_SMI_NODE.nvlink.txt" 2>/dev/null
else
  cat "$FAKE_SMI_NODE.csv"
fi
