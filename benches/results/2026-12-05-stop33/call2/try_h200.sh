#!/bin/bash
# Stop 33: the H200 agenda, only where the card is an H200 (else exit at once).
cd "$(dirname "$0")"
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
[[ "$G" == *H200* ]] || exit 0
exec bash run7.sh keys argsort2 peers wide
